//! Scheduling benchmark: Jacobi 2D on n×n meshes (a logical torus folded onto the mesh, 4n²
//! messages of 8 words per iteration), placed, routed (dimension order), scheduled with each
//! method, verified and replayed. Run with
//! `cargo run --release -p ttdl-backend --example bench_schedule [SIZES…]` (default 4 16 32).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use support::{jacobi2d, net, route_all};
use ttdl_backend::schedule::{self, Hardware, Method, Problem};
use ttdl_backend::sim::models::scheduled::replay;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![4, 16, 32]
    } else {
        sizes
    };
    println!(
        "{:>7} {:>6} {:>6} {:>9} {:>9} {:>7} {:>9} {:>9} {:>9} {:>8} {:>10} {:>10}",
        "mesh",
        "msgs",
        "method",
        "exchange",
        "makespan",
        "bound",
        "relaxed",
        "sched_ms",
        "replay_ms",
        "lp_progs",
        "lp_vars",
        "lp_solve_ms"
    );
    for n in sizes {
        let t0 = Instant::now();
        let (traffic, folded) = jacobi2d(n, 8, 10);
        for (how, placement) in [
            ("fold", folded),
            // Identity placement: the torus's wrap-around messages cross whole rows of the
            // mesh and contend, which is where the schedulers differ.
            (
                "ident",
                ttdl_backend::Placement {
                    node_of: (0..n * n).collect(),
                },
            ),
            // A seeded random placement: long, crossing routes, real contention.
            ("random", {
                use rand::seq::SliceRandom;
                use rand::SeedableRng;
                let mut node_of: Vec<usize> = (0..n * n).collect();
                node_of.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
                ttdl_backend::Placement { node_of }
            }),
        ] {
            let network = net(&format!("mesh:{n}x{n}"));
            let routing = route_all(&traffic, &network, &placement);
            let prep = t0.elapsed();
            let hw = Hardware::default();
            let problem =
                Problem::new(&traffic, &network, &placement, &routing, hw).expect("problem");
            let (bound, _) = schedule::lower_bound(&problem);
            for method in [Method::Exact, Method::Lp] {
                let t = Instant::now();
                let s = match schedule::schedule(
                    &traffic, &network, &placement, &routing, method, hw,
                ) {
                    Ok(s) => s,
                    Err(e) => {
                        println!("{n}x{n} {method:?}: {e}");
                        continue;
                    }
                };
                let sched_ms = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let r = replay::replay(&traffic, &network, &placement, &routing, &s);
                let replay_ms = t.elapsed().as_secs_f64() * 1e3;
                if let Err(e) = r {
                    println!("{n}x{n} {method:?}: replay failed: {e}");
                }
                let lp = s.lp.clone().unwrap_or_default();
                println!(
                "{:>7} {:>6} {:>6} {:>9} {:>9} {:>7} {:>9} {:>9.1} {:>9.1} {:>8} {:>10} {:>10.1}",
                format!(
                        "{n}x{n}{}",
                        match how {
                            "fold" => "",
                            "ident" => "*",
                            _ => "?",
                        }
                    ),
                traffic.messages.len(),
                method.name(),
                s.arrival.iter().max().copied().unwrap_or(0),
                s.makespan,
                bound,
                s.relaxed.len(),
                sched_ms + prep.as_secs_f64() * 1e3,
                replay_ms,
                lp.programs,
                lp.variables,
                lp.solve_ms
            );
            }
        }
    }
    println!("(* identity placement of the logical torus; ? seeded random placement)");
}
