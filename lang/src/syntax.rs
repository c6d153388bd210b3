//! The reader (chumsky): source text → spanned S-expressions, with error recovery so one run
//! reports every syntax error in a file.
//!
//! The grammar is *total*: every character of the input is consumed by some rule, and every rule
//! that can meet a mistake (an unclosed `(`, a stray `)`, an unterminated string or block comment,
//! a bad `#` form, a malformed number) records a [`Diagnostic`] in its output and carries on. So
//! one pass yields both every datum that could be read and every syntax error, each pointing at
//! the span that caused it (SPEC §1.1).
//!
//! Token rules (SPEC §1.1, in the tradition of Common Lisp readers):
//! - delimiters are whitespace and `( ) " ; ' ` ,`; everything else is a token constituent;
//! - a token is a number if it is one (`-12`, `2.5`, `1e-3`, `.5`); a token that starts like a
//!   number (an optional sign, then a digit or `.digit`) and consists only of letters, digits, `.`,
//!   `_` (and a sign right after an exponent `e`) but is not a valid number is an error; any other
//!   token is a symbol, so `1+`, `-`, `->`, `3d-mesh` are symbols;
//! - `#t`, `#f` are booleans, `#| … |#` (nesting) is a comment, any other `#` token is an error;
//! - `nil` is `Nil`, `:name` is `Keyword("name")`.

use chumsky::prelude::*;
use ttdl_ir::limits::Limits;

use crate::diagnostic::Diagnostic;
use crate::sexpr::{Datum, Sexpr};
use crate::span::{FileId, Span};

/// Reads every top-level datum of `text`. Returns what could be read and every syntax error.
pub fn read(file: FileId, text: &str) -> (Vec<Sexpr>, Vec<Diagnostic>) {
    let scan = scan(text);
    if let Some(at) = scan.too_deep {
        let span = Span::new(file, at, at + 1);
        let diag = Diagnostic::new(
            "syntax",
            format!("data nested more than {0} deep", Limits::READER_DEPTH),
        )
        .with_label(
            span,
            format!("this opens level {}", Limits::READER_DEPTH + 1),
        )
        .with_note("every list and every quote (`'`, `` ` ``, `,`, `,@`) is one level")
        .with_help("flatten the data, or build it with a function instead of writing it out");
        return (Vec::new(), vec![diag]);
    }
    let (out, errors) = reader(file).parse(text).into_output_errors();
    let mut read = out.unwrap_or_default();
    // The grammar is total, so chumsky itself should never complain; if it does, say so rather
    // than lose the error.
    if !errors.is_empty() {
        read.diags.push(
            Diagnostic::new("syntax", "this text could not be read")
                .with_label(Span::new(file, 0, 0), "reading stopped here")
                .with_help("check the file for characters that are not valid text"),
        );
    }
    if read.diags.iter().any(|d| d.message == UNCLOSED_LIST) {
        let mut starts = Vec::new();
        line_start_lists(text, &read.items, &mut starts);
        starts.sort_unstable();
        for d in &mut read.diags {
            point_at_next_toplevel_form(&starts, d);
        }
    }
    if read.diags.len() > Limits::SYNTAX_ERRORS {
        read.diags.truncate(Limits::SYNTAX_ERRORS);
        read.diags.push(
            Diagnostic::new(
                "syntax",
                format!(
                    "more than {0} syntax errors; the rest are not shown",
                    Limits::SYNTAX_ERRORS
                ),
            )
            .with_help("is this a TTDL program? fix the first errors and read it again"),
        );
    }
    read.diags.sort_by_key(|d| {
        // In source order; a diagnostic without a place (the cap above) comes last.
        d.labels
            .first()
            .map_or((usize::MAX, usize::MAX), |l| (l.span.start, l.span.end))
    });
    (read.items, read.diags)
}

/// Byte offsets of the lists that begin a line, anywhere in `items`.
fn line_start_lists(text: &str, items: &[Sexpr], out: &mut Vec<usize>) {
    for x in items {
        if let Datum::List(children) = &x.datum {
            let at = x.span.start;
            if at > 0
                && text.as_bytes().get(at - 1) == Some(&b'\n')
                && text.as_bytes().get(at) == Some(&b'(')
            {
                out.push(at);
            }
            line_start_lists(text, children, out);
        }
    }
}

