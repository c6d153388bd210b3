//! `ttdl sweep`: latency against offered load for one model under synthetic traffic, written as
//! CSV and SVG (SPEC §4, "plots of latency against load for the dynamic models").

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use ttdl_backend::sim::plot::{line_chart, Series};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::sim::synthetic::{self, Injection, Pattern, SyntheticConfig, SyntheticResult};
use ttdl_backend::{Network, NetworkSpec};

use super::simulate::models_help;
use super::{CliError, CliResult, Format, Output};

#[derive(Clone, Debug, Args)]
#[command(after_help = models_help())]
pub struct SweepArgs {
    /// Hardware model(s), optionally with options: `wormhole`, `"wormhole vc=2 buf=4"`, or several
    /// separated by commas to draw them on one chart: `"wormhole,circuit,store-forward"`
    #[arg(long, value_name = "MODEL", default_value = "wormhole")]
    pub model: String,
    /// Model options, KEY=VALUE
    #[arg(value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Destinations: uniform, transpose, bit-reversal, shuffle, tornado, neighbour, hotspot
    #[arg(long, default_value = "uniform")]
    pub pattern: String,
    /// Injection process: bernoulli or poisson
    #[arg(long, default_value = "bernoulli")]
    pub injection: String,
    /// Offered loads in packets per node per cycle, comma-separated (overrides --from/--to/--steps)
    #[arg(long, value_name = "R1,R2,…")]
    pub rates: Option<String>,
    /// Lowest offered load (packets/node/cycle)
    #[arg(long, default_value_t = 0.002)]
    pub from: f64,
    /// Highest offered load (packets/node/cycle)
    #[arg(long, default_value_t = 0.04)]
    pub to: f64,
    /// Number of load points
    #[arg(long, default_value_t = 10)]
    pub steps: usize,
    /// Packet length in flits (words)
    #[arg(long, default_value_t = 8)]
    pub size: u64,
    /// Warm-up cycles (not measured)
    #[arg(long, default_value_t = 1_000)]
    pub warmup: u64,
    /// Measurement window in cycles
    #[arg(long, default_value_t = 10_000)]
    pub measure: u64,
    /// Cycles allowed after the window for measured packets to arrive
    #[arg(long, default_value_t = 20_000)]
    pub drain: u64,
    /// Hotspot node (for --pattern hotspot)
    #[arg(long, default_value_t = 0)]
    pub hot_node: usize,
    /// Fraction of packets sent to the hotspot
    #[arg(long, default_value_t = 0.1)]
    pub hot_fraction: f64,
    /// Write the curve as CSV here (default: DIR/sweep.csv with --out, else standard output)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the plot as SVG here (default: DIR/sweep.svg with --out)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Physical network, e.g. `mesh:8x8`, `torus:8x8`
    #[arg(long, value_name = "KIND:DIMS", default_value = "mesh:8x8")]
    pub network: String,
    /// Seed of the traffic generator (same seed, same curve)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the curves (log latency axis) and the points as one self-contained HTML page
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// `--out DIR` writes `sweep.csv` and `sweep.svg` there
    #[command(flatten)]
    pub output: Output,
}

/// Most load points one sweep draws (each is a whole simulation).
pub const MAX_POINTS: usize = 1_000;

fn rates(args: &SweepArgs) -> Result<Vec<f64>, CliError> {
    let points = args
        .rates
        .as_ref()
        .map_or(args.steps, |list| list.split(',').count());
    if points > MAX_POINTS {
        return Err(CliError::Usage(format!(
            "--rates/--steps: {points} load points is more than {MAX_POINTS}; each is a whole simulation"
        )));
    }
    if let Some(list) = &args.rates {
        return list
            .split(',')
            .map(|r| {
                r.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| CliError::Usage(format!("--rates: `{r}` is not a rate")))
            })
            .collect();
    }
    if args.steps == 0 || !(args.from.is_finite() && args.to.is_finite()) || args.from < 0.0 {
        return Err(CliError::Usage(
            "--from/--to/--steps: need 0 ≤ from ≤ to and at least one step".into(),
        ));
    }
    if args.steps == 1 {
        return Ok(vec![args.from]);
    }
    Ok((0..args.steps)
        .map(|i| args.from + (args.to - args.from) * i as f64 / (args.steps - 1) as f64)
        .collect())
}

fn csv(results: &[SyntheticResult]) -> String {
    let mut s = String::from(
        "model,offered_packets,offered_flits,accepted_flits,worst_node_flits,mean_latency,p50,p95,p99,max_latency,packets,unfinished\n",
    );
    for r in results {
        let _ = writeln!(
            s,
            "\"{}\",{:.6},{:.6},{:.6},{:.6},{:.3},{},{},{},{},{},{}",
            r.model,
            r.offered,
            r.offered_flits,
            r.accepted_flits,
            r.worst_node_flits,
            r.latency.mean,
            r.latency.p50,
            r.latency.p95,
            r.latency.p99,
            r.latency.max,
            r.latency.count,
            r.unfinished
        );
    }
    s
}

