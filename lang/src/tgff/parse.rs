//! The TGFF file format (Dick, Rhodes and Wolf, "TGFF: Task Graphs for Free", CODES/CASHE 1998):
//! `@TASK_GRAPH n { … }` blocks of `PERIOD`, `TASK name TYPE t`, `ARC name FROM a TO b TYPE t`,
//! `HARD_DEADLINE`/`SOFT_DEADLINE name ON task AT time`; `@NAME n { … }` tables of attributes
//! per type, whose columns a `#` comment line names; `@NAME value` directives; `#` comments.
//!
//! Keywords are read case-insensitively (the E3S files write `to` as often as `TO`); `key value`
//! pairs after a task's or arc's type (E3S's `host 0`) are kept but not used.

use crate::diagnostic::Diagnostic;
use crate::span::{FileId, Span};

/// A word of the file with its byte span.
#[derive(Clone, Debug, PartialEq)]
pub struct Word {
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub name: Word,
    pub kind: Word,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arc {
    pub name: Word,
    pub from: Word,
    pub to: Word,
    pub kind: Word,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Deadline {
    pub hard: bool,
    pub name: Word,
    pub task: Word,
    pub at: Word,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TaskGraph {
    pub id: Word,
    pub period: Option<Word>,
    pub tasks: Vec<Task>,
    pub arcs: Vec<Arc>,
    pub deadlines: Vec<Deadline>,
}

/// One row of a table: its column names (from the `#` line above it) and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub columns: Vec<String>,
    pub values: Vec<Word>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: Word,
    pub id: Word,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TgffFile {
    pub graphs: Vec<TaskGraph>,
    pub tables: Vec<Table>,
}

/// A line's words (comments removed) and, for a comment line, the comment's words.
struct Line {
    words: Vec<Word>,
    comment: Vec<String>,
    /// The span of the line's end (for "missing …" errors).
    end: Span,
}

fn lines(file: FileId, text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let (code, comment) = match line.find('#') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => (line, ""),
        };
        let mut words = Vec::new();
        let mut start = None;
        for (i, c) in code.char_indices().chain([(code.len(), ' ')]) {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    words.push(Word {
                        text: code[s..i].to_string(),
                        span: Span::new(file, offset + s, offset + i),
                    });
                    start = None;
                }
                _ => {}
            }
        }
        let comment = comment
            .split_whitespace()
            .map(str::to_string)
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .collect();
        let end = offset + line.len();
        out.push(Line {
            words,
            comment,
            end: Span::new(file, end, end),
        });
        offset += raw.len();
    }
    out
}

fn syntax(span: Span, message: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::new("tgff", message).with_label(span, label)
}

fn keyword(w: &Word, k: &str) -> bool {
    w.text.eq_ignore_ascii_case(k)
}

/// Parses a TGFF file (file id `file` for the spans of its errors).
pub fn parse(file: FileId, text: &str) -> Result<TgffFile, Diagnostic> {
    let lines = lines(file, text);
    let mut out = TgffFile::default();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        i += 1;
        let Some(first) = line.words.first() else {
            continue;
        };
        let Some(name) = first.text.strip_prefix('@') else {
            return Err(syntax(
                first.span,
                format!(
                    "expected `@TASK_GRAPH n {{` or a table `@NAME n {{`, found `{}`",
                    first.text
                ),
                "outside any block",
            )
            .with_help("every statement of a TGFF file is inside an `@NAME n { … }` block"));
        };
        if name.is_empty() {
            return Err(syntax(first.span, "`@` without a name", "here"));
        }
        let opens = line.words.last().is_some_and(|w| w.text == "{");
        if !opens {
            // A directive such as `@HYPERPERIOD 0.0009`.
            continue;
        }
        if line.words.len() != 3 {
            return Err(syntax(
                line.words[0].span.to(line.words[line.words.len() - 1].span),
                format!("a block opens as `@{name} n {{`"),
                "expected a name, a number and `{`",
            ));
        }
        let header = Word {
            text: name.to_string(),
            span: first.span,
        };
        let id = line.words[1].clone();
        let open = line.words[2].span;
        // The block's lines, up to the line holding only `}`.
        let start = i;
        while i < lines.len() && lines[i].words.first().is_none_or(|w| w.text != "}") {
            if let Some(w) = lines[i].words.iter().find(|w| w.text.starts_with('@')) {
                return Err(
                    syntax(w.span, format!("`{}` inside a block", w.text), "here")
                        .with_label(open, "the block opened here is not closed"),
                );
            }
            i += 1;
        }
        if i == lines.len() {
            let end = lines.last().map_or(open, |l| l.end);
            return Err(syntax(
                open,
                format!("`@{name} {}` is not closed", id.text),
                "opened here",
            )
            .with_label(end, "the file ends here")
            .with_help("close the block with a line holding `}`"));
        }
        if let Some(extra) = lines[i].words.get(1) {
            return Err(syntax(extra.span, "`}` is alone on its line", "unexpected"));
        }
        let body = &lines[start..i];
        i += 1;
        if name.eq_ignore_ascii_case("TASK_GRAPH") {
            out.graphs.push(task_graph(id, body)?);
        } else {
            out.tables.push(table(header, id, body));
        }
    }
    Ok(out)
}

