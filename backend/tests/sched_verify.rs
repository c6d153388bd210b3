//! The verifier rejects every kind of broken schedule (SPEC §2 "valid"): each test breaks one
//! rule in an otherwise valid Jacobi schedule and expects the verifier to name it.

use crate::support::*;
use ttdl_backend::schedule::{self, verify, Hardware, Hold, Method, Problem, Resource, Schedule};

fn fixture() -> (
    ttdl_backend::Traffic,
    ttdl_backend::Network,
    ttdl_backend::Placement,
    ttdl_backend::Routing,
) {
    let (traffic, placement) = jacobi2d(4, 8, 0);
    let net = net("mesh:4x4");
    let routing = route_all(&traffic, &net, &placement);
    (traffic, net, placement, routing)
}

fn check(mutate: impl FnOnce(&mut Schedule), expect: &str) {
    let (traffic, net, placement, routing) = fixture();
    let hw = Hardware::default();
    let mut s =
        schedule::schedule(&traffic, &net, &placement, &routing, Method::Exact, hw).unwrap();
    let problem = Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
    assert_eq!(verify::verify(&problem, &s), Ok(()));
    mutate(&mut s);
    let err = verify::verify(&problem, &s).expect_err("the verifier must reject this");
    assert!(err.0.contains(expect), "expected `{expect}` in: {err}");
}

fn link_hold(s: &Schedule, msg: usize) -> usize {
    s.holds
        .iter()
        .position(|h| h.msg() == msg && matches!(h.resource(), Resource::Link { .. }))
        .unwrap()
}

#[test]
fn a_hold_off_the_route() {
    check(
        |s| {
            // A copy of message 0's first link hold under message 1's name.
            let i = link_hold(s, 0);
            let h = s.holds[i];
            s.holds
                .push(Hold::new(1, h.resource(), h.start(), h.end()).unwrap());
        },
        "which is not on its route",
    );
}

#[test]
fn link_capacity_is_one() {
    let (traffic, net, placement, routing) = fixture();
    let hw = Hardware::default();
    let mut s =
        schedule::schedule(&traffic, &net, &placement, &routing, Method::Exact, hw).unwrap();
    let problem = Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
    // Two different messages whose routes share a link: shift one onto the other's cycles.
    let mut found = None;
    'outer: for a in &s.holds {
        for b in &s.holds {
            if a.msg() != b.msg()
                && a.resource() == b.resource()
                && matches!(a.resource(), Resource::Link { .. })
            {
                found = Some((*a, *b));
                break 'outer;
            }
        }
    }
    let (a, b) = found.expect("two messages share a link");
    let delta = b.start() as i64 - a.start() as i64;
    for h in s.holds.iter_mut().filter(|h| h.msg() == a.msg()) {
        *h = h
            .at(
                (h.start() as i64 + delta) as u64,
                (h.end() as i64 + delta) as u64,
            )
            .unwrap();
    }
    let err = verify::verify(&problem, &s).expect_err("collision");
    assert!(err.0.contains("is held by 2 messages"), "{err}");
}

#[test]
fn before_release() {
    let (mut traffic, net, placement, routing) = fixture();
    let hw = Hardware::default();
    let s = schedule::schedule(&traffic, &net, &placement, &routing, Method::Exact, hw).unwrap();
    // The same schedule against a program whose message 16 is released one cycle later.
    traffic.messages[16].release += 1;
    traffic.messages[16].deadline += 1;
    let problem = Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
    let err = verify::verify(&problem, &s).expect_err("early");
    assert!(err.0.contains("before its release"), "{err}");
}

#[test]
fn causality() {
    check(
        |s| {
            // Message 48 goes last from its node: inject it one cycle later than its link starts.
            let i = s
                .holds
                .iter()
                .position(|h| h.msg() == 48 && matches!(h.resource(), Resource::Inject(_)))
                .unwrap();
            let h = s.holds[i];
            s.holds[i] = h.at(h.start() + 1, h.end() + 1).unwrap();
        },
        "(causality)",
    );
}

#[test]
fn missing_words() {
    check(
        |s| {
            let i = link_hold(s, 0);
            let h = s.holds[i];
            s.holds[i] = h.at(h.start(), h.end() - 1).unwrap();
        },
        "carries 7 of its 8 words",
    );
}

#[test]
fn unreported_late_message() {
    check(
        |s| {
            for h in s.holds.iter_mut().filter(|h| h.msg() == 5) {
                *h = h.at(h.start() + 100, h.end() + 100).unwrap();
            }
            s.sent[5] += 100;
            s.arrival[5] += 100;
            s.deadline[5] += 100;
        },
        "without being reported",
    );
}

#[test]
fn not_on_route() {
    check(
        |s| {
            let h = s.holds[0];
            let off = Resource::Link { from: 14, to: 15 };
            s.holds.push(Hold::new(0, off, h.start(), h.end()).unwrap());
        },
        "not on its route",
    );
}

/// A message of `size` words from node 0 to node 2 of a 3×1 mesh, its window wide open, planned
/// with switch buffers of `buffer` words.
fn one_message(
    size: u64,
    buffer: Option<u32>,
    latency: u64,
) -> (
    ttdl_backend::Traffic,
    ttdl_backend::Network,
    ttdl_backend::Placement,
    ttdl_backend::Routing,
    Hardware,
) {
    use ttdl_backend::traffic::{Message, Task, Traffic};
    let net = net("mesh:3x1");
    let mut traffic = Traffic::default();
    for i in 0..3 {
        traffic.tasks.push(Task {
            id: i,
            name: format!("t{i}"),
            ..Task::default()
        });
    }
    traffic.messages.push(Message {
        id: 0,
        src: 0,
        dst: vec![2].into(),
        size,
        deadline: 10_000,
        ..Message::default()
    });
    let placement = ttdl_backend::Placement {
        node_of: vec![0, 1, 2],
    };
    let routing = route_all(&traffic, &net, &placement);
    let hw = Hardware {
        buffer,
        hop_latency: latency,
        ..Hardware::default()
    };
    (traffic, net, placement, routing, hw)
}

