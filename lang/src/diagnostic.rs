//! Diagnostics: what went wrong, where, and what to do — rendered like `rustc` with ariadne.

use std::fmt::Write as _;
use ttdl_ir::limits::Limits;

use ariadne::{Cache, Color, Config, IndexType, Report, ReportKind, Source};

use crate::span::{FileId, Span};

/// A labelled span inside a diagnostic. The first label of a diagnostic is the primary one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One error (TTDL has no warnings that stop a run). Its parts live behind one pointer: every
/// evaluation step returns a `Result<_, Diagnostic>`, and a one-word error keeps that result
/// small enough to come back in registers, where five inline fields would be copied through
/// memory at every step.
#[derive(Clone, PartialEq, Eq)]
pub struct Diagnostic(Box<DiagnosticParts>);

/// What a [`Diagnostic`] says; its fields are read and changed through the diagnostic itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiagnosticParts {
    /// Short stable code, e.g. `syntax`, `unbound`, `arity`, `type`, `unmatched-read`, `deadlock`.
    pub code: String,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    /// What the user can do about it.
    pub help: Option<String>,
}

impl std::ops::Deref for Diagnostic {
    type Target = DiagnosticParts;
    fn deref(&self) -> &DiagnosticParts {
        &self.0
    }
}

impl std::ops::DerefMut for Diagnostic {
    fn deref_mut(&mut self) -> &mut DiagnosticParts {
        &mut self.0
    }
}

/// Printed as the plain struct it reads as.
impl std::fmt::Debug for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diagnostic")
            .field("code", &self.code)
            .field("message", &self.message)
            .field("labels", &self.labels)
            .field("notes", &self.notes)
            .field("help", &self.help)
            .finish()
    }
}

impl Diagnostic {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Diagnostic(Box::new(DiagnosticParts {
            code: code.to_string(),
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }))
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// The source files a session has read, so spans can be shown.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceMap {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
        });
        (self.files.len() - 1) as FileId
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id as usize)
    }
}

/// Renders diagnostics like `rustc`: `error[code]: message`, then (with ariadne) each file the
/// labels point into as `name:line:col` with the source lines underlined and every label's
/// message, then `= note:` and `= help:` lines. Spans are byte offsets. With `color` off the text
/// is plain and deterministic (golden tests compare it byte for byte).
///
/// Never panics on bad spans: a span past the end of its file is clamped to it, a span inside a
/// UTF-8 character is widened to the character, and a label in a file the map does not have
/// becomes a note.
///
/// A label on a line longer than [`Limits::SHOWN_LINE`] bytes is shown as an excerpt around the label
/// (ariadne would print the whole line, which for a machine-made file can be megabytes, once per
/// diagnostic).
pub fn render(sources: &SourceMap, diagnostics: &[Diagnostic], color: bool) -> String {
    let mut out = String::new();
    // One cache for every diagnostic: indexing a file's lines costs a pass over the whole file.
    let mut cache = MapCache::new(sources);
    for d in diagnostics {
        render_one(&mut out, sources, &mut cache, d, color);
    }
    out
}

/// Bytes of context shown on each side of a label on a longer line.
const EXCERPT_CONTEXT: usize = 60;

