//! `ttdl run`: evaluate a program, place, route, time-schedule, verify, replay the switch
//! programs, and summarize (SPEC §3). The input is TTDL source, a tasks file (Minsky Fig 5-5,
//! `.tasks`) or the Traffic IR as JSON (`.json`).

use std::path::PathBuf;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;
use ttdl_backend::pipeline;
use ttdl_backend::progress::{Progress, Sink};
use ttdl_session::{artifacts, Session};

use super::{CliError, CliResult, Format, Output, PlanArgs, Source};

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// The program: TTDL source, a tasks file (`.tasks`) or Traffic JSON (`.json`); `-` reads
    /// standard input
    pub file: Option<PathBuf>,
    /// Write the plan as one self-contained HTML report (open it in a browser)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub source: Source,
    /// `--out DIR` writes every artifact: tasks file, switch programs, JSON, pictures
    #[command(flatten)]
    pub output: Output,
}

pub fn run(args: &RunArgs) -> CliResult {
    let file = super::check::required_file(args.file.as_deref(), "run")?;
    let input = super::input::read_folded(file, &args.source)?;
    let (printed, traffic) = (input.printed, input.traffic);
    let bar = progress_bar();
    let out = Session::plan_traffic(&traffic, &overrides(args).or(input.base), &bar.0);
    if let Some(b) = &bar.1 {
        b.finish_and_clear();
    }
    let out = out.map_err(session_error)?;
    let name = super::input::stem(file, "plan");
    // The summary and the document share the plan's report view (bounds, contention, buffers).
    let text = out
        .with_report(|report| -> Result<String, CliError> {
            let text = out.summary_of(report);
            match args.output.format {
                Format::Text => {
                    super::print(&printed)?;
                    super::print(&text)?;
                }
                Format::Json => {
                    // Keep stdout one JSON document: what the script printed goes to stderr. The
                    // document is written as it is made (a large plan's runs to hundreds of MB).
                    eprint!("{printed}");
                    out.write_json_of(report, std::io::BufWriter::new(super::Stdout::new()))
                        .map_err(cli_error)?;
                }
            }
            Ok(text)
        })
        .map_err(cli_error)??;
    if let Some(path) = &args.html {
        let html = out.to_html(&name).map_err(cli_error)?;
        super::write::file(path, &html, args.output.force)?;
    }
    if let Some(dir) = &args.output.out {
        let files = artifacts::files(&out, &name, &text).map_err(CliError::Internal)?;
        let n = super::write::contents(dir, &files, args.output.force)?;
        eprintln!("wrote {n} files to {}", dir.display());
    }
    Ok(())
}

/// The command line's share of the plan configuration.
fn overrides(args: &RunArgs) -> pipeline::Settings {
    args.plan.overrides()
}

/// Session errors as exit statuses: planning errors as [`cli_error`] says; a script's
/// diagnostics, an unreadable file or a model that cannot run are the input's (exit 1).
pub fn session_error(e: ttdl_session::SessionError) -> CliError {
    match e {
        ttdl_session::SessionError::Plan(p) => cli_error(p),
        other => CliError::Input(other.to_string()),
    }
}

/// Pipeline errors as exit statuses: a bad setting is usage (2), a bad program input (1), a
/// wrong plan a bug (101).
pub fn cli_error(e: pipeline::PipelineError) -> CliError {
    match e {
        pipeline::PipelineError::Config(s) => CliError::Usage(s),
        pipeline::PipelineError::Input(s) => CliError::Input(s),
        pipeline::PipelineError::Internal(s) => CliError::Internal(s),
        pipeline::PipelineError::Interrupted => CliError::Input("interrupted".into()),
    }
}

/// Draws the pipeline's progress as a bar, only when stderr is a terminal (never into a pipe or
/// a test's captured output).
struct Bar(indicatif::ProgressBar);

impl Sink for Bar {
    fn stage(&self, name: &str, total: u64) {
        self.0.set_length(total);
        self.0.set_position(0);
        self.0.set_message(name.to_string());
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

pub(super) fn progress_bar() -> (Progress, Option<indicatif::ProgressBar>) {
    use std::io::IsTerminal;
    let cancel = Arc::new(AtomicBool::new(false));
    if !std::io::stderr().is_terminal() {
        return (Progress::new(None, cancel), None);
    }
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg:>18} [{bar:30}] {pos}/{len} {elapsed}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let sink: Arc<dyn Sink> = Arc::new(Bar(bar.clone()));
    (Progress::new(Some(sink), cancel), Some(bar))
}
