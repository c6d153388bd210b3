//! Procedure bodies compiled once into nested Rust closures, so a call runs its body without
//! the tree walk's dispatch on every node.
//!
//! A body is compiled at its procedure's first call, from the resolved tree ([`super::resolve`]):
//! each node becomes one closure that does that node's work and calls its children's closures
//! directly. What the walk decided again at every evaluation is decided once here: whether an
//! argument is a variable (read where it lies, at its resolved slot), a constant or a nested
//! form; whether a call's head is a global name (looked up in its slot, a builtin called with its
//! arguments in a buffer on the Rust stack, a procedure whose parameters the arguments fit bound
//! straight into its frame); whether a test of `if` or `cond` is a predicate of a variable or a
//! comparison of integer leaves, answered without a value made; whether a form is in tail
//! position (its closure returns a [`Flow`], a call there handed back to the caller's loop, so
//! tail calls run in constant Rust stack) or not (its closure returns the value, a call there
//! made at once).
//!
//! Nothing about the values is assumed: a global is read from its slot on each call, so
//! redefining `car` or a procedure is seen at once, and every answer, error, step and span is the
//! walk's ([`super::exec`]): each closure takes its node's step first, in the walk's order, and
//! uses the walk's helpers for builtins made in place, binding, calls and errors. The forms
//! that are rare in procedure bodies (`case`, `while`, `dotimes`, `dolist`, quasiquote, the
//! communication and network forms, `define-comm`, `defmacro`) keep the walk: their closure
//! evaluates a copy of the node. Top-level forms are walked too; a program's loops are in its
//! procedures.
//!
//! Stack: a non-tail procedure call counts its nesting and looks at the room left on the stack
//! every few levels ([`Machine::enter`]); a body nested deeper than [`LEVELS_PER_CHECK`] forms
//! looks at every such level (code may nest up to `Limits::CODE_NESTING` deep).

use std::cell::OnceCell;
use std::rc::Rc;

use super::ast::{Body, Clause, Lambda, Node, NodeKind};
use super::builtins::{self, BuiltinDef, Op};
use super::cons::value_words;
use super::env::{share, Env};
use super::exec::{
    fast_builtin, fast_ints, fast_one, holds, Entry, Flow, INLINE_ARGS, RED_ZONE, STACK_SEGMENT,
};
use super::machine::{Machine, R};
use super::resolve::Slot;
use super::symbol::Sym;
use super::value::{Closure, ClosureKind, Value};
use crate::span::Span;

/// A compiled form: its value (`O` = [`Value`]) or, in tail position, its [`Flow`].
type Code<O> = Box<dyn Fn(&mut Machine, &Env) -> R<O>>;

/// A compiled test of `if` or `cond`: whether it holds.
type Test = Box<dyn Fn(&mut Machine, &Env) -> R<bool>>;

/// Nesting levels of compiled forms within one body between two looks at the room left on the
/// stack (a level is one closure's frame, some tens to a couple of hundred bytes).
const LEVELS_PER_CHECK: usize = 8;

/// A procedure's body, compiled at its first call.
#[derive(Default)]
pub struct Compiled(OnceCell<Code<Flow>>);

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Compiled"
        } else {
            "NotCompiled"
        })
    }
}

impl Lambda {
    /// The body's code, compiled on first use; it returns the body's last form's [`Flow`].
    #[inline]
    pub(super) fn compiled(&self) -> &Code<Flow> {
        self.code
            .0
            .get_or_init(|| Compiler { depth: 0 }.body::<Flow>(&self.body))
    }
}

/// What a compiled form gives back, in or out of tail position.
pub(super) trait Out: Sized + 'static {
    fn value(v: Value) -> Self;
    /// A value or an error. Out of tail position this is the result as it is: mapped, the value
    /// was copied through the stack as two words and read back as one piece (a stall).
    fn from_result(r: R<Value>) -> R<Self>;
    /// A call of `c` whose frame is bound.
    fn bound(m: &mut Machine, c: Rc<Closure>, frame: Env, span: Span) -> R<Self>;
    /// A call of `c` with these arguments (to bind, with their arity checked).
    fn args(m: &mut Machine, c: Rc<Closure>, vals: Vec<Value>, span: Span) -> R<Self>;
    /// A form left to the walk.
    fn walk(m: &mut Machine, node: &Node, env: &Env) -> R<Self>;
}

