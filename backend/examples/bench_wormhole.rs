//! Wormhole simulator speed, and Chittor's transpose saturation check.
//!
//! `cargo run --release -p ttdl-backend --example bench_wormhole` — 8×8 mesh, uniform traffic of
//! 8-flit packets at 0.02 packets/node/cycle for 100,000 cycles; prints router-cycles per second.
//! `… --example bench_wormhole -- transpose [K] [ARB] [bernoulli|poisson|closed]` — matrix transpose on a K×K mesh (default
//! 12) with 50-flit packets, one VC, arbitration ARB (default oldest): accepted throughput of the average and
//! worst node against offered load, next to Chittor's predictions (§3.3, §5.4): worst node
//! saturates at 1/(ν_max+1) = 1/(K−1), average node at δ/(ν_avg+1) = 3/(2K−1).

use std::time::Instant;

use ttdl_backend::sim::drive::synthetic::{self, Injection, Pattern, SyntheticConfig};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::Network;

#[path = "support/cpu.rs"]
mod cpu;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("transpose") {
        let k: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(12);
        let arb = args.get(2).map(String::as_str).unwrap_or("oldest");
        let injection: Injection = match args.get(3).map_or(Ok(Injection::Bernoulli), |s| s.parse())
        {
            Ok(i) => i,
            Err(e) => return eprintln!("{e}"),
        };
        transpose(k, arb, injection);
        return;
    }
    let net = match Network::build(&"mesh:8x8".parse().expect("spec")) {
        Ok(n) => n,
        Err(e) => return eprintln!("{e}"),
    };
    let ctx = ModelContext::new(&net);
    let cfg = SyntheticConfig {
        pattern: Pattern::Uniform,
        rate: 0.02,
        size: 8,
        warmup: 0,
        measure: 100_000,
        drain: 0,
        seed: 1,
        ..SyntheticConfig::default()
    };
    for spec in [
        "wormhole",
        "wormhole vc=2 buf=4",
        "wormhole arb=fifo",
        "wormhole routing=odd-even",
    ] {
        let mut model = match registry::build(spec, &ctx) {
            Ok(m) => m,
            Err(e) => return eprintln!("{e}"),
        };
        let start = Instant::now();
        let cpu0 = cpu::cpu_seconds();
        let r = match synthetic::run(&net, model.as_mut(), &cfg) {
            Ok(r) => r,
            Err(e) => return eprintln!("{e}"),
        };
        let wall = start.elapsed().as_secs_f64();
        // CPU time of this thread: the figure that matters on a shared machine.
        let cpu = cpu::cpu_seconds()
            .zip(cpu0)
            .map(|(b, a)| b - a)
            .filter(|&c| c > 0.0);
        let router_cycles = net.nodes() as f64 * r.cycles as f64;
        println!(
            "{:<36} {} cycles, {} packets, mean latency {:.2}, accepted {:.4} flits/node/cycle: \
             wall {:.3} s ({:.2} M router-cycles/s), cpu {} ({} M router-cycles/s)",
            r.model,
            r.cycles,
            r.injected,
            r.latency.mean,
            r.accepted_flits,
            wall,
            router_cycles / wall / 1e6,
            cpu.map_or("n/a".to_string(), |c| format!("{c:.3} s")),
            cpu.map_or("n/a".to_string(), |c| format!(
                "{:.2}",
                router_cycles / c / 1e6
            )),
        );
    }
}

fn transpose(k: usize, arb: &str, injection: Injection) {
    let net = match Network::build(&format!("mesh:{k}x{k}").parse().expect("spec")) {
        Ok(n) => n,
        Err(e) => return eprintln!("{e}"),
    };
    let ctx = ModelContext::new(&net);
    let nu_max = k as f64 - 2.0;
    let nu_avg = 2.0 * (k as f64 - 2.0) / 3.0;
    println!(
        "transpose {k}x{k}, 50-flit packets, arb={arb}, {injection:?} injection; predicted saturation: worst node {:.3}, \
         average node {:.3}",
        1.0 / (nu_max + 1.0),
        1.0 / (nu_avg + 1.0)
    );
    println!("offered  accepted(avg)  accepted(worst)  mean-latency  unfinished");
    for i in 1..=12 {
        let offered = 0.02 * i as f64;
        let cfg = SyntheticConfig {
            pattern: Pattern::Transpose,
            injection,
            rate: offered / 50.0,
            size: 50,
            warmup: 20_000,
            measure: 100_000,
            drain: 0,
            seed: 7,
            ..SyntheticConfig::default()
        };
        let mut model = match registry::build(&format!("wormhole vc=1 buf=2 arb={arb}"), &ctx) {
            Ok(m) => m,
            Err(e) => return eprintln!("{e}"),
        };
        match synthetic::run(&net, model.as_mut(), &cfg) {
            Ok(r) => println!(
                "{:.3}    {:.4}         {:.4}           {:>10.1}  {}",
                r.offered_flits, r.accepted_flits, r.worst_node_flits, r.latency.mean, r.unfinished
            ),
            Err(e) => return eprintln!("{e}"),
        }
    }
}
