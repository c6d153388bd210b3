//! Property tests: random programs on random meshes and tori always give schedules the verifier
//! accepts (the schedulers verify before returning), and the replay delivers every message when
//! planned.

use crate::support::*;
use proptest::prelude::*;
use ttdl_backend::schedule::program::apply_ideal_timing;
use ttdl_backend::schedule::{self, Hardware, Method};
use ttdl_backend::sim::models::scheduled::replay;
use ttdl_backend::traffic::{Message, Op, Phase, Placement, Task, Traffic};

/// A random program: each task sends some messages to random peers; receivers read them in send
/// order after a little compute. Sends of a task come before its receives of the same round, so
/// no cycle of waits exists.
fn program(tasks: usize, rounds: Vec<Vec<(usize, usize, u64, u64)>>) -> Traffic {
    let mut t = Traffic::default();
    for i in 0..tasks {
        t.tasks.push(Task {
            id: i,
            name: format!("t{i}"),
            ..Task::default()
        });
    }
    t.phases.push(Phase {
        id: 0,
        name: "0".into(),
        start: 0,
    });
    for round in rounds {
        let mut reads: Vec<Vec<usize>> = vec![Vec::new(); tasks];
        for (src, dst, size, compute) in round {
            let (src, dst) = (src % tasks, dst % tasks);
            let id = t.messages.len();
            t.messages.push(Message {
                id,
                src,
                dst: vec![dst].into(),
                size,
                ..Message::default()
            });
            t.tasks[src].ops.push(Op::Compute(compute));
            t.tasks[src].ops.push(Op::Send(id));
            reads[dst].push(id);
        }
        for (task, ids) in reads.into_iter().enumerate() {
            for id in ids {
                t.tasks[task].ops.push(Op::Recv(id));
            }
        }
    }
    apply_ideal_timing(&mut t).unwrap();
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_programs_schedule_and_replay(
        torus in any::<bool>(),
        w in 2usize..5,
        h in 1usize..4,
        tasks in 2usize..10,
        rounds in prop::collection::vec(
            prop::collection::vec((0usize..64, 0usize..64, 1u64..12, 0u64..6), 1..6), 1..4),
        seed in 0usize..1000,
        ports in 1u32..3,
        latency in 0u64..2,
        buffer in prop_oneof![Just(None), Just(Some(0u32)), Just(Some(1)), Just(Some(2))],
    ) {
        let kind = if torus { "torus" } else { "mesh" };
        let net = net(&format!("{kind}:{w}x{h}"));
        let traffic = program(tasks, rounds);
        let placement = Placement {
            node_of: (0..tasks).map(|t| (t * 7 + seed) % net.nodes()).collect(),
        };
        let routing = route_all(&traffic, &net, &placement);
        let hw = Hardware { ports, hop_latency: latency, buffer, ..Hardware::default() };
        for method in [Method::Exact, Method::Lp] {
            let s = schedule::schedule(&traffic, &net, &placement, &routing, method, hw);
            let s = match s {
                Ok(s) => s,
                Err(e) => return Err(TestCaseError::fail(format!("{method:?}: {e}"))),
            };
            let r = replay::replay(&traffic, &net, &placement, &routing, &s)
                .map_err(|e| TestCaseError::fail(format!("{method:?}: {e}")))?;
            prop_assert_eq!(&r.delivered, &s.arrival);
            prop_assert!(s.makespan >= traffic.critical_path.min(s.makespan));
            // The replay measures the waiting words the plan states, within the buffers.
            let problem = schedule::Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
            let used = schedule::buffers::usage(&problem, &s.holds);
            prop_assert_eq!(r.max_buffered, used.max);
            prop_assert_eq!(used.over, None);
            if buffer == Some(0) {
                // Bufferless: every fragment on a clear path, each hop `latency` after the last.
                for (m, steps) in problem.steps.iter().enumerate() {
                    let on = |r| s.holds.iter().filter(|h| h.msg() == m && h.resource() == r)
                        .map(|h| h.start()).collect::<Vec<_>>();
                    for st in steps {
                        if let Some(p) = st.parent() {
                            let here = on(st.resource());
                            let before: Vec<u64> = on(steps[p].resource()).iter()
                                .map(|t| t + latency).collect();
                            prop_assert_eq!(here, before, "message {}", m);
                        }
                    }
                }
            }
        }
    }

    /// Fixed windows (as a tasks file gives them), with phases.
    #[test]
    fn random_windows_schedule(
        w in 2usize..5,
        h in 2usize..4,
        msgs in prop::collection::vec((0usize..16, 0usize..16, 1u64..10, 0u64..20, 0u64..30, 0usize..2), 1..30),
    ) {
        let net = net(&format!("mesh:{w}x{h}"));
        let n = net.nodes();
        let mut t = Traffic::default();
        for i in 0..n {
            t.tasks.push(Task { id: i, name: format!("t{i}"), ..Task::default() });
        }
        for (id, &(s, d, size, r, slack, phase)) in msgs.iter().enumerate() {
            t.messages.push(Message {
                id, src: s % n, dst: vec![d % n].into(), size, release: r + 40 * phase as u64,
                deadline: r + 40 * phase as u64 + slack, phase, ..Message::default()
            });
        }
        let placement = Placement { node_of: (0..n).collect() };
        let routing = route_all(&t, &net, &placement);
        for method in [Method::Exact, Method::Lp] {
            let s = schedule::schedule(&t, &net, &placement, &routing, method, Hardware::default())
                .map_err(|e| TestCaseError::fail(format!("{method:?}: {e}")))?;
            let r = replay::replay(&t, &net, &placement, &routing, &s)
                .map_err(|e| TestCaseError::fail(format!("{method:?}: {e}")))?;
            prop_assert_eq!(&r.delivered, &s.arrival);
        }
    }
}
