//! Rerouting respects the maximum misrouting distance (Minsky §4.2.2, footnote 13): a message may
//! leave its shortest path only by as many hops as its slack allows.

use ttdl_backend::metrics::Metrics;
use ttdl_backend::place::Schedule;
use ttdl_backend::route::{self, RouteMethod, RouteOptions};
use ttdl_backend::traffic::{Message, Placement, Route, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

/// Two 4-word messages between neighbouring nodes 0 and 1 of a 3×3 mesh, both in `[0, window)`.
fn pair(window: u64) -> Traffic {
    Traffic {
        tasks: (0..2)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: (0..2)
            .map(|id| Message {
                id,
                src: 0,
                dst: vec![1].into(),
                size: 4,
                release: 0,
                deadline: window,
                ..Message::default()
            })
            .collect(),
        ..Traffic::default()
    }
}

fn run(window: u64) -> (Vec<Route>, f64) {
    let t = pair(window);
    let net = Network::build(&"mesh:3x3".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = Placement {
        node_of: vec![0, 1],
    };
    let opts = RouteOptions::new(RouteMethod::Reroute, 9);
    let (r, _) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
    let peak = Metrics::compute(&t, &net, &p, &r).peak_utilization;
    (r.routes, peak)
}

#[test]
fn slack_of_two_allows_a_detour() {
    let (routes, peak) = run(6);
    assert!((peak - 4.0 / 6.0).abs() < 1e-9, "{peak}");
    let mut lens: Vec<usize> = routes
        .iter()
        .map(|r| match r {
            Route::Path(p) => p.len() - 1,
            Route::Tree(_) => 0,
        })
        .collect();
    lens.sort_unstable();
    assert_eq!(lens, vec![1, 3]);
}

#[test]
fn slack_of_one_forbids_it() {
    let (routes, peak) = run(5);
    assert!((peak - 8.0 / 5.0).abs() < 1e-9, "{peak}");
    assert!(routes.iter().all(|r| *r == Route::Path(vec![0, 1])));
}

/// Many messages crowded onto a 4×4 mesh: rerouting has plenty to do.
fn crowd(messages: usize) -> Traffic {
    Traffic {
        tasks: (0..16)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: (0..messages)
            .map(|id| Message {
                id,
                src: id % 16,
                dst: vec![(id * 7 + 5) % 16].into(),
                size: 4,
                release: 0,
                deadline: 8,
                ..Message::default()
            })
            .collect(),
        ..Traffic::default()
    }
}

#[test]
fn rerouting_stops_at_the_step_cap_and_says_so() {
    assert_eq!(route::default_max_steps(10), 2_000);
    assert_eq!(route::default_max_steps(1_000), 8_000);
    let t = crowd(64);
    let net = Network::build(&"mesh:4x4".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = Placement {
        node_of: (0..16).collect(),
    };
    let mut opts = RouteOptions::new(RouteMethod::Reroute, 1);
    opts.max_steps = Some(5);
    let (_, outcome) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
    let o = outcome.unwrap();
    assert_eq!((o.steps, o.step_cap, o.capped), (5, 5, true));
    // Under the default cap (2,000 steps for 64 messages) a short schedule ends on its own.
    opts.max_steps = None;
    let mut schedule = Schedule::linear(5.0, 4, 20, 0);
    schedule.bail_out_t = f64::INFINITY;
    opts.schedule = Some(schedule);
    let (_, outcome) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
    let o = outcome.unwrap();
    assert_eq!(o.step_cap, 2_000);
    assert!(o.steps > 5 && o.steps < 2_000, "{o:?}");
    assert!(!o.capped);
    assert!(o.final_peak < o.initial_peak, "{o:?}");
}

/// A 4-word multicast from node 0 to nodes 2 and 6 of a 3×3 mesh shares link 0→1 with two
/// 6-word unicast messages that have no slack in their common window of 6, so only the tree can
/// make way: its branch to node 2 leaves over the kept branch 0→3 and comes round in four hops,
/// within its slack of two extra hops.
#[test]
fn a_multicast_branch_moves_off_the_peak_link() {
    let msg = |id: usize, dst: Vec<usize>, size: u64| Message {
        id,
        src: 0,
        dst: dst.into(),
        size,
        release: 0,
        deadline: 6,
        ..Message::default()
    };
    let t = Traffic {
        tasks: (0..9)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: vec![
            msg(0, vec![2, 6], 4),
            msg(1, vec![1], 6),
            msg(2, vec![1], 6),
        ],
        ..Traffic::default()
    };
    let net = Network::build(&"mesh:3x3".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = Placement {
        node_of: (0..9).collect(),
    };
    let dor = route::route(&t, &net, &p, RouteMethod::Dor, 0).unwrap();
    assert_eq!(
        dor.routes[0],
        Route::Tree(vec![(0, 1), (1, 2), (0, 3), (3, 6)])
    );
    let before = Metrics::compute(&t, &net, &p, &dor).peak_utilization;
    assert!((before - (2.0 + 4.0 / 6.0)).abs() < 1e-9, "{before}");
    let opts = RouteOptions::new(RouteMethod::Reroute, 2);
    let (r, outcome) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
    let o = outcome.unwrap();
    assert_eq!(o.rerouted, vec![0]);
    assert!((o.final_peak - 2.0).abs() < 1e-9, "{o:?}");
    // The branch to node 2 now leaves by the kept 0→3 and takes four hops (3→4→1→2 or 3→4→5→2
    // cost the same); node 6 keeps its branch.
    let Route::Tree(edges) = &r.routes[0] else {
        panic!("multicast lost its tree")
    };
    assert!(!edges.contains(&(0, 1)), "{edges:?}");
    assert_eq!(edges.len(), 5, "{edges:?}");
    assert!(edges.contains(&(0, 3)) && edges.contains(&(3, 6)) && edges.contains(&(3, 4)));
    assert!(edges.iter().any(|&(_, b)| b == 2));
    assert_eq!(Metrics::compute(&t, &net, &p, &r).peak_utilization, 2.0);
}
