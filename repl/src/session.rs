//! The REPL session: one interpreter, the input typed so far, and the `:commands`.

use std::path::Path;

use ttdl_lang::diagnostic::render;
use ttdl_lang::syntax::{is_incomplete, read};
use ttdl_lang::{Budget, Diagnostic, Interpreter, SourceMap};

use crate::summary::traffic_summary;

/// The `:commands`, with a one-line description each (for `:help` and completion).
pub const COMMANDS: &[(&str, &str)] = &[
    (":help", "show this help"),
    (":quit", "leave (also Ctrl-D)"),
    (":load", "FILE  read and evaluate a file"),
    (
        ":check",
        "[MAPPING]  summary of the traffic built so far: tasks, messages, phases, critical path, period",
    ),
    (":reset", "start over with a fresh interpreter"),
    (
        ":env",
        "[PREFIX]  the names bound in the global environment",
    ),
];

/// What one call of [`Repl::handle`] produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// For standard output: what the program printed, then the value or the command's report
    /// (each ending with a newline). Empty for blank input, comments, or nothing to show.
    pub text: String,
    /// For standard error: rendered diagnostics. The session carries on.
    pub error: String,
    pub status: Status,
}

/// What the loop does next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Status {
    /// Ready for a new entry.
    #[default]
    Done,
    /// The entry is not finished (an open list, string or block comment): ask for another line.
    More,
    /// The user asked to leave.
    Quit,
}

impl Output {
    pub fn text(text: impl Into<String>) -> Output {
        Output {
            text: text.into(),
            ..Output::default()
        }
    }

    pub fn error(error: impl Into<String>) -> Output {
        Output {
            error: error.into(),
            ..Output::default()
        }
    }

    pub fn more() -> Output {
        Output {
            status: Status::More,
            ..Output::default()
        }
    }

    pub fn quit() -> Output {
        Output {
            status: Status::Quit,
            ..Output::default()
        }
    }
}

/// How to start a session.
#[derive(Clone, Debug)]
pub struct ReplOptions {
    /// Load the standard library into every fresh interpreter (SPEC §1.5).
    pub stdlib: bool,
    /// Colour in rendered diagnostics.
    pub color: bool,
    pub budget: Budget,
    /// The canned mapping `:check` applies (overrides `target :mapping`).
    pub mapping: Option<String>,
}

impl Default for ReplOptions {
    fn default() -> Self {
        ReplOptions {
            stdlib: true,
            color: false,
            budget: Budget::default(),
            mapping: None,
        }
    }
}

/// An interactive session. Feed it lines with [`Repl::handle`].
pub struct Repl {
    interp: Interpreter,
    options: ReplOptions,
    /// Lines of an entry that is not complete yet.
    pending: String,
    /// Entries evaluated so far, to name each entry's source `<repl:N>`.
    entries: usize,
}

impl Repl {
    /// A fresh session (with the standard library unless `options.stdlib` is off). Fails with the
    /// rendered diagnostics if the standard library does not load.
    pub fn new(options: ReplOptions) -> Result<Repl, String> {
        let interp = fresh_interpreter(&options)?;
        Ok(Repl {
            interp,
            options,
            pending: String::new(),
            entries: 0,
        })
    }

    pub fn interpreter(&self) -> &Interpreter {
        &self.interp
    }

    pub fn interpreter_mut(&mut self) -> &mut Interpreter {
        &mut self.interp
    }

    /// True while an entry is being continued over several lines.
    pub fn is_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Drops the entry being typed (Ctrl-C).
    pub fn cancel(&mut self) {
        self.pending.clear();
    }

    /// Names to complete: the global environment and the `:commands`, sorted.
    pub fn completions(&self) -> Vec<String> {
        let mut names = self.interp.global_names();
        names.extend(COMMANDS.iter().map(|(c, _)| c.to_string()));
        names.sort();
        names.dedup();
        names
    }

    /// One line (or several) of input. An entry that is not complete is kept and `More` is
    /// returned; the next call continues it.
    pub fn handle(&mut self, input: &str) -> Output {
        if !self.pending.is_empty() {
            self.pending.push('\n');
        }
        self.pending.push_str(input);
        if is_incomplete(&self.pending) {
            return Output::more();
        }
        let entry = std::mem::take(&mut self.pending);
        let trimmed = entry.trim();
        if let Some(out) = self.command(trimmed) {
            return out;
        }
        self.eval_entry(&entry)
    }

    /// The input has ended (Ctrl-D, end of a pipe): an entry left open is read as it is, so
    /// its syntax errors are shown rather than lost.
    pub fn finish(&mut self) -> Output {
        if self.pending.is_empty() {
            return Output::default();
        }
        let entry = std::mem::take(&mut self.pending);
        self.eval_entry(&entry)
    }

