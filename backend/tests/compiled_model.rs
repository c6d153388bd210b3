//! The compiled-communication model running programs: one word per connection per frame,
//! phases and reconfiguration, run-time connections, parameter errors.

use ttdl_backend::sim::drive::command_file::drive;
use ttdl_backend::sim::models::compiled::{patterns, CompiledModel, CompiledParams, CompiledPlan};
use ttdl_backend::sim::NetworkModel;
use ttdl_backend::topology::{Network, NetworkSpec};
use ttdl_backend::traffic::{Message, Placement, Traffic};

fn net(spec: &str) -> Network {
    Network::build(&spec.parse::<NetworkSpec>().unwrap()).unwrap()
}

/// A program whose messages are `(src, dst, size, phase)`, tasks placed on nodes of the same id.
fn program(nodes: usize, msgs: &[(usize, usize, u64, usize)]) -> (Traffic, Placement) {
    let traffic = Traffic {
        messages: msgs
            .iter()
            .enumerate()
            .map(|(id, &(src, dst, size, phase))| Message {
                id,
                src,
                dst: vec![dst].into(),
                size,
                phase,
                ..Message::default()
            })
            .collect(),
        ..Traffic::default()
    };
    let placement = Placement {
        node_of: (0..nodes).collect(),
    };
    (traffic, placement)
}

/// A single connection on a degree-1 network is a circuit: once its configuration is loaded (3
/// cycles, the default reconfiguration cost, paid by the first phase like every other), 8 words
/// arrive 8 cycles later (SPEC §2 ideal timing).
#[test]
fn single_connection_is_a_circuit() {
    let ring = net("ring:4");
    let (t, p) = program(4, &[(0, 1, 8, 0)]);
    let mut m = CompiledModel::for_traffic(&ring, &t, &p, None, CompiledParams::default()).unwrap();
    let files = vec![vec![(1, 8)], vec![], vec![], vec![]];
    let s = drive(&mut m, &files, 1, 1000);
    assert_eq!((s.completion, s.total_latency, s.stuck), (3 + 8, 3 + 8, 0));
    assert_eq!(m.name(), "compiled best d=1 phases=1");
}

/// Yuan Table 6.2, GS: a logical linear array on the 8×8 torus, each PE sending 64 packets to
/// both neighbours; the pattern needs d = 2, so the step takes d × 64 = 128 slots after the
/// 3-cycle reconfiguration that loads them: 131, as printed.
#[test]
fn gauss_seidel_step_takes_d_times_packets() {
    let torus = net("torus:8x8");
    let mut msgs = Vec::new();
    for i in 0..64usize {
        if i + 1 < 64 {
            msgs.push((i, i + 1, 64, 0));
        }
        if i > 0 {
            msgs.push((i, i - 1, 64, 0));
        }
    }
    let (t, p) = program(64, &msgs);
    let mut m =
        CompiledModel::for_traffic(&torus, &t, &p, None, CompiledParams::default()).unwrap();
    assert_eq!(m.degrees(), vec![2]);
    let mut files = vec![Vec::new(); 64];
    for &(s, d, size, _) in &msgs {
        files[s].push((d, size));
    }
    let s = drive(&mut m, &files, usize::MAX, 100_000);
    assert_eq!((s.completion, s.stuck), (3 + 128, 0));
    // Every word crosses exactly the links of its route.
    let busy: u64 = m.link_busy().iter().sum();
    let hops: u64 = msgs
        .iter()
        .map(|&(s, d, size, _)| patterns::route(&torus, s, d).unwrap().len() as u64 * size)
        .sum();
    assert_eq!(busy, hops);
}

