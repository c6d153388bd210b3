//! The terminal side: a rustyline editor around [`Repl::handle`].

use std::borrow::Cow;
use std::io::{BufRead, IsTerminal, Write as _};
use std::path::PathBuf;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter, MatchingBracketHighlighter};
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{CompletionType, Config, Context, Editor, Helper};
use ttdl_lang::syntax::is_incomplete;

use crate::session::{Output, Repl, Status};

/// How the terminal loop behaves.
#[derive(Clone, Debug, Default)]
pub struct EditorOptions {
    /// Where history is kept between sessions; `None` keeps none.
    pub history: Option<PathBuf>,
    /// Highlight the bracket matching the one at the cursor.
    pub color: bool,
}

/// Entries kept in the history file.
const HISTORY_SIZE: usize = 1000;

/// `$TTDL_HISTORY` if set and not empty, else `~/.ttdl_history`.
pub fn history_path() -> Option<PathBuf> {
    match std::env::var_os("TTDL_HISTORY") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".ttdl_history")),
    }
}

/// Runs the interactive loop until `:quit` or Ctrl-D. Values go to standard output, diagnostics
/// to standard error; neither ends the loop. Ctrl-C drops the entry being typed.
pub fn run(repl: &mut Repl, options: &EditorOptions) -> Result<(), String> {
    if !std::io::stdin().is_terminal() {
        return run_piped(repl, &mut std::io::stdin().lock());
    }
    let config = Config::builder()
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .max_history_size(HISTORY_SIZE)
        .map_err(|e| format!("cannot set up history: {e}"))?
        .build();
    let mut editor: Editor<TtdlHelper, DefaultHistory> =
        Editor::with_config(config).map_err(|e| format!("cannot start the line editor: {e}"))?;
    editor.set_helper(Some(TtdlHelper {
        names: repl.completions(),
        brackets: MatchingBracketHighlighter::new(),
        color: options.color,
    }));
    if let Some(path) = &options.history {
        // A missing history file is normal the first time.
        let _ = editor.load_history(path);
    }
    loop {
        let prompt = if repl.is_pending() {
            "  ... "
        } else {
            "ttdl> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                let out = repl.handle(&line);
                show(&out);
                if out.status == Status::Quit {
                    break;
                }
                if let Some(h) = editor.helper_mut() {
                    h.names = repl.completions();
                }
            }
            Err(ReadlineError::Interrupted) => repl.cancel(),
            Err(ReadlineError::Eof) => {
                show(&repl.finish());
                break;
            }
            Err(e) => return Err(format!("cannot read input: {e}")),
        }
    }
    if let Some(path) = &options.history {
        if let Err(e) = editor.save_history(path) {
            eprintln!("warning: cannot save history to {}: {e}", path.display());
        }
    }
    Ok(())
}

/// Input from a pipe or a file: no line editing, no prompt, no history; each line goes to
/// [`Repl::handle`] as typed, and an entry left open at the end is reported.
pub fn run_piped(repl: &mut Repl, input: &mut impl BufRead) -> Result<(), String> {
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => {
                show(&repl.finish());
                return Ok(());
            }
            Ok(_) => {
                let out = repl.handle(line.strip_suffix('\n').unwrap_or(&line));
                show(&out);
                if out.status == Status::Quit {
                    return Ok(());
                }
            }
            Err(e) => return Err(format!("cannot read input: {e}")),
        }
    }
}

/// Prints an output: text on standard output, diagnostics on standard error.
pub fn show(out: &Output) {
    if !out.text.is_empty() {
        print!("{}", out.text);
        let _ = std::io::stdout().flush();
    }
    if !out.error.is_empty() {
        eprint!("{}", out.error);
    }
}

/// Completion of names and `:commands`, bracket matching, and multi-line entries.
struct TtdlHelper {
    names: Vec<String>,
    brackets: MatchingBracketHighlighter,
    color: bool,
}

/// Where the word ending at `pos` starts: after the last delimiter.
fn word_start(line: &str, pos: usize) -> usize {
    let before = line.get(..pos).unwrap_or(line);
    before
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || "()'`,\"".contains(c))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// Candidates for the word `line[start..pos]`: names that start with it, sorted.
pub(crate) fn candidates(names: &[String], line: &str, pos: usize) -> (usize, Vec<String>) {
    let start = word_start(line, pos);
    let word = line.get(start..pos).unwrap_or("");
    if word.is_empty() {
        return (start, Vec::new());
    }
    let at_line_start = line.get(..start).is_some_and(|s| s.trim().is_empty());
    let found = names
        .iter()
        .filter(|n| n.starts_with(word))
        // `:commands` only where a command can be: alone on the line.
        .filter(|n| !n.starts_with(':') || at_line_start)
        .cloned()
        .collect();
    (start, found)
}

impl Completer for TtdlHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(candidates(&self.names, line, pos))
    }
}

impl Hinter for TtdlHelper {
    type Hint = String;
}

impl Highlighter for TtdlHelper {
    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        if self.color {
            self.brackets.highlight(line, pos)
        } else {
            Cow::Borrowed(line)
        }
    }

    fn highlight_char(&self, line: &str, pos: usize, kind: CmdKind) -> bool {
        self.color && self.brackets.highlight_char(line, pos, kind)
    }
}

impl Validator for TtdlHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        if is_incomplete(ctx.input()) {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Helper for TtdlHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_the_word_at_the_cursor() {
        let names: Vec<String> = [
            ":check",
            ":env",
            "define",
            "defmessage",
            "deftask",
            "neighbor",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            candidates(&names, "(def", 4),
            (
                1,
                vec!["define".into(), "defmessage".into(), "deftask".into()]
            )
        );
        assert_eq!(
            candidates(&names, "(neighbor net 'ne", 17),
            (15, vec!["neighbor".into()])
        );
        assert_eq!(candidates(&names, ":c", 2), (0, vec![":check".into()]));
        assert_eq!(candidates(&names, "(f :c", 5), (3, vec![]));
        assert_eq!(candidates(&names, "(f ", 3), (3, vec![]));
    }
}
