//! The heuristic against the proven optimum: random programs of at most 60 messages (multicast,
//! 1–2 ports, switch latency 0–1, every buffer size from bufferless to unbounded), each
//! scheduled by the exact scheduler (`--schedule exact`, the heuristic `best` starts from) and
//! then by the time-indexed MILP ([`schedule::milp`]) warm-started with it. Prints one row per
//! program and the mean and largest gap of the heuristic: to the proven optimum where the MILP
//! finished, and to the MILP's bound (an upper estimate of the gap) everywhere. The LP scheduler
//! (`--schedule lp`, microlp) runs on each too, and how often it beats, ties or loses to the
//! exact scheduler is counted. With 0 seconds the MILP is skipped (the LP comparison alone).
//!
//! `cargo run -p ttdl-backend --features highs --example bench_milp -- [PROGRAMS] [SECONDS]
//! [FIRST-SEED]` (default 100 programs from seed 0, 10 s per MILP; `TTDL_MILP_LOG=1` shows
//! HiGHS's log).

use rand::{Rng, SeedableRng};
use std::time::Instant;
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::schedule::{self, milp, Hardware, Method, Problem};
use ttdl_backend::{Network, Placement};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let programs: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let seconds: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10.0);
    let first: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(0);
    let options = milp::Options {
        time_limit: seconds,
        node_limit: None,
        ..milp::Options::default()
    };
    println!(
        "{:>4} {:>4} {:>9} {:>5} {:>3} {:>9} {:>5} {:>5} {:>5} {:>5} {:>5} {:>6} {:>7} {:>6}",
        "seed",
        "msgs",
        "network",
        "ports",
        "lat",
        "buffer",
        "lower",
        "heur",
        "lp",
        "milp",
        "bound",
        "proven",
        "gap%",
        "secs"
    );
    let (mut gaps, mut proven_gaps, mut declined, mut improved) = (Vec::new(), Vec::new(), 0, 0);
    let mut total = 0.0;
    // LP below, equal to, above the exact scheduler's makespan.
    let mut lp_vs = [0usize; 3];
    for seed in first..first + programs {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xbe7c);
        let spec = ["mesh:3x3", "mesh:4x2", "torus:4x2", "mesh:4x4"][rng.random_range(0..4)];
        let network = Network::build(&spec.parse().expect("a network")).expect("a network");
        let tasks = rng.random_range(4..=network.nodes().min(10));
        let messages = rng.random_range(10..=60);
        let traffic = milp::random_program(seed, tasks, messages);
        let placement = Placement {
            node_of: (0..tasks)
                .map(|t| (t * 5 + seed as usize) % network.nodes())
                .collect(),
        };
        let routing = route::route(&traffic, &network, &placement, RouteMethod::Dor, 1)
            .expect("dimension-order routes");
        let hw = Hardware {
            ports: rng.random_range(1..=2),
            hop_latency: rng.random_range(0..=1),
            buffer: [None, Some(0), Some(1), Some(2)][rng.random_range(0..4)],
            ..Hardware::default()
        };
        let problem = Problem::new(&traffic, &network, &placement, &routing, hw).expect("valid");
        let heuristic =
            schedule::schedule(&traffic, &network, &placement, &routing, Method::Exact, hw)
                .expect("a schedule");
        let lower = schedule::lower_bound(&problem).0;
        let lp = schedule::schedule(&traffic, &network, &placement, &routing, Method::Lp, hw)
            .map(|s| s.makespan)
            .unwrap_or(u64::MAX);
        lp_vs[(lp.cmp(&heuristic.makespan) as i32 + 1) as usize] += 1;
        if seconds <= 0.0 {
            println!(
                "{seed:>4} {:>4} {spec:>9} {:>5} {:>3} {:>9} {lower:>5} {:>5} {lp:>5}",
                traffic.messages.len(),
                hw.ports,
                hw.hop_latency,
                Hardware::buffer_name(hw.buffer),
                heuristic.makespan
            );
            continue;
        }
        let t = Instant::now();
        let proof = milp::solve(&problem, &heuristic, &options).expect("the MILP runs");
        let secs = t.elapsed().as_secs_f64();
        total += secs;
        let Some(proof) = proof else {
            declined += 1;
            println!("{seed:>4} {:>4} {spec:>9} declined", traffic.messages.len());
            continue;
        };
        assert!(proof.bound >= lower && proof.bound <= proof.best);
        assert!(proof.best <= heuristic.makespan);
        improved += (proof.best < heuristic.makespan) as usize;
        let gap = proof.gap_of(heuristic.makespan);
        gaps.push(gap);
        if proof.proven {
            proven_gaps.push(gap);
        }
        println!(
            "{seed:>4} {:>4} {spec:>9} {:>5} {:>3} {:>9} {lower:>5} {:>5} {lp:>5} {:>5} {:>5} {:>6} {:>7.2} {secs:>6.2}",
            traffic.messages.len(),
            hw.ports,
            hw.hop_latency,
            Hardware::buffer_name(hw.buffer),
            heuristic.makespan,
            proof.best,
            proof.bound,
            proof.proven,
            gap * 100.0
        );
    }
    println!(
        "\nLP against the exact scheduler: shorter on {}, equal on {}, longer on {}",
        lp_vs[0], lp_vs[1], lp_vs[2]
    );
    if seconds <= 0.0 {
        return;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "{} programs, {declined} declined; proven optimal: {} of {}; the MILP beat the heuristic on {improved}",
        programs,
        proven_gaps.len(),
        gaps.len()
    );
    println!(
        "heuristic gap where the optimum is proven: mean {:.2}%, max {:.2}%",
        mean(&proven_gaps) * 100.0,
        max(&proven_gaps) * 100.0
    );
    println!(
        "heuristic gap to the MILP bound (all): mean {:.2}%, max {:.2}%; MILP time {total:.0} s",
        mean(&gaps) * 100.0,
        max(&gaps) * 100.0
    );
}
