//! Timings and sanity figures of the optical models:
//! `cargo run --release -p ttdl-backend --example bench_optical`.

use std::time::Instant;
use ttdl_backend::sim::aapc::{aapc_phases, check_phases, ring_groups};
use ttdl_backend::sim::models::path_reservation::{poisson_run, Direction, ReservationConfig};
use ttdl_backend::sim::optical::torus::Torus;

fn main() {
    for n in [8usize, 16] {
        let t0 = Instant::now();
        let g = ring_groups(n);
        println!(
            "ring {n}: {:?} groups in {:?}",
            g.as_ref().map(|g| g.len()),
            t0.elapsed()
        );
        let t = Torus::new(n, n);
        let t0 = Instant::now();
        let p = aapc_phases(&t);
        println!(
            "torus {n}x{n}: {} AAPC phases, check {:?}, pairs {}, {:?}",
            p.len(),
            check_phases(&t, &p),
            p.iter().map(Vec::len).sum::<usize>(),
            t0.elapsed()
        );
    }
    let t = Torus::new(16, 16);
    for (dir, s) in [
        (Direction::Forward, 1),
        (Direction::Forward, 10),
        (Direction::Forward, 32),
        (Direction::Backward, 1),
        (Direction::Backward, 3),
        (Direction::Backward, 32),
    ] {
        let cfg = ReservationConfig::new(t, 32, dir, s);
        let t0 = Instant::now();
        let light = poisson_run(&cfg, 0.003, 8, 1000, 4000).expect("run");
        let sat = poisson_run(&cfg, 0.05, 8, 1000, 4000).expect("run");
        println!(
            "16x16 d=32 {:8}: r=0.003 thr {:.4} lat {:7.1} att {:.2} | saturated thr {:.4} lat {:8.1} att {:.2} ({:?})",
            cfg.label(),
            light.throughput,
            light.latency,
            light.attempts_per_message,
            sat.throughput,
            sat.latency,
            sat.attempts_per_message,
            t0.elapsed()
        );
    }
}
