//! `ttdl sweep`: latency against offered load under synthetic traffic, over models × patterns ×
//! loads × seeds (flags or a TOML file), on every core, as a table with the mean over seeds and
//! its 95% confidence interval, an SVG and an HTML page (SPEC §4). The same points can run one
//! per job on a cluster (`--emit slurm|parallel DIR`, `--point K`) and be merged back
//! (`ttdl sweep merge DIR`) into the same table.

use std::path::PathBuf;
use ttdl_ir::limits::Limits;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use ttdl_backend::report::html;
use ttdl_backend::sim::plot::{line_chart, Point, Series};
use ttdl_backend::sim::sweep::{self, PointResult, Summary, SweepSpec};

use super::simulate::{models_help, models_long_help};
use super::{CliError, CliResult, Format, Output};

#[derive(Clone, Debug, Args)]
#[command(after_help = models_help(), after_long_help = models_long_help(), args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    /// Hardware model(s), optionally with options: `wormhole`, `"wormhole vc=2 buf=4"`, or several
    /// separated by commas to draw them on one chart: `"wormhole,circuit,store-forward"`
    #[arg(long, value_name = "MODEL", default_value = "wormhole")]
    pub model: String,
    /// Model options, KEY=VALUE
    #[arg(value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Destinations, comma-separated: uniform, transpose, bit-reversal, shuffle, tornado,
    /// neighbour, hotspot
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
    /// Warm-up period in cycles (not measured): the warm-up takes at least two periods and ends
    /// when the mean latency of one period is within 5% of the one before (the steady state)
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
    /// First seed of the traffic generator (same seeds, same table)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seeds per point (seed, seed+1, …): the table gives the mean and its 95% confidence interval
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub seeds: u64,
    /// The sweep as a TOML file (keys: network, models, patterns, injection, rates, seeds, size,
    /// warmup, measure, drain, hot_node, hot_fraction); replaces the sweep flags
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Worker threads [default: every core]
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Write a cluster job instead of running: `slurm` (an array job, one task per point) or
    /// `parallel` (a GNU parallel job list); then `ttdl sweep merge DIR`
    #[arg(long, value_names = ["slurm|parallel", "DIR"], num_args = 2)]
    pub emit: Option<Vec<String>>,
    /// Run only point K of the sweep (what each emitted job does); its row goes to --csv
    #[arg(long, value_name = "K")]
    pub point: Option<usize>,
    /// Write the curves (95% confidence intervals, saturation marked) and the points as one
    /// self-contained HTML page
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// `--out DIR` writes `sweep.csv` and `sweep.svg` there
    #[command(flatten)]
    pub output: Output,
}

/// What `ttdl sweep` can do besides running a sweep.
#[derive(Clone, Debug, Subcommand)]
pub enum SweepAction {
    /// Join the point files an emitted job wrote (DIR/points/*.csv) into the sweep's table
    Merge {
        /// The directory given to `--emit`
        dir: PathBuf,
        /// Write the table here (default: standard output)
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Replace the --csv file even if TTDL did not write it
        #[arg(long)]
        force: bool,
    },
}

