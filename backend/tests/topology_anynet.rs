//! Irregular networks: up*/down* routes are legal and deadlock-free on random connected graphs
//! (property: the channel dependency graph of every route is acyclic), and the wormhole and
//! router models, which route by those tables, drain an overloaded anynet network with one
//! virtual channel.

use proptest::prelude::*;
use ttdl_backend::sim::drive::synthetic::{self, Pattern, SyntheticConfig};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::topology::anynet;
use ttdl_backend::topology::updown::UpDown;
use ttdl_backend::topology::Kind;
use ttdl_backend::{Network, NetworkSpec};

/// A random connected graph: a random spanning tree plus random extra edges.
fn connected_graph() -> impl Strategy<Value = NetworkSpec> {
    (
        2usize..28,
        prop::collection::vec(0usize..1000, 27),
        prop::collection::vec((0usize..1000, 0usize..1000), 0..40),
    )
        .prop_map(|(n, parents, extra)| {
            let mut s = NetworkSpec::new(Kind::Graph, vec![n]);
            s.edges = (1..n).map(|i| (parents[i - 1] % i, i)).collect();
            s.edges.extend(
                extra
                    .iter()
                    .map(|&(a, b)| (a % n, b % n))
                    .filter(|(a, b)| a != b),
            );
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn updown_routes_are_legal_and_deadlock_free(spec in connected_graph()) {
        let net = Network::build(&spec).unwrap();
        let t = UpDown::new(&net).unwrap();
        let n = net.nodes();
        for a in 0..n {
            for b in 0..n {
                let p = t.route(a, b);
                prop_assert_eq!(p.first(), Some(&a));
                prop_assert_eq!(p.last(), Some(&b), "{} -> {} on {}", a, b, spec);
                let mut down = false;
                for w in p.windows(2) {
                    prop_assert!(net.link_between(w[0], w[1]).is_some());
                    if t.is_up(w[0], w[1]) {
                        prop_assert!(!down, "up after down: {:?} on {}", p, spec);
                    } else {
                        down = true;
                    }
                }
                // A route is never shorter than the shortest path, and the root reaches
                // everything by shortest paths (its tree routes go straight down).
                prop_assert!(p.len() > net.distance(a, b));
                if a == t.root() {
                    prop_assert_eq!(p.len() - 1, net.distance(a, b));
                }
            }
        }
        prop_assert_eq!(t.dependency_cycle(&net), None, "{}", spec);
    }
}

fn irregular() -> Network {
    let dir = env!("CARGO_MANIFEST_DIR");
    let spec = anynet::read_file(&format!("{dir}/../examples/irregular.anynet")).unwrap();
    Network::build(&spec).unwrap()
}

/// Overloaded, then left to drain, every packet arrives: up*/down* needs no virtual channels
/// (one VC, short buffers), in the wormhole model and in the router model.
#[test]
fn wormhole_and_router_drain_an_overloaded_anynet() {
    let net = irregular();
    assert_eq!(net.nodes(), 13);
    assert_eq!(net.spec.terminals(), 8);
    for spec in ["wormhole vc=1 buf=2", "router vcs=1 vc_buf=2", "router"] {
        let cfg = SyntheticConfig {
            pattern: Pattern::Uniform,
            rate: 0.3,
            size: 8,
            warmup: 0,
            measure: 1_000,
            drain: 200_000,
            seed: 5,
            ..SyntheticConfig::default()
        };
        let ctx = ModelContext::new(&net).with_seed(cfg.seed);
        let mut m = registry::build(spec, &ctx).unwrap();
        let r = synthetic::run(&net, m.as_mut(), &cfg).unwrap();
        assert_eq!(r.unfinished, 0, "{spec}");
        assert!(r.accepted_flits < r.offered_flits, "{spec}: not overloaded");
    }
}
