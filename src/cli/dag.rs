//! `ttdl dag`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct DagArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &DagArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl dag` is not built yet".into()))
}
