//! `ttdl import FORMAT FILE`: another tool's task graphs as a TTDL program, printed or written
//! with `-o`. The conversion itself is the library's (`ttdl_lang::tgff`); this file reads the
//! arguments and the file, and prints or writes.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use ttdl_lang::tgff::{self, TgffOptions};
use ttdl_lang::SourceMap;

use super::{CliError, CliResult};

#[derive(Clone, Debug, Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub format: ImportFormat,
}

#[derive(Clone, Debug, Subcommand)]
pub enum ImportFormat {
    /// A TGFF file (Dick, Rhodes and Wolf's task graph generator; the E3S benchmarks): one task
    /// per TGFF task, one message per arc, sized from the arc types' table
    Tgff(TgffArgs),
}

#[derive(Clone, Debug, Args)]
pub struct TgffArgs {
    /// The TGFF file (`@TASK_GRAPH n { … }` blocks and `@NAME n { … }` tables)
    pub file: PathBuf,
    /// Write the program to this file instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the `-o` file if it exists
    #[arg(long)]
    pub force: bool,
    /// Table of arc types giving message sizes, `NAME` or `NAME:ID` [default: the first table
    /// whose name starts with COMMUN; with none, one word per message]
    #[arg(long, value_name = "TABLE")]
    pub arc_table: Option<String>,
    /// Column of that table [default: its first column other than `type` and `version`]
    #[arg(long, value_name = "COLUMN")]
    pub arc_column: Option<String>,
    /// Words per unit of the arc column (a message has ceil(value × scale) words, at least 1)
    #[arg(long, value_name = "SCALE", default_value_t = 1.0)]
    pub size_scale: f64,
    /// Table of task types giving compute times, `NAME` or `NAME:ID` [default: the first table
    /// with the task column; with none, tasks do not compute]
    #[arg(long, value_name = "TABLE")]
    pub task_table: Option<String>,
    /// Column of that table (the first row of each task type is used)
    #[arg(long, value_name = "COLUMN", default_value = "exec_time")]
    pub task_column: String,
    /// Cycles per unit of the task column (a task computes ceil(value × scale) cycles)
    #[arg(long, value_name = "SCALE", default_value_t = 1.0)]
    pub compute_scale: f64,
    /// How many times each task graph runs
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub iterations: u64,
}

pub fn run(args: &ImportArgs) -> CliResult {
    match &args.format {
        ImportFormat::Tgff(a) => tgff_import(a),
    }
}

fn tgff_import(a: &TgffArgs) -> CliResult {
    if !(a.size_scale.is_finite() && a.size_scale > 0.0) {
        return Err(CliError::Usage(format!(
            "--size-scale {}: must be a positive number",
            a.size_scale
        )));
    }
    if !(a.compute_scale.is_finite() && a.compute_scale >= 0.0) {
        return Err(CliError::Usage(format!(
            "--compute-scale {}: must be a number, 0 or more",
            a.compute_scale
        )));
    }
    if let Some(out) = &a.output {
        if out.exists() && !a.force {
            return Err(CliError::Usage(format!(
                "refusing to overwrite `{}`: it exists; pass --force to replace it",
                out.display()
            )));
        }
    }
    let name = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| CliError::Input(format!("cannot read `{name}`: {e}")))?;
    let options = TgffOptions {
        arc_table: a.arc_table.clone(),
        arc_column: a.arc_column.clone(),
        size_scale: a.size_scale,
        task_table: a.task_table.clone(),
        task_column: a.task_column.clone(),
        compute_scale: a.compute_scale,
        iterations: a.iterations,
    };
    let mut sources = SourceMap::default();
    let file = sources.add(name.clone(), text.clone());
    let program = tgff::import(file, &name, &text, &options).map_err(|d| {
        CliError::Input(
            ttdl_lang::diagnostic::render(&sources, &[d], false)
                .trim_end()
                .to_string(),
        )
    })?;
    match &a.output {
        Some(out) => std::fs::write(out, program)
            .map_err(|e| CliError::Input(format!("cannot write `{}`: {e}", out.display()))),
        None => super::print(&program),
    }
}
