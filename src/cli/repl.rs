//! The interactive loop. Its core is a plain function from session + line to output.
//! `ttdl repl`.

use std::io::IsTerminal;

use clap::Args;
use ttdl_repl::{history_path, EditorOptions, Repl, ReplOptions};

use super::{CliError, CliResult, Source};

#[derive(Clone, Debug, Args)]
pub struct ReplArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub source: Source,
}

pub fn run(args: &ReplArgs) -> CliResult {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let options = ReplOptions {
        stdlib: !args.source.no_stdlib,
        color: !no_color && std::io::stderr().is_terminal(),
        mapping: args.source.mapping.clone(),
        budget: args.source.limits(),
        ..ReplOptions::default()
    };
    if let Some(file) = &args.file {
        // A file that cannot be read at all is a usage mistake, not something to fix in the loop.
        if let Err(e) = std::fs::metadata(file).and_then(|m| {
            if m.is_file() {
                Ok(())
            } else {
                Err(std::io::Error::other("not a file"))
            }
        }) {
            return Err(CliError::Input(format!(
                "cannot read `{}`: {e}",
                file.display()
            )));
        }
    }
    let mut repl = Repl::new(options).map_err(CliError::Internal)?;
    if let Some(file) = &args.file {
        // A file with errors still starts the loop: the user is there to fix things.
        ttdl_repl::show(&repl.load(file));
    }
    let editor = EditorOptions {
        history: history_path(),
        color: !no_color && std::io::stdout().is_terminal(),
    };
    ttdl_repl::run(&mut repl, &editor).map_err(CliError::Input)
}