fn write(path: &PathBuf, text: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Input(format!("cannot create `{}`: {e}", dir.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| CliError::Input(format!("cannot write `{}`: {e}", path.display())))
}

pub fn run(args: &SweepArgs) -> CliResult {
    let spec: NetworkSpec = args
        .network
        .parse()
        .map_err(|e| CliError::Usage(format!("--network: {e}")))?;
    let net = Network::build(&spec).map_err(|e| CliError::Input(e.to_string()))?;
    let pattern: Pattern = args
        .pattern
        .parse()
        .map_err(|e: ttdl_backend::sim::ModelError| CliError::Usage(e.to_string()))?;
    let injection: Injection = args
        .injection
        .parse()
        .map_err(|e: ttdl_backend::sim::ModelError| CliError::Usage(e.to_string()))?;
    // Several models may be swept onto one chart: `--model "wormhole,wormhole vc=2,circuit"`;
    // trailing KEY=VALUE options apply to each.
    let model_specs: Vec<String> = args
        .model
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| {
            let mut spec = m.to_string();
            for o in &args.options {
                spec.push(' ');
                spec.push_str(o);
            }
            spec
        })
        .collect();
    if model_specs.is_empty() {
        return Err(CliError::Usage("--model names no model".into()));
    }
    let seed = args.seed;
    let ctx = ModelContext {
        network: &net,
        traffic: None,
        placement: None,
        seed,
    };
    // Fail on a bad model before starting the long run.
    for m in &model_specs {
        registry::build(m, &ctx).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let loads = rates(args)?;
    let bar = ProgressBar::new((loads.len() * model_specs.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut results = Vec::new();
    let mut series = Vec::new();
    for model_spec in &model_specs {
        let mut curve = Vec::new();
        for &rate in &loads {
            bar.set_message(format!("{model_spec} at {rate:.4}"));
            let cfg = SyntheticConfig {
                pattern,
                injection,
                rate,
                size: args.size,
                warmup: args.warmup,
                measure: args.measure,
                drain: args.drain,
                hot_node: args.hot_node,
                hot_fraction: args.hot_fraction,
                seed,
            };
            let mut model =
                registry::build(model_spec, &ctx).map_err(|e| CliError::Usage(e.to_string()))?;
            let r = synthetic::run(&net, model.as_mut(), &cfg)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            if r.latency.count > 0 {
                curve.push((r.offered_flits, r.latency.mean));
            }
            results.push(r);
            bar.inc(1);
        }
        series.push(Series {
            label: results
                .last()
                .map(|r| r.model.clone())
                .unwrap_or_else(|| model_spec.clone()),
            points: curve,
        });
    }
    bar.finish_and_clear();
    let model_name = series
        .iter()
        .map(|s| s.label.clone())
        .collect::<Vec<_>>()
        .join(", ");
    let table = csv(&results);
    let title = if series.len() == 1 {
        format!(
            "{model_name}, {pattern} traffic, {}-flit packets, {spec}",
            args.size
        )
    } else {
        format!("{pattern} traffic, {}-flit packets, {spec}", args.size)
    };
    let svg = line_chart(
        &title,
        "offered load (flits/node/cycle)",
        "mean latency (cycles)",
        &series,
    );
    if let Some(path) = &args.html {
        let curves: Vec<ttdl_backend::report::html::Curve> = series
            .iter()
            .map(|s| ttdl_backend::report::html::Curve {
                label: s.label.clone(),
                points: s.points.clone(),
            })
            .collect();
        let page = ttdl_backend::report::html::sweep(
            &title,
            "offered load (flits/node/cycle)",
            &curves,
            &table,
        );
        write(path, &page)?;
    }
    let csv_path = args
        .csv
        .clone()
        .or_else(|| args.output.out.as_ref().map(|d| d.join("sweep.csv")));
    let svg_path = args
        .svg
        .clone()
        .or_else(|| args.output.out.as_ref().map(|d| d.join("sweep.svg")));
    if let Some(p) = &csv_path {
        write(p, &table)?;
    }
    if let Some(p) = &svg_path {
        write(p, &svg)?;
    }
    match args.output.format {
        Format::Json => {
            let doc = serde_json::json!({"version": 1, "model": model_name, "network": spec.to_string(), "points": results});
            println!(
                "{}",
                serde_json::to_string_pretty(&doc)
                    .map_err(|e| CliError::Internal(e.to_string()))?
            );
        }
        Format::Text => {
            if csv_path.is_none() {
                print!("{table}");
            } else {
                for r in &results {
                    println!(
                        "{}: load {:.4} flits/node/cycle: accepted {:.4}, mean latency {:.2}, p99 {}{}",
                        r.model,
                        r.offered_flits,
                        r.accepted_flits,
                        r.latency.mean,
                        r.latency.p99,
                        if r.unfinished > 0 {
                            "  (saturated)"
                        } else {
                            ""
                        }
                    );
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: SweepArgs,
    }

    fn args(line: &[&str]) -> SweepArgs {
        let argv = std::iter::once("sweep").chain(line.iter().copied());
        Cmd::try_parse_from(argv)
            .unwrap_or_else(|e| panic!("{e}"))
            .args
    }

    /// A typo of a few zeros must not start a day-long run.
    #[test]
    fn too_many_load_points_are_refused() {
        assert_eq!(
            rates(&args(&["--steps", "3"])).map(|r| r.len()).ok(),
            Some(3)
        );
        let many = args(&["--steps", "100000000"]);
        assert!(matches!(rates(&many), Err(CliError::Usage(_))));
        let list = vec!["0.01"; MAX_POINTS + 1].join(",");
        assert!(matches!(
            rates(&args(&["--rates", &list])),
            Err(CliError::Usage(_))
        ));
    }
}
