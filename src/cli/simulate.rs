//! `ttdl simulate`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct SimulateArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &SimulateArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl simulate` is not built yet".into()))
}
