//! Routing benchmark: dimension-order routing, metrics and rerouting of a large random traffic.
//!
//! `cargo run --release -p ttdl-backend --example bench_route [SIDE] [MESSAGES] [STEPS] [NETWORK]`
//! routes MESSAGES (default 16,384) seeded random messages among the tasks of a SIDE×SIDE mesh
//! (default 64, one task per node), computes the metrics, then runs STEPS (default 100) rerouting
//! steps. NETWORK (e.g. `diamond:64x64x4`) replaces the mesh; SIDE is then ignored.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ttdl_backend::metrics::Metrics;
use ttdl_backend::place::{self, PlaceMethod, Schedule};
use ttdl_backend::route::{self, RouteMethod, RouteOptions};
use ttdl_backend::traffic::{Message, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let side: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(64);
    let count: usize = args
        .get(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(16_384);
    let steps: u64 = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(100);
    let spec: NetworkSpec = match args.get(4) {
        Some(s) => s.parse()?,
        None => format!("mesh:{side}x{side}").parse()?,
    };
    let net = Network::build(&spec)?;
    let n = net.nodes();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let tasks = (0..n)
        .map(|i| Task {
            id: i,
            name: format!("t{i}"),
            ..Task::default()
        })
        .collect();
    let messages = (0..count)
        .map(|id| {
            let src = id % n;
            let mut dst = rng.random_range(0..n);
            if dst == src {
                dst = (dst + 1) % n;
            }
            let release = rng.random_range(0..400u64);
            Message {
                id,
                src,
                dst: vec![dst].into(),
                size: 8,
                release,
                deadline: release + 8 + rng.random_range(0..40u64),
                ..Message::default()
            }
        })
        .collect();
    let t = Traffic {
        tasks,
        messages,
        ..Traffic::default()
    };
    println!("{count} random messages on {spec}");
    let start = Instant::now();
    let shortest = route::route(
        &t,
        &net,
        &place::place(&t, &net, PlaceMethod::Identity, 0)?,
        RouteMethod::Shortest,
        0,
    )?;
    println!(
        "  shortest: {:.2} s ({} routes)",
        start.elapsed().as_secs_f64(),
        shortest.routes.len()
    );
    let p = place::place(&t, &net, PlaceMethod::Identity, 0)?;

    let start = Instant::now();
    let dor = route::route(&t, &net, &p, RouteMethod::Dor, 0)?;
    let t_route = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let m = Metrics::compute(&t, &net, &p, &dor);
    let t_metrics = start.elapsed().as_secs_f64();
    println!(
        "  dor: {t_route:.2} s; metrics {t_metrics:.2} s: peak lu {:.3}, χ_max {}, ν avg {:.1} max {}, dilation {}",
        m.peak_utilization, m.channel_load_max, m.path_contention_avg, m.path_contention_max, m.dilation
    );

    let mut opts = RouteOptions::new(RouteMethod::Reroute, 0);
    let mut schedule = Schedule::linear(opts.overload_weight / 2.0, 1, steps, 0);
    schedule.bail_out_t = f64::INFINITY;
    opts.schedule = Some(schedule);
    let start = Instant::now();
    let (_, outcome) = route::route_with(&t, &net, &p, &opts, &mut |_| {})?;
    let t_reroute = start.elapsed().as_secs_f64();
    if let Some(o) = outcome {
        println!(
            "  reroute (dor + {steps} steps): {t_reroute:.2} s: peak lu {:.3} -> {:.3}, {} proposed, {} accepted{}",
            o.initial_peak,
            o.final_peak,
            o.steps,
            o.accepted,
            if o.capped {
                format!(" (stopped at the step cap of {})", o.step_cap)
            } else {
                String::new()
            }
        );
    }
    println!("  total {:.2} s", t_route + t_metrics + t_reroute);
    Ok(())
}
