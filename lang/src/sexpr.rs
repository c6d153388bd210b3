//! What the reader produces: S-expressions with a span on every datum.
//!
//! Reader macros are desugared here: `'x` is `(quote x)`, `` `x `` is `(quasiquote x)`, `,x` is
//! `(unquote x)` and `,@x` is `(unquote-splicing x)`; the synthesized head symbol carries the span
//! of the prefix character. `()` reads as an empty `List`; the token `nil` reads as `Nil`.

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    Nil,
    Symbol(String),
    /// `:topology` is stored without the colon: `Keyword("topology")`.
    Keyword(String),
    List(Vec<Sexpr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sexpr {
    pub datum: Datum,
    pub span: Span,
}

impl Sexpr {
    pub fn new(datum: Datum, span: Span) -> Self {
        Sexpr { datum, span }
    }

    pub fn as_symbol(&self) -> Option<&str> {
        match &self.datum {
            Datum::Symbol(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Sexpr]> {
        match &self.datum {
            Datum::List(items) => Some(items),
            _ => None,
        }
    }
}
