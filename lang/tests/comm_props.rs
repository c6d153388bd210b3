//! Properties of matching and timing on random programs.

use proptest::prelude::*;
use ttdl_lang::comm::{Comm, CommLimits};
use ttdl_lang::Span;

#[derive(Clone, Debug)]
enum Step {
    Write(usize, usize, u64),
    Read(usize, usize, u64),
    Compute(usize, u64),
    Sync(usize, u8),
}

fn step(tasks: usize) -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..tasks, 0..tasks, 1u64..4).prop_map(|(a, b, s)| Step::Write(a, b, s)),
        (0..tasks, 0..tasks, 1u64..4).prop_map(|(a, b, s)| Step::Read(a, b, s)),
        (0..tasks, 0u64..20).prop_map(|(a, c)| Step::Compute(a, c)),
        (0..tasks, 0u8..2).prop_map(|(a, p)| Step::Sync(a, p)),
    ]
}

fn build(tasks: usize, steps: &[Step]) -> Comm {
    let mut c = Comm::new(CommLimits::default());
    for i in 0..tasks {
        c.fresh_task(&format!("t{i}"), Span::default()).unwrap();
    }
    for (i, s) in steps.iter().enumerate() {
        let sp = Span::new(0, i, i + 1);
        let r = match *s {
            Step::Write(a, b, n) => c.write(a, b, n, None, sp),
            Step::Read(a, b, n) => c.read(a, b, n, None, sp),
            Step::Compute(a, n) => c.compute(a, n, sp),
            Step::Sync(a, p) => c.synchronize(a, &p.to_string(), sp),
        };
        r.unwrap();
    }
    c
}

proptest! {
    /// Whatever the program, `finish` either times it consistently or explains what is wrong.
    #[test]
    fn timing_is_consistent_or_explained(steps in prop::collection::vec(step(4), 0..60)) {
        match build(4, &steps).finish() {
            Ok(t) => {
                for m in &t.messages {
                    prop_assert!(m.release + m.size <= m.deadline, "{m:?}");
                    prop_assert!(m.release + m.size <= t.critical_path);
                }
                // Every message is sent once and received once per destination.
                let mut sends = vec![0; t.messages.len()];
                let mut recvs = vec![0; t.messages.len()];
                for task in &t.tasks {
                    for op in &task.ops {
                        match op {
                            ttdl_ir::traffic::Op::Send(m) => sends[*m] += 1,
                            ttdl_ir::traffic::Op::Recv(m) => recvs[*m] += 1,
                            _ => {}
                        }
                    }
                }
                prop_assert!(sends.iter().all(|&n| n == 1));
                prop_assert!(recvs.iter().zip(&t.messages).all(|(&n, m)| n == m.dst.len()));
            }
            Err(ds) => {
                prop_assert!(!ds.is_empty());
                for d in ds {
                    prop_assert!(
                        ["unmatched-read", "unmatched-write", "size-mismatch", "deadlock"]
                            .contains(&d.code.as_str()),
                        "{d:?}"
                    );
                    prop_assert!(!d.labels.is_empty() && d.help.is_some());
                }
            }
        }
    }

    /// Writes never wait: a program whose every task writes all its messages before reading
    /// any always matches and never deadlocks, in whatever order the tasks are evaluated.
    #[test]
    fn writes_first_never_deadlocks(
        pairs in prop::collection::vec((0usize..5, 0usize..5, 1u64..9), 0..40),
        order in Just((0..5).collect::<Vec<usize>>()).prop_shuffle(),
    ) {
        let mut c = Comm::new(CommLimits::default());
        for i in 0..5 {
            c.fresh_task(&format!("t{i}"), Span::default()).unwrap();
        }
        for &t in &order {
            for &(a, b, n) in &pairs {
                if a == t {
                    c.write(a, b, n, None, Span::default()).unwrap();
                }
            }
            for &(a, b, n) in &pairs {
                if b == t {
                    c.read(b, a, n, None, Span::default()).unwrap();
                }
            }
        }
        let t = c.finish().unwrap();
        prop_assert_eq!(t.messages.len(), pairs.len());
    }
}