fn render_one(
    out: &mut String,
    sources: &SourceMap,
    cache: &mut MapCache<'_>,
    d: &Diagnostic,
    color: bool,
) {
    let header = format!("error[{}]", d.code);
    let mut notes = Vec::new();
    let mut labels = Vec::new();
    for l in &d.labels {
        match sources.get(l.span.file) {
            Some(file) => labels.push((
                l.span.file,
                clamp(&file.text, l.span),
                &l.message,
                labels.len(),
            )),
            None => notes.push(format!(
                "{} (in a source that is not loaded, file #{} bytes {}..{})",
                l.message, l.span.file, l.span.start, l.span.end
            )),
        }
    }
    notes.extend(d.notes.iter().cloned());
    // The primary label (the first) gives the report's location. ariadne shows labels in the
    // order given and starts a new snippet whenever a label goes back up the file, so give them
    // file by file (in order of first mention) and top to bottom.
    let primary = labels.first().map(|(f, r, _, _)| (*f, r.clone()));
    let mut file_rank: Vec<FileId> = Vec::new();
    for (f, _, _, _) in &labels {
        if !file_rank.contains(f) {
            file_rank.push(*f);
        }
    }
    labels.sort_by_key(|(f, r, _, _)| (file_rank.iter().position(|x| x == f), r.start, r.end));

    let long_line = labels.iter().any(|(f, r, _, _)| {
        sources
            .get(*f)
            .is_some_and(|file| line_around(&file.text, r.clone()).len() > Limits::SHOWN_LINE)
    });
    if long_line {
        let _ = writeln!(out, "{header}: {}", d.message);
        // The primary label first, then the others in the order given.
        let mut given: Vec<_> = labels.iter().collect();
        given.sort_by_key(|(_, _, _, i)| *i);
        for (f, r, m, i) in given {
            if let Some(file) = sources.get(*f) {
                render_excerpt(
                    out,
                    cache,
                    *f,
                    &file.name,
                    &file.text,
                    r.clone(),
                    m,
                    *i == 0,
                );
            }
        }
    } else if let Some((file, range)) = primary {
        let config = Config::default()
            .with_color(color)
            .with_index_type(IndexType::Byte);
        let palette = [
            Color::Red,
            Color::Blue,
            Color::Cyan,
            Color::Magenta,
            Color::Yellow,
        ];
        let report = Report::build(ReportKind::Custom(&header, Color::Red), (file, range))
            .with_config(config)
            .with_message(&d.message)
            .with_labels(labels.iter().map(|(f, r, m, i)| {
                let label = ariadne::Label::new((*f, r.clone())).with_message(m);
                if color {
                    // The primary label is red whatever its place in the snippet.
                    label.with_color(palette[(*i).min(palette.len() - 1)])
                } else {
                    label
                }
            }))
            .finish();
        let mut bytes = Vec::new();
        match report.write(&mut *cache, &mut bytes) {
            Ok(()) => {
                let text = String::from_utf8_lossy(&bytes);
                if color {
                    out.push_str(&text);
                } else {
                    // ariadne colours a custom report kind even with colour off: write the header
                    // line ourselves.
                    let _ = writeln!(out, "{header}: {}", d.message);
                    let body = text.split_once('\n').map_or("", |(_, rest)| rest);
                    out.push_str(body);
                }
            }
            // Only reachable if a file vanished between the checks above and here.
            Err(e) => {
                let _ = writeln!(out, "{header}: {} (cannot show the source: {e})", d.message);
            }
        }
    } else {
        let _ = writeln!(out, "{header}: {}", d.message);
    }
    for note in &notes {
        let _ = writeln!(out, "  = note: {note}");
    }
    if let Some(help) = &d.help {
        let _ = writeln!(out, "  = help: {help}");
    }
}

/// The source line(s) holding `range`, without the line breaks around them.
fn line_around(text: &str, range: std::ops::Range<usize>) -> &str {
    let start = text[..range.start].rfind('\n').map_or(0, |p| p + 1);
    let end = text[range.end..]
        .find('\n')
        .map_or(text.len(), |p| range.end + p);
    &text[start..end]
}

/// One label on an over-long line, `rustc` style, showing only [`EXCERPT_CONTEXT`] bytes on each
/// side of the label (and at most that much of the label itself).
#[allow(clippy::too_many_arguments)]
fn render_excerpt(
    out: &mut String,
    cache: &mut MapCache<'_>,
    id: FileId,
    name: &str,
    text: &str,
    range: std::ops::Range<usize>,
    message: &str,
    primary: bool,
) {
    let (line_no, line_start) = cache.line_of(id, text, range.start);
    let col = text[line_start..range.start].chars().count() + 1;
    let line_end = text[range.start..]
        .find('\n')
        .map_or(text.len(), |p| range.start + p);
    let shown_end = floor_char(
        text,
        range.end.min(line_end).min(range.start + EXCERPT_CONTEXT),
    );
    let from = floor_char(
        text,
        range.start.saturating_sub(EXCERPT_CONTEXT).max(line_start),
    );
    let to = floor_char(text, (shown_end + EXCERPT_CONTEXT).min(line_end));
    let excerpt: String = text[from..to]
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let (lead, trail) = (
        if from > line_start { "…" } else { "" },
        if to < line_end { "…" } else { "" },
    );
    let gutter = " ".repeat(line_no.to_string().len());
    let arrow = if primary { "-->" } else { ":::" };
    let _ = writeln!(out, "{gutter}{arrow} {name}:{line_no}:{col}");
    let _ = writeln!(out, "{gutter} |");
    let _ = writeln!(out, "{line_no} | {lead}{excerpt}{trail}");
    let pad = lead.chars().count() + text[from..range.start].chars().count();
    let width = text[range.start..shown_end.max(range.start)]
        .chars()
        .count()
        .max(1);
    let mark = if primary { "^" } else { "-" };
    let _ = writeln!(
        out,
        "{gutter} | {}{} {message}",
        " ".repeat(pad),
        mark.repeat(width)
    );
}

