//! Every command reads the same three kinds of input (SPEC §3): TTDL source, a tasks file
//! (Minsky Fig 5-5, `.tasks`), or JSON — the Traffic IR, or the plan document `ttdl run
//! --format json` writes, which is planned again the way it was planned.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

use ttdl_backend::pipeline::Settings;
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

/// Whether `file` names standard input (`-`, as every Unix tool takes it).
pub fn is_stdin(file: &Path) -> bool {
    file.as_os_str() == "-"
}

/// How an input is shown in messages: its path, or `<stdin>`.
pub fn display_name(file: &Path) -> String {
    if is_stdin(file) {
        "<stdin>".to_string()
    } else {
        file.display().to_string()
    }
}

/// The name artifacts written for an input take: its file stem, or `fallback` for standard input.
pub fn stem(file: &Path, fallback: &str) -> String {
    if is_stdin(file) {
        return fallback.to_string();
    }
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| fallback.to_string())
}

/// The text of an input file, or of standard input for `-`. Standard input is read once and kept,
/// because a program whose iterations do not fold is evaluated a second time.
pub fn text_of(file: &Path) -> Result<String, CliError> {
    if is_stdin(file) {
        return stdin_text().map(str::to_string);
    }
    std::fs::read_to_string(file)
        .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", file.display())))
}

/// Standard input, read once for the whole run and borrowed from then on.
fn stdin_text() -> Result<&'static str, CliError> {
    static STDIN: OnceLock<Result<String, String>> = OnceLock::new();
    STDIN
        .get_or_init(|| {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map(|_| text)
                .map_err(|e| e.to_string())
        })
        .as_deref()
        .map_err(|e| CliError::Input(format!("cannot read standard input: {e}")))
}

/// The kind of an input: by extension, or for standard input by its first characters (a plan or
/// Traffic document starts with `{`, a tasks file with `#Model`; anything else is TTDL source).
fn kind_of(file: &Path) -> Result<&'static str, CliError> {
    if is_stdin(file) {
        // Peeked at in place: the program is copied out only when it is read.
        let head = stdin_text()?.trim_start();
        return Ok(if head.starts_with('{') {
            "json"
        } else if head.starts_with("#Model") {
            "tasks"
        } else {
            "ttdl"
        });
    }
    Ok(
        match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
            "tasks" => "tasks",
            "json" => "json",
            _ => "ttdl",
        },
    )
}

fn read_as(file: &Path, source: &Source, folded: bool) -> Result<Program, CliError> {
    let ext = kind_of(file)?;
    let text = || text_of(file);
    let plain = |traffic: Traffic| Program {
        traffic,
        printed: String::new(),
        base: Settings::default(),
    };
    match ext {
        "tasks" => {
            let mut traffic = tasks_file::read(&text()?)
                .map_err(|e| CliError::Input(format!("{}:{e}", display_name(file))))?;
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
            let name = display_name(file);
            let read = match ttdl_session::Session::read_plan_document(&text) {
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
