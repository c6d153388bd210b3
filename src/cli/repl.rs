//! `ttdl repl`.

use clap::Args;

use super::{CliError, CliResult, Common};

#[derive(Clone, Debug, Args)]
pub struct ReplArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &ReplArgs) -> CliResult {
    let _ = args;
    Err(CliError::Internal("`ttdl repl` is not built yet".into()))
}
