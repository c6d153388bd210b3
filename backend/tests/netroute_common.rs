//! Placement and routing basics: every method gives a complete placement and valid routes.

use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::traffic::{Route, Traffic};
use ttdl_backend::{Network, NetworkSpec};

fn ring_traffic(n: usize, size: u64) -> Traffic {
    let mut b = Traffic::builder();
    b.tasks(n);
    for i in 0..n {
        b.message(i, (i + 5) % n, size, 0, 4 * size);
    }
    b.build()
}

fn net(s: &str) -> Network {
    Network::build(&s.parse::<NetworkSpec>().unwrap()).unwrap()
}

#[test]
fn identity_wraps_and_random_is_seeded() {
    let t = ring_traffic(20, 4);
    let n = net("mesh:4x4");
    let id = place::place(&t, &n, PlaceMethod::Identity, 0).unwrap();
    assert_eq!(id.node_of[17], 1);
    let a = place::place(&t, &n, PlaceMethod::Random, 7).unwrap();
    let b = place::place(&t, &n, PlaceMethod::Random, 7).unwrap();
    let c = place::place(&t, &n, PlaceMethod::Random, 8).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut load = vec![0; 16];
    for &node in &a.node_of {
        load[node] += 1;
    }
    assert!(load.iter().all(|&l| (1..=2).contains(&l)), "{load:?}");
}

#[test]
fn mapping_names_the_unmapped_tasks() {
    let mut t = ring_traffic(4, 1);
    t.tasks[0].mapped = Some(vec![0, 0]);
    t.tasks[1].mapped = Some(vec![3, 3]);
    let err = place::place(&t, &net("mesh:4x4"), PlaceMethod::Mapping, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "placement by mapping needs physical coordinates for every task, but 2 tasks (t2, t3) have none (was a mapping given with `target :mapping`?)"
    );
    t.tasks[2].mapped = Some(vec![1, 0]);
    t.tasks[3].mapped = Some(vec![9, 0]);
    let err = place::place(&t, &net("mesh:4x4"), PlaceMethod::Mapping, 0).unwrap_err();
    assert!(err.to_string().contains("not a node of mesh:4x4"));
    t.tasks[3].mapped = Some(vec![0, 1]);
    let p = place::place(&t, &net("mesh:4x4"), PlaceMethod::Mapping, 0).unwrap();
    assert_eq!(p.node_of, vec![0, 15, 1, 4]);
}

#[test]
fn every_method_routes_along_links() {
    for spec in [
        "mesh:4x4",
        "torus:4x4",
        "hypercube:4",
        "ring:16",
        "diamond:4x4x2",
        "crossbar:16",
    ] {
        let n = net(spec);
        let t = ring_traffic(16, 4);
        let p = place::place(&t, &n, PlaceMethod::Random, 1).unwrap();
        for &method in RouteMethod::ALL {
            let r = route::route(&t, &n, &p, method, 3).unwrap();
            for (m, msg) in t.messages.iter().enumerate() {
                let Route::Path(path) = &r.routes[m] else {
                    panic!("unicast got a tree")
                };
                assert_eq!(path.first(), Some(&p.node_of[msg.src]));
                assert_eq!(path.last(), Some(&p.node_of[msg.dst[0]]));
                assert!(path
                    .windows(2)
                    .all(|w| n.link_between(w[0], w[1]).is_some()));
                if method != RouteMethod::Reroute {
                    assert_eq!(path.len() - 1, n.distance(path[0], *path.last().unwrap()));
                }
            }
        }
    }
}

#[test]
fn multicast_gets_a_tree() {
    let mut t = ring_traffic(16, 4);
    t.messages[0].dst = vec![3, 12, 15].into();
    let n = net("mesh:4x4");
    let p = place::place(&t, &n, PlaceMethod::Identity, 0).unwrap();
    let r = route::route(&t, &n, &p, RouteMethod::Dor, 0).unwrap();
    assert_eq!(
        r.routes[0],
        Route::Tree(vec![
            (0, 1),
            (1, 2),
            (2, 3),
            (0, 4),
            (4, 8),
            (8, 12),
            (3, 7),
            (7, 11),
            (11, 15)
        ])
    );
}
