//! Periodic and phased programs: the pipelined FFT of Fig 5-10 at its steady-state period
//! (Minsky §5.2: "the maximum thruput for this example … is 12"), and Viterbi (§5.3, host + 7
//! nodes, three phases).

use crate::support::*;
use ttdl_backend::schedule::{self, periodic, Hardware, Method, Problem};
use ttdl_backend::sim::models::scheduled::replay;
use ttdl_backend::topology::NetworkSpec;
use ttdl_backend::traffic::Placement;

#[test]
fn fft_runs_at_period_12() {
    let (traffic, placement) = fft(16);
    let net = net("mesh:4x5");
    let routing = route_all(&traffic, &net, &placement);
    let problem = Problem::new(&traffic, &net, &placement, &routing, Hardware::default()).unwrap();
    for method in [Method::Exact, Method::Lp] {
        let s = schedule::schedule(
            &traffic,
            &net,
            &placement,
            &routing,
            method,
            Hardware::default(),
        )
        .unwrap();
        let p = periodic::analyze(&problem, &s).unwrap();
        assert_eq!(p.lower_bound, 12, "{p:?}");
        assert_eq!(p.achieved, 12, "{method:?}: {p:?}");
        assert!(p.bound_by.contains("compute"), "{p:?}");
        let replay = replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
        assert_eq!(replay.delivered, s.arrival);
    }
}

#[test]
fn viterbi_relaxes_only_what_the_input_forces() {
    let traffic = viterbi(3, 3, 1500);
    // Host and 7 nodes on a 2×4 mesh, the pipeline snaking through it.
    let net = net("mesh:4x2");
    let placement = Placement {
        node_of: vec![0, 1, 2, 3, 7, 6, 5, 4],
    };
    let routing = route_all(&traffic, &net, &placement);
    let s = schedule::schedule(
        &traffic,
        &net,
        &placement,
        &routing,
        Method::Best,
        Hardware::default(),
    )
    .unwrap();
    // The lexicon distribution: 7 × 1500 words through the host's single injection port cannot
    // all arrive by the ideal deadline (1500 cycles); everything later meets its deadline.
    assert!(!s.relaxed.is_empty());
    // Messages of later phases may be listed too, but only as shifted by those upstream.
    for r in &s.relaxed {
        if !r.knock_on {
            assert_eq!(traffic.messages[r.msg].phase, 0, "{r:?}");
        }
    }
    let blamed_inject = s.relaxed.iter().any(|r| {
        r.blamed
            .iter()
            .any(|b| b.resource == ttdl_backend::schedule::Resource::Inject(0))
    });
    assert!(blamed_inject, "{:?}", s.relaxed);
    let replay = replay::replay(&traffic, &net, &placement, &routing, &s).unwrap();
    assert_eq!(replay.completion, s.makespan);
    let _ = NetworkSpec::new(ttdl_backend::topology::Kind::Mesh, vec![4, 2]);
}

#[test]
fn multicast_is_scheduled_once_as_a_tree() {
    let (traffic, placement) = fft(2);
    let net = net("mesh:4x5");
    let routing = route_all(&traffic, &net, &placement);
    assert!(matches!(routing.routes[0], ttdl_backend::Route::Tree(_)));
    let s = schedule::schedule(
        &traffic,
        &net,
        &placement,
        &routing,
        Method::Exact,
        Hardware::default(),
    )
    .unwrap();
    // One injection of 4 words for the broadcast, ejections at its four readers.
    let inj: Vec<_> = s
        .holds_of(0)
        .filter(|h| matches!(h.resource(), schedule::Resource::Inject(_)))
        .collect();
    assert_eq!(inj.len(), 1);
    assert_eq!(inj[0].end() - inj[0].start(), 4);
    let ej = s
        .holds_of(0)
        .filter(|h| matches!(h.resource(), schedule::Resource::Eject(_)))
        .count();
    assert_eq!(ej, 4);
}
