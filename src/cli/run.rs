//! `ttdl run`: evaluate a program, place, route, time-schedule, verify, replay the switch
//! programs, and summarize (SPEC §3). The input is TTDL source, a tasks file (Minsky Fig 5-5,
//! `.tasks`) or the Traffic IR as JSON (`.json`).

use std::path::{Path, PathBuf};

use clap::Args;
use ttdl_backend::pipeline;
use ttdl_backend::{tasks_file, Traffic};
use ttdl_session::artifacts;

use super::{CliError, CliResult, Common, Format};

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// The program: TTDL source, a tasks file (`.tasks`) or Traffic JSON (`.json`)
    pub file: Option<PathBuf>,
    /// Processor–network ports per node, each way [default: 1]
    #[arg(long, value_name = "N")]
    pub ports: Option<u32>,
    /// Cycles a word takes through one switch (0: the thesis's circuit model) [default: 0]
    #[arg(long, value_name = "CYCLES")]
    pub latency: Option<u64>,
    /// Route for throughput (Minsky §5.2): before routing, move every message's deadline to at
    /// least its release plus the period lower bound — the slack a periodically invoked task graph
    /// has — so rerouting can spread messages over the whole period
    #[arg(long)]
    pub throughput: bool,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &RunArgs) -> CliResult {
    let file = super::check::required_file(args.file.as_deref(), "run")?;
    let (printed, traffic) = load(file, &args.common)?;
    let cfg = pipeline::resolve(&traffic, &overrides(args)).map_err(cli_error)?;
    let out = pipeline::plan(&traffic, &cfg).map_err(cli_error)?;
    let name = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plan")
        .to_string();
    let text = out.summary().map_err(cli_error)?;
    // The JSON lists every link of the network: build it only when it is written.
    let json = match (args.common.format, &args.common.out) {
        (Format::Text, None) => String::new(),
        _ => out.to_json().map_err(cli_error)?,
    };
    match args.common.format {
        Format::Text => {
            print!("{printed}");
            print!("{text}");
        }
        Format::Json => {
            // Keep stdout one JSON document: what the script printed goes to stderr.
            eprint!("{printed}");
            print!("{json}");
        }
    }
    if let Some(dir) = &args.common.out {
        let files = artifacts::files(&out, &name, &text, &json).map_err(CliError::Internal)?;
        let n = artifacts::write(dir, &files).map_err(CliError::Input)?;
        eprintln!("wrote {n} files to {}", dir.display());
    }
    Ok(())
}

/// The command line's share of the plan configuration.
fn overrides(args: &RunArgs) -> pipeline::Overrides {
    let c = &args.common;
    pipeline::Overrides {
        network: c.network.clone(),
        place: c.place.clone(),
        route: c.route.clone(),
        schedule: c.schedule.clone(),
        seed: c.seed,
        ports: args.ports,
        latency: args.latency,
        timing: c.timing.clone(),
        throughput: args.throughput,
    }
}

/// Pipeline errors as exit statuses: a bad setting is usage (2), a bad program input (1), a
/// wrong plan a bug (101).
pub fn cli_error(e: pipeline::PipelineError) -> CliError {
    match e {
        pipeline::PipelineError::Config(s) => CliError::Usage(s),
        pipeline::PipelineError::Input(s) => CliError::Input(s),
        pipeline::PipelineError::Internal(s) => CliError::Internal(s),
    }
}

/// The program's traffic and what evaluating it printed.
fn load(file: &Path, common: &Common) -> Result<(String, Traffic), CliError> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let read = || {
        std::fs::read_to_string(file)
            .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", file.display())))
    };
    match ext {
        "tasks" => {
            let mut traffic = tasks_file::read(&read()?)
                .map_err(|e| CliError::Input(format!("{}:{e}", file.display())))?;
            if traffic.critical_path == 0 {
                traffic.critical_path = traffic
                    .messages
                    .iter()
                    .map(|m| m.release + m.size)
                    .max()
                    .unwrap_or(0);
            }
            Ok((String::new(), traffic))
        }
        "json" => serde_json::from_str(&read()?)
            .map(|t| (String::new(), t))
            .map_err(|e| {
                CliError::Input(format!(
                    "`{}` is not a Traffic document: {e}",
                    file.display()
                ))
            }),
        _ => super::check::evaluate(file, common),
    }
}