/// The largest character boundary at or below `i`.
fn floor_char(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A byte range inside `text`, on character boundaries, never empty unless `text` is.
fn clamp(text: &str, span: Span) -> std::ops::Range<usize> {
    let len = text.len();
    let mut start = span.start.min(len);
    let mut end = span.end.min(len).max(start);
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    while end < len && !text.is_char_boundary(end) {
        end += 1;
    }
    if start == end {
        // Point at the character there, or at the last one when the span is at the very end.
        if let Some(c) = text[start..].chars().next() {
            end = start + c.len_utf8();
        } else if let Some(c) = text[..start].chars().next_back() {
            start -= c.len_utf8();
        }
    }
    start..end
}

/// ariadne's view of a [`SourceMap`]: files by id, shown by name.
struct MapCache<'a> {
    map: &'a SourceMap,
    loaded: std::collections::BTreeMap<FileId, Source<&'a str>>,
    /// Byte offsets of every line start, per file (for excerpts of long lines).
    line_starts: std::collections::BTreeMap<FileId, Vec<usize>>,
}

impl<'a> MapCache<'a> {
    fn new(map: &'a SourceMap) -> Self {
        MapCache {
            map,
            loaded: std::collections::BTreeMap::new(),
            line_starts: std::collections::BTreeMap::new(),
        }
    }

    /// The 1-based line number of byte `offset` in `text` (file `id`) and where that line starts.
    fn line_of(&mut self, id: FileId, text: &str, offset: usize) -> (usize, usize) {
        let starts = self.line_starts.entry(id).or_insert_with(|| {
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        let line = starts.partition_point(|&s| s <= offset).max(1);
        (line, starts.get(line - 1).copied().unwrap_or(0))
    }
}

impl<'a> Cache<FileId> for MapCache<'a> {
    type Storage = &'a str;

    fn fetch(&mut self, id: &FileId) -> Result<&Source<&'a str>, impl std::fmt::Debug> {
        let map = self.map;
        match self.loaded.entry(*id) {
            std::collections::btree_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::btree_map::Entry::Vacant(e) => match map.get(*id) {
                Some(file) => Ok(e.insert(Source::from(file.text.as_str()))),
                None => Err(format!("no source file #{id}")),
            },
        }
    }

    fn display<'b>(&self, id: &'b FileId) -> Option<impl std::fmt::Display + 'b> {
        Some(match self.map.get(*id) {
            Some(file) => file.name.clone(),
            None => format!("<file #{id}>"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine-made file with one enormous line: the diagnostic shows an excerpt around the
    /// label, not the whole line.
    #[test]
    fn long_lines_are_shown_as_excerpts() {
        let mut map = SourceMap::default();
        let text = format!("(a\n{}é(b", "x".repeat(100_000));
        let at = text.len() - 2;
        let file = map.add("long.ttdl", text);
        let d = Diagnostic::new("syntax", "unclosed `(`")
            .with_label(Span::new(file, at, at + 1), "this `(` is never closed")
            .with_label(Span::new(file, 0, 1), "and this one");
        let out = render(&map, &[d.clone(), d], false);
        assert!(out.len() < 2_000, "{} bytes", out.len());
        let first = out.lines().take(6).collect::<Vec<_>>().join("\n");
        let shown = format!("2 | …{}é(b", "x".repeat(58));
        let expected = format!(
            "error[syntax]: unclosed `(`\n --> long.ttdl:2:100002\n  |\n{shown}\n  | {}^ this `(` is never closed\n :::\u{20}long.ttdl:1:1",
            " ".repeat(60)
        );
        assert_eq!(first, expected);
    }
}