/// Two phases that each need one configuration but conflict with each other: the model loads
/// the first (cost 5), runs it, reconfigures (cost 5), then runs the second. With a phase
/// capacity of 2 both fit in one phase, loaded once, at twice the frame length.
#[test]
fn phases_reconfigure() {
    let ring = net("ring:4");
    let msgs = [(0, 1, 4, 0), (0, 2, 4, 1)];
    let (t, p) = program(4, &msgs);
    let params = CompiledParams {
        reconfig: 5,
        ..CompiledParams::default()
    };
    let mut m = CompiledModel::for_traffic(&ring, &t, &p, None, params.clone()).unwrap();
    assert_eq!(m.degrees(), vec![1, 1]);
    let files = vec![vec![(1, 4), (2, 4)], vec![], vec![], vec![]];
    let s = drive(&mut m, &files, 1, 1000);
    assert_eq!((s.completion, m.reconfigurations), (5 + 4 + 5 + 4, 2));

    let merged = CompiledParams {
        capacity: Some(2),
        ..params
    };
    let mut m = CompiledModel::for_traffic(&ring, &t, &p, None, merged).unwrap();
    assert_eq!(m.degrees(), vec![2]);
    let s = drive(&mut m, &files, 1, 1000);
    // After the load (cycles 0..5), each message gets one slot in two: 0→1 in cycles 6..12
    // (arrives 13), then 0→2 in cycles 13..19 (arrives 20).
    assert_eq!((s.completion, m.reconfigurations), (5 + 15, 1));
}

/// A phase needing more than the capacity is cut into parts of at most the capacity.
#[test]
fn capacity_cuts_a_large_pattern() {
    let torus = net("torus:4x4");
    let pairs = patterns::all_to_all(16);
    let msgs: Vec<(usize, usize, u64, usize)> = pairs.iter().map(|&(s, d)| (s, d, 1, 0)).collect();
    let (t, p) = program(16, &msgs);
    let params = CompiledParams {
        capacity: Some(3),
        ..CompiledParams::default()
    };
    let plan = CompiledPlan::from_traffic(&torus, &t, &p, None, &params).unwrap();
    assert!(plan.phases.len() > 1);
    assert!(plan.phases.iter().all(|ph| ph.degree() <= 3));
    let conns: usize = plan.phases.iter().map(|ph| ph.conns.len()).sum();
    assert_eq!(conns, 240);
    for ph in &plan.phases {
        ph.configs.verify(&ph.conns).unwrap();
    }
}

/// Traffic nobody planned for gets connections at run time (first fit, in arrival order) and is
/// all delivered; same seed, same result.
#[test]
fn unplanned_traffic_is_served() {
    let torus = net("torus:4x4");
    let files: Vec<Vec<(usize, u64)>> = (0..16)
        .map(|i| {
            (1..16)
                .map(|k| ((i + k * 5) % 16, 3))
                .filter(|&(d, _)| d != i)
                .collect()
        })
        .collect();
    let run = || {
        let mut m = CompiledModel::new(&torus, CompiledPlan::default(), CompiledParams::default());
        let s = drive(&mut m, &files, 2, 1_000_000);
        (s, m.unplanned)
    };
    let (a, unplanned) = run();
    assert_eq!(a.stuck, 0);
    assert_eq!(
        a.messages,
        files.iter().map(|f| f.len() as u64).sum::<u64>()
    );
    assert!(unplanned > 0);
    assert_eq!(run().0, a);
}

#[test]
fn bad_parameters_are_errors() {
    let mut p = CompiledParams::default();
    assert!(p.set("capacity", "0").is_err());
    assert!(p.set("capacity", "-1").is_err());
    assert!(p.set("algorithm", "magic").is_err());
    assert!(p.set("speed", "1").is_err());
    assert!(p.set("algorithm", "coloring").is_ok());
    // Ordered AAPC on a mesh has no AAPC phases.
    let mesh = net("mesh:4x4");
    let (t, pl) = program(16, &[(0, 5, 1, 0)]);
    let aapc = CompiledParams {
        algorithm: "aapc".parse().unwrap(),
        ..CompiledParams::default()
    };
    let err = CompiledPlan::from_traffic(&mesh, &t, &pl, None, &aapc).unwrap_err();
    assert!(err.to_string().contains("ring or torus"), "{err}");
    // A task without a node.
    let (t, _) = program(2, &[(0, 1, 1, 0)]);
    let none = Placement { node_of: vec![0] };
    assert!(
        CompiledPlan::from_traffic(&mesh, &t, &none, None, &CompiledParams::default()).is_err()
    );
}
