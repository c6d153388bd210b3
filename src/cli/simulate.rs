//! `ttdl simulate`: run a program on one hardware model.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;
use ttdl_backend::pipeline;
use ttdl_backend::report;
use ttdl_backend::sim::registry;
use ttdl_backend::Network;

use super::{CliError, CliResult, Format, Output, PlanArgs, Source};

/// The model list shown after `--help`.
pub fn models_help() -> String {
    format!(
        "Models (options as KEY=VALUE after the model name, e.g. `--model wormhole vc=2 buf=4`):\n{}",
        registry::help()
    )
}

/// The model list with each option's meaning, shown after `--help` (`-h` shows the short list).
pub fn models_long_help() -> String {
    format!(
        "Models (options as KEY=VALUE after the model name, e.g. `--model wormhole vc=2 buf=4`):\n{}",
        registry::help_long()
    )
}

#[derive(Clone, Debug, Args)]
#[command(after_help = models_help(), after_long_help = models_long_help())]
pub struct SimulateArgs {
    /// The TTDL program (or a Traffic IR as `.json`; `-` reads standard input)
    pub file: Option<PathBuf>,
    /// Hardware model, optionally with options: `wormhole` or `"wormhole vc=2 buf=4"`
    #[arg(long, value_name = "MODEL")]
    pub model: String,
    /// Model options, KEY=VALUE (see the list below)
    #[arg(value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Also print, per task, when it finished and, per message, when it was sent and delivered
    #[arg(long)]
    pub detail: bool,
    /// Stop if the program has not finished by this cycle (default: 64 × the program's serial time, at least 1,000,000); a model that holds packets but delivers none for long is stopped as deadlocked or livelocked before
    #[arg(long, value_name = "CYCLES")]
    pub max_cycles: Option<u64>,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub source: Source,
    /// `--out DIR` writes the run as `simulate.json`
    #[command(flatten)]
    pub output: Output,
}

/// A program ready for the models: its traffic, the physical network and where tasks run.
pub type Program = pipeline::Placed;

/// The program, its network and placement, resolved by the one pipeline `ttdl run` uses
/// (`--network`/`--place`/`--seed`, else the script's `target`, else the defaults), so every
/// command places a program the same way.
pub fn load_program(
    file: Option<&Path>,
    source: &Source,
    plan: &PlanArgs,
) -> Result<Program, CliError> {
    let path = file.ok_or_else(|| CliError::Usage("a program file is required".into()))?;
    let input = super::input::read(path, source)?;
    // What the script printed goes to standard error, keeping standard output for the report.
    eprint!("{}", input.printed);
    let _spinner = super::Spinner::new("placing the program");
    ttdl_session::Session::place_traffic(&input.traffic, &plan.overrides().or(input.base))
        .map_err(super::run::session_error)
}

/// The network part of the JSON documents (SPEC §4).
pub fn network_json(net: &Network) -> serde_json::Value {
    json!({
        "topology": net.spec.kind.name(),
        "dims": net.spec.dims,
        "nodes": net.nodes(),
        "links": net.links.iter().map(|l| [l.from, l.to]).collect::<Vec<_>>(),
    })
}

pub fn run(args: &SimulateArgs) -> CliResult {
    let prog = load_program(args.file.as_deref(), &args.source, &args.plan)?;
    let mut spec = args.model.clone();
    for o in &args.options {
        spec.push(' ');
        spec.push_str(o);
    }
    // A bad model name or option, or a model that cannot run on this network, is a usage
    // error (exit 2); a program too large or a run that cannot finish is the input's (exit 1).
    prog.check_model(&spec)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let bar = super::run::progress_bar();
    let report = prog.simulate_with_progress(&spec, args.max_cycles, &bar.0);
    if let Some(b) = &bar.1 {
        b.finish_and_clear();
    }
    let report = report.map_err(|e| CliError::Input(e.to_string()))?;
    let out = match args.output.format {
        Format::Text if args.detail => {
            report::simulation::summary(&prog, &report) + &report::simulation::detail(&report)
        }
        Format::Text => report::simulation::summary(&prog, &report),
        Format::Json => {
            let doc = json!({
                "version": 1,
                "network": network_json(&prog.network),
                "tasks": report.tasks.iter().map(|t| json!({"id": t.task, "name": t.name, "node": t.node})).collect::<Vec<_>>(),
                "simulation": report,
            });
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::Internal(e.to_string()))?
                + "\n"
        }
    };
    if let Some(dir) = &args.output.out {
        let doc =
            serde_json::to_string_pretty(&report).map_err(|e| CliError::Internal(e.to_string()))?;
        let files = [("simulate.json".to_string(), doc + "\n")];
        super::write::dir(dir, &files, args.output.force)?;
    }
    super::print(&out)?;
    Ok(())
}