    /// Reads and evaluates a file into the session (`:load`, `ttdl repl FILE`).
    pub fn load(&mut self, path: &Path) -> Output {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                return Output::error(format!("error: cannot read {}: {e}\n", path.display()))
            }
        };
        let result = self.interp.eval_source(&path.display().to_string(), &text);
        let mut out = self.printed();
        match result {
            Ok(_) => out.text.push_str(&format!("; loaded {}\n", path.display())),
            Err(diags) => out.error = self.render(&diags),
        }
        out
    }

    fn eval_entry(&mut self, entry: &str) -> Output {
        // Blank lines and comments are not entries.
        let (forms, syntax) = read(0, entry);
        if forms.is_empty() && syntax.is_empty() {
            return Output::default();
        }
        self.entries += 1;
        let name = format!("<repl:{}>", self.entries);
        // Syntax errors are shown without evaluating any of the entry.
        if !syntax.is_empty() {
            let mut sources = SourceMap::default();
            let file = sources.add(name, entry);
            let diags: Vec<Diagnostic> = read(file, entry).1;
            return Output::error(render(&sources, &diags, self.options.color));
        }
        let result = self.interp.eval_source(&name, entry);
        let mut out = self.printed();
        match result {
            Ok(value) if value.is_empty() => {}
            Ok(value) => {
                out.text.push_str(&value);
                out.text.push('\n');
            }
            Err(diags) => out.error = self.render(&diags),
        }
        out
    }

    /// What the program printed since the last entry, as the start of an output; a line that
    /// was left open is ended so the value starts on its own line.
    fn printed(&mut self) -> Output {
        let mut text = self.interp.take_output();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Output::text(text)
    }

    fn render(&self, diags: &[Diagnostic]) -> String {
        render(self.interp.sources(), diags, self.options.color)
    }

    /// A `:command`, or `None` if the entry is not one (`:topology` alone is a keyword, and
    /// evaluates to itself).
    fn command(&mut self, entry: &str) -> Option<Output> {
        let (word, arg) = match entry.split_once(char::is_whitespace) {
            Some((w, a)) => (w, a.trim()),
            None => (entry, ""),
        };
        let out = match word {
            ":help" | ":h" | ":?" => Output::text(help()),
            ":quit" | ":q" | ":exit" => Output::quit(),
            ":load" | ":l" => {
                if arg.is_empty() {
                    Output::error("error: `:load` needs a file name, e.g. `:load jacobi.ttdl`\n")
                } else {
                    self.load(Path::new(arg))
                }
            }
            ":check" | ":c" => {
                let mapping = if arg.is_empty() {
                    self.options.mapping.as_deref()
                } else {
                    Some(arg)
                };
                match self.interp.traffic(mapping) {
                    Ok(t) => Output::text(traffic_summary(&t)),
                    Err(diags) => Output::error(self.render(&diags)),
                }
            }
            ":reset" => match fresh_interpreter(&self.options) {
                Ok(interp) => {
                    self.interp = interp;
                    self.entries = 0;
                    Output::text("; the session starts over\n")
                }
                Err(e) => Output::error(e),
            },
            ":env" => {
                let names: Vec<String> = self
                    .interp
                    .global_names()
                    .into_iter()
                    .filter(|n| n.starts_with(arg))
                    .collect();
                if names.is_empty() {
                    Output::text("; no names bound\n")
                } else {
                    Output::text(columns(&names, 100))
                }
            }
            _ => return None,
        };
        Some(out)
    }
}

fn fresh_interpreter(options: &ReplOptions) -> Result<Interpreter, String> {
    let mut interp = Interpreter::new(options.budget);
    if options.stdlib {
        for (name, text) in ttdl_stdlib::SOURCES {
            if let Err(diags) = interp.eval_source(name, text) {
                return Err(render(interp.sources(), &diags, options.color));
            }
        }
        // Whatever the library printed while loading is not the user's.
        let _ = interp.take_output();
    }
    Ok(interp)
}

fn help() -> String {
    let mut out = String::from(
        "Type TTDL forms to evaluate them; an entry continues until its parentheses balance.\n\
         Ctrl-C drops the entry being typed, Ctrl-D leaves. Tab completes names.\n",
    );
    for (cmd, what) in COMMANDS {
        out.push_str(&format!("  {cmd:<8} {what}\n"));
    }
    out
}

/// Names laid out in columns no wider than `width`, in order down the rows.
fn columns(names: &[String], width: usize) -> String {
    let cell = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) + 2;
    let per_row = (width / cell).max(1);
    let mut out = String::new();
    for row in names.chunks(per_row) {
        let line: String = row.iter().map(|n| format!("{n:<cell$}")).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
