//! Yuan ch.5 connection scheduling on the 8×8 torus, side by side with the thesis:
//! Table 5.6 (standard patterns) and Table 5.4 (random patterns, averaged), plus the AAPC phase
//! counts of the construction used by the ordered-AAPC scheduler.
//!
//! `cargo run --release -p ttdl-backend --example yuan_ch5 [PATTERNS-PER-ROW] [SEED]`
//! (default 10 per row, a few minutes; the thesis averages 100).
//!
//! Seed 1, 10 per row: greedy 6.8/15.6/26.7/…/91.6 against the printed 7.0/16.5/27.2/…/91.6,
//! AAPC and combined within 0.1–1 of the printed columns and exactly 64 from 3200 connections on;
//! the literal coloring runs 5–20 % above the printed coloring column, the dynamic coloring 0–7 %
//! below it.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use ttdl_backend::sim::models::compiled::aapc::{AapcPhases, RingAapc};
use ttdl_backend::sim::models::compiled::patterns;
use ttdl_backend::sim::models::compiled::sched::{self, Algorithm};
use ttdl_backend::topology::{Network, NetworkSpec};

/// Degrees by greedy, coloring, AAPC, combined (the thesis's columns), then dynamic coloring.
fn degrees(
    net: &Network,
    aapc: &AapcPhases,
    pairs: &[(usize, usize)],
) -> Result<[usize; 5], String> {
    let conns = patterns::connections(net, pairs)?;
    let mut out = [0; 5];
    let algs = Algorithm::ALL
        .into_iter()
        .chain([Algorithm::DynamicColoring]);
    for (slot, alg) in out.iter_mut().zip(algs) {
        let cfg = sched::schedule(&conns, alg, Some(aapc)).map_err(|e| e.to_string())?;
        cfg.verify(&conns).map_err(|e| e.to_string())?;
        *slot = cfg.degree();
    }
    Ok(out)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let per_row: usize = match args.get(1) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("patterns per row must be a number, not `{a}`"))?,
        None => 10,
    };
    let seed: u64 = match args.get(2) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("seed must be a number, not `{a}`"))?,
        None => 1,
    };
    let spec: NetworkSpec = "torus:8x8".parse().map_err(|e| format!("{e}"))?;
    let net = Network::build(&spec).map_err(|e| format!("{e}"))?;
    let aapc = AapcPhases::for_network(&net).ok_or("no AAPC phases for the 8x8 torus")?;

    println!("AAPC phases per ring (construction; lower bound max(n, n²/8)):");
    for n in [4, 6, 8, 10, 12, 16] {
        let r = RingAapc::new(n);
        println!("  ring {n:>2}: {} phases", r.phases);
    }
    println!("  torus 8x8: {} phases (Yuan: N³/8 = 64)\n", aapc.phases());

    println!("Table 5.6, 8x8 torus: multiplexing degree (ours | thesis)");
    println!(
        "{:<17} {:>5}  {:>7} {:>8} {:>5} {:>8}  {:>7}  {:>8}",
        "pattern", "#conn", "greedy", "coloring", "AAPC", "combined", "impr.", "dyn-col"
    );
    let printed = [
        ("ring", patterns::ring(64), [3, 2, 2, 2]),
        (
            "nearest neighbor",
            patterns::nearest_neighbor(8, 8),
            [6, 4, 4, 4],
        ),
        ("hypercube", patterns::hypercube(6), [9, 7, 8, 7]),
        (
            "shuffle-exchange",
            patterns::shuffle_exchange(6),
            [6, 4, 5, 4],
        ),
        ("all-to-all", patterns::all_to_all(64), [92, 83, 64, 64]),
    ];
    for (name, pairs, thesis) in &printed {
        let d = degrees(&net, &aapc, pairs)?;
        let impr = 100.0 * (d[0] as f64 - d[3] as f64) / d[3] as f64;
        let cell = |i: usize| format!("{}|{}", d[i], thesis[i]);
        println!(
            "{name:<17} {:>5}  {:>7} {:>8} {:>5} {:>8}  {impr:>6.1}%  {:>8}",
            pairs.len(),
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            d[4]
        );
    }

    println!("\nTable 5.4, 8x8 torus, random patterns ({per_row} per row, seed {seed}): mean degree (ours | thesis)");
    println!(
        "{:>6}  {:>11} {:>11} {:>11} {:>11}  {:>13}  {:>7}",
        "#conn", "greedy", "coloring", "AAPC", "combined", "improvement", "dyn-col"
    );
    let table_5_4: [(usize, [f64; 4]); 11] = [
        (100, [7.0, 6.7, 6.9, 6.6]),
        (400, [16.5, 16.1, 16.5, 15.9]),
        (800, [27.2, 25.9, 26.5, 25.6]),
        (1200, [36.3, 34.5, 35.3, 34.2]),
        (1600, [45.0, 43.5, 43.4, 42.8]),
        (2000, [53.4, 50.4, 50.4, 49.7]),
        (2400, [60.8, 57.5, 57.4, 56.7]),
        (2800, [68.8, 64.4, 62.4, 62.4]),
        (3200, [76.3, 70.8, 64.0, 64.0]),
        (3600, [83.9, 76.8, 64.0, 64.0]),
        (4000, [91.6, 83.0, 64.0, 64.0]),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for (k, thesis) in table_5_4 {
        let mut sum = [0usize; 5];
        for _ in 0..per_row {
            let pairs = patterns::random(64, k, &mut rng);
            let d = degrees(&net, &aapc, &pairs)?;
            for (s, x) in sum.iter_mut().zip(d) {
                *s += x;
            }
        }
        let mean: Vec<f64> = sum
            .iter()
            .map(|&s| s as f64 / per_row.max(1) as f64)
            .collect();
        let ours_impr = 100.0 * (mean[0] - mean[3]) / mean[3];
        let thesis_impr = 100.0 * (thesis[0] - thesis[3]) / thesis[3];
        let cell = |i: usize| format!("{:.1}|{:.1}", mean[i], thesis[i]);
        println!(
            "{k:>6}  {:>11} {:>11} {:>11} {:>11}  {:>5.1}%|{:>4.1}%  {:>7.1}",
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            ours_impr,
            thesis_impr,
            mean[4]
        );
    }
    Ok(())
}
