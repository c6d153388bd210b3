//! `ttdl compare`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct CompareArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &CompareArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl compare` is not built yet".into()))
}
