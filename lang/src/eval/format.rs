//! `format`, Common-Lisp style: `~a` (display), `~s` (write), `~d` (integer), `~%` (newline),
//! `~~` (a tilde). `(format nil "…" …)` and `(format "…" …)` return the string; `(format t "…" …)`
//! prints it.

use super::builtins::Args;
use super::machine::{Machine, R};
use super::value::Value;
use crate::diagnostic::Diagnostic;

pub fn format(m: &mut Machine, a: &Args) -> R<Value> {
    let (print, fmt_at) = match a.get(0) {
        Value::Str(_) => (false, 0),
        Value::Nil | Value::Bool(false) => (false, 1),
        Value::Bool(true) => (true, 1),
        _ => return Err(a.type_err(m, 0, "`t`, `nil` or a format string")),
    };
    let fmt = a.string(m, fmt_at)?;
    let text = render(m, a, &fmt, fmt_at + 1)?;
    if print {
        m.output.push_str(&text);
        Ok(Value::Nil)
    } else {
        Ok(Value::str(text))
    }
}

/// Expands `fmt` with the arguments from index `first` on.
pub fn render(m: &Machine, a: &Args, fmt: &str, first: usize) -> R<String> {
    let mut out = String::new();
    let mut next = first;
    let mut chars = fmt.chars();
    let fmt_span = a.span(first.saturating_sub(1));
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            return Err(
                Diagnostic::new("type", "format string ends with a lone `~`")
                    .with_label(fmt_span, "this format string"),
            );
        };
        match d.to_ascii_lowercase() {
            '%' => out.push('\n'),
            '~' => out.push('~'),
            'a' | 's' | 'd' => {
                if next >= a.len() {
                    return Err(Diagnostic::new(
                        "arity",
                        format!("the format string uses `~{d}` but no argument is left for it"),
                    )
                    .with_label(a.span, "too few arguments for the format string"));
                }
                let v = a.get(next);
                match d.to_ascii_lowercase() {
                    'd' if !matches!(v, Value::Int(_)) => {
                        return Err(a.type_err(m, next, "an integer for `~d`"))
                    }
                    's' => out.push_str(&v.to_text(&m.names(), true)),
                    _ => out.push_str(&v.to_text(&m.names(), false)),
                }
                next += 1;
            }
            other => {
                return Err(
                    Diagnostic::new("type", format!("unknown format directive `~{other}`"))
                        .with_label(fmt_span, "in this format string")
                        .with_help("use `~a`, `~s`, `~d`, `~%` or `~~`"),
                )
            }
        }
    }
    Ok(out)
}
