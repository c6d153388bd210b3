//! Source → `Node`: recognises special forms, checks their shape, expands macros (non-hygienic,
//! Common-Lisp style: the expander gets the unevaluated argument forms as data), and collects each
//! body's internal `define`s.

use std::rc::Rc;
use ttdl_ir::limits::Limits;

use super::ast::{Body, Clause, KeyArg, Lambda, Node, NodeKind, Quasi, QuasiItem, Soft};
use super::convert::{datum_to_value, value_to_sexpr, SpanMap};
use super::machine::{Machine, R};
use super::symbol::Sym;
use super::value::{ClosureKind, Value};
use crate::diagnostic::Diagnostic;
use crate::sexpr::{Datum, Sexpr};
use crate::span::Span;

pub fn compile_top(m: &mut Machine, s: &Sexpr) -> R<Node> {
    let mut node = Compiler {
        m,
        scopes: Vec::new(),
        nesting: 0,
    }
    .expr(s)?;
    super::resolve::resolve_top(&mut node);
    Ok(node)
}

/// Is this top-level form a `(begin …)`/`(progn …)` whose parts should be compiled one at a time
/// (so a macro defined in one part can be used in the next)?
pub fn top_level_parts(s: &Sexpr) -> Option<&[Sexpr]> {
    let items = s.as_list()?;
    match items.first()?.as_symbol()? {
        "begin" | "progn" => Some(&items[1..]),
        _ => None,
    }
}

struct Compiler<'m> {
    m: &'m mut Machine,
    /// One entry per enclosing procedure or `let` body: the names it defines.
    scopes: Vec<Vec<Sym>>,
    /// Current nesting of `expr` (bounded, so expanded code cannot exhaust the stack).
    nesting: usize,
}

/// Names (with their source) and initial values of a binding list.
type Bindings = (Vec<(Sym, Sexpr)>, Vec<Node>);

fn mk(kind: NodeKind, span: Span) -> Node {
    Node { kind, span }
}

pub fn syntax(span: Span, msg: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::new("syntax", msg).with_label(span, label.to_string())
}

