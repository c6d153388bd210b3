//! The `router` model beside BookSim2 on an 8×8 mesh (uniform traffic, 8-flit packets,
//! dimension order), and its speed.
//!
//! `cargo run --release -p ttdl-backend --example bench_router [booksim|min] [SEEDS]` — for each
//! load, mean packet latency (source queueing included) next to BookSim2's measured figure
//! (`/work/shared/reference/booksim2-8x8.md`: BookSim2 at commit 28f4329, 10,000 warm-up and
//! 10,000 measured cycles), the difference, accepted throughput, network latency, hops, whether
//! the sweep's rule calls the point saturated, and router-cycles per CPU second of the thread; then the saturation
//! throughput (offered 0.8 flits/node/cycle, as BookSim's `sim_type = throughput`).
//!
//! Runs as BookSim's: 10,000 cycles of warm-up, packets created in the next 10,000 measured,
//! then drained. Each point is the mean over SEEDS seeds (default 3). TTDL's `uniform` never
//! sends a packet to its own source, BookSim's does 1 time in 64 (mean 5.25 hops instead of
//! 5.33, so about 1% less latency and link load); the `bs-unif` columns drive the same model
//! with BookSim's pattern (Bernoulli injection, destinations uniform over all 64 nodes), which
//! compares the router models alone.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ttdl_backend::sim::drive::synthetic::{self, Pattern, SyntheticConfig};
use ttdl_backend::sim::models::router::{Router, RouterConfig};
use ttdl_backend::sim::sweep::{self, Point, PointResult};
use ttdl_backend::sim::{NetworkModel, Packet};
use ttdl_backend::Network;

#[path = "support/cpu.rs"]
mod cpu;

/// BookSim2, 8×8 mesh, uniform, 8-flit packets: (rate, defaults, min pipeline, accepted flits).
const BOOKSIM: &[(f64, f64, f64, f64)] = &[
    (0.005, 41.45, 29.32, 0.0398),
    (0.01, 42.33, 30.69, 0.0798),
    (0.02, 45.40, 34.58, 0.1597),
    (0.03, 51.19, 40.42, 0.2397),
    (0.04, 70.83, 55.34, 0.3195),
    (0.042, 88.60, 61.98, 0.3354),
    (0.044, 456.5, 98.33, 0.3514),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let min = args.first().map(String::as_str) == Some("min");
    let seeds: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let net = match Network::build(&"mesh:8x8".parse().expect("spec")) {
        Ok(n) => n,
        Err(e) => return eprintln!("{e}"),
    };
    let cfg = if min {
        RouterConfig::min()
    } else {
        RouterConfig::booksim()
    };
    println!(
        "{} on mesh:8x8, uniform, 8-flit packets, {seeds} seed(s) per point; BookSim2 {}",
        cfg.name(),
        if min { "min pipeline" } else { "defaults" }
    );
    println!(
        "{:>6} {:>8} {:>8} {:>7} {:>8} {:>7} {:>8} {:>8} {:>8} {:>5} {:>6} {:>9}",
        "rate",
        "ours",
        "booksim",
        "diff%",
        "bs-unif",
        "diff%",
        "accepted",
        "bs-acc",
        "net-lat",
        "hops",
        "sat",
        "Mrc/s"
    );
    for &(rate, bs_def, bs_min, bs_acc) in BOOKSIM {
        let bs = if min { bs_min } else { bs_def };
        let mut rows = Vec::new();
        let mut stats = Vec::new();
        let mut bs_unif = 0.0;
        let (mut rc, mut wall) = (0.0, 0.0);
        for seed in 1..=seeds {
            let mut model = match Router::new(&net, cfg) {
                Ok(m) => m,
                Err(e) => return eprintln!("{e}"),
            };
            let run = SyntheticConfig {
                pattern: Pattern::Uniform,
                rate,
                size: 8,
                warmup: 10_000,
                measure: 10_000,
                drain: 100_000,
                seed,
                ..SyntheticConfig::default()
            };
            model.set_window(run.warmup, run.warmup + run.measure);
            let start = Instant::now();
            let cpu0 = cpu::cpu_seconds();
            let r = match synthetic::run(&net, &mut model, &run) {
                Ok(r) => r,
                Err(e) => return eprintln!("{e}"),
            };
            // CPU time of this thread when available: the figure that matters on a shared
            // machine; wall time otherwise.
            wall += cpu::cpu_seconds()
                .zip(cpu0)
                .map(|(b, a)| b - a)
                .filter(|&c| c > 0.0)
                .unwrap_or_else(|| start.elapsed().as_secs_f64());
            rc += model.router_cycles() as f64;
            stats.push(model.stats());
            bs_unif += booksim_uniform(&net, cfg, rate, seed, 100_000).0 / seeds as f64;
            let point = Point {
                index: rows.len(),
                model: cfg.name(),
                pattern: "uniform".into(),
                rate,
                seed,
            };
            rows.push(PointResult::measured(&point, r));
        }
        let s = &sweep::aggregate(&rows)[0];
        let n = stats.len() as f64;
        let hops = stats.iter().map(|x| x.hops).sum::<f64>() / n;
        let nlat = stats.iter().map(|x| x.network_latency).sum::<f64>() / n;
        println!(
            "{:>6} {:>8.2} {:>8.2} {:>+7.2} {:>8.2} {:>+7.2} {:>8.4} {:>7.4} {:>8.2} {:>5.2} {:>6} {:>9.2}",
            rate,
            s.mean_latency,
            bs,
            100.0 * (s.mean_latency - bs) / bs,
            bs_unif,
            100.0 * (bs_unif - bs) / bs,
            s.accepted_flits,
            bs_acc,
            nlat,
            hops,
            if s.saturated { "yes" } else { "no" },
            rc / wall / 1e6
        );
    }
    // Saturation throughput: offered 0.8 flits/node/cycle, accepted over the window.
    let mut model = match Router::new(&net, cfg) {
        Ok(m) => m,
        Err(e) => return eprintln!("{e}"),
    };
    let run = SyntheticConfig {
        pattern: Pattern::Uniform,
        rate: 0.1,
        size: 8,
        warmup: 10_000,
        measure: 10_000,
        drain: 0,
        seed: 1,
        ..SyntheticConfig::default()
    };
    let start = Instant::now();
    let cpu0 = cpu::cpu_seconds();
    let result = synthetic::run(&net, &mut model, &run);
    let secs = cpu::cpu_seconds()
        .zip(cpu0)
        .map(|(b, a)| b - a)
        .filter(|&c| c > 0.0)
        .unwrap_or_else(|| start.elapsed().as_secs_f64());
    match result {
        Ok(r) => println!(
            "saturation throughput (offered 0.8 flits/node/cycle): {:.4} flits/node/cycle \
             (BookSim2: {}); {:.2} M router-cycles/s",
            r.accepted_flits,
            if min { "0.366" } else { "0.353" },
            model.router_cycles() as f64 / secs / 1e6
        ),
        Err(e) => eprintln!("{e}"),
    }
    let (_, acc) = booksim_uniform(&net, cfg, 0.1, 1, 0);
    println!("  with BookSim's uniform pattern: {acc:.4} flits/node/cycle");
    let _ = model.name();
}

