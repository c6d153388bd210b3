//! The execution-driven core on hand-built programs: compute, non-blocking send, blocking
//! receive, barriers, multicasts, local delivery, determinism and clean errors.

use std::fmt::Write;

use expect_test::expect;
use ttdl_backend::sim::drive::program::{default_placement, simulate, SimOptions, SimReport};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::{Message, Network, Op, Placement, Task, Traffic};

fn msg(id: usize, src: usize, dst: &[usize], size: u64) -> Message {
    Message {
        id,
        src,
        dst: dst.into(),
        size,
        ..Message::default()
    }
}

fn task(id: usize, ops: Vec<Op>) -> Task {
    Task {
        id,
        name: format!("t{id}"),
        ops,
        ..Task::default()
    }
}

/// Eight tasks: a phase barrier, a shift by three with different compute times, a multicast
/// from t0, and a local message t0 → t0's node mate t8 (placed on the same node).
fn program() -> Traffic {
    let n = 8;
    let mut ops: Vec<Vec<Op>> = (0..=n).map(|_| Vec::new()).collect();
    let mut messages = Vec::new();
    for (i, o) in ops.iter_mut().enumerate().take(n) {
        o.push(Op::Sync(0));
        o.push(Op::Compute(5 * i as u64));
        messages.push(msg(i, i, &[(i + 3) % n], 24));
        o.push(Op::Send(i));
    }
    for i in 0..n {
        ops[(i + 3) % n].push(Op::Recv(i));
    }
    messages.push(msg(n, 0, &[2, 5, 7], 10));
    ops[0].push(Op::Send(n));
    for d in [2, 5, 7] {
        ops[d].push(Op::Recv(n));
    }
    messages.push(msg(n + 1, 0, &[n], 6));
    ops[0].push(Op::Send(n + 1));
    ops[n].push(Op::Recv(n + 1));
    ops[n].push(Op::Compute(1));
    Traffic {
        tasks: ops
            .into_iter()
            .enumerate()
            .map(|(i, o)| task(i, o))
            .collect(),
        messages,
        ..Traffic::default()
    }
}

fn run(spec: &str, net: &str, traffic: &Traffic, placement: Option<Placement>) -> SimReport {
    let net = Network::build(&net.parse().unwrap()).unwrap();
    let placement = placement.unwrap_or_else(|| default_placement(traffic, &net));
    let ctx = ModelContext::new(&net)
        .with_program(traffic, &placement)
        .with_seed(3)
        .with_planner(&ttdl_backend::pipeline::Pipeline);
    let mut model = registry::build(spec, &ctx).unwrap();
    simulate(
        traffic,
        &placement,
        &net,
        model.as_mut(),
        &SimOptions::default(),
    )
    .unwrap()
}

