//! `ttdl check`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct CheckArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &CheckArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl check` is not built yet".into()))
}
