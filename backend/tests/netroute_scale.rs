//! Routing that does not depend on hash order, on networks far beyond an all-pairs table: graph
//! and diamond distances come from per-target breadth-first rows computed on demand.

use expect_test::expect;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::route::{self, RouteMethod, RouteOptions};
use ttdl_backend::topology::Kind;
use ttdl_backend::traffic::{Message, Route, Routing, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

/// A `side`×`side` grid with `chords` seeded random extra edges, as an explicit graph.
fn chorded_grid(side: usize, chords: usize, seed: u64) -> NetworkSpec {
    let n = side * side;
    let mut spec = NetworkSpec::new(Kind::Graph, vec![n]);
    for y in 0..side {
        for x in 0..side {
            let v = x + side * y;
            if x + 1 < side {
                spec.edges.push((v, v + 1));
            }
            if y + 1 < side {
                spec.edges.push((v, v + side));
            }
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..chords {
        let a = rng.random_range(0..n);
        let b = rng.random_range(0..n);
        if a != b {
            spec.edges.push((a, b));
        }
    }
    spec
}

fn traffic(tasks: usize, messages: usize, seed: u64) -> Traffic {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Traffic {
        tasks: (0..tasks)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: (0..messages)
            .map(|id| {
                let src = rng.random_range(0..tasks);
                let dst = (src + 1 + rng.random_range(0..tasks - 1)) % tasks;
                let release = rng.random_range(0..40u64);
                Message {
                    id,
                    src,
                    dst: vec![dst].into(),
                    size: 4,
                    release,
                    deadline: release + 4 + rng.random_range(0..12u64),
                    ..Message::default()
                }
            })
            .collect(),
        ..Traffic::default()
    }
}

/// FNV-1a over every route's node list: a fingerprint that is the same in every process.
fn fingerprint(r: &Routing) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: usize| {
        for b in (x as u64).to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for route in &r.routes {
        match route {
            Route::Path(p) => p.iter().for_each(|&v| eat(v)),
            Route::Tree(e) => e.iter().for_each(|&(a, b)| {
                eat(a);
                eat(b)
            }),
        }
        eat(usize::MAX);
    }
    h
}

/// Everything routed from scratch: a fresh network (empty distance cache), placement and routing.
fn route_from_scratch(method: RouteMethod) -> Routing {
    let net = Network::build(&chorded_grid(16, 40, 7)).unwrap();
    let t = traffic(256, 600, 3);
    let p = place::place(&t, &net, PlaceMethod::Random, 11).unwrap();
    route::route(&t, &net, &p, method, 5).unwrap()
}

#[test]
fn shortest_and_rerouted_paths_are_the_same_in_every_run() {
    let mut prints = Vec::new();
    for method in [
        RouteMethod::Shortest,
        RouteMethod::Random,
        RouteMethod::Reroute,
    ] {
        let a = route_from_scratch(method);
        let b = route_from_scratch(method);
        assert_eq!(a, b, "{method}");
        prints.push(format!("{method} {:016x}", fingerprint(&a)));
    }
    // Fixed across processes and builds: nothing here may depend on hash-map iteration order.
    expect![[r#"
        shortest 24bf88202dcb8ab7
        random 614516e46a514b42
        reroute bd3014139c25ecf4"#]]
    .assert_eq(&prints.join("\n"));
}

#[test]
fn shortest_takes_the_lowest_numbered_next_hop() {
    let net = Network::build(&"mesh:4x4".parse().unwrap()).unwrap();
    // From 0 to 15 the x step (to 1) comes before the y step (to 4); back from 15 the y step
    // (to 11) comes before the x step (to 14).
    assert_eq!(net.least_shortest_path(0, 15), vec![0, 1, 2, 3, 7, 11, 15]);
    assert_eq!(net.least_shortest_path(15, 0), vec![15, 11, 7, 3, 2, 1, 0]);
    assert_eq!(net.least_shortest_path(5, 5), vec![5]);
}

#[test]
fn a_ten_thousand_node_graph_routes() {
    let spec = chorded_grid(100, 200, 1);
    assert!(spec.validate().is_ok());
    let net = Network::build(&spec).unwrap();
    assert_eq!(net.nodes(), 10_000);
    // Without chords the far corners are 198 apart; chords only shorten that.
    let far = net.distance(0, 9_999);
    assert!(far <= 198 && far > 0, "{far}");
    let t = traffic(10_000, 500, 9);
    let p = place::place(&t, &net, PlaceMethod::Identity, 0).unwrap();
    for method in [RouteMethod::Dor, RouteMethod::Shortest] {
        let r = route::route(&t, &net, &p, method, 0).unwrap();
        for (msg, route) in t.messages.iter().zip(&r.routes) {
            let Route::Path(path) = route else {
                panic!("unicast got a tree")
            };
            let (a, b) = (p.node_of[msg.src], p.node_of[msg.dst[0]]);
            assert_eq!((path.first(), path.last()), (Some(&a), Some(&b)));
            assert_eq!(path.len() - 1, net.distance(a, b));
            assert!(path
                .windows(2)
                .all(|w| net.link_between(w[0], w[1]).is_some()));
        }
    }
    // A short rerouting run on the same network finishes and keeps every route connected.
    let mut opts = RouteOptions::new(RouteMethod::Reroute, 0);
    opts.schedule = Some(ttdl_backend::place::Schedule::linear(5.0, 2, 20, 0));
    let (r, outcome) = route::route_with(&t, &net, &p, &opts, &mut |_| {}).unwrap();
    assert_eq!(r.routes.len(), 500);
    assert!(outcome.is_some());
}

#[test]
fn a_large_diamond_lattice_builds_and_routes() {
    // 64×64×4 = 16,384 nodes, four times the old all-pairs limit.
    let net = Network::build(&"diamond:64x64x4".parse().unwrap()).unwrap();
    assert_eq!(net.nodes(), 16_384);
    let a = net.node_at(&[30, 30, 1]).unwrap();
    let b = net.node_at(&[33, 31, 2]).unwrap();
    let path = net.dor_path(a, b);
    assert_eq!(path.len() - 1, net.distance(a, b));
    assert_eq!(
        net.shortest_path_count(a, b),
        net.diamond_formula_count(a, b).unwrap()
    );
    let corner = net.distance(0, net.nodes() - 1);
    assert!(corner >= 63 + 63 + 3, "{corner}");
    let square = Network::build(&"diamond:64x64".parse().unwrap()).unwrap();
    assert_eq!(square.nodes(), 4_096);
    assert!("crossbar:5000".parse::<NetworkSpec>().is_err());
}