fn rates(args: &SweepArgs) -> Result<Vec<f64>, CliError> {
    let points = args
        .rates
        .as_ref()
        .map_or(args.steps, |list| list.split(',').count());
    if points > Limits::SWEEP_RATES {
        return Err(CliError::Usage(format!(
            "--rates/--steps: {points} load points is more than {0}; each is a whole simulation",
            Limits::SWEEP_RATES
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

/// The sweep the flags or the TOML file describe.
fn spec(args: &SweepArgs) -> Result<SweepSpec, CliError> {
    if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", path.display())))?;
        return toml::from_str(&text)
            .map_err(|e| CliError::Input(format!("{}: {e}", path.display())));
    }
    // Several models may be swept onto one chart: `--model "wormhole,wormhole vc=2,circuit"`;
    // trailing KEY=VALUE options apply to each.
    let models: Vec<String> = args
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
    Ok(SweepSpec {
        network: args.network.clone(),
        models,
        patterns: args
            .pattern
            .split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
        injection: args.injection.clone(),
        rates: rates(args)?,
        seeds: (0..args.seeds)
            .map(|k| args.seed.saturating_add(k))
            .collect(),
        size: args.size,
        warmup: args.warmup,
        measure: args.measure,
        drain: args.drain,
        hot_node: args.hot_node,
        hot_fraction: args.hot_fraction,
    })
}

/// The table's rows as chart curves: one per (model, pattern), each point with its confidence
/// interval and whether it saturated (the chart stops a curve there).
fn curves(table: &[Summary]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    let several = table.iter().any(|r| r.pattern != table[0].pattern);
    for r in table {
        let label = if several {
            format!("{} ({})", r.model, r.pattern)
        } else {
            r.model.clone()
        };
        // A point that measured nothing is drawn only as where its curve saturated.
        let measured = r.mean_latency.is_finite() && r.mean_latency > 0.0;
        if !measured && !r.saturated {
            continue;
        }
        let point = Point {
            x: r.offered_flits,
            y: r.mean_latency,
            ci: if r.latency_ci95.is_finite() {
                r.latency_ci95
            } else {
                0.0
            },
            saturated: r.saturated,
        };
        match out.iter_mut().find(|c| c.label == label) {
            Some(c) => c.points.push(point),
            None => out.push(Series {
                label,
                points: vec![point],
            }),
        }
    }
    out
}

pub fn run(args: &SweepArgs) -> CliResult {
    if let Some(SweepAction::Merge { dir, csv, force }) = &args.action {
        return merge(dir, csv.as_deref(), *force);
    }
    let spec = spec(args)?;
    spec.validate()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let points = spec.points();
    if let Some(k) = args.point {
        let p = points.get(k).ok_or_else(|| {
            CliError::Usage(format!(
                "--point {k}: the sweep has {} points",
                points.len()
            ))
        })?;
        let row = spec
            .run_point(p)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let text = sweep::point_csv(&[row]);
        return match &args.csv {
            Some(path) => super::write::file(path, &text, args.output.force),
            None => {
                super::print(&text)?;
                Ok(())
            }
        };
    }
    if let Some(emit) = &args.emit {
        return emit_jobs(
            &spec,
            points.len(),
            &emit[0],
            PathBuf::from(&emit[1]).as_path(),
            args.output.force,
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::Internal(e.to_string()))?;
    let bar = ProgressBar::new(points.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} points, {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let results: Vec<Result<PointResult, String>> = pool.install(|| {
        points
            .par_iter()
            .map(|p| {
                let r = spec.run_point(p).map_err(|e| e.to_string());
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();
    let rows: Vec<PointResult> = results
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(CliError::Usage)?;
    publish(args, &spec, &rows)
}

/// Prints and writes the table, the chart and the page.
fn publish(args: &SweepArgs, spec: &SweepSpec, rows: &[PointResult]) -> CliResult {
    let table = sweep::aggregate(rows);
    let csv = sweep::summary_csv(&table);
    let title = format!(
        "{} traffic, {}-flit packets, {}",
        spec.patterns.join("/"),
        spec.size,
        spec.network
    );
    let series = curves(&table);
    let svg = line_chart(
        &title,
        "offered load (flits/node/cycle)",
        "mean latency (cycles)",
        &series,
    );
    let force = args.output.force;
    if let Some(path) = &args.html {
        super::write::file(
            path,
            &html::sweep(
                &title,
                "offered load (flits/node/cycle)",
                &series,
                &table,
                &csv,
            ),
            force,
        )?;
    }
    // A file named by its flag is written there; the others go into the --out directory, which
    // keeps the list of what TTDL wrote in it.
    let mut into_out = Vec::new();
    for (named, default, text) in [
        (&args.csv, "sweep.csv", &csv),
        (&args.svg, "sweep.svg", &svg),
    ] {
        match named {
            Some(p) => super::write::file(p, text, force)?,
            None if args.output.out.is_some() => into_out.push((default.to_string(), text.clone())),
            None => {}
        }
    }
    if let (Some(dir), false) = (&args.output.out, into_out.is_empty()) {
        super::write::dir(dir, &into_out, force)?;
    }
    let csv_path = args.csv.is_some() || args.output.out.is_some();
    match args.output.format {
        Format::Json => {
            let doc =
                serde_json::json!({"version": 1, "sweep": spec, "table": table, "points": rows});
            super::print(
                &(serde_json::to_string_pretty(&doc)
                    .map_err(|e| CliError::Internal(e.to_string()))?
                    + "\n"),
            )?;
        }
        Format::Text => {
            if !csv_path {
                super::print(&csv)?;
            } else {
                for r in &table {
                    super::print(&format!(
                        "{} {}: load {:.4} flits/node/cycle: accepted {:.4}, mean latency {:.2} ± {:.2} over {} seed(s){}\n",
                        r.model,
                        r.pattern,
                        r.offered_flits,
                        r.accepted_flits,
                        r.mean_latency,
                        r.latency_ci95,
                        r.seeds,
                        if r.saturated { "  (saturated)" } else { "" }
                    ))?;
                }
            }
        }
    }
    Ok(())
}

/// Writes DIR/sweep.toml (the sweep), and DIR/jobs.txt (one command line per point, for GNU
/// parallel or plain `bash`) or DIR/sweep.sbatch (a Slurm array job); each job writes
/// DIR/points/K.csv.
fn emit_jobs(
    spec: &SweepSpec,
    n: usize,
    kind: &str,
    dir: &std::path::Path,
    force: bool,
) -> CliResult {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Internal(format!("cannot find the ttdl binary: {e}")))?;
    let text = toml::to_string(spec).map_err(|e| CliError::Internal(e.to_string()))?;
    let mut files = vec![("sweep.toml".to_string(), text)];
    std::fs::create_dir_all(dir.join("points"))
        .map_err(|e| CliError::Input(format!("cannot create `{}`: {e}", dir.display())))?;
    // The jobs may run anywhere (another directory, a cluster node): name every file absolutely.
    let dir = &std::fs::canonicalize(dir)
        .map_err(|e| CliError::Input(format!("cannot resolve `{}`: {e}", dir.display())))?;
    let config = dir.join("sweep.toml");
    let quote =
        |p: &std::path::Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let job = |k: &str| {
        format!(
            "{} sweep --config {} --point {k} --force --csv {}",
            quote(&exe),
            quote(&config),
            quote(&dir.join("points").join(format!("{k}.csv")))
        )
    };
    match kind {
        "parallel" => {
            let mut lines = String::new();
            for k in 0..n {
                lines.push_str(&job(&k.to_string()));
                lines.push('\n');
            }
            files.push(("jobs.txt".to_string(), lines));
            super::write::dir(dir, &files, force)?;
            eprintln!(
                "wrote {n} jobs to {}: run them with `parallel < jobs.txt` (or `bash jobs.txt`), then `ttdl sweep merge {}`",
                dir.join("jobs.txt").display(),
                dir.display()
            );
        }
        "slurm" => {
            let script = format!(
                "#!/bin/bash\n#SBATCH --job-name=ttdl-sweep\n#SBATCH --array=0-{}\n#SBATCH --ntasks=1\n#SBATCH --output={}\n{}\n",
                n.saturating_sub(1),
                dir.join("points").join("%a.log").display(),
                job("${SLURM_ARRAY_TASK_ID}")
            );
            files.push(("sweep.sbatch".to_string(), script));
            super::write::dir(dir, &files, force)?;
            eprintln!(
                "wrote a {n}-task array job: `sbatch {}`, then `ttdl sweep merge {}`",
                dir.join("sweep.sbatch").display(),
                dir.display()
            );
        }
        other => {
            return Err(CliError::Usage(format!(
                "--emit {other}: the choices are slurm and parallel"
            )))
        }
    }
    Ok(())
}

/// `ttdl sweep merge DIR`: every point file, checked complete, as one table.
fn merge(dir: &std::path::Path, csv: Option<&std::path::Path>, force: bool) -> CliResult {
    let config = dir.join("sweep.toml");
    let text = std::fs::read_to_string(&config)
        .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", config.display())))?;
    let spec: SweepSpec =
        toml::from_str(&text).map_err(|e| CliError::Input(format!("{}: {e}", config.display())))?;
    let n = spec.points().len();
    let mut rows = Vec::with_capacity(n);
    let mut missing = Vec::new();
    for k in 0..n {
        let path = dir.join("points").join(format!("{k}.csv"));
        match std::fs::read_to_string(&path) {
            Ok(t) => rows.extend(
                sweep::parse_point_csv(&t)
                    .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?,
            ),
            Err(_) => missing.push(k),
        }
    }
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(10).map(|k| k.to_string()).collect();
        return Err(CliError::Input(format!(
            "{} of {n} points have no result yet (points {}{}); run their jobs first",
            missing.len(),
            shown.join(", "),
            if missing.len() > 10 { ", …" } else { "" }
        )));
    }
    let table = sweep::summary_csv(&sweep::aggregate(&rows));
    match csv {
        Some(p) => super::write::file(p, &table, force),
        None => {
            super::print(&table)?;
            Ok(())
        }
    }
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
        let list = vec!["0.01"; Limits::SWEEP_RATES + 1].join(",");
        assert!(matches!(
            rates(&args(&["--rates", &list])),
            Err(CliError::Usage(_))
        ));
    }
}
