//! The slot-table (modulo) planner on the periodic all-to-all of one word per ordered pair of
//! nodes (a sender and a receiver per node, as `all-to-all-periodic-on` builds it): the period
//! reached against the bound, the placements spent per period tried, and the time.
//!
//! `cargo run --release -p ttdl-backend --example bench_periodic -- [SPEC] [LATENCY] [MOVES] [SEED] [START]`
//! (defaults `torus:8x8 1 60 1 15`; MOVES is the search's placements per message per period,
//! over its fresh starts, and START how far above the bound the descent starts, in percent).
//! The solver is left out: these are the repair search's (and the torus waves') figures.

use std::time::Instant;

use ttdl_backend::progress::Progress;
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::schedule::{self, modulo, Hardware, Problem};
use ttdl_backend::{Network, Placement, Traffic};
use ttdl_ir::iterations::Layout;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spec = args.first().map_or("torus:8x8", String::as_str);
    let num = |i: usize, d: u64| -> Result<u64, String> {
        args.get(i).map_or(Ok(d), |a| {
            a.parse()
                .map_err(|_| format!("argument {i}: `{a}` is no number"))
        })
    };
    let (latency, moves, seed, start) = (num(1, 1)?, num(2, 60)?, num(3, 1)?, num(4, 15)?);
    let net =
        Network::build(&spec.parse().map_err(|e| format!("{e}"))?).map_err(|e| e.to_string())?;
    let n = net.nodes();
    let count = 4;
    let mut b = Traffic::builder();
    let senders = b.tasks(n);
    let receivers = b.tasks(n);
    for _ in 0..count {
        for i in 0..n {
            for j in 1..n {
                b.send(senders + i, receivers + (i + j) % n, 1);
            }
        }
    }
    let mut t = b.build();
    schedule::program::apply_ideal_timing(&mut t).map_err(|e| e.to_string())?;
    let placement = Placement {
        node_of: (0..2 * n).map(|t| t % n).collect(),
    };
    let routing =
        route::route(&t, &net, &placement, RouteMethod::Dor, seed).map_err(|e| e.to_string())?;
    let hw = Hardware {
        hop_latency: latency,
        buffer: Some(0),
        ..Default::default()
    };
    let problem = Problem::new(&t, &net, &placement, &routing, hw).map_err(|e| e.to_string())?;
    let layout = Layout {
        prefix: 0,
        per: n * (n - 1),
        count,
        suffix: 0,
    };
    let params = modulo::Params {
        moves_per_message: moves as usize,
        start_percent: start,
        sat_conflicts: 0,
        ..modulo::Params::default()
    };
    let start = Instant::now();
    let p = modulo::plan_with(
        &problem,
        &layout,
        seed,
        &params,
        &Progress::none(),
        &mut modulo::Memo::default(),
    )
    .map_err(|e| e.to_string())?;
    let secs = start.elapsed().as_secs_f64();
    match p {
        Some(p) => println!(
            "{spec} latency {latency}: period {} (bound {}, {:.3}×), moves {:?}, {secs:.2} s",
            p.period,
            p.bound,
            p.period as f64 / p.bound as f64,
            p.moves
        ),
        None => println!("{spec} latency {latency}: no slot table, {secs:.2} s"),
    }
    Ok(())
}