/// Out of tail position: a call is made at once.
impl Out for Value {
    #[inline(always)]
    fn value(v: Value) -> Self {
        v
    }
    #[inline(always)]
    fn from_result(r: R<Value>) -> R<Self> {
        r
    }
    #[inline(always)]
    fn bound(m: &mut Machine, c: Rc<Closure>, frame: Env, span: Span) -> R<Self> {
        m.enter(c, Entry::Frame(frame), span)
    }
    #[inline(always)]
    fn args(m: &mut Machine, c: Rc<Closure>, vals: Vec<Value>, span: Span) -> R<Self> {
        m.enter(c, Entry::Args(vals), span)
    }
    fn walk(m: &mut Machine, node: &Node, env: &Env) -> R<Self> {
        m.eval(node, env)
    }
}

/// In tail position: a call goes back to the caller's loop.
impl Out for Flow {
    #[inline(always)]
    fn value(v: Value) -> Self {
        Flow::Value(v)
    }
    #[inline(always)]
    fn from_result(r: R<Value>) -> R<Self> {
        r.map(Flow::Value)
    }
    #[inline(always)]
    fn bound(_: &mut Machine, c: Rc<Closure>, frame: Env, span: Span) -> R<Self> {
        Ok(Flow::Bound(c, frame, span))
    }
    #[inline(always)]
    fn args(_: &mut Machine, c: Rc<Closure>, vals: Vec<Value>, span: Span) -> R<Self> {
        Ok(Flow::Tail(c, vals, span))
    }
    fn walk(m: &mut Machine, node: &Node, env: &Env) -> R<Self> {
        // As `eval_flow` takes the forms it does not evaluate itself.
        m.step(&node.span)?;
        m.eval_form(node, env)
    }
}

/// An argument: a variable or a constant (most arguments) read in place, a builtin of a
/// variable or of two integer leaves made in place (`(car l)`, `(- n 1)`), or a compiled form.
enum Operand {
    Local(Sym, Slot, Span),
    Const(Value, Span),
    Apply1(Box<Apply1>),
    Apply2(Box<Apply2>),
    Code(Code<Value>),
}

/// `(F X)`, `F` a global name, `X` a variable: when `F` is a builtin made in place on `X`'s
/// value, it is, with the three steps of the call, its head and `X`; otherwise `code` runs.
struct Apply1 {
    f: Sym,
    x: Sym,
    slot: Slot,
    spans: [Span; 3],
    code: Code<Value>,
}

/// `(F X Y)`, `F` a global name, `X` and `Y` variables or constants: when `F` is integer
/// arithmetic or comparison and both are integers, it is made in place with the four steps of
/// the call, its head, `X` and `Y`; otherwise `code` runs.
struct Apply2 {
    f: Sym,
    x: Operand,
    y: Operand,
    spans: [Span; 2],
    code: Code<Value>,
}

impl Operand {
    /// The argument's value, with its steps (as `Machine::operand`).
    #[inline(always)]
    fn eval(&self, m: &mut Machine, env: &Env) -> R<Value> {
        match self {
            Operand::Local(sym, slot, span) => {
                m.step(span)?;
                match env.get_at(*slot, *sym) {
                    Some(v) => Ok(v),
                    None => m.lookup(*sym, env, *span),
                }
            }
            Operand::Const(v, span) => {
                m.step(span)?;
                Ok(share(v))
            }
            Operand::Apply1(a) => {
                if let Some(&Value::Builtin(b)) = m.globals.get(a.f) {
                    let v = env.at(a.slot, a.x).and_then(|x| fast_one(b.op, &x));
                    if let Some(v) = v {
                        let [s, f, x] = &a.spans;
                        m.step3(s, f, x)?;
                        return Ok(v);
                    }
                }
                (a.code)(m, env)
            }
            Operand::Apply2(a) => {
                if let Some(&Value::Builtin(b)) = m.globals.get(a.f) {
                    if let (Some((i, xs)), Some((j, ys))) = (a.x.int(env), a.y.int(env)) {
                        if let Some(v) = fast_ints(b.op, i, j) {
                            let [s, f] = &a.spans;
                            m.step4(s, f, xs, ys)?;
                            return Ok(v);
                        }
                    }
                }
                (a.code)(m, env)
            }
            Operand::Code(c) => c(m, env),
        }
    }

