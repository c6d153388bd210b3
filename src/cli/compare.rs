//! `ttdl compare`: every hardware model side by side on the same program — completion time and
//! message latency, each also normalized to the best model (best = 1.0), as in Yuan's
//! Tables 6.2–6.3.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use ttdl_backend::sim::core::SimError;
use ttdl_backend::sim::registry;

use super::simulate::{load_program, models_help, network_json};
use super::{CliError, CliResult, Common, Format};

#[derive(Clone, Debug, Args)]
#[command(after_help = models_help())]
pub struct CompareArgs {
    /// The TTDL program (or a Traffic IR as `.json`)
    pub file: Option<PathBuf>,
    /// Models to run, comma-separated, each with options after spaces:
    /// `wormhole,wormhole vc=2,circuit`. Default: every registered model's standard set
    #[arg(long, value_name = "A,B,…")]
    pub models: Option<String>,
    /// Stop a model that has not finished by this cycle (default: 64 × the program's serial time, at least 1,000,000); a model that holds packets but delivers none for long is stopped as deadlocked or livelocked before
    #[arg(long, value_name = "CYCLES")]
    pub max_cycles: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// One row of the table.
struct Row {
    spec: String,
    result: Result<(String, u64, f64, u64), SimError>,
}

fn ratio(x: f64, best: f64) -> f64 {
    if best > 0.0 {
        x / best
    } else if x > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

pub fn run(args: &CompareArgs) -> CliResult {
    let prog = load_program(args.file.as_deref(), &args.common)?;
    let specs: Vec<String> = match &args.models {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => registry::compare_specs(),
    };
    if specs.is_empty() {
        return Err(CliError::Usage("--models names no model".into()));
    }
    for s in &specs {
        let name = s.split([' ', ':']).next().unwrap_or("");
        if registry::find(name).is_none() {
            return Err(CliError::Usage(format!(
                "unknown model `{name}`; known models: {}",
                registry::MODELS
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let bar = ProgressBar::new(specs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let rows: Vec<Row> = prog
        .compare(&specs, args.max_cycles, |spec| {
            bar.set_message(spec.to_string());
            bar.inc(1);
        })
        .into_iter()
        .map(|run| Row {
            spec: run.spec,
            result: run
                .result
                .map(|r| (r.model.clone(), r.completion, r.latency.mean, r.latency.max)),
        })
        .collect();
    bar.finish_and_clear();

    let ok = || rows.iter().filter_map(|r| r.result.as_ref().ok());
    let best_completion = ok().map(|r| r.1).min().unwrap_or(0) as f64;
    let best_mean = ok().map(|r| r.2).fold(f64::INFINITY, f64::min);
    let best_max = ok().map(|r| r.3).min().unwrap_or(0) as f64;

    let out = match args.common.format {
        Format::Text => {
            let mut s = String::new();
            let _ = writeln!(
                s,
                "{} on {} ({} tasks, {} messages); normalized columns: best = 1.0",
                args.file
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                prog.network.spec,
                prog.traffic.tasks.len(),
                prog.traffic.messages.len()
            );
            let width = rows
                .iter()
                .map(|r| match &r.result {
                    Ok(x) => x.0.len(),
                    Err(_) => r.spec.len(),
                })
                .max()
                .unwrap_or(5)
                .max(5);
            let _ = writeln!(
                s,
                "{:<width$}  {:>10} {:>6}  {:>10} {:>6}  {:>8} {:>6}",
                "model", "completion", "norm", "mean lat", "norm", "max lat", "norm"
            );
            let mut errors = Vec::new();
            for r in &rows {
                match &r.result {
                    Ok((name, c, mean, max)) => {
                        let _ = writeln!(
                            s,
                            "{:<width$}  {:>10} {:>6.2}  {:>10.2} {:>6.2}  {:>8} {:>6.2}",
                            name,
                            c,
                            ratio(*c as f64, best_completion),
                            mean,
                            ratio(*mean, best_mean),
                            max,
                            ratio(*max as f64, best_max)
                        );
                    }
                    Err(SimError::Unfinished { cycles, stall, .. }) => {
                        let _ = writeln!(
                            s,
                            "{:<width$}  did not finish after {cycles} cycles ({})",
                            r.spec,
                            stall.name()
                        );
                        if let Some(e) = &r.result.as_ref().err() {
                            errors.push(format!("{}: {e}", r.spec));
                        }
                    }
                    Err(e) => {
                        errors.push(format!("{}: {e}", r.spec));
                        let _ = writeln!(s, "{:<width$}  {:>10}", r.spec, "cannot run");
                    }
                }
            }
            for e in errors {
                let _ = writeln!(s, "note: {e}");
            }
            s
        }
        Format::Json => {
            let models: Vec<_> = rows
                .iter()
                .map(|r| match &r.result {
                    Ok((name, c, mean, max)) => json!({
                        "model": name,
                        "completion": c,
                        "completion_norm": ratio(*c as f64, best_completion),
                        "mean_latency": mean,
                        "mean_latency_norm": ratio(*mean, best_mean),
                        "max_latency": max,
                        "max_latency_norm": ratio(*max as f64, best_max),
                    }),
                    Err(SimError::Unfinished {
                        cycles,
                        stall,
                        detail,
                    }) => json!({
                        "model": r.spec,
                        "unfinished": {"cycles": cycles, "stall": stall, "detail": detail},
                        "error": r.result.as_ref().err().map(|e| e.to_string()),
                    }),
                    Err(e) => json!({"model": r.spec, "error": e.to_string()}),
                })
                .collect();
            let doc = json!({
                "version": 1,
                "network": network_json(&prog.network),
                "compare": models,
            });
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::Internal(e.to_string()))?
                + "\n"
        }
    };
    print!("{out}");
    Ok(())
}