#[test]
fn program_on_every_switching_model() {
    let traffic = program();
    // t8 shares node 0 with t0 (task i on node i mod 8 on a 2x4 mesh).
    let mut out = String::new();
    for spec in [
        "wormhole",
        "wormhole vc=2 buf=4 arb=rr",
        "circuit",
        "store-forward",
    ] {
        let r = run(spec, "mesh:4x2", &traffic, None);
        let _ = writeln!(
            out,
            "{:<32} completion {:>4}  mean {:>6.2}  max {:>3}  words {}",
            r.model, r.completion, r.latency.mean, r.latency.max, r.words
        );
        // The local message takes exactly its size.
        let local = &r.messages[9];
        assert!(local.local);
        assert_eq!(local.latency, 6);
        // Nobody receives before the message was sent plus its size.
        for m in &r.messages {
            assert!(m.delivered >= m.sent + m.size, "{spec}: {m:?}");
        }
        // The barrier: t7 computes 35 cycles after it, so it cannot finish before.
        assert!(r.tasks[7].finish >= 35);
    }
    expect![[r#"
        wormhole vc=1 buf=2              completion   95  mean  26.00  max  44  words 228
        wormhole vc=2 buf=4 arb=rr       completion   87  mean  26.00  max  36  words 228
        circuit                          completion  105  mean  28.60  max  52  words 228
        store-forward                    completion  133  mean  49.80  max  72  words 228
    "#]]
    .assert_eq(&out);
}

#[test]
fn same_seed_same_bytes() {
    let traffic = program();
    for spec in [
        "wormhole vc=2 arb=biased",
        "circuit",
        "store-forward arb=oldest",
    ] {
        let a = serde_json::to_string(&run(spec, "torus:4x2", &traffic, None)).unwrap();
        let b = serde_json::to_string(&run(spec, "torus:4x2", &traffic, None)).unwrap();
        assert_eq!(a, b, "{spec}");
    }
}

#[test]
fn contention_makes_messages_wait() {
    // Four tasks on a line all send 40 words to the far end: they share the last link.
    let traffic = Traffic {
        tasks: vec![
            task(0, vec![Op::Send(0)]),
            task(1, vec![Op::Send(1)]),
            task(2, vec![Op::Send(2)]),
            task(3, vec![Op::Recv(0), Op::Recv(1), Op::Recv(2)]),
        ],
        messages: vec![
            msg(0, 0, &[3], 40),
            msg(1, 1, &[3], 40),
            msg(2, 2, &[3], 40),
        ],
        ..Traffic::default()
    };
    for spec in ["wormhole", "circuit", "store-forward"] {
        let r = run(spec, "line:4", &traffic, None);
        // The ejection port (or the last link) serializes 120 words.
        assert!(r.completion >= 120, "{spec}: {}", r.completion);
        let busiest = r.links.iter().map(|l| l.busy).max().unwrap();
        assert_eq!(busiest, 120, "{spec}");
    }
}

#[test]
fn waiting_forever_is_an_error_naming_the_tasks() {
    // t0 waits for m1 before sending m0, t1 waits for m0 before sending m1.
    let traffic = Traffic {
        tasks: vec![
            task(0, vec![Op::Recv(1), Op::Send(0)]),
            task(1, vec![Op::Recv(0), Op::Send(1)]),
        ],
        messages: vec![msg(0, 0, &[1], 4), msg(1, 1, &[0], 4)],
        ..Traffic::default()
    };
    let net = Network::build(&"mesh:2x2".parse().unwrap()).unwrap();
    let placement = default_placement(&traffic, &net);
    let ctx = ModelContext::new(&net).with_program(&traffic, &placement);
    let mut model = registry::build("wormhole", &ctx).unwrap();
    let err = simulate(
        &traffic,
        &placement,
        &net,
        model.as_mut(),
        &SimOptions::default(),
    )
    .unwrap_err();
    expect!["did not finish after 0 cycles (deadlock): t0 (waiting for message 1), t1 (waiting for message 0) never complete"].assert_eq(&err.to_string());
}

#[test]
fn scheduled_plan_runs_the_program() {
    let traffic = program();
    let r = run("scheduled", "mesh:4x2", &traffic, None);
    assert!(r.model.starts_with("scheduled"));
    for m in &r.messages {
        assert!(m.delivered >= m.sent + m.size, "{m:?}");
    }
    // A collision-free plan is never slower than store-and-forward on this program.
    let sf = run("store-forward", "mesh:4x2", &traffic, None);
    assert!(
        r.completion <= sf.completion,
        "{} > {}",
        r.completion,
        sf.completion
    );
}

#[test]
fn bad_models_and_options_are_errors() {
    let net = Network::build(&"mesh:4x4".parse().unwrap()).unwrap();
    let ctx = ModelContext::new(&net);
    let err = |spec: &str| registry::build(spec, &ctx).err().map(|e| e.to_string());
    assert!(err("warp-drive")
        .is_some_and(|e| e.starts_with("unknown model `warp-drive`; known models: ")));
    expect![[r#"
        [
            Some(
                "model `wormhole` has no option `vcs`; its options are: vc=(2 on tori, else 1) buf=2 delay=0 overhead=0 arb=oldest|fifo|biased|rr pr=separate|shared routing=dor|west-first|odd-even packet=0",
            ),
            Some(
                "option `vc=0`: must be between 1 and 64",
            ),
            Some(
                "option `arb=random`: expected one of oldest, fifo, biased, rr",
            ),
            Some(
                "option `setup=x`: expected a non-negative integer",
            ),
            Some(
                "the scheduled model plans a whole program; it cannot run synthetic traffic",
            ),
        ]
    "#]].assert_debug_eq(&[
        err("wormhole vcs=2"),
        err("wormhole vc=0"),
        err("wormhole arb=random"),
        err("circuit setup=x"),
        err("scheduled"),
    ]);
    let torus = Network::build(&"torus:4x4".parse().unwrap()).unwrap();
    let ctx = ModelContext::new(&torus);
    assert!(registry::build("wormhole vc=1", &ctx).is_err());
    assert!(registry::build("wormhole routing=odd-even", &ctx).is_err());
}

#[test]
fn a_shared_processor_router_channel_serializes_sending_and_receiving() {
    // Two neighbours exchange 100 words at once (Chittor's AA-1NN): with a channel each way
    // the exchange takes one message time, with one shared channel (`pr=shared`) two, the
    // node's sends and receives taking turns flit by flit.
    let traffic = Traffic {
        tasks: vec![
            task(0, vec![Op::Send(0), Op::Recv(1)]),
            task(1, vec![Op::Send(1), Op::Recv(0)]),
        ],
        messages: vec![msg(0, 0, &[1], 100), msg(1, 1, &[0], 100)],
        ..Traffic::default()
    };
    let lone = run("wormhole", "line:2", &traffic, None).completion;
    assert_eq!(lone, 101, "t_wh = a + C2·D + (L − 1) = 1 + 1 + 99");
    let shared = run("wormhole pr=shared", "line:2", &traffic, None);
    assert!(
        (2 * 100..=2 * 100 + 2).contains(&shared.completion),
        "{}",
        shared.completion
    );
    assert!(
        shared.messages.iter().all(|m| m.latency >= 199),
        "{:?}",
        shared.messages
    );
    // One way only: nothing to share with, so no cost.
    let one_way = Traffic {
        tasks: vec![task(0, vec![Op::Send(0)]), task(1, vec![Op::Recv(0)])],
        messages: vec![msg(0, 0, &[1], 100)],
        ..Traffic::default()
    };
    assert_eq!(
        run("wormhole pr=shared", "line:2", &one_way, None).completion,
        101
    );
}
