//! Between source data (`Sexpr`, with spans) and runtime values: `quote` turns source into values,
//! and macro expansion turns the expander's result back into source. Lists passed to a macro keep
//! their spans through the round trip, so errors in expanded code still point at the user's text.

use std::collections::HashMap;
use ttdl_ir::limits::Limits;

use super::machine::{Machine, R};
use super::value::Value;
use crate::diagnostic::Diagnostic;
use crate::sexpr::{Datum, Sexpr};
use crate::span::Span;

/// Spans of the list cells handed to a macro, by cell address.
pub type SpanMap = HashMap<*const (), Span>;

pub fn datum_to_value(m: &mut Machine, s: &Sexpr, spans: &mut Option<&mut SpanMap>) -> Value {
    match &s.datum {
        Datum::Int(i) => Value::Int(*i),
        Datum::Float(f) => Value::Float(*f),
        Datum::Str(t) => Value::str(t.clone()),
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Nil => Value::Nil,
        Datum::Symbol(name) => Value::Symbol(m.intern(name)),
        Datum::Keyword(name) => Value::Keyword(m.intern(name)),
        Datum::List(items) => {
            let vals: Vec<Value> = items.iter().map(|i| datum_to_value(m, i, spans)).collect();
            let list = Value::list(vals);
            if let (Some(map), Value::Pair(c)) = (spans.as_deref_mut(), &list) {
                map.insert(super::cons::ConsRef::as_ptr(c), s.span);
            }
            list
        }
    }
}

/// Turns a macro's result back into source. `span` is used where no original span is known.
pub fn value_to_sexpr(m: &Machine, v: &Value, span: Span, spans: &SpanMap) -> R<Sexpr> {
    to_sexpr(m, v, span, spans, 0)
}

fn to_sexpr(m: &Machine, v: &Value, span: Span, spans: &SpanMap, depth: usize) -> R<Sexpr> {
    if depth > Limits::EXPANSION_NESTING {
        return Err(Diagnostic::new(
            "syntax",
            format!(
                "a macro expanded to code nested more than {0} deep",
                Limits::EXPANSION_NESTING
            ),
        )
        .with_label(span, "in this macro call"));
    }
    let datum = match v {
        Value::Nil => Datum::Nil,
        Value::Bool(b) => Datum::Bool(*b),
        Value::Int(i) => Datum::Int(*i),
        Value::Float(f) => Datum::Float(*f),
        Value::Str(s) => Datum::Str(s.to_string()),
        Value::Symbol(s) => Datum::Symbol(m.name(*s).to_string()),
        Value::Keyword(s) => Datum::Keyword(m.name(*s).to_string()),
        Value::Pair(c) => {
            let here = spans
                .get(&super::cons::ConsRef::as_ptr(c))
                .copied()
                .unwrap_or(span);
            let mut items = Vec::new();
            let mut cell = c.cell();
            loop {
                let item = stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
                    to_sexpr(m, &cell.car(), here, spans, depth + 1)
                })?;
                items.push(item);
                let cdr = cell.cdr();
                match cdr.pair() {
                    Some(next) => cell = next,
                    None if matches!(*cdr, Value::Nil) => break,
                    _ => {
                        return Err(Diagnostic::new(
                            "syntax",
                            "a macro expanded to a dotted list, which is not code",
                        )
                        .with_label(span, "in this macro call"))
                    }
                }
            }
            return Ok(Sexpr::new(Datum::List(items), here));
        }
        other => {
            return Err(Diagnostic::new(
                "syntax",
                format!(
                    "a macro expanded to {} {} value, which cannot appear in code",
                    super::machine::article(other.type_name()),
                    other.type_name()
                ),
            )
            .with_label(span, "in this macro call")
            .with_help("make the macro return the name that refers to it (a symbol) instead"))
        }
    };
    Ok(Sexpr::new(datum, span))
}
