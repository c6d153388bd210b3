//! What each placement `--place best` weighs costs on a script, beside what planning costs.
//!
//! `cargo run --release --example bench_place_script -- FILE.ttdl [--plan]` evaluates the script
//! as `ttdl run` does (long repeating `iterate`s folded), then places it by each of the
//! candidates of `best` on the script's target, printing the time and word-hops of each. With
//! `--plan` it also plans each distinct placement (the exact scheduler, as `best` judges them)
//! and then the whole default run, so the search's share of the run shows.

use std::process::ExitCode;
use std::time::Instant;

use ttdl::session::Session;
use ttdl_backend::pipeline::{self, Settings};
use ttdl_backend::place::{self, coarse_cost, PlaceMethod};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: bench_place_script FILE.ttdl [--plan]");
        return ExitCode::from(2);
    };
    let plan = args.iter().any(|a| a == "--plan");
    match run(path, plan) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &str, plan: bool) -> Result<(), String> {
    let clock = Instant::now();
    let mut session = Session::new().map_err(|e| e.to_string())?;
    session.load_file(path).map_err(|e| e.to_string())?;
    let traffic = session
        .traffic_folded(session.mapping())
        .map_err(|d| session.render(&d))?;
    println!(
        "{path}: {} tasks, {} messages evaluated{}, {:.2} s",
        traffic.tasks.len(),
        traffic.messages.len(),
        traffic
            .repeat
            .map_or(String::new(), |n| format!(" (folded: {n} iterations)")),
        clock.elapsed().as_secs_f64()
    );
    let mut placed = Vec::new();
    for method in place::candidates(&traffic) {
        let settings = Settings::new()
            .with("place", method.name())
            .map_err(|e| e.to_string())?;
        let cfg = pipeline::resolve(&traffic, &settings).map_err(|e| e.to_string())?;
        let clock = Instant::now();
        let (network, placement) = match pipeline::place(&traffic, &cfg) {
            Ok(p) => p,
            Err(e) if method == PlaceMethod::Mapping => {
                println!("  {:<8} not a candidate: {e}", method.name());
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        let took = clock.elapsed().as_secs_f64();
        let same = placed
            .iter()
            .find(|(_, _, p)| *p == placement)
            .map(|(m, _, _): &(PlaceMethod, _, _)| format!(" (= {})", m.name()));
        println!(
            "  {:<8} placed in {took:.3} s, {} word-hops{}",
            method.name(),
            coarse_cost(&traffic, &network, &placement),
            same.clone().unwrap_or_default()
        );
        if same.is_none() {
            placed.push((method, network, placement));
        }
    }
    if !plan {
        return Ok(());
    }
    let exact = Settings::new()
        .with("schedule", "exact")
        .map_err(|e| e.to_string())?;
    let cfg = pipeline::resolve(&traffic, &exact).map_err(|e| e.to_string())?;
    for (method, network, placement) in placed {
        let clock = Instant::now();
        let p =
            pipeline::plan_placed(&traffic, network, placement, &cfg).map_err(|e| e.to_string())?;
        println!(
            "  {:<8} planned in {:.3} s: makespan {}",
            method.name(),
            clock.elapsed().as_secs_f64(),
            p.rank().0
        );
    }
    let cfg = pipeline::resolve(&traffic, &Settings::new()).map_err(|e| e.to_string())?;
    let clock = Instant::now();
    let p = pipeline::plan(&traffic, &cfg).map_err(|e| e.to_string())?;
    println!(
        "  default run ({}) in {:.3} s: makespan {}",
        cfg.place.name(),
        clock.elapsed().as_secs_f64(),
        p.rank().0
    );
    Ok(())
}
