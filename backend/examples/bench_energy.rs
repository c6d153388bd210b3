//! The `router` model's energy beside BookSim2's power module on the 8×8 mesh.
//!
//! `cargo run --release -p ttdl-backend --example bench_energy [SEEDS]` — for each load, the
//! energy of a run as BookSim2 makes it (`sim_type = latency`, 10,000-cycle periods: one of
//! warm-up and three measured, then the drain), by component, next to BookSim2's power module
//! (`sim_power = 1`, `tech_file = src/power/techfile.txt`, 128-bit flits) on the same configuration:
//! BookSim2 at commit 28f4329, `topology = mesh; k = 8; n = 2; routing_function = dor;
//! num_vcs = 2; vc_buf_size = 8; traffic = uniform; packet_size = 8; injection_rate = R;
//! sim_type = latency; sample_period = 10000; warmup_periods = 1`. BookSim reports average power
//! in watts over the run; its energy is that × the run's cycles × its clock period (20 FO4 of the
//! technology, the same table TTDL's defaults copy).
//!
//! Traffic is BookSim's `uniform`: every cycle each node starts an 8-flit packet with probability
//! R to a node drawn from all 64, itself included. Each point is the mean over SEEDS seeds
//! (default 3). The differences left: BookSim's mesh also builds (and clocks) the 32 channels
//! that would close it into a torus, which no flit uses, and its random streams differ.

use ttdl_backend::sim::energy::{Energy, Technology};
use ttdl_backend::sim::models::router::{Router, RouterConfig};
use ttdl_backend::sim::{Delivery, NetworkModel, Packet};
use ttdl_backend::Network;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// BookSim2's power summary (watts) at one rate: the run's cycles, then channel wire, clock,
/// retiming, leakage; input read, write, leakage; switch, switch control, switch leakage; output
/// DFF, output clock, output control; total.
struct Reference {
    rate: f64,
    cycles: u64,
    watts: [f64; 14],
}

const BOOKSIM: &[Reference] = &[
    Reference {
        rate: 0.01,
        cycles: 40095,
        watts: [
            40.6627, 2.9085, 0.505212, 1.09645, 0.934629, 0.934629, 0.188744, 4.15419, 1.6694,
            1.87408, 0.217833, 1.21188, 0.11242, 56.4707,
        ],
    },
    Reference {
        rate: 0.02,
        cycles: 40131,
        watts: [
            81.369, 2.9085, 1.01097, 1.09645, 1.87021, 1.87021, 0.188744, 8.31399, 3.34049,
            1.87408, 0.435887, 1.21188, 0.224954, 105.715,
        ],
    },
    Reference {
        rate: 0.03,
        cycles: 40162,
        watts: [
            121.946, 2.9085, 1.51511, 1.09645, 2.80233, 2.80233, 0.188744, 12.4623, 5.00541,
            1.87408, 0.653135, 1.21188, 0.337072, 154.803,
        ],
    },
];

/// TTDL's components and the BookSim2 entries (indices into `watts`) each one adds up.
const COMPONENTS: &[(&str, &[usize])] = &[
    ("link", &[0, 2]),
    ("buffer_read", &[4]),
    ("buffer_write", &[5]),
    ("crossbar", &[7]),
    ("allocation", &[8]),
    ("output", &[10, 12]),
    ("clock", &[1, 11]),
    ("leakage", &[3, 6, 9]),
];

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let net = match Network::build(&"mesh:8x8".parse().expect("spec")) {
        Ok(n) => n,
        Err(e) => return eprintln!("{e}"),
    };
    let tech = Technology::default();
    let t_clk = tech.clock_period();
    println!(
        "router on mesh:8x8, BookSim's uniform, 8-flit packets, 40,000 cycles of injection then \
         drain, {seeds} seed(s); clock period {:.1} ps; energy in µJ",
        t_clk * 1e12
    );
    for r in BOOKSIM {
        let uj = |w: f64| w * r.cycles as f64 * t_clk * 1e6;
        let mut sum = Energy::default();
        let mut cycles = 0.0;
        for seed in 1..=seeds {
            let (e, c) = match run(&net, r.rate, seed) {
                Ok(x) => x,
                Err(e) => return eprintln!("{e}"),
            };
            cycles += c as f64 / seeds as f64;
            sum.total_pj += e.total_pj / seeds as f64;
            for (k, v) in e.by_component {
                *sum.by_component.entry(k).or_insert(0.0) += v / seeds as f64;
            }
        }
        println!(
            "\nrate {} packets/node/cycle: {:.0} cycles (BookSim2 {})",
            r.rate, cycles, r.cycles
        );
        println!(
            "{:>13} {:>10} {:>10} {:>7}",
            "component", "ttdl", "booksim2", "diff%"
        );
        for (name, idx) in COMPONENTS {
            let ours = sum.by_component.get(*name).copied().unwrap_or(0.0) / 1e6;
            let theirs = uj(idx.iter().map(|&i| r.watts[i]).sum());
            println!(
                "{name:>13} {ours:>10.3} {theirs:>10.3} {:>+7.2}",
                100.0 * (ours - theirs) / theirs
            );
        }
        let ours = sum.total_pj / 1e6;
        let theirs = uj(r.watts[13]);
        println!(
            "{:>13} {ours:>10.3} {theirs:>10.3} {:>+7.2}   (mean power {:.2} W, BookSim2 {:.2} W)",
            "total",
            100.0 * (ours - theirs) / theirs,
            sum.total_pj * 1e-12 / (cycles * t_clk),
            r.watts[13]
        );
    }
}

/// One run: 40,000 cycles of BookSim's `uniform` at `rate`, then until every packet is delivered.
/// Returns the energy and the cycles the run took.
fn run(net: &Network, rate: f64, seed: u64) -> Result<(Energy, u64), String> {
    let n = net.nodes();
    let mut model = Router::new(net, RouterConfig::booksim()).map_err(|e| e.to_string())?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let inject_end = 40_000u64;
    let (mut created, mut delivered) = (0u64, 0u64);
    let mut out: Vec<Delivery> = Vec::new();
    let mut t = 0u64;
    while t < inject_end || delivered < created {
        if t < inject_end {
            for src in 0..n {
                if rng.random::<f64>() < rate {
                    let packet = Packet {
                        id: created,
                        src,
                        dst: rng.random_range(0..n),
                        size: 8,
                        created: t,
                    };
                    created += 1;
                    model.inject(t, packet);
                }
            }
        }
        out.clear();
        model.step(t, &mut out);
        delivered += out.len() as u64;
        t += 1;
        if t > inject_end + 1_000_000 {
            return Err(format!("rate {rate}: packets left undelivered"));
        }
    }
    let hw = model.hardware(net);
    let act = model.activity().ok_or("the router counts its events")?;
    Ok((Technology::default().energy(&hw, &act, t), t))
}
