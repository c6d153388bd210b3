//! `ttdl model`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct ModelArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &ModelArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl model` is not built yet".into()))
}