    /// The integer a variable or constant holds, read where it lies, and the span of its step
    /// (still to be taken); `None` for anything else.
    #[inline(always)]
    fn int(&self, env: &Env) -> Option<(i64, &Span)> {
        match self {
            Operand::Local(sym, slot, span) => env
                .with_at(*slot, *sym, |v| match v {
                    Value::Int(i) => Some((*i, span)),
                    _ => None,
                })
                .flatten(),
            Operand::Const(Value::Int(i), span) => Some((*i, span)),
            _ => None,
        }
    }

    fn is_leaf(&self) -> bool {
        matches!(self, Operand::Local(..) | Operand::Const(..))
    }
}

/// Runs a sequence's forms, the last in the sequence's own position; `nil` for none.
#[inline(always)]
fn run_seq<O: Out>(
    init: &[Code<Value>],
    last: &Option<Code<O>>,
    m: &mut Machine,
    env: &Env,
) -> R<O> {
    for f in init {
        f(m, env)?;
    }
    match last {
        Some(l) => l(m, env),
        None => Ok(O::value(Value::Nil)),
    }
}

/// The frame of a call of `c` whose arguments fit its parameters exactly (as
/// `Machine::bind_direct`): each argument, evaluated in order with its steps, goes straight into
/// a pooled frame.
#[inline(never)]
fn bind(m: &mut Machine, c: &Closure, ops: &[Operand], env: &Env) -> R<Env> {
    let frame = m.frames.extend(&c.env, ops.len());
    for (&p, a) in c.lambda.required.iter().zip(ops) {
        // The value is moved into the frame as its two words, read where it was returned: a
        // move of the whole value read back as one piece the two words just written there.
        let r = a.eval(m, env);
        match r {
            Ok(ref v) => {
                let words = value_words(v);
                std::mem::forget(r);
                // SAFETY: the words of the value just forgotten.
                unsafe { frame.push_words(p, words) };
                m.locals.mark(p);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(frame)
}

/// A call of a builtin with at most [`INLINE_ARGS`] arguments (as
/// `Machine::call_builtin_inline`): a variable's value read where it lies, integers compared and
/// added without values made, the rest in a buffer on the Rust stack.
#[inline(never)]
fn builtin(
    m: &mut Machine,
    b: &'static BuiltinDef,
    ops: &[Operand],
    spans: &[Span],
    span: Span,
    env: &Env,
) -> R<Value> {
    match ops {
        [a] => {
            if let Operand::Local(sym, slot, aspan) = a {
                if let Some(v) = env.with_at(*slot, *sym, |x| fast_one(b.op, x)).flatten() {
                    m.step(aspan)?;
                    return Ok(v);
                }
            }
            let x = a.eval(m, env)?;
            if let Some(v) = fast_one(b.op, &x) {
                if x.owns_something() {
                    drop(x);
                } else {
                    std::mem::forget(x);
                }
                return Ok(v);
            }
            builtins::call(m, b, std::slice::from_ref(&x), span, spans)
        }
        [a, c] => {
            let x = a.eval(m, env)?;
            if let Value::Int(i) = x {
                if let Some((v, cspan)) = c
                    .int(env)
                    .and_then(|(j, s)| fast_ints(b.op, i, j).map(|v| (v, s)))
                {
                    m.step(cspan)?;
                    return Ok(v);
                }
            }
            let y = c.eval(m, env)?;
            // Consing (most two-argument calls that are not arithmetic) moves both values into
            // the cell: gathered into a buffer first, each was copied through the stack.
            if b.op == Op::Cons {
                return Ok(Value::cons(x, y));
            }
            let mut vals = [x, y];
            if let Some(v) = fast_builtin(b.op, &mut vals) {
                std::mem::forget(vals);
                return Ok(v);
            }
            builtins::call(m, b, &vals, span, spans)
        }
        _ => builtin_buffered(m, b, ops, spans, span, env),
    }
}

/// [`builtin`] of no argument or of three or four. Out of line, as its buffer would enlarge
/// every builtin call's frame.
#[inline(never)]
fn builtin_buffered(
    m: &mut Machine,
    b: &'static BuiltinDef,
    ops: &[Operand],
    spans: &[Span],
    span: Span,
    env: &Env,
) -> R<Value> {
    let mut vals: [Value; INLINE_ARGS] = Default::default();
    for (slot, a) in vals.iter_mut().zip(ops) {
        std::mem::forget(std::mem::replace(slot, a.eval(m, env)?));
    }
    let n = ops.len();
    if let Some(v) = fast_builtin(b.op, &mut vals[..n]) {
        std::mem::forget(vals);
        return Ok(v);
    }
    builtins::call(m, b, &vals[..n], span, spans)
}

/// The calls other than of a builtin named globally or of a procedure whose parameters the
/// arguments fit (as `Machine::call_value`): optional and rest parameters, a builtin reached
/// another way, a communication pattern, a value that is no procedure.
#[inline(never)]
fn general<O: Out>(
    m: &mut Machine,
    f: Value,
    span: Span,
    fspan: Span,
    ops: &[Operand],
    spans: &[Span],
    env: &Env,
) -> R<O> {
    if let (Value::Builtin(b), true) = (&f, ops.len() <= INLINE_ARGS) {
        let mut vals: [Value; INLINE_ARGS] = Default::default();
        for (slot, a) in vals.iter_mut().zip(ops) {
            *slot = a.eval(m, env)?;
        }
        return O::from_result(builtins::call(m, b, &vals[..ops.len()], span, spans));
    }
    let mut vals = Vec::with_capacity(ops.len());
    for a in ops {
        vals.push(a.eval(m, env)?);
    }
    match f {
        Value::Closure(c) if c.kind != ClosureKind::Comm => O::args(m, c, vals, span),
        Value::Closure(c) => O::from_result(m.call_comm(c, vals, span)),
        Value::Builtin(b) => O::from_result(builtins::call(m, b, &vals, span, spans)),
        other => Err(m.not_callable(&other, fspan)),
    }
}

/// The compiler of one body; `depth` is the nesting of the form being compiled within it.
struct Compiler {
    depth: usize,
}

/// A `cond` clause's test: `else`, a test of a clause with a body (whether it holds), or of one
/// without (its value is the answer).
enum CondTest {
    Else,
    Holds(Test),
    Value(Code<Value>),
}

struct CondClause<O> {
    test: CondTest,
    init: Vec<Code<Value>>,
    last: Option<Code<O>>,
}

impl Compiler {
    fn body<O: Out>(&mut self, body: &Body) -> Code<O> {
        let (init, last) = self.seq::<O>(&body.forms);
        if body.defines.is_empty() {
            return seq_code(init, last);
        }
        // Its internal `define`s are bound (unassigned) in a frame of their own on entry.
        let defines = body.defines.clone();
        Box::new(move |m, env| {
            let env = m.frames.extend(env, defines.len());
            for &d in &defines {
                m.bind(&env, d, Value::Nil);
            }
            let r = run_seq(&init, &last, m, &env);
            m.frames.give_back(env);
            r
        })
    }

    /// A sequence's forms but the last (out of tail position) and its last (in the sequence's).
    fn seq<O: Out>(&mut self, forms: &[Node]) -> (Vec<Code<Value>>, Option<Code<O>>) {
        match forms.split_last() {
            Some((last, init)) => (
                init.iter().map(|f| self.node::<Value>(f)).collect(),
                Some(self.node::<O>(last)),
            ),
            None => (Vec::new(), None),
        }
    }

    fn node<O: Out>(&mut self, n: &Node) -> Code<O> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
            self.depth += 1;
            let code = self.node_inner::<O>(n);
            let leaf = matches!(
                n.kind,
                NodeKind::Const(_) | NodeKind::Local(..) | NodeKind::Global(_) | NodeKind::Var(_)
            );
            let code = if !leaf && self.depth.is_multiple_of(LEVELS_PER_CHECK) {
                Box::new(move |m: &mut Machine, env: &Env| {
                    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || code(m, env))
                })
            } else {
                code
            };
            self.depth -= 1;
            code
        })
    }

    fn operand(&mut self, a: &Node) -> Operand {
        match &a.kind {
            NodeKind::Local(sym, slot) => Operand::Local(*sym, *slot, a.span),
            NodeKind::Const(v) => Operand::Const(v.clone(), a.span),
            NodeKind::Call { func, args, .. } => {
                let (f, fspan) = match func.kind {
                    NodeKind::Global(f) => (f, func.span),
                    _ => return Operand::Code(self.node::<Value>(a)),
                };
                match args.as_slice() {
                    [x] => match x.kind {
                        NodeKind::Local(xs, slot) => Operand::Apply1(Box::new(Apply1 {
                            f,
                            x: xs,
                            slot,
                            spans: [a.span, fspan, x.span],
                            code: self.node::<Value>(a),
                        })),
                        _ => Operand::Code(self.node::<Value>(a)),
                    },
                    [x, y] => {
                        let (x, y) = (self.operand(x), self.operand(y));
                        if x.is_leaf() && y.is_leaf() {
                            Operand::Apply2(Box::new(Apply2 {
                                f,
                                x,
                                y,
                                spans: [a.span, fspan],
                                code: self.node::<Value>(a),
                            }))
                        } else {
                            Operand::Code(self.node::<Value>(a))
                        }
                    }
                    _ => Operand::Code(self.node::<Value>(a)),
                }
            }
            _ => Operand::Code(self.node::<Value>(a)),
        }
    }

    fn node_inner<O: Out>(&mut self, n: &Node) -> Code<O> {
        let span = n.span;
        match &n.kind {
            NodeKind::Const(v) => {
                let v = v.clone();
                Box::new(move |m, _| {
                    m.step(&span)?;
                    Ok(O::value(share(&v)))
                })
            }
            &NodeKind::Local(sym, slot) => Box::new(move |m, env| {
                m.step(&span)?;
                let v = match env.get_at(slot, sym) {
                    Some(v) => v,
                    None => m.lookup(sym, env, span)?,
                };
                Ok(O::value(v))
            }),
            &NodeKind::Global(sym) => Box::new(move |m, env| {
                m.step(&span)?;
                O::from_result(m.lookup_global(sym, env, span))
            }),
            &NodeKind::Var(sym) => Box::new(move |m, env| {
                m.step(&span)?;
                O::from_result(m.lookup(sym, env, span))
            }),
            NodeKind::Call {
                func,
                args,
                arg_spans,
            } => self.call::<O>(span, func, args, arg_spans),
            NodeKind::If { test, then, other } => {
                let test = self.test(test);
                let then = self.node::<O>(then);
                match other {
                    Some(o) => {
                        let other = self.node::<O>(o);
                        Box::new(move |m, env| {
                            m.step(&span)?;
                            if test(m, env)? {
                                then(m, env)
                            } else {
                                other(m, env)
                            }
                        })
                    }
                    None => Box::new(move |m, env| {
                        m.step(&span)?;
                        if test(m, env)? {
                            then(m, env)
                        } else {
                            Ok(O::value(Value::Nil))
                        }
                    }),
                }
            }
            NodeKind::Begin(forms) => {
                let (init, last) = self.seq::<O>(forms);
                Box::new(move |m, env| {
                    m.step(&span)?;
                    run_seq(&init, &last, m, env)
                })
            }
            NodeKind::Cond(clauses) => self.cond::<O>(span, clauses),
            NodeKind::And(forms) => self.and_or::<O>(span, forms, false),
            NodeKind::Or(forms) => self.and_or::<O>(span, forms, true),
            NodeKind::Set { name, value, slot } => {
                let (name, slot) = (*name, *slot);
                let value = self.node::<Value>(value);
                Box::new(move |m, env| {
                    m.step(&span)?;
                    let v = value(m, env)?;
                    m.effects += 1;
                    let assigned = slot.is_some_and(|slot| env.set_at(slot, name, &v))
                        || env.set(name, v.clone());
                    if !assigned {
                        if !m.globals.is_bound(name) {
                            return Err(m.unbound(name, env, span).with_note(
                                "`set!` changes an existing variable; use `define` to create one",
                            ));
                        }
                        m.globals.set(name, v.clone());
                    }
                    Ok(O::value(v))
                })
            }
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => {
                let sequential = *sequential;
                let names: Vec<Sym> = bindings.iter().map(|(s, _)| *s).collect();
                let inits: Vec<Code<Value>> = bindings
                    .iter()
                    .map(|(_, i)| self.node::<Value>(i))
                    .collect();
                let body = self.body::<O>(body);
                Box::new(move |m, env| {
                    m.step(&span)?;
                    let inner = m.frames.extend(env, names.len());
                    for (&name, init) in names.iter().zip(&inits) {
                        let v = if sequential {
                            init(m, &inner)
                        } else {
                            init(m, env)
                        };
                        match v {
                            Ok(v) => m.bind(&inner, name, v),
                            Err(e) => {
                                m.frames.give_back(inner);
                                return Err(e);
                            }
                        }
                    }
                    let r = body(m, &inner);
                    m.frames.give_back(inner);
                    r
                })
            }
            NodeKind::Lambda(l) => {
                let l = l.clone();
                Box::new(move |m, env| {
                    m.step(&span)?;
                    Ok(O::value(m.make_closure(&l, env, ClosureKind::Lambda)))
                })
            }
            NodeKind::Define { name, value, local } => {
                let (name, local) = (*name, *local);
                let value = self.node::<Value>(value);
                Box::new(move |m, env| {
                    m.step(&span)?;
                    let v = value(m, env)?;
                    m.effects += 1;
                    m.assign_define(name, v, local, env);
                    Ok(O::value(Value::Symbol(name)))
                })
            }
            _ => {
                let node = n.clone();
                Box::new(move |m, env| O::walk(m, &node, env))
            }
        }
    }

    fn call<O: Out>(
        &mut self,
        span: Span,
        func: &Node,
        args: &[Node],
        arg_spans: &[Span],
    ) -> Code<O> {
        let ops: Vec<Operand> = args.iter().map(|a| self.operand(a)).collect();
        let spans: Box<[Span]> = arg_spans.into();
        let fspan = func.span;
        if let NodeKind::Global(sym) = func.kind {
            return match ops.len() {
                1 => match <[Operand; 1]>::try_from(ops) {
                    Ok(ops) => global_call::<O, 1>(span, fspan, sym, ops, spans),
                    Err(ops) => global_call_any::<O>(span, fspan, sym, ops, spans),
                },
                2 => match <[Operand; 2]>::try_from(ops) {
                    Ok(ops) => global_call::<O, 2>(span, fspan, sym, ops, spans),
                    Err(ops) => global_call_any::<O>(span, fspan, sym, ops, spans),
                },
                _ => global_call_any::<O>(span, fspan, sym, ops, spans),
            };
        }
        let head = self.node::<Value>(func);
        Box::new(move |m, env| {
            m.step(&span)?;
            match head(m, env)? {
                Value::Closure(c) if Machine::binds_directly(&c, ops.len()) => {
                    let frame = bind(m, &c, &ops, env)?;
                    O::bound(m, c, frame, span)
                }
                f => general::<O>(m, f, span, fspan, &ops, &spans, env),
            }
        })
    }

    /// Whether a test holds. A predicate of a variable (`(null? l)`) or a comparison of integer
    /// variables and constants (`(= n 0)`) by a builtin named globally is answered where the
    /// values lie, with the steps of evaluating it (as `Machine::test`).
    fn test(&mut self, t: &Node) -> Test {
        if let NodeKind::Call { func, args, .. } = &t.kind {
            if let NodeKind::Global(sym) = func.kind {
                let (tspan, fspan) = (t.span, func.span);
                match args.as_slice() {
                    [a] => {
                        if let NodeKind::Local(s, slot) = a.kind {
                            let aspan = a.span;
                            let general = self.node::<Value>(t);
                            return Box::new(move |m, env| {
                                if let Some(&Value::Builtin(b)) = m.globals.get(sym) {
                                    let op = b.op;
                                    if let Some(Some(hit)) = env.with_at(slot, s, |x| holds(op, x))
                                    {
                                        m.step3(&tspan, &fspan, &aspan)?;
                                        return Ok(hit);
                                    }
                                }
                                Ok(general(m, env)?.is_true())
                            });
                        }
                    }
                    [a, c] => {
                        let (x, y) = (self.operand(a), self.operand(c));
                        if x.is_leaf() && y.is_leaf() {
                            let general = self.node::<Value>(t);
                            return Box::new(move |m, env| {
                                if let Some(&Value::Builtin(b)) = m.globals.get(sym) {
                                    if let (Some((i, xs)), Some((j, ys))) = (x.int(env), y.int(env))
                                    {
                                        if let Some(v) = fast_ints(b.op, i, j) {
                                            m.step4(&tspan, &fspan, xs, ys)?;
                                            return Ok(v.is_true());
                                        }
                                    }
                                }
                                Ok(general(m, env)?.is_true())
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        let code = self.node::<Value>(t);
        Box::new(move |m, env| Ok(code(m, env)?.is_true()))
    }

    /// `cond` (as `Machine::cond_clause`): the clause taken runs its body in `cond`'s position;
    /// a clause without a body answers its test's value; none taken, `nil`.
    fn cond<O: Out>(&mut self, span: Span, clauses: &[Clause]) -> Code<O> {
        let clauses: Vec<CondClause<O>> = clauses
            .iter()
            .map(|c| {
                let test = match &c.test {
                    None => CondTest::Else,
                    Some(t) if !c.body.is_empty() => CondTest::Holds(self.test(t)),
                    Some(t) => CondTest::Value(self.node::<Value>(t)),
                };
                let (init, last) = self.seq::<O>(&c.body);
                CondClause { test, init, last }
            })
            .collect();
        Box::new(move |m, env| {
            m.step(&span)?;
            for c in &clauses {
                let hit = match &c.test {
                    CondTest::Else => Value::Bool(true),
                    CondTest::Holds(t) => {
                        if t(m, env)? {
                            return run_seq(&c.init, &c.last, m, env);
                        }
                        continue;
                    }
                    CondTest::Value(t) => t(m, env)?,
                };
                if hit.is_true() {
                    if c.last.is_none() {
                        return Ok(O::value(hit));
                    }
                    return run_seq(&c.init, &c.last, m, env);
                }
            }
            Ok(O::value(Value::Nil))
        })
    }

    /// `and` (`or` when `or`): the first value that decides it, else the last form in the
    /// form's own position (`#t` for an empty `and`, `#f` for an empty `or`).
    fn and_or<O: Out>(&mut self, span: Span, forms: &[Node], or: bool) -> Code<O> {
        let (init, last) = self.seq::<O>(forms);
        Box::new(move |m, env| {
            m.step(&span)?;
            let Some(last) = &last else {
                return Ok(O::value(Value::Bool(!or)));
            };
            for f in &init {
                let v = f(m, env)?;
                if v.is_true() == or {
                    return Ok(O::value(v));
                }
            }
            last(m, env)
        })
    }
}

/// A sequence's code: its last form alone when there is nothing before it.
fn seq_code<O: Out>(init: Vec<Code<Value>>, last: Option<Code<O>>) -> Code<O> {
    match (init.is_empty(), last) {
        (true, Some(last)) => last,
        (_, last) => Box::new(move |m, env| run_seq(&init, &last, m, env)),
    }
}

/// A call whose head is a global name, with `N` arguments: a builtin is called in place, a
/// procedure whose parameters the arguments fit is bound straight into its frame, anything else
/// goes the general way; each after the call's step and its head's (as `eval` and `eval_flow`).
fn global_call<O: Out, const N: usize>(
    span: Span,
    fspan: Span,
    sym: Sym,
    ops: [Operand; N],
    spans: Box<[Span]>,
) -> Code<O> {
    Box::new(move |m, env| {
        m.step2(&span, &fspan)?;
        match m.globals.get(sym) {
            Some(&Value::Builtin(b)) => O::from_result(builtin(m, b, &ops, &spans, span, env)),
            Some(Value::Closure(c)) if Machine::binds_directly(c, N) => {
                let c = c.clone();
                let frame = bind(m, &c, &ops, env)?;
                O::bound(m, c, frame, span)
            }
            _ => {
                let f = m.lookup_global(sym, env, fspan)?;
                general::<O>(m, f, span, fspan, &ops, &spans, env)
            }
        }
    })
}

/// [`global_call`] of any number of arguments.
fn global_call_any<O: Out>(
    span: Span,
    fspan: Span,
    sym: Sym,
    ops: Vec<Operand>,
    spans: Box<[Span]>,
) -> Code<O> {
    Box::new(move |m, env| {
        m.step2(&span, &fspan)?;
        let n = ops.len();
        match m.globals.get(sym) {
            Some(&Value::Builtin(b)) if n <= INLINE_ARGS => {
                O::from_result(builtin(m, b, &ops, &spans, span, env))
            }
            Some(Value::Closure(c)) if Machine::binds_directly(c, n) => {
                let c = c.clone();
                let frame = bind(m, &c, &ops, env)?;
                O::bound(m, c, frame, span)
            }
            _ => {
                let f = m.lookup_global(sym, env, fspan)?;
                general::<O>(m, f, span, fspan, &ops, &spans, env)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::{Interpreter, Limits};

    fn run(src: &str) -> String {
        let mut i = Interpreter::new(Limits::default());
        match i.eval_source("t.ttdl", src) {
            Ok(v) => v,
            Err(d) => format!(
                "error: {} / {} / {:?}",
                d[0].code, d[0].message, d[0].labels
            ),
        }
    }

    /// In a compiled body, a builtin of a variable, of a constant or of a nested form, in a
    /// test or as an argument, answers (errors included) as the builtin called through the
    /// table does (reached through a parameter, which the compiled code calls the general way).
    #[test]
    fn compiled_builtins_answer_as_the_table_does() {
        let check = |template: &str, f: &str, params: &str, args: &str| {
            // `H` is the head; `G` a parameter the table version receives it in.
            let direct = run(&format!(
                "(define (p G {params}) {}) (p 0 {args})",
                template.replace('H', f)
            ));
            let table = run(&format!(
                "(define (p G {params}) {}) (p {f} {args})",
                template.replace('H', "G")
            ));
            assert_eq!(
                direct.split(" / [").next(),
                table.split(" / [").next(),
                "{template} with {f} {args}"
            );
        };
        let ones = [
            "car", "cdr", "cadr", "caddr", "cddr", "length", "null?", "pair?", "not",
        ];
        let values = [
            "'()", "'(1)", "'(1 2 3)", "'(1 . 2)", "5", "\"s\"", "'sym", "#f",
        ];
        for f in ones {
            for v in values {
                for t in [
                    "(H x)",
                    "(list (H x))",
                    "(if (H x) (H x) (list (H x)))",
                    "(H (car (list x)))",
                    "(cond ((H x) 1) (else 2))",
                ] {
                    check(t, f, "x", v);
                }
                check(&format!("(H {v})"), f, "", "");
            }
        }
        let twos = [
            "eq?", "nth", "list-ref", "<", "=", "+", "-", "*", "modulo", "cons",
        ];
        let pairs = [
            ("1", "'(1 2)"),
            ("'(1 2)", "1"),
            ("3", "4"),
            ("9223372036854775807", "1"),
            ("3", "2.5"),
            ("7", "0"),
            ("'a", "'a"),
        ];
        for f in twos {
            for (a, b) in pairs {
                let args = format!("{a} {b}");
                for t in [
                    "(H x y)",
                    "(list (H x y))",
                    "(if (H x y) (H x y) (list (H y x)))",
                    "(H (car (list x)) y)",
                ] {
                    check(t, f, "x y", &args);
                }
                check(&format!("(H {a} {b})"), f, "", "");
            }
        }
    }

    /// A global redefined after a body was compiled is seen by it: the compiled code reads the
    /// global's slot on each call.
    #[test]
    fn compiled_code_sees_globals_redefined() {
        assert_eq!(
            run("(define (f l) (car l)) (define a (f '(1 2))) \
                 (define (car x) 'mine) (list a (f '(1 2)))"),
            "(1 mine)"
        );
        assert_eq!(
            run("(define (g) 1) (define (f) (g)) (define a (f)) \
                 (define (g) 2) (list a (f))"),
            "(1 2)"
        );
        assert_eq!(
            run("(define (f n) (if (< n 1) 'low 'high)) (define a (f 0)) \
                 (define (< x y) #f) (list a (f 0))"),
            "(low high)"
        );
    }

    /// The forms a body leaves to the walk (`case`, `while`, `dotimes`, `dolist`, quasiquote)
    /// answer from inside a compiled body, with the body's variables.
    #[test]
    fn walked_forms_inside_compiled_bodies() {
        assert_eq!(
            run("(define (f x) (let ((acc nil)) \
                   (dolist (y (list 1 2 3)) (set! acc (cons (* x y) acc))) \
                   (dotimes (i 2) (set! acc (cons i acc))) \
                   (while (> x 0) (set! x (- x 1))) \
                   (list (case x ((0) 'zero) (else 'other)) `(a ,@acc)))) (f 2)"),
            "(zero (a 1 0 6 4 2))"
        );
    }
}