/// An unclosed list always runs to the end of the file, so the missing `)` is somewhere in
/// between. A list that begins a later line is usually a new top-level form the user meant to
/// begin after closing this one: point at the first.
fn point_at_next_toplevel_form(line_starts: &[usize], d: &mut Diagnostic) {
    if d.message != UNCLOSED_LIST {
        return;
    }
    let Some(open) = d.labels.first().map(|l| l.span) else {
        return;
    };
    let next = line_starts.partition_point(|&p| p <= open.start);
    if let Some(&at) = line_starts.get(next) {
        let span = Span::new(open.file, at, at + 1);
        d.labels.push(crate::diagnostic::Label {
            span,
            message: "this `(` at the start of a line is still inside the list".into(),
        });
        d.notes
            .push("the `)` is probably missing before this line".into());
    }
}

const UNCLOSED_LIST: &str = "unclosed `(`";

/// True when `text` ends inside an open list, string or block comment, i.e. when an interactive
/// loop should ask for another line rather than evaluate. A stray `)` makes the input complete
/// (there is an error to report, and more input cannot fix it).
pub fn is_incomplete(text: &str) -> bool {
    let s = scan(text);
    !s.unbalanced_close && (s.depth > 0 || s.in_string || s.comment_depth > 0)
}

/// Prints a datum so that [`read`] gives it back (spans aside). Quote forms print with their
/// reader-macro prefix (`(quote x)` prints as `'x`). Non-finite floats have no readable form and
/// print as `inf`, `-inf`, `NaN`.
pub fn print(sexpr: &Sexpr) -> String {
    print_datum(&sexpr.datum)
}

/// [`print`] for a bare [`Datum`].
pub fn print_datum(datum: &Datum) -> String {
    let mut out = String::new();
    write_datum(&mut out, datum);
    out
}

/// Appends the printed form of `datum` to `out`.
pub fn write_datum(out: &mut String, datum: &Datum) {
    match datum {
        Datum::Int(n) => out.push_str(&n.to_string()),
        Datum::Float(x) => out.push_str(&format_float(*x)),
        Datum::Str(s) => write_string(out, s),
        Datum::Bool(true) => out.push_str("#t"),
        Datum::Bool(false) => out.push_str("#f"),
        Datum::Nil => out.push_str("nil"),
        Datum::Symbol(s) => out.push_str(s),
        Datum::Keyword(k) => {
            out.push(':');
            out.push_str(k);
        }
        Datum::List(items) => {
            if let [head, arg] = items.as_slice() {
                if let Some(prefix) = head.as_symbol().and_then(macro_prefix) {
                    out.push_str(prefix);
                    write_datum(out, &arg.datum);
                    return;
                }
            }
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_datum(out, &item.datum);
            }
            out.push(')');
        }
    }
}

/// A float in a form the reader reads back as the same float (always with a `.` or an exponent).
pub fn format_float(x: f64) -> String {
    // `{:?}` is the shortest representation that round-trips, e.g. `1.0`, `1e20`, `1.5e-7`.
    format!("{x:?}")
}

