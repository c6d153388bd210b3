//! Every command reads the same three kinds of input (SPEC §3): TTDL source, a tasks file
//! (Minsky Fig 5-5, `.tasks`), or JSON — the Traffic IR, or the plan document `ttdl run
//! --format json` writes, which is planned again the way it was planned.

use std::path::Path;

use ttdl_backend::pipeline::{self, Settings};
use ttdl_backend::{tasks_file, Traffic};

use super::{CliError, Source};

/// A program read from a file.
pub struct Program {
    pub traffic: Traffic,
    /// What evaluating the script printed.
    pub printed: String,
    /// Settings the input carries (a plan document's configuration); flags override them.
    pub base: Settings,
}

/// Reads `file` by its extension: `.tasks`, `.json`, else TTDL source.
pub fn read(file: &Path, source: &Source) -> Result<Program, CliError> {
    read_as(file, source, false)
}

/// [`read`], a long repeating `iterate` of a TTDL program kept folded (`Traffic::repeat`):
/// what `check` and `run` take, so their cost does not grow with the repetition count.
pub fn read_folded(file: &Path, source: &Source) -> Result<Program, CliError> {
    read_as(file, source, !source.unfold)
}

fn read_as(file: &Path, source: &Source, folded: bool) -> Result<Program, CliError> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let text = || {
        std::fs::read_to_string(file)
            .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", file.display())))
    };
    let plain = |traffic: Traffic| Program {
        traffic,
        printed: String::new(),
        base: Settings::default(),
    };
    match ext {
        "tasks" => {
            let mut traffic = tasks_file::read(&text()?)
                .map_err(|e| CliError::Input(format!("{}:{e}", file.display())))?;
            if traffic.critical_path == 0 {
                traffic.critical_path = traffic
                    .messages
                    .iter()
                    .map(|m| m.release + m.size)
                    .max()
                    .unwrap_or(0);
            }
            Ok(plain(traffic))
        }
        "json" => {
            let text = text()?;
            let name = file.display();
            let read = match pipeline::read_plan_document(&text) {
                Ok(Some((traffic, base))) => Ok(Program {
                    traffic,
                    printed: String::new(),
                    base,
                }),
                Ok(None) => serde_json::from_str(&text).map(plain).map_err(|e| {
                    CliError::Input(format!(
                        "`{name}` is neither a plan (`ttdl run --format json`) nor a Traffic document: {e}"
                    ))
                }),
                Err(e) => Err(CliError::Input(format!("`{name}`: {e}"))),
            }?;
            ttdl_ir::iterations::check_repeat(&read.traffic)
                .map_err(|e| CliError::Input(format!("`{name}`: {e}")))?;
            Ok(read)
        }
        _ => {
            let (printed, traffic) = if folded {
                super::check::evaluate_folded(file, source)?
            } else {
                super::check::evaluate(file, source)?
            };
            Ok(Program {
                traffic,
                printed,
                base: Settings::default(),
            })
        }
    }
}
