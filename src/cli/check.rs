//! `ttdl check`: evaluate a program and summarize its communication — tasks, messages, phases,
//! the critical path (Minsky Fig 4-3) and the period lower bound (SPEC §2) — or print the
//! diagnostics and exit 1.

use std::path::Path;
use ttdl_session::FOLD_FAILED;

use clap::Args;
use ttdl_backend::{pipeline, report, tasks_file};
use ttdl_ir::traffic::Traffic;

use ttdl::session::Session;

use super::{CliError, CliResult, Format, Output, Source};

#[derive(Clone, Debug, Args)]
pub struct CheckArgs {
    /// The TTDL program (`-` reads standard input)
    pub file: Option<std::path::PathBuf>,
    /// Release and deadline timing: port (each task's writes and reads pass one port each way,
    /// as on a node of its own; the default) or thesis (Minsky's instant writes, Fig 4-3)
    #[arg(long, value_name = "port|thesis")]
    pub timing: Option<String>,
    #[command(flatten)]
    pub source: Source,
    /// `--out DIR` writes the tasks file (Minsky Fig 5-5) for the backend
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: &CheckArgs) -> CliResult {
    let file = required_file(args.file.as_deref(), "check")?;
    let input = super::input::read_folded(file, &args.source)?;
    let (printed, mut traffic) = (input.printed, input.traffic);
    match args.output.format {
        Format::Text => super::print(&printed)?,
        // Keep stdout one JSON document (as `run` does): what the script printed goes to stderr.
        Format::Json => eprint!("{printed}"),
    }
    let spinner = super::Spinner::new("timing the program");
    Session::time_for_check(&mut traffic, args.timing.as_deref()).map_err(|e| match e {
        ttdl_session::SessionError::Plan(pipeline::PipelineError::Config(s)) => CliError::Usage(s),
        other => CliError::Input(other.to_string()),
    })?;
    drop(spinner);
    let out = match args.output.format {
        Format::Text => report::traffic::text(&traffic),
        Format::Json => {
            let doc = report::traffic::json(&traffic);
            serde_json::to_string_pretty(&doc)
                .map(|s| s + "\n")
                .map_err(|e| CliError::Internal(e.to_string()))?
        }
    };
    super::print(&out)?;
    if let Some(dir) = &args.output.out {
        write_tasks_file(dir, file, &traffic, args.output.force)?;
    }
    Ok(())
}

/// `--out DIR`: the tasks file (Minsky Fig 5-5) for the backend, named after the program.
fn write_tasks_file(
    dir: &Path,
    program: &Path,
    traffic: &Traffic,
    force: bool,
) -> Result<(), CliError> {
    let stem = super::input::stem(program, "program");
    let files = [(format!("{stem}.tasks"), tasks_file::write(traffic, None))];
    super::write::dir(dir, &files, force).map(|_| ())
}

/// The file argument, or a usage error naming the command.
pub(crate) fn required_file<'a>(
    file: Option<&'a Path>,
    command: &str,
) -> Result<&'a Path, CliError> {
    file.ok_or_else(|| {
        CliError::Usage(format!(
            "`ttdl {command}` needs a program to read: ttdl {command} FILE.ttdl"
        ))
    })
}

/// Reads and evaluates a program (after the standard library, unless `--no-stdlib`) and returns
/// what it printed and its matched, timed traffic; diagnostics come back rendered, as an input
/// error (exit 1).
pub(crate) fn evaluate(file: &Path, source: &Source) -> Result<(String, Traffic), CliError> {
    evaluate_as(file, source, false)
}

/// [`evaluate`], a long repeating `iterate` kept folded (`Traffic::repeat`): for `check` and
/// `run`, whose cost then does not grow with the repetition count.
pub(crate) fn evaluate_folded(file: &Path, source: &Source) -> Result<(String, Traffic), CliError> {
    evaluate_as(file, source, true)
}

fn evaluate_as(file: &Path, source: &Source, folded: bool) -> Result<(String, Traffic), CliError> {
    let name = super::input::display_name(file);
    let text = super::input::text_of(file)?;
    let _spinner = super::Spinner::new(&format!("evaluating {name}"));
    let mut fold = true;
    loop {
        let mut session = if source.no_stdlib {
            Session::without_stdlib_with_budget(source.limits())
        } else {
            Session::with_budget(source.limits()).map_err(|e| {
                CliError::Internal(format!("the standard library does not load:\n{e}"))
            })?
        };
        session.set_fold(fold);
        if let Err(d) = session.eval_source(&name, &text) {
            // What the program printed before it failed is kept, ahead of the diagnostic (on
            // standard error, so a JSON output stays one document).
            let mut printed = session.take_output();
            if !printed.is_empty() && !printed.ends_with('\n') {
                printed.push('\n');
            }
            return Err(CliError::Input(format!(
                "{printed}{}",
                session.render(&d).trim_end()
            )));
        }
        let printed = session.take_output();
        let mapping = source.mapping.as_deref();
        let traffic = if folded {
            session.traffic_folded(mapping)
        } else {
            session.traffic(mapping)
        };
        match traffic {
            // Iterations that looked alike but do not fold together: evaluate every one.
            Err(d) if fold && d.iter().any(|d| d.code == FOLD_FAILED) => fold = false,
            Err(d) => return Err(CliError::Input(session.render(&d).trim_end().to_string())),
            Ok(t) => return Ok((printed, t)),
        }
    }
}
