//! The `ttdl` command line: one file per command, each with its own clap `Args`.

use std::fmt;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

pub mod array;
pub mod check;
pub mod compare;
pub mod dag;
pub mod import;
pub mod input;
pub mod model;
pub mod repl;
pub mod run;
pub mod simulate;
pub mod sweep;
pub mod write;

/// Why a command failed; decides the exit status (SPEC §3).
#[derive(Debug)]
pub enum CliError {
    /// The script or input is wrong (exit 1). The text is already rendered for the terminal.
    Input(String),
    /// Bad command-line usage (exit 2).
    Usage(String),
    /// A bug in TTDL (exit 101, like a Rust panic, but with a message).
    Internal(String),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(s) | CliError::Usage(s) => write!(f, "{s}"),
            CliError::Internal(s) => write!(
                f,
                "internal error: {s}\nThis is a bug in TTDL; please report it with the input that caused it."
            ),
        }
    }
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Internal(_) => 101,
        }
    }
}

pub type CliResult = Result<(), CliError>;

/// A spinner on standard error naming the work under way, only when standard error is a
/// terminal (never in a pipe or a test's captured output); cleared when dropped.
pub struct Spinner(Option<indicatif::ProgressBar>);

/// Standard output as the commands write it: once the reader has gone (`ttdl run … | head`),
/// the rest is discarded quietly, as Unix tools do, rather than failing or panicking.
pub struct Stdout {
    gone: bool,
}

impl Stdout {
    pub fn new() -> Stdout {
        Stdout { gone: false }
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Stdout::new()
    }
}

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        match std::io::stdout().lock().write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.gone {
            return Ok(());
        }
        match std::io::stdout().lock().flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// Writes `text` to standard output ([`Stdout`]).
pub fn print(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = Stdout::new();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Input(format!("cannot write to standard output: {e}")))
}

impl Spinner {
    pub fn new(what: &str) -> Spinner {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.set_message(what.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Spinner(Some(bar))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// How a command reads its TTDL program.
#[derive(Clone, Debug, Default, Args)]
pub struct Source {
    /// Canned mapping to place with (a `define-mapping` name; overrides `target :mapping`)
    #[arg(long, value_name = "NAME", value_parser = mapping_name)]
    pub mapping: Option<String>,
    /// Do not load the standard library before the script
    #[arg(long)]
    pub no_stdlib: bool,
    /// Evaluation step budget per file (default 10^11, far beyond the time budget: an embedder's
    /// deterministic bound, and what refuses a `dotimes` that could never finish)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: Option<u64>,
    /// Evaluation time budget per file, in seconds (default 60): a loop that never ends stops
    /// with an error naming where it was; raise it for programs that really evaluate this long
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_time: Option<u64>,
    /// Evaluation memory budget per file, in MiB (default 4096): a loop that builds data
    /// without end stops with an error naming where it was
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_memory: Option<u64>,
    /// Nested (non-tail) call depth per file (default 10,000): a recursion that never reaches
    /// its base case stops with an error at its call; raise it for a non-tail recursion that
    /// really runs this deep (a `map` written by hand over a long list)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_depth: Option<u64>,
    /// Evaluate every iteration of a long repeating `iterate` instead of recording it once with
    /// its count (`check` and `run` fold such loops; the plan is the same either way)
    #[arg(long)]
    pub unfold: bool,
}

/// `--mapping`, checked by the settings table's row.
fn mapping_name(s: &str) -> Result<String, String> {
    ttdl_ir::settings::Setting::find("mapping")
        .and_then(|row| row.parse(s))
        .map(|v| v.to_string())
        .map_err(|e| e.to_string())
}

impl Source {
    /// The evaluation limits these flags ask for.
    pub fn limits(&self) -> ttdl_lang::Limits {
        let mut limits = ttdl_lang::Limits::default();
        if let Some(n) = self.max_steps {
            limits.steps = n;
        }
        if let Some(s) = self.max_time {
            limits.time = std::time::Duration::from_secs(s);
        }
        if let Some(m) = self.max_memory {
            limits.memory = m << 20;
        }
        if let Some(d) = self.max_depth {
            limits.depth = usize::try_from(d).unwrap_or(usize::MAX);
        }
        limits
    }
}

/// Where and how a program is planned: every plan setting of the settings table
/// ([`ttdl_ir::settings::SETTINGS`]) as a flag, each overriding the script's `(target …)` field
/// by field. The flags, their help, value checks and defaults are made from the table, so
/// `run`, `simulate` and `compare` take the same settings the REPL's `:set` and a script's
/// `target` take. (`--mapping` belongs to [`Source`]: it changes how the script is evaluated.)
#[derive(Clone, Debug, Default)]
pub struct PlanArgs {
    pub settings: ttdl_ir::settings::Settings,
}

/// The rows that are flags of [`PlanArgs`].
fn plan_rows() -> impl Iterator<Item = &'static ttdl_ir::settings::Setting> {
    ttdl_ir::settings::SETTINGS
        .iter()
        .filter(|s| s.name != "mapping")
}

impl clap::Args for PlanArgs {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        use clap::builder::ValueParser;
        use ttdl_ir::settings::Kind;
        for row in plan_rows() {
            let arg = clap::Arg::new(row.name)
                .long(row.name)
                .help(row.help_line())
                .help_heading("Plan settings");
            let arg = arg
                .value_name(row.value_name)
                .value_parser(ValueParser::new(move |s: &str| {
                    row.parse(s)
                        .map(|_| s.to_string())
                        .map_err(|e| e.to_string())
                }));
            // An on/off setting alone turns it on (`--throughput`); `--follow=off` turns off one
            // that is on by default. The `=` keeps the input file from being taken as a value.
            let arg = match row.kind {
                Kind::Flag => arg
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("on"),
                _ => arg,
            };
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for PlanArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut args = PlanArgs::default();
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        for row in plan_rows() {
            if let Some(text) = m.get_one::<String>(row.name).cloned() {
                self.settings.set(row.name, &text).map_err(|e| {
                    clap::Error::raw(
                        clap::error::ErrorKind::InvalidValue,
                        format!("--{}: {e}\n", row.name),
                    )
                })?;
            }
        }
        Ok(())
    }
}

impl PlanArgs {
    /// The settings these flags chose (the rest are left to the script's `target`, then to the
    /// table's defaults).
    pub fn overrides(&self) -> ttdl_ir::settings::Settings {
        self.settings.clone()
    }
}

/// How a command writes its results.
#[derive(Clone, Debug, Default, Args)]
pub struct Output {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write every artifact into this directory
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace files TTDL did not write (in the --out directory, or named by --html, --csv,
    /// --svg); without it such a file is kept and the command stops
    #[arg(long)]
    pub force: bool,
}