fn expect<'a>(words: &'a [Word], at: usize, what: &str, end: Span) -> Result<&'a Word, Diagnostic> {
    words
        .get(at)
        .ok_or_else(|| syntax(end, format!("missing {what}"), "the line ends here"))
}

fn expect_keyword(words: &[Word], at: usize, k: &str, end: Span) -> Result<(), Diagnostic> {
    let w = expect(words, at, &format!("`{k}`"), end)?;
    if keyword(w, k) {
        Ok(())
    } else {
        Err(syntax(
            w.span,
            format!("expected `{k}`, found `{}`", w.text),
            "here",
        ))
    }
}

fn task_graph(id: Word, body: &[Line]) -> Result<TaskGraph, Diagnostic> {
    let mut g = TaskGraph {
        id,
        period: None,
        tasks: Vec::new(),
        arcs: Vec::new(),
        deadlines: Vec::new(),
    };
    for line in body {
        let (w, end) = (&line.words, line.end);
        let Some(head) = w.first() else { continue };
        match head.text.to_ascii_uppercase().as_str() {
            "PERIOD" => g.period = Some(expect(w, 1, "the period", end)?.clone()),
            "TASK" => {
                let name = expect(w, 1, "the task's name", end)?.clone();
                expect_keyword(w, 2, "TYPE", end)?;
                let kind = expect(w, 3, "the task's type", end)?.clone();
                g.tasks.push(Task { name, kind });
            }
            "ARC" => {
                let name = expect(w, 1, "the arc's name", end)?.clone();
                expect_keyword(w, 2, "FROM", end)?;
                let from = expect(w, 3, "the arc's source task", end)?.clone();
                expect_keyword(w, 4, "TO", end)?;
                let to = expect(w, 5, "the arc's destination task", end)?.clone();
                expect_keyword(w, 6, "TYPE", end)?;
                let kind = expect(w, 7, "the arc's type", end)?.clone();
                g.arcs.push(Arc {
                    name,
                    from,
                    to,
                    kind,
                });
            }
            k @ ("HARD_DEADLINE" | "SOFT_DEADLINE") => {
                let name = expect(w, 1, "the deadline's name", end)?.clone();
                expect_keyword(w, 2, "ON", end)?;
                let task = expect(w, 3, "the deadline's task", end)?.clone();
                expect_keyword(w, 4, "AT", end)?;
                let at = expect(w, 5, "the deadline's time", end)?.clone();
                g.deadlines.push(Deadline {
                    hard: k == "HARD_DEADLINE",
                    name,
                    task,
                    at,
                });
            }
            _ => {
                return Err(syntax(
                    head.span,
                    format!("unknown statement `{}` in a task graph", head.text),
                    "here",
                )
                .with_help(
                    "a task graph holds PERIOD, TASK, ARC, HARD_DEADLINE and SOFT_DEADLINE",
                ))
            }
        }
    }
    Ok(g)
}

/// A table's rows: each row takes its column names from the nearest `#` line above it that
/// names columns; rows with no such line are `type value …`.
fn table(name: Word, id: Word, body: &[Line]) -> Table {
    let mut columns: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for line in body {
        if line.words.is_empty() {
            if !line.comment.is_empty() {
                columns = line
                    .comment
                    .iter()
                    .map(|c| c.to_ascii_lowercase())
                    .collect();
            }
            continue;
        }
        let cols = if columns.is_empty() {
            let mut c = vec!["type".to_string()];
            c.extend((1..line.words.len()).map(|i| {
                format!(
                    "value{}",
                    if i == 1 { String::new() } else { i.to_string() }
                )
            }));
            c
        } else {
            columns.clone()
        };
        rows.push(Row {
            columns: cols,
            values: line.words.clone(),
        });
    }
    Table { name, id, rows }
}
