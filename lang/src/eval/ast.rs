//! The analysed form of code: every special form recognised once (when a top-level form or a
//! lambda is compiled), macros expanded, symbols interned. Evaluating a `Node` never re-parses
//! S-expressions, which keeps the per-step cost low.

use std::rc::Rc;

use super::resolve::Slot;
use super::symbol::Sym;
use super::value::{ClosureKind, Value};
use crate::span::Span;

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum NodeKind {
    Const(Value),
    /// A variable, looked up by name (what the compiler makes; [`super::resolve`] replaces it).
    Var(Sym),
    /// A variable bound in an enclosing frame, at a known place.
    Local(Sym, Slot),
    /// A variable no enclosing frame binds: a global.
    Global(Sym),
    /// `define` / `defvar` / `defparameter`; `local` inside a procedure or `let` body.
    Define {
        name: Sym,
        value: Box<Node>,
        local: bool,
    },
    Set {
        name: Sym,
        value: Box<Node>,
        /// Where the variable lives when a frame binds it (see [`super::resolve`]).
        slot: Option<Slot>,
    },
    If {
        test: Box<Node>,
        then: Box<Node>,
        other: Option<Box<Node>>,
    },
    Lambda(Rc<Lambda>),
    /// `define-comm`, `define-mapping`: a named procedure of a special kind, bound globally.
    DefineProc {
        lambda: Rc<Lambda>,
        kind: ClosureKind,
        local: bool,
    },
    DefMacro(Rc<Lambda>),
    Let {
        bindings: Vec<(Sym, Node)>,
        body: Body,
        sequential: bool,
    },
    Begin(Vec<Node>),
    And(Vec<Node>),
    Or(Vec<Node>),
    Cond(Vec<Clause>),
    /// `(case KEY ((d…) body…) … (else body…))`: the first clause listing a datum `equal?` to KEY.
    Case {
        key: Box<Node>,
        clauses: Vec<(Vec<Value>, Vec<Node>)>,
        default: Option<Vec<Node>>,
    },
    /// `(while TEST body…)`.
    While {
        test: Box<Node>,
        body: Vec<Node>,
    },
    Dotimes {
        var: Sym,
        count: Box<Node>,
        result: Option<Box<Node>>,
        body: Vec<Node>,
    },
    Dolist {
        var: Sym,
        list: Box<Node>,
        result: Option<Box<Node>>,
        body: Vec<Node>,
    },
    Call {
        func: Box<Node>,
        args: Vec<Node>,
        arg_spans: Box<[Span]>,
    },
    Quasi(Box<Quasi>),
    /// `(iterate s… N)`: the count is the last form.
    Iterate {
        body: Vec<Node>,
        count: Box<Node>,
    },
    Deftask(Vec<(Sym, Span)>),
    Task(Soft),
    Defmessage {
        name: Sym,
        size: Box<Node>,
    },
    Synchronize(Soft),
    /// `(with-task T body…)`: run `body` in the context of task `T`.
    WithTask {
        task: Box<Node>,
        body: Vec<Node>,
    },
    MakeNetwork(Vec<KeyArg>),
    Target {
        network: Box<Node>,
        options: Vec<KeyArg>,
    },
}

/// A `cond` clause; `test` is `None` for `else`.
#[derive(Clone, Debug)]
pub struct Clause {
    pub test: Option<Node>,
    pub body: Vec<Node>,
}

/// An argument where the thesis writes bare names (`(synchronize phase-zero)`,
/// `:topology mesh`, `:place anneal`): a bare symbol is evaluated when it is bound and taken as a
/// name when it is not; anything else is evaluated.
#[derive(Clone, Debug)]
pub enum Soft {
    Name(Sym, Span),
    Expr(Box<Node>),
}

impl Soft {
    pub fn span(&self) -> Span {
        match self {
            Soft::Name(_, s) => *s,
            Soft::Expr(n) => n.span,
        }
    }
}

/// `:keyword value` in `make-network` and `target`.
#[derive(Clone, Debug)]
pub struct KeyArg {
    pub key: String,
    pub key_span: Span,
    pub value: Soft,
}

/// A procedure's code: parameters and body, shared by every closure made from it.
#[derive(Debug)]
pub struct Lambda {
    pub name: Option<Sym>,
    pub required: Vec<Sym>,
    pub optional: Vec<(Sym, Option<Node>)>,
    pub rest: Option<Sym>,
    pub body: Body,
    /// Where it was defined (for arity errors).
    pub span: Span,
    /// The body compiled into closures ([`super::code`]), made at its first call.
    pub code: super::code::Compiled,
}

impl Lambda {
    pub fn arity_text(&self) -> String {
        let min = self.required.len();
        let max = min + self.optional.len();
        if self.rest.is_some() {
            format!("at least {min} argument{}", plural(min))
        } else if min == max {
            format!("{min} argument{}", plural(min))
        } else {
            format!("{min} to {max} arguments")
        }
    }
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A body: its internal `define`s are bound (unassigned) on entry, so procedures defined in one
/// body can call each other (Scheme's `letrec*` rule).
#[derive(Clone, Debug, Default)]
pub struct Body {
    pub defines: Vec<Sym>,
    pub forms: Vec<Node>,
}

/// A quasiquote template.
#[derive(Clone, Debug)]
pub enum Quasi {
    Const(Value),
    Unquote(Node),
    List(Vec<QuasiItem>),
}

#[derive(Clone, Debug)]
pub enum QuasiItem {
    One(Quasi),
    Splice(Node),
}
