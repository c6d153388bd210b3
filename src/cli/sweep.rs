//! `ttdl sweep`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct SweepArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &SweepArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl sweep` is not built yet".into()))
}
