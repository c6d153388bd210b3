//! `ttdl dag`: the subtask graph of Minsky §4.1.2 (one subtask per read and write, intra-task and
//! inter-task edges, phase barriers), with each subtask's delay from Fig 4-3, as DOT or JSON.
//! Nodes are numbered in task order, then program order; edges are sorted: the output is the same
//! on every run.

use clap::{Args, ValueEnum};
use ttdl_session::dag::{graph_of, to_dot, to_json};

use super::check::{evaluate, required_file};
use super::{CliError, CliResult, Common, Format};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DagFormat {
    /// Graphviz DOT
    #[default]
    #[value(alias = "text")]
    Dot,
    /// One JSON document
    Json,
}

#[derive(Clone, Debug, Args)]
pub struct DagArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = DagFormat::Dot)]
    pub format: DagFormat,
    /// Canned mapping to apply (a `define-mapping` name; overrides `target :mapping`)
    #[arg(long, value_name = "NAME")]
    pub mapping: Option<String>,
    /// Do not load the standard library before the script
    #[arg(long)]
    pub no_stdlib: bool,
}

pub fn run(args: &DagArgs) -> CliResult {
    let file = required_file(args.file.as_deref(), "dag")?;
    let common = Common {
        mapping: args.mapping.clone(),
        no_stdlib: args.no_stdlib,
        format: Format::Text,
        ..Common::default()
    };
    let (_, traffic) = evaluate(file, &common)?;
    let (dag, delays) = graph_of(&traffic).map_err(CliError::Internal)?;
    let out = match args.format {
        DagFormat::Json => {
            let doc = to_json(&traffic, &dag, &delays);
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::Internal(e.to_string()))?
                + "\n"
        }
        DagFormat::Dot => to_dot(&traffic, &dag, &delays),
    };
    print!("{out}");
    Ok(())
}
