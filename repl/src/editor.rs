//! The terminal side: a rustyline editor around [`Repl::handle`].

use std::borrow::Cow;
use std::io::{BufRead, IsTerminal, Write as _};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
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
/// to standard error; neither ends the loop. Ctrl-C drops the entry being typed, or stops the
/// evaluation or plan that is running and returns to the prompt with the session intact.
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
    // Ctrl-C while typing is a key rustyline reads; while a form evaluates (the terminal is
    // back in cooked mode) it is a signal, which sets the flag the interpreter polls.
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupt.clone();
        if ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)).is_ok() {
            repl.set_interrupt(interrupt.clone());
        }
    }
    let mut editor: Editor<TtdlHelper, DefaultHistory> =
        Editor::with_config(config).map_err(|e| format!("cannot start the line editor: {e}"))?;
    editor.set_helper(Some(TtdlHelper {
        names: repl.completions(),
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
                    // Appended as we go, so a session that ends abruptly keeps its history.
                    if let Some(path) = &options.history {
                        let _ = editor.append_history(path);
                    }
                }
                interrupt.store(false, Ordering::Relaxed);
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
    Ok(())
}

/// Input from a pipe or a file (`ttdl repl < script`): no line editing, no prompt, no history;
/// each line goes to [`Repl::handle`] as typed. Results go to standard output; the first error
/// stops the script (its diagnostics on standard error) and is returned, so a scripted session
/// fails like a program would.
pub fn run_piped(repl: &mut Repl, input: &mut impl BufRead) -> Result<(), String> {
    let mut line = String::new();
    let mut number = 0usize;
    loop {
        line.clear();
        number += 1;
        let out = match input.read_line(&mut line) {
            Ok(0) => {
                let out = repl.finish();
                show(&out);
                return match out.error.is_empty() {
                    true => Ok(()),
                    false => Err("the input ended inside an entry".into()),
                };
            }
            Ok(_) => repl.handle(line.strip_suffix('\n').unwrap_or(&line)),
            Err(e) => return Err(format!("cannot read input: {e}")),
        };
        show(&out);
        if !out.error.is_empty() {
            return Err(format!("stopped at the first error (input line {number})"));
        }
        if out.status == Status::Quit {
            return Ok(());
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

/// Special forms and the communication forms, shown bold blue.
const SPECIAL: &[&str] = &[
    "define",
    "lambda",
    "let",
    "let*",
    "letrec",
    "if",
    "cond",
    "case",
    "when",
    "unless",
    "and",
    "or",
    "begin",
    "do",
    "dotimes",
    "dolist",
    "quote",
    "quasiquote",
    "set!",
    "define-comm",
    "define-mapping",
    "defmessage",
    "deftask",
    "with-task",
    "sequence",
    "iterate",
    "compute",
    "write-stream",
    "read-stream",
    "broadcast",
    "synchronize",
    "target",
];

/// ANSI colours of the line: special forms bold blue, strings green, comments grey, keywords
/// magenta, and the bracket matching the one at the cursor bold yellow.
pub(crate) fn colorize(line: &str, pos: usize) -> String {
    let bytes = line.as_bytes();
    let matching = matching_bracket(line, pos);
    let mut out = String::with_capacity(line.len() + 32);
    let mut i = 0;
    let mut after_open = false;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c == ';' {
            out.push_str("\x1b[90m");
            out.push_str(&line[i..]);
            out.push_str("\x1b[0m");
            break;
        }
        if c == '"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(bytes.len());
            out.push_str("\x1b[32m");
            out.push_str(&line[i..end]);
            out.push_str("\x1b[0m");
            i = end;
            after_open = false;
            continue;
        }
        if "()[]".contains(c) {
            if matching.is_some_and(|(a, b)| i == a || i == b) {
                out.push_str("\x1b[1;33m");
                out.push(c);
                out.push_str("\x1b[0m");
            } else {
                out.push(c);
            }
            after_open = c == '(' || c == '[';
            i += 1;
            continue;
        }
        if c.is_whitespace() || c == '\'' || c == '`' || c == ',' {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() {
            let d = bytes[j] as char;
            if d.is_whitespace() || "()[]\";".contains(d) {
                break;
            }
            j += 1;
        }
        let word = &line[i..j];
        if after_open && SPECIAL.contains(&word) {
            out.push_str("\x1b[1;34m");
            out.push_str(word);
            out.push_str("\x1b[0m");
        } else if word.starts_with(':') && word.len() > 1 {
            out.push_str("\x1b[35m");
            out.push_str(word);
            out.push_str("\x1b[0m");
        } else {
            out.push_str(word);
        }
        after_open = false;
        i = j.max(i + 1);
    }
    out
}

/// The bracket at or just before `pos` and the one matching it (byte indices), ignoring strings
/// and comments.
fn matching_bracket(line: &str, pos: usize) -> Option<(usize, usize)> {
    // Brackets outside strings and comments, in order.
    let mut brackets = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            ';' => break,
            '(' | ')' | '[' | ']' => brackets.push((i, c)),
            _ => {}
        }
    }
    let at = brackets
        .iter()
        .position(|&(i, _)| i == pos)
        .or_else(|| brackets.iter().position(|&(i, _)| i + 1 == pos))?;
    let (here, c) = brackets[at];
    if c == '(' || c == '[' {
        let mut depth = 0i32;
        for &(i, d) in &brackets[at..] {
            depth += if d == '(' || d == '[' { 1 } else { -1 };
            if depth == 0 {
                return Some((here, i));
            }
        }
    } else {
        let mut depth = 0i32;
        for &(i, d) in brackets[..=at].iter().rev() {
            depth += if d == ')' || d == ']' { 1 } else { -1 };
            if depth == 0 {
                return Some((here, i));
            }
        }
    }
    None
}

impl Highlighter for TtdlHelper {
    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        if self.color {
            Cow::Owned(colorize(line, pos))
        } else {
            Cow::Borrowed(line)
        }
    }

    fn highlight_char(&self, line: &str, pos: usize, kind: CmdKind) -> bool {
        // Redraw on every change: colours depend on the whole line and the cursor.
        let _ = (line, pos, kind);
        self.color
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

    #[test]
    fn highlights_forms_strings_and_the_matching_bracket() {
        let line = "(define x \"a (\") ; (";
        let out = colorize(line, 0);
        assert!(out.contains("\x1b[1;34mdefine\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[32m\"a (\"\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[90m; (\x1b[0m"), "{out:?}");
        // The bracket at the cursor and its match (the string's and comment's do not count).
        assert_eq!(matching_bracket(line, 0), Some((0, 15)));
        assert_eq!(matching_bracket(line, 16), Some((15, 0)));
        assert!(out.starts_with("\x1b[1;33m(\x1b[0m"), "{out:?}");
        // A word that is not a special form, or not in head position, stays plain.
        assert_eq!(colorize("(f define)", 99), "(f define)");
    }
}
