//! Placement benchmark: simulated annealing of a 2-D nearest-neighbour (Jacobi) program.
//!
//! `cargo run --release -p ttdl-backend --example bench_place [SIDE] [SEEDS]` anneals a SIDE×SIDE
//! logical torus (default 32: 1,024 tasks) onto a SIDE×SIDE mesh from a random placement, and
//! prints time and coarse cost next to the random, identity and torus-folding placements.

use std::time::Instant;

use ttdl_backend::place::{self, coarse_cost, PlaceMethod};
use ttdl_backend::traffic::{Message, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

fn jacobi(n: i64) -> Traffic {
    let fold = |x: i64| {
        if x < n / 2 {
            2 * x
        } else {
            2 * (n - 1 - x) + 1
        }
    };
    let id = |x: i64, y: i64| (x.rem_euclid(n) + n * y.rem_euclid(n)) as usize;
    let mut tasks = Vec::new();
    let mut messages = Vec::new();
    for y in 0..n {
        for x in 0..n {
            tasks.push(Task {
                id: id(x, y),
                name: format!("t{x}-{y}"),
                coords: Some(vec![x, y]),
                mapped: Some(vec![fold(x), fold(y)]),
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let side: i64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(32);
    let seeds: u64 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let spec: NetworkSpec = format!("mesh:{side}x{side}").parse()?;
    let net = Network::build(&spec)?;
    let t = jacobi(side);
    let cost = |m: PlaceMethod, seed: u64| -> Result<u64, Box<dyn std::error::Error>> {
        Ok(coarse_cost(&t, &net, &place::place(&t, &net, m, seed)?))
    };
    println!(
        "jacobi {side}x{side} torus on {spec}: {} tasks, {} messages",
        t.tasks.len(),
        t.messages.len()
    );
    let folding = cost(PlaceMethod::Mapping, 0)?;
    println!(
        "  folding {}  identity {}  random {}",
        folding,
        cost(PlaceMethod::Identity, 0)?,
        cost(PlaceMethod::Random, 0)?
    );
    // Optional schedule: START_T FINAL_T FACTOR ITER_START_PER_TASK ITER_STEP_PER_TASK.
    let num = |i: usize| args.get(i).map(|s| s.parse::<f64>()).transpose();
    let schedule = match (num(3)?, num(4)?, num(5)?, num(6)?, num(7)?) {
        (Some(a), Some(b), Some(f), Some(i), Some(s)) => Some(place::Schedule::geometric(
            a,
            b,
            f,
            (i * t.tasks.len() as f64) as u64,
            (s * t.tasks.len() as f64) as u64,
        )),
        _ => None,
    };
    for seed in 0..seeds {
        let start = Instant::now();
        let mut opts = place::PlaceOptions::new(PlaceMethod::Anneal, seed);
        opts.schedule = schedule.clone();
        let p = place::place_with(&t, &net, &opts, &mut |_| {})?;
        let secs = start.elapsed().as_secs_f64();
        let c = coarse_cost(&t, &net, &p);
        println!(
            "  anneal seed {seed}: cost {c} ({:+.1} % of folding)  in {secs:.2} s",
            (c as f64 / folding.max(1) as f64 - 1.0) * 100.0
        );
    }
    Ok(())
}
