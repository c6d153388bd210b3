//! `ttdl dag`: the subtask graph of Minsky §4.1.2 (one subtask per read and write, intra-task and
//! inter-task edges, phase barriers), with each subtask's delay from Fig 4-3, as DOT or JSON.
//! Nodes are numbered in task order, then program order; edges are sorted: the output is the same
//! on every run.

use clap::{Args, ValueEnum};
use ttdl_session::dag::{graph_of, to_dot, to_json};

use super::check::required_file;
use super::{CliError, CliResult, Source};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DagFormat {
    /// Graphviz DOT
    #[default]
    Dot,
    /// One JSON document
    Json,
}

#[derive(Clone, Debug, Args)]
pub struct DagArgs {
    /// The TTDL program (`-` reads standard input)
    pub file: Option<std::path::PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = DagFormat::Dot)]
    pub format: DagFormat,
    #[command(flatten)]
    pub source: Source,
}

pub fn run(args: &DagArgs) -> CliResult {
    let file = required_file(args.file.as_deref(), "dag")?;
    let traffic = super::input::read(file, &args.source)?.traffic;
    if !ttdl_backend::schedule::program::is_driven(&traffic) {
        return Err(CliError::Input(format!(
            "`{}` has no task programs (a tasks file gives only release and deadline windows): there is no task graph to draw",
            file.display()
        )));
    }
    let (dag, delays) = graph_of(&traffic).map_err(CliError::Internal)?;
    let out = match args.format {
        DagFormat::Json => {
            let doc = to_json(&traffic, &dag, &delays);
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::Internal(e.to_string()))?
                + "\n"
        }
        DagFormat::Dot => to_dot(&traffic, &dag, &delays),
    };
    super::print(&out)?;
    Ok(())
}
