//! `ttdl run`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &RunArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl run` is not built yet".into()))
}
