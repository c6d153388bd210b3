//! `ttdl compare`: every hardware model side by side on the same program — completion time and
//! message latency, each also normalized to the best model (best = 1.0), as in Yuan's
//! Tables 6.2–6.3.

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use ttdl_backend::report;

use super::simulate::{load_program, models_help, models_long_help, network_json};
use super::{CliError, CliResult, Format, Output, PlanArgs, Source};

#[derive(Clone, Debug, Args)]
#[command(after_help = models_help(), after_long_help = models_long_help())]
pub struct CompareArgs {
    /// The TTDL program (or a Traffic IR as `.json`; `-` reads standard input)
    pub file: Option<PathBuf>,
    /// Models to run, comma-separated, each with options after spaces:
    /// `wormhole,wormhole vc=2,circuit`. Default: every registered model's standard set
    #[arg(long, value_name = "A,B,…")]
    pub models: Option<String>,
    /// Stop a model that has not finished by this cycle (default: 64 × the program's serial time, at least 1,000,000); a model that holds packets but delivers none for long is stopped as deadlocked or livelocked before
    #[arg(long, value_name = "CYCLES")]
    pub max_cycles: Option<u64>,
    /// Write the table and a bar chart as one self-contained HTML page
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub source: Source,
    /// `--out DIR` writes the table as `compare.csv` and a bar chart `compare.svg`
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: &CompareArgs) -> CliResult {
    let prog = load_program(args.file.as_deref(), &args.source, &args.plan)?;
    let specs = prog
        .compare_specs(args.models.as_deref())
        .map_err(super::run::cli_error)?;
    let bar = ProgressBar::new(specs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let rows = prog.compare(&specs, args.max_cycles, |spec| {
        bar.set_message(spec.to_string());
        bar.inc(1);
    });
    bar.finish_and_clear();
    let title = args
        .file
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let out = match args.output.format {
        Format::Text => report::compare::text(&title, &prog, &rows),
        Format::Json => {
            let doc = json!({
                "version": 1,
                "network": network_json(&prog.network),
                "compare": report::compare::json(&rows),
                "lower_bound": report::compare::lower_bound(&prog),
            });
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::Internal(e.to_string()))?
                + "\n"
        }
    };
    super::print(&out)?;
    if let Some(path) = &args.html {
        let html = report::html::compare(&title, &prog, &rows);
        super::write::file(path, &html, args.output.force)?;
    }
    if let Some(dir) = &args.output.out {
        let files = [
            ("compare.csv".to_string(), report::compare::csv(&rows)),
            (
                "compare.svg".to_string(),
                report::compare::svg(&format!("{title} on {}", prog.network.spec), &prog, &rows),
            ),
        ];
        let n = super::write::dir(dir, &files, args.output.force)?;
        eprintln!("wrote {n} files to {}", dir.display());
    }
    Ok(())
}
