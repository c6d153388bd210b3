//! The compiled and PMS models run programs through the execution-driven core and the model
//! registry, like `ttdl simulate` does.

use ttdl_backend::sim::drive::program::{simulate, SimOptions};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::{Message, Network, Op, Placement, Task, Traffic};

/// A pipeline t0 → t1 → t2 on a ring of 4: message 0 (8 words) in phase 0, message 1 (8 words)
/// in phase 1, sent when message 0 has arrived.
fn pipeline() -> Traffic {
    let task = |id: usize, ops: Vec<Op>| Task {
        id,
        name: format!("t{id}"),
        ops,
        ..Task::default()
    };
    let msg = |id: usize, src: usize, dst: usize, phase: usize| Message {
        id,
        src,
        dst: vec![dst].into(),
        size: 8,
        phase,
        ..Message::default()
    };
    Traffic {
        tasks: vec![
            task(0, vec![Op::Send(0)]),
            task(1, vec![Op::Recv(0), Op::Send(1)]),
            task(2, vec![Op::Recv(1)]),
        ],
        messages: vec![msg(0, 0, 1, 0), msg(1, 1, 2, 1)],
        ..Traffic::default()
    }
}

fn run(spec: &str, traffic: &Traffic) -> (String, u64, Vec<u64>) {
    run_on("ring:4", spec, traffic)
}

fn run_on(network: &str, spec: &str, traffic: &Traffic) -> (String, u64, Vec<u64>) {
    let net = Network::build(&network.parse().unwrap()).unwrap();
    let placement = Placement {
        node_of: vec![0, 1, 2],
    };
    let ctx = ModelContext::new(&net).with_program(traffic, &placement);
    let mut model = registry::build(spec, &ctx).unwrap();
    let report = simulate(
        traffic,
        &placement,
        &net,
        model.as_mut(),
        &SimOptions::default(),
    )
    .unwrap();
    let lat = report.messages.iter().map(|m| m.latency).collect();
    (report.model, report.completion, lat)
}

/// Each phase is one configuration (d = 1, a circuit): the network loads phase 0 (3 cycles) and
/// message 0 arrives at 11; it then reconfigures for phase 1 (3 cycles) and message 1 arrives 8
/// cycles later, at 22. With a phase capacity of 2 both connections share one phase, loaded once.
#[test]
fn compiled_runs_a_program() {
    let t = pipeline();
    assert_eq!(
        run("compiled", &t),
        ("compiled best d=1 phases=2".into(), 22, vec![11, 11])
    );
    assert_eq!(run("compiled reconfig=0", &t).1, 16);
    let (name, completion, _) = run("compiled capacity=2", &t);
    assert_eq!(
        (name.as_str(), completion),
        ("compiled best d=1 phases=1 capacity=2", 19)
    );
}

/// The PMS crossbar: the first use of each connection pays request + schedule + grant and the
/// slot alignment; preloading removes the set-up.
#[test]
fn pms_runs_a_program() {
    let t = pipeline();
    let (name, dynamic, _) = run_on("crossbar:4", "pms", &t);
    assert_eq!(name, "pms K=4 dynamic predictor=timeout=80");
    let (name, preload, lat) = run_on("crossbar:4", "pms preload=4", &t);
    assert_eq!(name, "pms K=4 preload predictor=timeout=80");
    assert!(preload < dynamic, "{preload} vs {dynamic}");
    // Preloaded: 8 words leave at the first slot boundary, then the 10-cycle pipe.
    assert_eq!(lat[0], 18);
}

#[test]
fn bad_options_are_errors() {
    let t = pipeline();
    let net = Network::build(&"ring:4".parse().unwrap()).unwrap();
    let placement = Placement {
        node_of: vec![0, 1, 2],
    };
    let ctx = ModelContext::new(&net).with_program(&t, &placement);
    for spec in [
        "compiled capacity=0",
        "compiled algorithm=optimal",
        "compiled colour=1",
        "pms slots=0",
        "pms preload=5",
        "pms predictor=oracle",
    ] {
        assert!(registry::build(spec, &ctx).is_err(), "{spec}");
    }
}

/// PMS off the crossbar: on a mesh each connection is a circuit over its route, so a preloaded
/// one-hop message takes the crossbar's 18 cycles plus one link's wire (2 cycles).
#[test]
fn pms_runs_on_a_mesh() {
    let t = pipeline();
    let (name, dynamic, _) = run_on("mesh:2x2", "pms", &t);
    assert_eq!(name, "pms K=4 dynamic predictor=timeout=80");
    let (_, preload, lat) = run_on("mesh:2x2", "pms preload=4", &t);
    assert!(preload < dynamic, "{preload} vs {dynamic}");
    assert_eq!(lat[0], 20);
}