/// The model under BookSim2's own `uniform` traffic: every cycle each node starts a packet of
/// 8 flits with probability `rate`, to a node drawn uniformly from all nodes, itself included.
/// Returns the mean latency of packets created in the measured window and the flits accepted
/// per node per cycle in it.
fn booksim_uniform(
    net: &Network,
    cfg: RouterConfig,
    rate: f64,
    seed: u64,
    drain: u64,
) -> (f64, f64) {
    let n = net.nodes();
    let Ok(mut model) = Router::new(net, cfg) else {
        return (f64::NAN, f64::NAN);
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (warmup, measure) = (10_000u64, 10_000u64);
    let end = warmup + measure;
    let mut created = Vec::new();
    let (mut sum, mut count, mut pending, mut flits) = (0u64, 0u64, 0u64, 0u64);
    let mut out = Vec::new();
    let mut t = 0;
    while t < end || (pending > 0 && t < end + drain) {
        if t < end {
            for src in 0..n {
                if rng.random::<f64>() < rate {
                    let dst = rng.random_range(0..n);
                    let id = created.len() as u64;
                    created.push(t);
                    pending += u64::from(t >= warmup);
                    let packet = Packet {
                        id,
                        src,
                        dst,
                        size: 8,
                        created: t,
                    };
                    model.inject(t, packet);
                }
            }
        }
        out.clear();
        model.step(t, &mut out);
        for d in &out {
            let c = created[d.packet as usize];
            if c >= warmup && c < end {
                sum += d.at - c;
                count += 1;
                pending -= 1;
            }
            if d.at > warmup && d.at <= end {
                flits += 8;
            }
        }
        t += 1;
    }
    (
        sum as f64 / count.max(1) as f64,
        flits as f64 / (n as f64 * measure as f64),
    )
}
