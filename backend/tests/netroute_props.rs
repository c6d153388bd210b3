//! Property tests: random network specs build; every route joins the source task's node to the
//! destination task's node through adjacent nodes; dimension-order routes have hop-distance length.

use proptest::prelude::*;
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::topology::Kind;
use ttdl_backend::traffic::{Message, Route, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

fn spec() -> impl Strategy<Value = NetworkSpec> {
    prop_oneof![
        prop::collection::vec(1usize..6, 1..4).prop_map(|d| NetworkSpec::new(Kind::Mesh, d)),
        prop::collection::vec(1usize..6, 1..4).prop_map(|d| NetworkSpec::new(Kind::Torus, d)),
        (1usize..6).prop_map(|d| NetworkSpec::new(Kind::Hypercube, vec![d])),
        (1usize..12).prop_map(|d| NetworkSpec::new(Kind::Ring, vec![d])),
        (1usize..12).prop_map(|d| NetworkSpec::new(Kind::Line, vec![d])),
        (1usize..8).prop_map(|d| NetworkSpec::new(Kind::Crossbar, vec![d])),
        (2usize..6, 2usize..5, 2usize..4)
            .prop_map(|(x, y, z)| NetworkSpec::new(Kind::Diamond, vec![x, y, z])),
        // A random spanning tree plus extra edges: always connected.
        (
            2usize..12,
            prop::collection::vec((0usize..1000, 0usize..1000), 0..10)
        )
            .prop_map(|(n, extra)| {
                let mut s = NetworkSpec::new(Kind::Graph, vec![n]);
                s.edges = (1..n).map(|i| (extra.len() * 7 % i, i)).collect();
                s.edges.extend(
                    extra
                        .iter()
                        .map(|&(a, b)| (a % n, b % n))
                        .filter(|(a, b)| a != b),
                );
                s
            }),
    ]
}

fn traffic(tasks: usize, pairs: &[(usize, usize, bool)]) -> Traffic {
    Traffic {
        tasks: (0..tasks)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: pairs
            .iter()
            .enumerate()
            .map(|(id, &(s, d, multi))| Message {
                id,
                src: s % tasks,
                dst: if multi {
                    vec![d % tasks, (d + 1) % tasks].into()
                } else {
                    vec![d % tasks].into()
                },
                size: 4,
                release: id as u64,
                deadline: id as u64 + 12,
                ..Message::default()
            })
            .collect(),
        ..Traffic::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn specs_build_and_routes_are_valid(
        spec in spec(),
        tasks in 1usize..24,
        pairs in prop::collection::vec((0usize..100, 0usize..100, prop::bool::weighted(0.2)), 1..30),
        seed in 0u64..1000,
    ) {
        let net = Network::build(&spec).unwrap();
        prop_assert!(net.nodes() >= 1);
        let back: NetworkSpec = spec.to_string().parse().unwrap();
        prop_assert_eq!(back.kind, spec.kind);
        let t = traffic(tasks, &pairs);
        let p = place::place(&t, &net, PlaceMethod::Random, seed).unwrap();
        for &method in RouteMethod::ALL {
            let r = route::route(&t, &net, &p, method, seed).unwrap();
            prop_assert_eq!(r.routes.len(), t.messages.len());
            // Same input and seed, same routes.
            prop_assert_eq!(&r, &route::route(&t, &net, &p, method, seed).unwrap());
            for (m, route) in t.messages.iter().zip(&r.routes) {
                let src = p.node_of[m.src];
                match route {
                    Route::Path(path) => {
                        let dst = p.node_of[m.dst[0]];
                        prop_assert_eq!(path.first(), Some(&src));
                        prop_assert_eq!(path.last(), Some(&dst));
                        for w in path.windows(2) {
                            prop_assert!(net.link_between(w[0], w[1]).is_some());
                        }
                        if method == RouteMethod::Dor {
                            prop_assert_eq!(path.len() - 1, net.distance(src, dst));
                        }
                    }
                    Route::Tree(edges) => {
                        prop_assert!(m.dst.len() > 1);
                        let mut reached = vec![src];
                        for &(a, b) in edges {
                            prop_assert!(reached.contains(&a), "edge from a node not yet reached");
                            prop_assert!(!reached.contains(&b), "a node reached twice");
                            prop_assert!(net.link_between(a, b).is_some());
                            reached.push(b);
                        }
                        for d in &m.dst {
                            prop_assert!(reached.contains(&p.node_of[*d]));
                        }
                    }
                }
            }
        }
    }
}
