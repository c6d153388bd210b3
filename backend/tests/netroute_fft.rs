//! Rerouting on the thesis's pipelined FFT (Minsky §5.2, Fig 5-10/5-11).
//!
//! Sixteen tasks in four rows of four (the four `fft-*-row` patterns of Fig 5-11); each computes 12
//! cycles, reads a 4- or 8-word message from one or two tasks of the row before and writes to one
//! or two of the row after: a straight 4-word message to the task below and an 8-word butterfly
//! message to the partner at distance 2 (first stage) or 1 (second stage); the third stage sends 8
//! words straight down (M16: task 8 → task 12, 4 cycles of slack as in the thesis). Releases follow
//! Fig 4-3; deadlines are relaxed to the pipeline period of 12 cycles (§5.2: "the maximum thruput
//! … is 12"). Placed row by row on a 4×4 mesh, dimension-order routing makes the first-stage
//! butterfly messages M1/M3 and M5/M7 share a row link in the same 12-cycle window (lu = 16/12);
//! rerouting sends one of each pair y-first, as the thesis did for M5 and M7.

use ttdl_backend::metrics::Metrics;
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::route::{self, RouteMethod, RouteOptions};
use ttdl_backend::traffic::{Message, Op, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

const COMPUTE: u64 = 12;
const PERIOD: u64 = 12;

fn fft() -> Traffic {
    let mut tasks: Vec<Task> = (0..16)
        .map(|i| Task {
            id: i,
            name: format!("t{i}"),
            ..Task::default()
        })
        .collect();
    let mut messages: Vec<Message> = Vec::new();
    let mut send = |src: usize, dst: usize, size: u64, row: u64| {
        let release = row * (COMPUTE + PERIOD) + COMPUTE;
        messages.push(Message {
            id: messages.len(),
            src,
            dst: vec![dst].into(),
            size,
            release,
            deadline: release + PERIOD,
            ..Message::default()
        });
    };
    for (row, stride) in [(0usize, 2usize), (1, 1)] {
        for i in 0..4 {
            let src = 4 * row + i;
            send(src, src + 4, 4, row as u64);
            send(src, 4 * (row + 1) + (i ^ stride), 8, row as u64);
        }
    }
    for i in 0..4 {
        send(8 + i, 12 + i, 8, 2);
    }
    for m in &messages {
        tasks[m.src].ops.push(Op::Send(m.id));
        tasks[m.dst[0]].ops.push(Op::Recv(m.id));
    }
    for t in &mut tasks {
        let first_send = t.ops.iter().position(|o| matches!(o, Op::Send(_)));
        t.ops
            .insert(first_send.unwrap_or(t.ops.len()), Op::Compute(COMPUTE));
    }
    Traffic {
        tasks,
        messages,
        critical_path: 3 * (COMPUTE + PERIOD) + COMPUTE,
        ..Traffic::default()
    }
}

fn setup() -> (Traffic, Network, ttdl_backend::Placement) {
    let t = fft();
    let net = Network::build(&"mesh:4x4".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = place::place(&t, &net, PlaceMethod::Identity, 0).unwrap();
    (t, net, p)
}

#[test]
fn fft_shape_matches_the_thesis() {
    let t = fft();
    assert_eq!(t.messages.len(), 20);
    let m16 = &t.messages[16];
    assert_eq!((m16.src, m16.dst[0]), (8, 12));
    assert_eq!(m16.deadline - m16.release - m16.size, 4);
}

#[test]
fn dimension_order_overloads_a_link() {
    let (t, net, p) = setup();
    let r = route::route(&t, &net, &p, RouteMethod::Dor, 0).unwrap();
    let m = Metrics::compute(&t, &net, &p, &r);
    assert!(
        (m.peak_utilization - 16.0 / 12.0).abs() < 1e-9,
        "{}",
        m.peak_utilization
    );
}

#[test]
fn rerouting_brings_the_peak_to_one() {
    let (t, net, p) = setup();
    for seed in 0..4 {
        for initial in [RouteMethod::Dor, RouteMethod::Random] {
            let mut opts = RouteOptions::new(RouteMethod::Reroute, seed);
            opts.initial = initial;
            let (r, outcome) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
            let outcome = outcome.unwrap();
            let m = Metrics::compute(&t, &net, &p, &r);
            assert!(
                m.peak_utilization <= 1.0 + 1e-9,
                "seed {seed} from {initial}: peak {} ({outcome:?})",
                m.peak_utilization
            );
            assert!((outcome.final_peak - m.peak_utilization).abs() < 1e-9);
            if initial == RouteMethod::Dor {
                // One message of each colliding pair moved: M1 or M3, and M5 or M7.
                let moved = &outcome.rerouted;
                assert!(moved.iter().any(|&m| m == 1 || m == 3), "{moved:?}");
                assert!(moved.iter().any(|&m| m == 5 || m == 7), "{moved:?}");
            }
            // Every route still joins its tasks' nodes, within the misrouting bound.
            for (msg, route) in t.messages.iter().zip(&r.routes) {
                let ttdl_backend::Route::Path(path) = route else {
                    panic!("tree")
                };
                assert_eq!(path[0], p.node_of[msg.src]);
                assert_eq!(*path.last().unwrap(), p.node_of[msg.dst[0]]);
                assert!(path
                    .windows(2)
                    .all(|w| net.link_between(w[0], w[1]).is_some()));
                assert!(path.len() - 1 <= net.distance(path[0], *path.last().unwrap()) + 4);
            }
        }
    }
}

#[test]
fn interval_snapshots_show_the_collision() {
    use ttdl_backend::metrics::IntervalUtilization;
    let (t, net, p) = setup();
    let r = route::route(&t, &net, &p, RouteMethod::Dor, 0).unwrap();
    let iu = IntervalUtilization::compute(&t, &net, &r);
    assert_eq!(iu.cuts, vec![12, 24, 36, 48, 60, 72]);
    let (link, k, u) = iu.peak().unwrap();
    // First stage, [12, 24): two 8-word butterfly messages on one row link.
    assert_eq!(k, 0);
    assert!((u - 16.0 / 12.0).abs() < 1e-9);
    let l = net.links[link];
    assert_eq!(net.coords[l.from][1], 0, "a link of the first row");
}