proptest::proptest! {
    /// Holding the hops after one switch input `delay` cycles later keeps each word waiting
    /// `delay` cycles there: `min(size, delay)` words at once. The verifier rejects the schedule
    /// exactly when that exceeds the buffer, naming the input, the cycle and the words.
    #[test]
    fn words_waiting_beyond_the_buffer_are_rejected(
        size in 1u64..9,
        delay in 1u64..12,
        buffer in 0u32..5,
        latency in 0u64..3,
        hop in 1usize..3,
    ) {
        let (traffic, net, placement, routing, hw) = one_message(size, Some(buffer), latency);
        let mut s =
            schedule::schedule(&traffic, &net, &placement, &routing, Method::Exact, hw).unwrap();
        let problem = Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
        proptest::prop_assert_eq!(verify::verify(&problem, &s), Ok(()));
        // Nothing else on the network: the plan is the clear path.
        proptest::prop_assert_eq!(schedule::buffers::usage(&problem, &s.holds).max, 0);
        // Steps: inject@0, 0->1, 1->2, eject@2. Delay `hop` and everything after it.
        let steps: Vec<Resource> = problem.steps[0].iter().map(|st| st.resource()).collect();
        for h in s.holds.iter_mut() {
            if steps.iter().position(|&r| r == h.resource()).is_some_and(|j| j >= hop) {
                *h = h.at(h.start() + delay, h.end() + delay).unwrap();
            }
        }
        s.arrival[0] += delay;
        s.makespan += delay;
        for f in s.task_finish.iter_mut().filter(|f| **f > 0) {
            *f += delay;
        }
        let waiting = size.min(delay);
        let verdict = verify::verify(&problem, &s);
        if waiting > buffer as u64 {
            let err = verdict.expect_err("beyond the buffer");
            let input = match steps[hop - 1] {
                Resource::Inject(n) => format!("the injection input of switch {n}"),
                Resource::Link { from, to } => format!("the input of switch {to} from {from}"),
                Resource::Eject(_) => unreachable!(),
            };
            let first = s.holds.iter().find(|h| h.resource() == steps[hop - 1]).unwrap().start()
                + latency
                + buffer as u64;
            let expect = format!(
                "{input} keeps {} words waiting at cycle {first}, but its buffer holds {buffer}",
                buffer + 1
            );
            proptest::prop_assert!(err.0.contains(&expect), "expected `{}` in: {}", expect, err);
        } else {
            proptest::prop_assert_eq!(verdict, Ok(()));
        }
        // The same schedule is always fine with unbounded buffers, and measures the same.
        let unbounded = Hardware { buffer: None, ..hw };
        s.hardware = unbounded;
        let problem = Problem::new(&traffic, &net, &placement, &routing, unbounded).unwrap();
        proptest::prop_assert_eq!(verify::verify(&problem, &s), Ok(()));
        proptest::prop_assert_eq!(schedule::buffers::usage(&problem, &s.holds).max, waiting);
    }
}

/// Every scheduler plans within the buffers: two long messages that meet on a link, with
/// buffers of 0, 1, 2 words and unbounded, are verified, and the replay measures the waiting
/// words the plan states.
#[test]
fn schedulers_plan_within_the_buffers() {
    use ttdl_backend::sim::models::scheduled::replay;
    use ttdl_backend::traffic::{Message, Task, Traffic};
    let net = net("mesh:4x1");
    let mut traffic = Traffic::default();
    for i in 0..4 {
        traffic.tasks.push(Task {
            id: i,
            name: format!("t{i}"),
            ..Task::default()
        });
    }
    // 0 -> 3 and 1 -> 3 share 1->2 and 2->3; the second must wait for the first somewhere.
    for (id, src) in [(0, 0), (1, 1)] {
        traffic.messages.push(Message {
            id,
            src,
            dst: vec![3].into(),
            size: 6,
            deadline: 10_000,
            ..Message::default()
        });
    }
    let placement = ttdl_backend::Placement {
        node_of: vec![0, 1, 2, 3],
    };
    let routing = route_all(&traffic, &net, &placement);
    let mut used = Vec::new();
    for buffer in [Some(0), Some(1), Some(2), None] {
        for method in [Method::Exact, Method::Lp, Method::Best] {
            let hw = Hardware {
                buffer,
                hop_latency: 1,
                ..Hardware::default()
            };
            let s = schedule::schedule(&traffic, &net, &placement, &routing, method, hw).unwrap();
            let problem = Problem::new(&traffic, &net, &placement, &routing, hw).unwrap();
            let u = schedule::buffers::usage(&problem, &s.holds);
            assert!(
                buffer.is_none_or(|b| u.max <= b as u64),
                "{method:?} {buffer:?}: {u:?}"
            );
            let r = replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
            assert_eq!(r.max_buffered, u.max);
            if method == Method::Exact {
                used.push((buffer, u.max, s.makespan));
            }
        }
    }
    // Bufferless: clear paths, so the second message waits in its sender's memory.
    assert_eq!(used[0].1, 0);
    assert!(used.iter().all(|u| u.2 >= used[3].2), "{used:?}");
}
