//! Placement by simulated annealing (Minsky §4.2.1, Fig 4-5) on the thesis's Jacobi 2D example:
//! an 8×8 logical torus placed on an 8×8 mesh, compared with the canned torus-folding mapping.

use ttdl_backend::place::{self, coarse_cost, CostKind, PlaceMethod, PlaceOptions, Schedule};
use ttdl_backend::traffic::{Message, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

const N: i64 = 8;

/// Torus folding: logical ring position → physical line position, neighbours at most 2 apart.
fn fold(x: i64) -> i64 {
    if x < N / 2 {
        2 * x
    } else {
        2 * (N - 1 - x) + 1
    }
}

fn jacobi(folded: bool) -> Traffic {
    let id = |x: i64, y: i64| (x.rem_euclid(N) + N * y.rem_euclid(N)) as usize;
    let mut tasks = Vec::new();
    let mut messages = Vec::new();
    for y in 0..N {
        for x in 0..N {
            tasks.push(Task {
                id: id(x, y),
                name: format!("t{x}-{y}"),
                coords: Some(vec![x, y]),
                mapped: folded.then(|| vec![fold(x), fold(y)]),
                ..Task::default()
            });
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                messages.push(Message {
                    id: messages.len(),
                    src: id(x, y),
                    dst: vec![id(x + dx, y + dy)].into(),
                    size: 8,
                    release: 0,
                    deadline: 40,
                    ..Message::default()
                });
            }
        }
    }
    Traffic {
        tasks,
        messages,
        ..Traffic::default()
    }
}

fn mesh() -> Network {
    Network::build(&"mesh:8x8".parse::<NetworkSpec>().unwrap()).unwrap()
}

#[test]
fn annealing_reaches_the_folding_cost() {
    let net = mesh();
    let folded = place::place(&jacobi(true), &net, PlaceMethod::Mapping, 0).unwrap();
    let target = coarse_cost(&jacobi(true), &net, &folded);
    assert_eq!(target, 8 * 2 * 2 * 8 * 14); // 14 hops per folded ring of 8, both directions
    let t = jacobi(false);
    // Within 10 % of the folding for every seed, not just a lucky one.
    let costs: Vec<u64> = (0..10)
        .map(|seed| {
            let p = place::place(&t, &net, PlaceMethod::Anneal, seed).unwrap();
            coarse_cost(&t, &net, &p)
        })
        .collect();
    let random = place::place(&t, &net, PlaceMethod::Random, 5).unwrap();
    let rc = coarse_cost(&t, &net, &random);
    assert!(
        costs.iter().all(|&c| c as f64 <= 1.1 * target as f64),
        "annealed {costs:?}, folding {target}, random {rc}"
    );
    let annealed = place::place(&t, &net, PlaceMethod::Anneal, 5).unwrap();
    assert_eq!(
        annealed,
        place::place(&t, &net, PlaceMethod::Anneal, 5).unwrap()
    );
    let mut used = annealed.node_of.clone();
    used.sort_unstable();
    used.dedup();
    assert_eq!(used.len(), 64, "one task per node");
}

#[test]
fn wired_tasks_stay_and_fine_cost_runs() {
    let net = mesh();
    let mut t = jacobi(false);
    t.tasks[0].wired = true;
    t.tasks[0].mapped = Some(vec![7, 7]);
    t.tasks[9].wired = true;
    t.tasks[9].mapped = Some(vec![0, 0]);
    let mut opts = PlaceOptions::new(PlaceMethod::Anneal, 3);
    opts.cost = CostKind::Fine;
    opts.schedule = Some(Schedule::geometric(200.0, 2.0, 0.8, 200, 0));
    let mut reports = 0;
    let p = place::place_with(&t, &net, &opts, &mut |_| reports += 1).unwrap();
    assert_eq!(p.node_of[0], 63);
    assert_eq!(p.node_of[9], 0);
    assert!(reports > 10);
    for m in [PlaceMethod::Random, PlaceMethod::Identity] {
        let p = place::place(&t, &net, m, 1).unwrap();
        assert_eq!((p.node_of[0], p.node_of[9]), (63, 0), "{m}");
    }
}

#[test]
fn more_tasks_than_nodes_share_nodes() {
    let t = jacobi(false);
    let net = Network::build(&"mesh:4x4".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = place::place(&t, &net, PlaceMethod::Anneal, 1).unwrap();
    let mut load = [0; 16];
    for &n in &p.node_of {
        load[n] += 1;
    }
    assert!(load.iter().all(|&l| l == 4), "{load:?}");
    // 2×2 blocks of the logical torus on each node beat a random spread by far.
    let r = place::place(&t, &net, PlaceMethod::Random, 1).unwrap();
    assert!(coarse_cost(&t, &net, &p) * 2 < coarse_cost(&t, &net, &r));
}