impl Compiler<'_> {
    fn expr(&mut self, s: &Sexpr) -> R<Node> {
        if self.nesting >= Limits::CODE_NESTING {
            return Err(syntax(
                s.span,
                format!(
                    "code nested more than {0} deep (after macro expansion)",
                    Limits::CODE_NESTING
                ),
                "too deep",
            ));
        }
        self.nesting += 1;
        let r = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(s));
        self.nesting -= 1;
        r
    }

    fn expr_inner(&mut self, s: &Sexpr) -> R<Node> {
        let span = s.span;
        Ok(match &s.datum {
            Datum::Symbol(name) => {
                let sym = self.m.intern(name);
                mk(NodeKind::Var(sym), span)
            }
            Datum::List(items) if items.is_empty() => mk(NodeKind::Const(Value::Nil), span),
            Datum::List(items) => return self.list(items, span),
            _ => {
                let v = datum_to_value(self.m, s, &mut None);
                mk(NodeKind::Const(v), span)
            }
        })
    }

    fn exprs(&mut self, items: &[Sexpr]) -> R<Vec<Node>> {
        items.iter().map(|i| self.expr(i)).collect()
    }

    fn sym(&mut self, s: &Sexpr, what: &str) -> R<Sym> {
        match s.as_symbol() {
            Some(name) => Ok(self.m.intern(name)),
            None => Err(syntax(
                s.span,
                format!("expected {what}"),
                "this should be a symbol",
            )),
        }
    }

    fn list(&mut self, items: &[Sexpr], span: Span) -> R<Node> {
        let head = &items[0];
        let args = &items[1..];
        if let Some(name) = head.as_symbol() {
            if let Some(node) = self.special(name, args, span)? {
                return Ok(node);
            }
            let sym = self.m.intern(name);
            if let Some(Value::Macro(mac)) = self.m.globals.get(sym) {
                let mac = mac.clone();
                return self.expand(&mac, items, span);
            }
        }
        let func = self.expr(head)?;
        let args = self.exprs(args)?;
        let arg_spans = args.iter().map(|a| a.span).collect();
        Ok(mk(
            NodeKind::Call {
                func: Box::new(func),
                args,
                arg_spans,
            },
            span,
        ))
    }

    fn expand(&mut self, mac: &Rc<super::value::Closure>, items: &[Sexpr], span: Span) -> R<Node> {
        if self.m.expansions >= Limits::EXPANSION_DEPTH {
            return Err(Diagnostic::new(
                "runaway-recursion",
                format!(
                    "macro expansion nested more than {0} deep",
                    Limits::EXPANSION_DEPTH
                ),
            )
            .with_label(span, "expanding this")
            .with_help("a macro probably expands into a call of itself"));
        }
        let mut spans = SpanMap::new();
        let args: Vec<Value> = items[1..]
            .iter()
            .map(|a| datum_to_value(self.m, a, &mut Some(&mut spans)))
            .collect();
        let f = Value::Closure(mac.clone());
        let result = self.m.apply(&f, args, span)?;
        let code = value_to_sexpr(self.m, &result, span, &spans)?;
        drop(result);
        self.m.expansions += 1;
        let node = self.expr(&code);
        self.m.expansions -= 1;
        node
    }

    fn body(&mut self, forms: &[Sexpr]) -> R<Body> {
        self.scopes.push(Vec::new());
        let forms = self.exprs(forms);
        let mut defines = self.scopes.pop().unwrap_or_default();
        defines.sort();
        defines.dedup();
        Ok(Body {
            defines,
            forms: forms?,
        })
    }

    /// Declares a `define`d name in the innermost body; `false` at top level (a global).
    fn declare(&mut self, name: Sym) -> bool {
        match self.scopes.last_mut() {
            Some(scope) => {
                scope.push(name);
                true
            }
            None => false,
        }
    }

    fn special(&mut self, name: &str, args: &[Sexpr], span: Span) -> R<Option<Node>> {
        let kind = match name {
            "quote" => {
                let [datum] = args else {
                    return Err(syntax(span, "`quote` takes one form", "here"));
                };
                NodeKind::Const(datum_to_value(self.m, datum, &mut None))
            }
            "quasiquote" => {
                let [datum] = args else {
                    return Err(syntax(span, "`quasiquote` takes one form", "here"));
                };
                NodeKind::Quasi(Box::new(self.quasi(datum, 1)?))
            }
            "unquote" | "unquote-splicing" => {
                return Err(syntax(
                    span,
                    format!("`{name}` outside a quasiquote"),
                    "not inside a backquoted template",
                ))
            }
            "define" | "defvar" | "defparameter" | "defun" => {
                return self.define(name, args, span).map(Some)
            }
            "set!" | "setf" => {
                let [target, value] = args else {
                    return Err(syntax(
                        span,
                        format!("`{name}` takes a variable and a value"),
                        "here",
                    ));
                };
                let Some(var) = target.as_symbol() else {
                    return Err(syntax(
                        target.span,
                        format!("`{name}` can only assign a variable"),
                        "not a variable name",
                    ));
                };
                let name = self.m.intern(var);
                NodeKind::Set {
                    name,
                    value: Box::new(self.expr(value)?),
                    slot: None,
                }
            }
            "lambda" => {
                let Some((params, body)) = args.split_first() else {
                    return Err(syntax(span, "`lambda` needs a parameter list", "here"));
                };
                NodeKind::Lambda(self.lambda(None, params, body, span.to(params.span))?)
            }
            "let" | "let*" => return self.let_form(name == "let*", args, span).map(Some),
            "if" => {
                let (test, then, other) = match args {
                    [t, a] => (t, a, None),
                    [t, a, b] => (t, a, Some(b)),
                    _ => {
                        return Err(syntax(
                            span,
                            "`if` takes a test, a then-form and an optional else-form",
                            "here",
                        ))
                    }
                };
                NodeKind::If {
                    test: Box::new(self.expr(test)?),
                    then: Box::new(self.expr(then)?),
                    other: match other {
                        Some(o) => Some(Box::new(self.expr(o)?)),
                        None => None,
                    },
                }
            }
            "when" | "unless" => {
                let Some((test, body)) = args.split_first() else {
                    return Err(syntax(span, format!("`{name}` needs a test"), "here"));
                };
                let test = Box::new(self.expr(test)?);
                let body = Box::new(mk(NodeKind::Begin(self.exprs(body)?), span));
                if name == "when" {
                    NodeKind::If {
                        test,
                        then: body,
                        other: None,
                    }
                } else {
                    NodeKind::If {
                        test,
                        then: Box::new(mk(NodeKind::Const(Value::Nil), span)),
                        other: Some(body),
                    }
                }
            }
            "cond" => {
                let mut clauses = Vec::new();
                for c in args {
                    let Some(parts) = c.as_list().filter(|p| !p.is_empty()) else {
                        return Err(syntax(
                            c.span,
                            "a `cond` clause is `(TEST body…)`",
                            "not a clause",
                        ));
                    };
                    let is_else = matches!(parts[0].as_symbol(), Some("else" | "t"))
                        || matches!(parts[0].datum, Datum::Bool(true));
                    let test = if is_else {
                        None
                    } else {
                        Some(self.expr(&parts[0])?)
                    };
                    clauses.push(Clause {
                        test,
                        body: self.exprs(&parts[1..])?,
                    });
                }
                NodeKind::Cond(clauses)
            }
            "case" => {
                let Some((key, clauses)) = args.split_first() else {
                    return Err(syntax(span, "`case` needs a key", "here"));
                };
                let key = Box::new(self.expr(key)?);
                let mut out = Vec::new();
                let mut default = None;
                for c in clauses {
                    let Some((data, body)) = c.as_list().and_then(|p| p.split_first()) else {
                        return Err(syntax(
                            c.span,
                            "a `case` clause is `((DATUM…) body…)`",
                            "not a clause",
                        ));
                    };
                    let body = self.exprs(body)?;
                    match (&data.datum, data.as_symbol()) {
                        (_, Some("else" | "otherwise" | "t")) => default = Some(body),
                        (Datum::List(items), _) => {
                            let vals = items
                                .iter()
                                .map(|d| datum_to_value(self.m, d, &mut None))
                                .collect();
                            out.push((vals, body));
                        }
                        _ => out.push((vec![datum_to_value(self.m, data, &mut None)], body)),
                    }
                }
                NodeKind::Case {
                    key,
                    clauses: out,
                    default,
                }
            }
            "while" => {
                let Some((test, body)) = args.split_first() else {
                    return Err(syntax(span, "`while` is `(while TEST body…)`", "here"));
                };
                NodeKind::While {
                    test: Box::new(self.expr(test)?),
                    body: self.exprs(body)?,
                }
            }
            "and" => NodeKind::And(self.exprs(args)?),
            "or" => NodeKind::Or(self.exprs(args)?),
            "begin" | "progn" | "sequence" => NodeKind::Begin(self.exprs(args)?),
            "dotimes" | "dolist" => return self.loop_form(name, args, span).map(Some),
            "defmacro" => {
                let [name_s, params, body @ ..] = args else {
                    return Err(syntax(
                        span,
                        "`defmacro` is `(defmacro NAME (params…) body…)`",
                        "here",
                    ));
                };
                let name = self.sym(name_s, "the macro's name")?;
                NodeKind::DefMacro(self.lambda(
                    Some(name),
                    params,
                    body,
                    name_s.span.to(params.span),
                )?)
            }
            "define-comm" | "define-mapping" => {
                let [name_s, params, body @ ..] = args else {
                    return Err(syntax(
                        span,
                        format!("`{name}` is `({name} NAME (params…) body…)`"),
                        "here",
                    ));
                };
                let sym = self.sym(name_s, "a name")?;
                let kind = if name == "define-comm" {
                    ClosureKind::Comm
                } else {
                    ClosureKind::Mapping
                };
                let lambda = self.lambda(Some(sym), params, body, name_s.span.to(params.span))?;
                if kind == ClosureKind::Comm && lambda.required.is_empty() {
                    return Err(syntax(
                        params.span,
                        "a communication pattern's first parameter is its source task",
                        "no parameters",
                    )
                    .with_help(format!(
                        "write `(define-comm {} (self …) …)`",
                        self.m.name(sym)
                    )));
                }
                if kind == ClosureKind::Mapping && lambda.required.len() + lambda.optional.len() < 1
                {
                    return Err(syntax(
                        params.span,
                        "a mapping takes `(COORDS LOGICAL PHYSICAL)`",
                        "no parameters",
                    ));
                }
                let local = self.declare(sym);
                NodeKind::DefineProc {
                    lambda,
                    kind,
                    local,
                }
            }
            "iterate" => {
                let Some((count, body)) = args.split_last() else {
                    return Err(
                        syntax(span, "`iterate` is `(iterate s… N)`", "no count given").with_help(
                            "the last argument of `iterate` is the number of repetitions",
                        ),
                    );
                };
                NodeKind::Iterate {
                    body: self.exprs(body)?,
                    count: Box::new(self.expr(count)?),
                }
            }
            "deftask" => {
                let mut names = Vec::new();
                for a in args {
                    names.push((self.sym(a, "a task name")?, a.span));
                }
                NodeKind::Deftask(names)
            }
            "task" => {
                let [arg] = args else {
                    return Err(syntax(span, "`task` takes a name or an id", "here"));
                };
                NodeKind::Task(self.soft(arg)?)
            }
            "defmessage" => {
                let [name_s, size] = args else {
                    return Err(syntax(
                        span,
                        "`defmessage` is `(defmessage NAME SIZE)`",
                        "here",
                    ));
                };
                NodeKind::Defmessage {
                    name: self.sym(name_s, "the message type's name")?,
                    size: Box::new(self.expr(size)?),
                }
            }
            "synchronize" => {
                let [arg] = args else {
                    return Err(syntax(span, "`synchronize` takes one phase", "here"));
                };
                NodeKind::Synchronize(self.soft(arg)?)
            }
            "with-task" => {
                let Some((task, body)) = args.split_first() else {
                    return Err(syntax(
                        span,
                        "`with-task` is `(with-task TASK body…)`",
                        "here",
                    ));
                };
                NodeKind::WithTask {
                    task: Box::new(self.expr(task)?),
                    body: self.exprs(body)?,
                }
            }
            "make-network" => NodeKind::MakeNetwork(self.key_args(args)?),
            "target" => {
                let Some((net, opts)) = args.split_first() else {
                    return Err(syntax(span, "`target` needs a physical network", "here"));
                };
                NodeKind::Target {
                    network: Box::new(self.expr(net)?),
                    options: self.key_args(opts)?,
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(mk(kind, span)))
    }

    fn soft(&mut self, s: &Sexpr) -> R<Soft> {
        Ok(match s.as_symbol() {
            Some(name) => Soft::Name(self.m.intern(name), s.span),
            None => Soft::Expr(Box::new(self.expr(s)?)),
        })
    }

    fn key_args(&mut self, args: &[Sexpr]) -> R<Vec<KeyArg>> {
        let mut out = Vec::new();
        let mut it = args.iter();
        while let Some(k) = it.next() {
            let Datum::Keyword(key) = &k.datum else {
                return Err(syntax(
                    k.span,
                    "expected a keyword such as `:topology`",
                    "not a keyword",
                ));
            };
            let Some(v) = it.next() else {
                return Err(syntax(
                    k.span,
                    format!("`:{key}` has no value"),
                    "missing its value",
                ));
            };
            out.push(KeyArg {
                key: key.clone(),
                key_span: k.span,
                value: self.soft(v)?,
            });
        }
        Ok(out)
    }

    fn define(&mut self, form: &str, args: &[Sexpr], span: Span) -> R<Node> {
        let Some(first) = args.first() else {
            return Err(syntax(span, format!("`{form}` needs a name"), "here"));
        };
        // (define (f params…) body…) / (defun f (params…) body…)
        let (name, value) = match (&first.datum, form) {
            (Datum::List(sig), _) => {
                let Some((fname, params)) = sig.split_first() else {
                    return Err(syntax(first.span, "expected `(NAME params…)`", "empty"));
                };
                let fsym = self.sym(fname, "the procedure's name")?;
                let local = self.declare(fsym);
                let params = Sexpr::new(Datum::List(params.to_vec()), first.span);
                let lambda = self.lambda(Some(fsym), &params, &args[1..], first.span)?;
                let value = mk(NodeKind::Lambda(lambda), span);
                return Ok(mk(
                    NodeKind::Define {
                        name: fsym,
                        value: Box::new(value),
                        local,
                    },
                    span,
                ));
            }
            (_, "defun") => {
                let fsym = self.sym(first, "the procedure's name")?;
                let Some((params, body)) = args[1..].split_first() else {
                    return Err(syntax(
                        span,
                        "`defun` is `(defun NAME (params…) body…)`",
                        "here",
                    ));
                };
                let local = self.declare(fsym);
                let lambda = self.lambda(Some(fsym), params, body, first.span.to(params.span))?;
                let value = mk(NodeKind::Lambda(lambda), span);
                return Ok(mk(
                    NodeKind::Define {
                        name: fsym,
                        value: Box::new(value),
                        local,
                    },
                    span,
                ));
            }
            _ => {
                let sym = self.sym(first, "a name to define")?;
                let value = match &args[1..] {
                    [] => mk(NodeKind::Const(Value::Nil), span),
                    [v] | [v, _] => {
                        // `(defvar x v "doc")` allows a documentation string.
                        let mut node = self.expr(v)?;
                        if let NodeKind::Lambda(l) = &mut node.kind {
                            if l.name.is_none() {
                                if let Some(l) = Rc::get_mut(l) {
                                    l.name = Some(sym);
                                }
                            }
                        }
                        node
                    }
                    _ => {
                        return Err(syntax(
                            span,
                            format!("`{form}` takes a name and one value"),
                            "here",
                        ))
                    }
                };
                (sym, value)
            }
        };
        let local = self.declare(name);
        Ok(mk(
            NodeKind::Define {
                name,
                value: Box::new(value),
                local,
            },
            span,
        ))
    }

    fn lambda(
        &mut self,
        name: Option<Sym>,
        params: &Sexpr,
        body: &[Sexpr],
        span: Span,
    ) -> R<Rc<Lambda>> {
        let items: &[Sexpr] = match &params.datum {
            Datum::List(items) => items,
            Datum::Nil => &[],
            _ => {
                return Err(
                    syntax(params.span, "expected a parameter list", "not a list")
                        .with_help("write `(a b &optional (c 0) &rest more)`"),
                )
            }
        };
        #[derive(PartialEq)]
        enum Mode {
            Required,
            Optional,
            Rest,
        }
        let mut mode = Mode::Required;
        let mut required = Vec::new();
        let mut optional = Vec::new();
        let mut rest = None;
        for p in items {
            match p.as_symbol() {
                Some("&optional") => {
                    mode = Mode::Optional;
                    continue;
                }
                Some("&rest" | "&body") => {
                    mode = Mode::Rest;
                    continue;
                }
                _ => {}
            }
            match mode {
                Mode::Required => required.push(self.sym(p, "a parameter name")?),
                Mode::Optional => match p.as_list() {
                    Some([n, d]) => {
                        let sym = self.sym(n, "a parameter name")?;
                        optional.push((sym, Some(self.expr(d)?)));
                    }
                    Some([n]) => optional.push((self.sym(n, "a parameter name")?, None)),
                    Some(_) => {
                        return Err(syntax(
                            p.span,
                            "an optional parameter is `NAME` or `(NAME DEFAULT)`",
                            "here",
                        ))
                    }
                    None => optional.push((self.sym(p, "a parameter name")?, None)),
                },
                Mode::Rest => {
                    if rest.is_some() {
                        return Err(syntax(
                            p.span,
                            "only one `&rest` parameter is allowed",
                            "extra",
                        ));
                    }
                    rest = Some(self.sym(p, "a parameter name")?);
                }
            }
        }
        if mode == Mode::Rest && rest.is_none() {
            return Err(syntax(
                params.span,
                "`&rest` must be followed by a name",
                "here",
            ));
        }
        let body = self.body(body)?;
        Ok(Rc::new(Lambda {
            name,
            required,
            optional,
            rest,
            body,
            span,
            code: Default::default(),
        }))
    }

    fn let_form(&mut self, sequential: bool, args: &[Sexpr], span: Span) -> R<Node> {
        let Some((first, rest)) = args.split_first() else {
            return Err(syntax(span, "`let` needs a binding list", "here"));
        };
        // Named let: (let loop ((i 0)) body…) is a local recursive procedure called at once.
        if let (Some(lname), false) = (first.as_symbol(), sequential) {
            let Some((bindings, body)) = rest.split_first() else {
                return Err(syntax(span, "named `let` needs a binding list", "here"));
            };
            let (names, inits) = self.bindings(bindings)?;
            let lsym = self.m.intern(lname);
            let params = Sexpr::new(
                Datum::List(names.iter().map(|(_, s)| s.clone()).collect()),
                bindings.span,
            );
            self.scopes.push(vec![lsym]);
            let lambda = self.lambda(Some(lsym), &params, body, span);
            self.scopes.pop();
            let lambda = lambda?;
            let define = mk(
                NodeKind::Define {
                    name: lsym,
                    value: Box::new(mk(NodeKind::Lambda(lambda), span)),
                    local: true,
                },
                span,
            );
            let arg_spans = inits.iter().map(|a| a.span).collect();
            let call = mk(
                NodeKind::Call {
                    func: Box::new(mk(NodeKind::Var(lsym), span)),
                    args: inits,
                    arg_spans,
                },
                span,
            );
            return Ok(mk(
                NodeKind::Let {
                    bindings: Vec::new(),
                    body: Body {
                        defines: vec![lsym],
                        forms: vec![define, call],
                    },
                    sequential: false,
                },
                span,
            ));
        }
        let (names, inits) = self.bindings(first)?;
        let bindings = names.into_iter().map(|(s, _)| s).zip(inits).collect();
        Ok(mk(
            NodeKind::Let {
                bindings,
                body: self.body(rest)?,
                sequential,
            },
            span,
        ))
    }

    /// `((x 1) (y 2) z)`: names (with their source) and initial values (`nil` when omitted).
    fn bindings(&mut self, list: &Sexpr) -> R<Bindings> {
        let items: &[Sexpr] = match &list.datum {
            Datum::List(items) => items,
            Datum::Nil => &[],
            _ => {
                return Err(syntax(
                    list.span,
                    "expected a binding list `((name value) …)`",
                    "not a list",
                ))
            }
        };
        let mut names = Vec::new();
        let mut inits = Vec::new();
        for b in items {
            let (n, init) = match (&b.datum, b.as_list()) {
                (Datum::Symbol(_), _) => (b, None),
                (_, Some([n])) => (n, None),
                (_, Some([n, v])) => (n, Some(v)),
                _ => return Err(syntax(b.span, "a binding is `(name value)`", "here")),
            };
            let sym = self.sym(n, "a variable name")?;
            names.push((sym, n.clone()));
            inits.push(match init {
                Some(v) => self.expr(v)?,
                None => mk(NodeKind::Const(Value::Nil), b.span),
            });
        }
        Ok((names, inits))
    }

    fn loop_form(&mut self, name: &str, args: &[Sexpr], span: Span) -> R<Node> {
        let spec = args.first().and_then(|a| a.as_list());
        let Some(spec) = spec.filter(|s| s.len() == 2 || s.len() == 3) else {
            return Err(syntax(
                span,
                format!(
                    "`{name}` is `({name} (VAR {}) body…)`",
                    if name == "dotimes" { "COUNT" } else { "LIST" }
                ),
                "here",
            ));
        };
        let var = self.sym(&spec[0], "the loop variable")?;
        let over = Box::new(self.expr(&spec[1])?);
        let result = match spec.get(2) {
            Some(r) => Some(Box::new(self.expr(r)?)),
            None => None,
        };
        let body = self.exprs(&args[1..])?;
        let kind = if name == "dotimes" {
            NodeKind::Dotimes {
                var,
                count: over,
                result,
                body,
            }
        } else {
            NodeKind::Dolist {
                var,
                list: over,
                result,
                body,
            }
        };
        Ok(mk(kind, span))
    }

    /// A quasiquote template at nesting `depth` (1 = the outermost backquote).
    fn quasi(&mut self, s: &Sexpr, depth: usize) -> R<Quasi> {
        let Some(items) = s.as_list().filter(|i| !i.is_empty()) else {
            return Ok(Quasi::Const(datum_to_value(self.m, s, &mut None)));
        };
        let head = items[0].as_symbol();
        if items.len() == 2 {
            match head {
                Some("unquote") if depth == 1 => return Ok(Quasi::Unquote(self.expr(&items[1])?)),
                // Inside a list it is caught below, as one of the list's items.
                Some("unquote-splicing") if depth == 1 => {
                    return Err(syntax(
                        s.span,
                        "`,@` splices a list into the list around it, but here it has none",
                        "not inside a list template",
                    )
                    .with_help("write it among a list's items, e.g. `(a ,@xs b)`, or use `,` to insert the value itself"));
                }
                Some("unquote") | Some("unquote-splicing") => {
                    return self.quasi_wrap(items, depth - 1);
                }
                Some("quasiquote") => return self.quasi_wrap(items, depth + 1),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for item in items {
            if let Some([h, x]) = item.as_list() {
                if h.as_symbol() == Some("unquote-splicing") && depth == 1 {
                    out.push(QuasiItem::Splice(self.expr(x)?));
                    continue;
                }
            }
            out.push(QuasiItem::One(self.quasi(item, depth)?));
        }
        Ok(Quasi::List(out))
    }

    /// `(unquote x)` / `(quasiquote x)` kept as data, with `x` processed at the new depth.
    fn quasi_wrap(&mut self, items: &[Sexpr], depth: usize) -> R<Quasi> {
        let head = datum_to_value(self.m, &items[0], &mut None);
        let inner = self.quasi(&items[1], depth)?;
        Ok(Quasi::List(vec![
            QuasiItem::One(Quasi::Const(head)),
            QuasiItem::One(inner),
        ]))
    }
}