/// A string literal with the escapes the reader knows.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn macro_prefix(head: &str) -> Option<&'static str> {
    match head {
        "quote" => Some("'"),
        "quasiquote" => Some("`"),
        "unquote" => Some(","),
        "unquote-splicing" => Some(",@"),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The lexical pre-scan: nesting depth, open strings and comments, without building anything.

#[derive(Debug, Default)]
struct Scan {
    depth: usize,
    /// Byte offset of the first `(` or quote that goes deeper than [`Limits::READER_DEPTH`].
    too_deep: Option<usize>,
    unbalanced_close: bool,
    in_string: bool,
    comment_depth: usize,
}

fn is_delimiter_char(c: char) -> bool {
    matches!(c, '(' | ')' | '"' | ';' | '\'' | '`' | ',') || is_space(c)
}

/// Whitespace, and the byte-order mark some editors put at the start of a file.
fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

fn is_delimiter(c: u8) -> bool {
    matches!(c, b'(' | b')' | b'"' | b';' | b'\'' | b'`' | b',') || c.is_ascii_whitespace()
}

/// Follows the same lexical rules as the grammar below. Works on bytes: every delimiter is ASCII
/// and UTF-8 continuation bytes are never ASCII.
fn scan(text: &str) -> Scan {
    let b = text.as_bytes();
    let mut s = Scan::default();
    // A byte-order mark is whitespace (and only ever comes first).
    let mut i = if text.starts_with('\u{feff}') { 3 } else { 0 };
    // Whether the previous byte ends a token (so `#|` here starts a comment, not a symbol).
    let mut at_token_start = true;
    // Reader-macro prefixes nest like lists (`''x` is `(quote (quote x))`): those waiting for
    // their datum, and those waiting inside each open list.
    let mut prefixes = 0usize;
    let mut prefixes_in_lists = 0usize;
    let mut saved: Vec<usize> = Vec::new();
    while i < b.len() {
        let c = b[i];
        if s.comment_depth > 0 {
            if c == b'|' && b.get(i + 1) == Some(&b'#') {
                s.comment_depth -= 1;
                i += 2;
                at_token_start = true;
                continue;
            }
            if c == b'#' && b.get(i + 1) == Some(&b'|') {
                s.comment_depth += 1;
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        if s.in_string {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    s.in_string = false;
                    at_token_start = true;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b';' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                at_token_start = true;
                continue;
            }
            b'"' => {
                s.in_string = true;
                prefixes = 0;
            }
            b'\'' | b'`' | b',' => prefixes += 1,
            b'@' if i > 0 && b[i - 1] == b',' => {}
            b'(' => {
                s.depth += 1;
                // Past the limit only the depth still matters: a file of a hundred million `(`
                // must not keep a hundred million counts.
                if s.too_deep.is_none() {
                    saved.push(prefixes);
                    prefixes_in_lists += prefixes;
                }
                prefixes = 0;
            }
            b')' => {
                if s.depth == 0 {
                    s.unbalanced_close = true;
                } else {
                    s.depth -= 1;
                    prefixes_in_lists = prefixes_in_lists.saturating_sub(saved.pop().unwrap_or(0));
                }
                prefixes = 0;
            }
            b'#' if at_token_start && b.get(i + 1) == Some(&b'|') => {
                s.comment_depth = 1;
                i += 2;
                continue;
            }
            c if c.is_ascii_whitespace() => {}
            // A token: the prefixes before it are complete.
            _ => prefixes = 0,
        }
        if s.depth + prefixes_in_lists + prefixes > Limits::READER_DEPTH && s.too_deep.is_none() {
            s.too_deep = Some(i);
        }
        at_token_start = is_delimiter(c);
        i += 1;
    }
    s
}

// ---------------------------------------------------------------------------------------------
// The grammar.

/// The grammar is total and reports its own errors, so chumsky's error tracking (which costs
/// time on every failed alternative) is switched off.
type Extra = extra::Err<EmptyErr>;

/// What a rule produced: the data it read and the errors it met on the way.
#[derive(Clone, Debug, Default)]
struct Items {
    items: Vec<Sexpr>,
    diags: Vec<Diagnostic>,
}

/// One element of a sequence: a datum, or nothing (a comment, whitespace), plus any errors.
#[derive(Clone, Debug, Default)]
struct Piece {
    sexpr: Option<Sexpr>,
    diags: Vec<Diagnostic>,
}

impl Items {
    fn push(mut self, piece: Piece) -> Self {
        self.items.extend(piece.sexpr);
        // One more than shown, so the top level knows some were left out.
        let room = (Limits::SYNTAX_ERRORS + 1).saturating_sub(self.diags.len());
        self.diags.extend(piece.diags.into_iter().take(room));
        self
    }
}

fn syntax_error(span: Span, message: String, label: &str, help: &str) -> Diagnostic {
    Diagnostic::new("syntax", message)
        .with_label(span, label)
        .with_help(help)
}

enum StrPiece {
    Char(char),
    Escape(Option<char>, SimpleSpan),
}

fn reader<'src>(file: FileId) -> impl Parser<'src, &'src str, Items, Extra> {
    let at = move |s: SimpleSpan| Span::new(file, s.start, s.end);

    // Whitespace and comments: a `Piece` with no datum (and an error for an unclosed `#|`).
    let whitespace = any()
        .filter(|c: &char| is_space(*c))
        .repeated()
        .at_least(1)
        .to(Piece::default());
    let line_comment = just(';')
        .then(none_of('\n').repeated())
        .to(Piece::default());
    // Block comments nest; the inner ones only need to be skipped. A character of a comment is
    // neither `|#` nor the `#|` of a nested comment, so an unclosed nested `#|` cannot be
    // re-read as two plain characters (`#|#|#` is unterminated twice, as `is_incomplete` says).
    let comment_char = || {
        just("|#")
            .not()
            .then(just("#|").not())
            .ignore_then(any())
            .ignored()
    };
    let nested_block = recursive(|block| {
        just("#|")
            .then(choice((block, comment_char())).repeated())
            .then(just("|#"))
            .ignored()
    });
    let block_comment = just("#|")
        .map_with(move |_, e| at(e.span()))
        .then_ignore(
            choice((nested_block.clone(), comment_char())).repeated(),
        )
        .then(just("|#").or_not())
        .map(|(open, close)| Piece {
            sexpr: None,
            diags: match close {
                Some(_) => Vec::new(),
                None => vec![syntax_error(
                    open,
                    "unterminated block comment".into(),
                    "this `#|` is never closed",
                    "end the comment with `|#` (block comments nest: every `#|` needs its own `|#`)",
                )
                .with_note("the comment runs to the end of the file")],
            },
        });
    let gap = choice((whitespace, line_comment, block_comment)).boxed();

    let datum = recursive(|datum| {
        let element = choice((gap.clone(), datum.clone()));

        let list = just('(')
            .map_with(move |_, e| at(e.span()))
            .then(element.repeated().fold(Items::default(), Items::push))
            .then(just(')').or_not())
            .map_with(move |((open, body), close), e| {
                let span = at(e.span());
                let mut diags = body.diags;
                if close.is_none() {
                    let d = syntax_error(
                        open,
                        UNCLOSED_LIST.into(),
                        "this `(` is never closed",
                        "add a `)` to close this list",
                    );
                    diags.insert(0, d);
                }
                Piece {
                    sexpr: Some(Sexpr::new(Datum::List(body.items), span)),
                    diags,
                }
            });

        let prefix = choice((
            just(",@").to("unquote-splicing"),
            just('\'').to("quote"),
            just('`').to("quasiquote"),
            just(',').to("unquote"),
        ))
        .map_with(move |name, e| (name, at(e.span())));
        let quoted = prefix
            .then(gap.clone().repeated().fold(Items::default(), Items::push))
            .then(datum.clone().or_not())
            .map_with(move |(((name, pspan), gap_items), target), e| {
                let mut diags = gap_items.diags;
                match target {
                    Some(Piece {
                        sexpr: Some(x),
                        diags: inner,
                    }) => {
                        diags.extend(inner);
                        let head = Sexpr::new(Datum::Symbol(name.to_string()), pspan);
                        Piece {
                            sexpr: Some(Sexpr::new(Datum::List(vec![head, x]), at(e.span()))),
                            diags,
                        }
                    }
                    other => {
                        if let Some(p) = other {
                            diags.extend(p.diags);
                        }
                        let shown = macro_prefix(name).unwrap_or(name);
                        diags.insert(
                            0,
                            syntax_error(
                                pspan,
                                format!("`{shown}` with nothing after it"),
                                "expected a datum after this",
                                &format!("write the datum to {name} right after `{shown}`, e.g. `{shown}x`"),
                            ),
                        );
                        Piece {
                            sexpr: None,
                            diags,
                        }
                    }
                }
            });

        let escape = just('\\')
            .ignore_then(any().or_not())
            .map_with(|c, e| StrPiece::Escape(c, e.span()));
        let string = just('"')
            .map_with(move |_, e| at(e.span()))
            .then(
                choice((escape, any().filter(|c: &char| *c != '\\' && *c != '"').map(StrPiece::Char)))
                    .repeated()
                    .fold((String::new(), Vec::new()), move |(mut s, mut diags), p| {
                        match p {
                            StrPiece::Char(c) => s.push(c),
                            StrPiece::Escape(Some('n'), _) => s.push('\n'),
                            StrPiece::Escape(Some('t'), _) => s.push('\t'),
                            StrPiece::Escape(Some('r'), _) => s.push('\r'),
                            StrPiece::Escape(Some('\\'), _) => s.push('\\'),
                            StrPiece::Escape(Some('"'), _) => s.push('"'),
                            StrPiece::Escape(Some(c), span) => {
                                s.push(c);
                                diags.push(syntax_error(
                                    at(span),
                                    format!("unknown escape `\\{c}` in a string"),
                                    "unknown escape",
                                    "the escapes are `\\n`, `\\t`, `\\r`, `\\\\` and `\\\"`; write `\\\\` for a backslash",
                                ));
                            }
                            // A backslash at the very end: the missing `"` is reported below.
                            StrPiece::Escape(None, _) => {}
                        }
                        (s, diags)
                    }),
            )
            .then(just('"').or_not())
            .map_with(move |((open, (s, mut diags)), close), e| {
                if close.is_none() {
                    diags.insert(
                        0,
                        syntax_error(
                            open,
                            "unterminated string".into(),
                            "this string is never closed",
                            "add a closing `\"` (write `\\\"` for a quote inside a string)",
                        ),
                    );
                }
                Piece {
                    sexpr: Some(Sexpr::new(Datum::Str(s), at(e.span()))),
                    diags,
                }
            });

        let atom = any()
            .filter(|c: &char| !is_delimiter_char(*c))
            .repeated()
            .at_least(1)
            .to_slice()
            .map_with(move |tok: &str, e| classify(tok, at(e.span())));

        choice((list, quoted, string, atom)).boxed()
    });

    let stray_close = just(')').map_with(move |_, e| Piece {
        sexpr: None,
        diags: vec![syntax_error(
            at(e.span()),
            "unexpected `)`".into(),
            "no list is open here",
            "remove this `)`, or add the `(` it was meant to close",
        )],
    });

    choice((gap, datum, stray_close))
        .repeated()
        .fold(Items::default(), Items::push)
        .then_ignore(end())
}

/// Turns one token (a maximal run of constituent characters) into a datum or an error.
fn classify(tok: &str, span: Span) -> Piece {
    let ok = |datum| Piece {
        sexpr: Some(Sexpr::new(datum, span)),
        diags: Vec::new(),
    };
    let bad = |message: String, label: &str, help: &str| Piece {
        sexpr: None,
        diags: vec![syntax_error(span, message, label, help)],
    };
    if let Some(rest) = tok.strip_prefix('#') {
        return match rest {
            "t" => ok(Datum::Bool(true)),
            "f" => ok(Datum::Bool(false)),
            _ => bad(
                format!("unknown `#` syntax `{tok}`"),
                "not a `#` form TTDL knows",
                "the `#` forms are `#t`, `#f` and block comments `#| … |#`",
            ),
        };
    }
    if tok.starts_with("|#") {
        return bad(
            "`|#` outside a block comment".into(),
            "no block comment is open here",
            "remove this `|#`, or open the comment with `#|`",
        );
    }
    if tok == "nil" {
        return ok(Datum::Nil);
    }
    if let Some(name) = tok.strip_prefix(':') {
        if name.is_empty() {
            return bad(
                "a keyword needs a name".into(),
                "empty keyword",
                "write the keyword's name right after the colon, e.g. `:topology`",
            );
        }
        return ok(Datum::Keyword(name.to_string()));
    }
    match number(tok) {
        Number::Int(n) => ok(Datum::Int(n)),
        Number::Float(x) => ok(Datum::Float(x)),
        Number::IntOverflow => bad(
            format!("integer `{tok}` does not fit in 64 bits"),
            "integer out of range",
            "integers range from -9223372036854775808 to 9223372036854775807; write a float (e.g. `1e20`) if an approximation will do",
        ),
        Number::FloatOverflow => bad(
            format!("float `{tok}` is out of range"),
            "float out of range",
            "floats go up to about 1.8e308",
        ),
        Number::Malformed => bad(
            format!("malformed number `{tok}`"),
            "not a number",
            "numbers are written like `42`, `-7`, `2.5` or `1e-3`; a symbol cannot start like a number",
        ),
        Number::Symbol => ok(Datum::Symbol(tok.to_string())),
    }
}

#[derive(Debug, PartialEq)]
enum Number {
    Int(i64),
    Float(f64),
    IntOverflow,
    FloatOverflow,
    Malformed,
    Symbol,
}

/// Classifies a token as a number, a malformed number, or not a number at all (a symbol).
fn number(tok: &str) -> Number {
    let b = tok.as_bytes();
    let unsigned = match b.first() {
        Some(b'+' | b'-') => &b[1..],
        _ => b,
    };
    let starts_like_number = match unsigned {
        [d, ..] if d.is_ascii_digit() => true,
        [b'.', d, ..] if d.is_ascii_digit() => true,
        _ => false,
    };
    if !starts_like_number {
        return Number::Symbol;
    }
    // Number-like: only letters, digits, `.`, `_`, and a sign right after an exponent marker.
    let number_like = unsigned.iter().enumerate().all(|(i, &c)| {
        c.is_ascii_alphanumeric()
            || c == b'.'
            || c == b'_'
            || ((c == b'+' || c == b'-') && i > 0 && matches!(unsigned[i - 1], b'e' | b'E'))
    });
    if !number_like {
        return Number::Symbol;
    }
    if unsigned.iter().all(u8::is_ascii_digit) {
        return match tok.parse::<i64>() {
            Ok(n) => Number::Int(n),
            Err(_) => Number::IntOverflow,
        };
    }
    if is_float_syntax(unsigned) {
        return match tok.parse::<f64>() {
            Ok(x) if x.is_finite() => Number::Float(x),
            Ok(_) => Number::FloatOverflow,
            Err(_) => Number::Malformed,
        };
    }
    Number::Malformed
}

/// `digits.digits`, `.digits`, `digits`, each with an optional exponent `e[+-]digits`; a float
/// needs a `.` or an exponent (plain digits are integers and handled before).
fn is_float_syntax(b: &[u8]) -> bool {
    let digits = |s: &[u8]| -> usize { s.iter().take_while(|c| c.is_ascii_digit()).count() };
    let mut i = digits(b);
    let int_digits = i;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = digits(&b[i..]);
        if frac_digits == 0 {
            return false;
        }
        i += frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp = digits(&b[i..]);
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_symbols() {
        assert_eq!(number("-12"), Number::Int(-12));
        assert_eq!(number("2.5"), Number::Float(2.5));
        assert_eq!(number("1e-3"), Number::Float(1e-3));
        assert_eq!(number("1e+5"), Number::Float(1e5));
        assert_eq!(number(".5"), Number::Float(0.5));
        assert_eq!(number("1+"), Number::Symbol);
        assert_eq!(number("-"), Number::Symbol);
        assert_eq!(number("->"), Number::Symbol);
        assert_eq!(number("3d-mesh"), Number::Symbol);
        assert_eq!(number("12abc"), Number::Malformed);
        assert_eq!(number("1.2.3"), Number::Malformed);
        assert_eq!(number("1."), Number::Malformed);
        assert_eq!(number("9223372036854775808"), Number::IntOverflow);
        assert_eq!(number("-9223372036854775808"), Number::Int(i64::MIN));
        assert_eq!(number("1e999"), Number::FloatOverflow);
        assert_eq!(number("inf"), Number::Symbol);
        assert_eq!(number("nan"), Number::Symbol);
    }

    #[test]
    fn too_deep_keeps_counting_depth_but_nothing_else() {
        let deep = "(".repeat(Limits::READER_DEPTH + 5);
        let s = scan(&deep);
        assert_eq!(s.too_deep, Some(Limits::READER_DEPTH));
        assert_eq!(s.depth, Limits::READER_DEPTH + 5);
        let closed = format!("{deep}{}", ")".repeat(Limits::READER_DEPTH + 5));
        assert!(!is_incomplete(&closed));
        assert!(is_incomplete(&deep));
    }

    #[test]
    fn incomplete_input() {
        assert!(is_incomplete("(define (f x)"));
        assert!(is_incomplete("(print \"abc"));
        assert!(is_incomplete("#| a #| b |# c"));
        assert!(is_incomplete("(a \"(\" ; )\n"));
        assert!(!is_incomplete("(a \")\")"));
        assert!(!is_incomplete("(a) b"));
        assert!(!is_incomplete(") ("));
        assert!(!is_incomplete("a#|b"));
        assert!(!is_incomplete(""));
    }
}
