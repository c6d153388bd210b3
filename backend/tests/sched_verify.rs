//! The verifier rejects every kind of broken schedule (SPEC §2 "valid"): each test breaks one
//! rule in an otherwise valid Jacobi schedule and expects the verifier to name it.

use crate::support::*;
use ttdl_backend::schedule::{self, verify, Hardware, Method, Problem, Resource, Schedule};

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
        .position(|h| h.msg == msg && matches!(h.resource, Resource::Link { .. }))
        .unwrap()
}

#[test]
fn a_hold_off_the_route() {
    check(
        |s| {
            // A copy of message 0's first link hold under message 1's name.
            let i = link_hold(s, 0);
            let mut h = s.holds[i];
            h.msg = 1;
            s.holds.push(h);
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
            if a.msg != b.msg
                && a.resource == b.resource
                && matches!(a.resource, Resource::Link { .. })
            {
                found = Some((*a, *b));
                break 'outer;
            }
        }
    }
    let (a, b) = found.expect("two messages share a link");
    let delta = b.start as i64 - a.start as i64;
    for h in s.holds.iter_mut().filter(|h| h.msg == a.msg) {
        h.start = (h.start as i64 + delta) as u64;
        h.end = (h.end as i64 + delta) as u64;
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
                .position(|h| h.msg == 48 && matches!(h.resource, Resource::Inject(_)))
                .unwrap();
            s.holds[i].start += 1;
            s.holds[i].end += 1;
        },
        "(causality)",
    );
}

#[test]
fn missing_words() {
    check(
        |s| {
            let i = link_hold(s, 0);
            s.holds[i].end -= 1;
        },
        "carries 7 of its 8 words",
    );
}

#[test]
fn unreported_late_message() {
    check(
        |s| {
            for h in s.holds.iter_mut().filter(|h| h.msg == 5) {
                h.start += 100;
                h.end += 100;
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
            let mut h = s.holds[0];
            h.resource = Resource::Link { from: 14, to: 15 };
            h.msg = 0;
            s.holds.push(h);
        },
        "not on its route",
    );
}
