//! Evaluation with proper tail calls: a call in tail position is returned to the caller's loop as
//! `Flow::Tail` instead of recursing (a trampoline), so tail recursion runs in constant Rust stack.
//! Non-tail calls recurse; their depth is counted against the budget, and the Rust stack grows on
//! the heap when it runs low (`stacker`), so deep recursion ends in a `runaway-recursion`
//! diagnostic, never in a stack overflow.

use std::rc::Rc;

use super::ast::{Body, Clause, Lambda, Node, NodeKind, Quasi, QuasiItem};
use super::builtins;
use super::builtins::Op;
use super::code::Outcome;
use super::env::{share, Env};
use super::machine::{closest, type_error, Machine, R};
use super::symbol::Sym;
use super::value::{Closure, ClosureKind, Value};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Room left on the Rust stack below which a new segment is allocated, and its size.
pub(super) const RED_ZONE: usize = 128 * 1024;
pub(super) const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// The stack each top-level form is evaluated on (reserved, not resident): about 1 KB a level
/// of non-tail calls in a release build, so the default depth budget's recursion fits with room
/// to spare.
pub(crate) const EVAL_STACK: usize = 64 * 1024 * 1024;

/// Nesting levels of `eval` between two looks at the room left on the Rust stack: a few hundred
/// bytes each, far less than [`RED_ZONE`] together. Unoptimised, a level's frames take some
/// 20 KB (every inlined helper keeps its own locals), so a debug build looks at every level.
pub(super) const STACK_CHECK_EVERY: usize = if cfg!(debug_assertions) { 1 } else { 8 };

/// Builtin calls with at most this many arguments pass them in a buffer on the Rust stack.
pub(super) const INLINE_ARGS: usize = 4;

/// Lets go of an argument a builtin made in place has read: the caller forgets the argument
/// buffer, so anything it owns must go here.
#[inline(always)]
pub(super) fn release(v: &mut Value) {
    if v.owns_something() {
        drop(std::mem::take(v));
    }
}

/// Element `n` of a list (`nil` past its end), as `nth` and `cadr` read it; `None` when `l` is not
/// a list, for the builtin to report.
#[inline]
fn element(l: &Value, n: usize) -> Option<Value> {
    match l {
        Value::Pair(_) | Value::Nil => Some(l.iter().nth(n).map_or(Value::Nil, |v| share(&v))),
        _ => None,
    }
}

/// A builtin of one argument made in place on its argument, borrowed where it lies (a variable's
/// slot, a buffer): the list accessors and the predicates. `None` sends the call to the builtin
/// itself, which gives the same answer or the error it always did.
#[inline(always)]
pub(super) fn fast_one(op: Op, x: &Value) -> Option<Value> {
    Some(match op {
        Op::Car => match x {
            Value::Pair(c) => share(&c.car()),
            Value::Nil => Value::Nil,
            _ => return None,
        },
        Op::Cdr => match x {
            Value::Pair(c) => share(&c.cdr()),
            Value::Nil => Value::Nil,
            _ => return None,
        },
        Op::Cddr => match x {
            Value::Pair(c) => c.cdr().pair().map_or(Value::Nil, |d| share(&d.cdr())),
            Value::Nil => Value::Nil,
            _ => return None,
        },
        Op::Cadr => element(x, 1)?,
        Op::Caddr => element(x, 2)?,
        Op::Length => match x {
            Value::Pair(_) | Value::Nil => Value::Int(i64::try_from(x.list_len()?).ok()?),
            _ => return None,
        },
        Op::NullP => Value::Bool(matches!(x, Value::Nil)),
        Op::PairP => Value::Bool(matches!(x, Value::Pair(_))),
        Op::Not => Value::Bool(!x.is_true()),
        _ => return None,
    })
}

/// Whether a builtin of one argument, borrowed where it lies, answers true: the predicates
/// without a value made for their answer, anything else as [`fast_one`] makes it.
#[inline(always)]
pub(super) fn holds(op: Op, x: &Value) -> Option<bool> {
    match op {
        Op::NullP => Some(matches!(x, Value::Nil)),
        Op::PairP => Some(matches!(x, Value::Pair(_))),
        Op::Not => Some(!x.is_true()),
        _ => fast_one(op, x).map(|v| v.is_true()),
    }
}

/// A builtin of two integers made in place; `None` where the builtin itself must answer (another
/// builtin, or an overflow: the checked operations fail exactly where the builtin's do).
#[inline(always)]
pub(super) fn fast_ints(op: Op, x: i64, y: i64) -> Option<Value> {
    Some(match op {
        Op::Add => Value::Int(x.checked_add(y)?),
        Op::Sub => Value::Int(x.checked_sub(y)?),
        Op::Mul => Value::Int(x.checked_mul(y)?),
        Op::Modulo => {
            // As `numeric::modulo`: the sign of the divisor.
            let r = x.checked_rem(y)?;
            Value::Int(if r != 0 && (r < 0) != (y < 0) {
                r + y
            } else {
                r
            })
        }
        Op::NumEq => Value::Bool(x == y),
        Op::Lt => Value::Bool(x < y),
        Op::Gt => Value::Bool(x > y),
        Op::Le => Value::Bool(x <= y),
        Op::Ge => Value::Bool(x >= y),
        _ => return None,
    })
}

/// The builtins made in place on their common arguments: consing moves the evaluated values into
/// the cells (no count taken and given back), integer arithmetic and comparison, the list
/// accessors and the predicates skip the table call. `None` sends the call to the builtin
/// itself, which gives the same answer or the error it always did (each case below answers only
/// where the builtin answers the same).
#[inline(always)]
pub(super) fn fast_builtin(op: Op, vals: &mut [Value]) -> Option<Value> {
    use std::mem::take;
    Some(match (op, vals) {
        (_, [x]) => {
            let v = fast_one(op, x)?;
            release(x);
            v
        }
        (Op::Nth, [Value::Int(n), l]) if *n >= 0 => {
            let v = element(l, *n as usize)?;
            release(l);
            v
        }
        (Op::ListRef, [l, Value::Int(n)]) if *n >= 0 => {
            let v = element(l, *n as usize)?;
            release(l);
            v
        }
        (Op::EqP, [a, b]) => {
            let v = a.is_eq(b);
            release(a);
            release(b);
            Value::Bool(v)
        }
        (Op::Cons, [car, cdr]) => Value::cons(take(car), take(cdr)),
        (Op::List, vals) => vals
            .iter_mut()
            .rev()
            .fold(Value::Nil, |acc, v| Value::cons(take(v), acc)),
        (_, [Value::Int(x), Value::Int(y)]) => fast_ints(op, *x, *y)?,
        _ => return None,
    })
}

/// What evaluating a form in tail position produced.
pub enum Flow {
    Value(Value),
    /// Call this closure with these arguments (from this call site) in place of the caller.
    Tail(Rc<Closure>, Vec<Value>, Span),
    /// Run this closure's body in this frame, its parameters already bound (a call whose
    /// arguments fit the parameters exactly), in place of the caller.
    Bound(Rc<Closure>, Env, Span),
}

/// What a form that passes on a tail position (`cond`, `and`, `or`) leaves to do: evaluate
/// this form in its place, or answer this value.
enum Next<'a> {
    Node(&'a Node),
    Value(Value),
}

/// How a closure's frame is made: from evaluated arguments, or already bound.
pub(super) enum Entry {
    Args(Vec<Value>),
    Frame(Env),
    /// The arguments on the machine's value stack, from this index to its top (a call of a
    /// procedure whose locals live there: see [`super::code`]).
    Stack(usize),
}

impl Machine {
    /// Evaluates a form (not in tail position).
    pub fn eval(&mut self, node: &Node, env: &Env) -> R<Value> {
        // Leaves (about half of all nodes evaluated) neither recurse nor need the stack check.
        match &node.kind {
            NodeKind::Const(v) => {
                self.step(&node.span)?;
                return Ok(share(v));
            }
            NodeKind::Local(sym, slot) => {
                self.step(&node.span)?;
                return match env.get_at(*slot, *sym) {
                    Some(v) => Ok(v),
                    None => self.lookup(*sym, env, node.span),
                };
            }
            NodeKind::Global(sym) => {
                self.step(&node.span)?;
                return self.lookup_global(*sym, env, node.span);
            }
            NodeKind::Var(sym) => {
                self.step(&node.span)?;
                return self.lookup(*sym, env, node.span);
            }
            _ => {}
        }
        // Nested forms recurse; the room left on the stack is looked at every few levels, which
        // is well inside the red zone.
        self.nesting += 1;
        let r = if self.nesting.is_multiple_of(STACK_CHECK_EVERY) {
            self.eval_growing(node, env)
        } else {
            self.eval_nested(node, env)
        };
        self.nesting -= 1;
        r
    }

    /// [`Machine::eval_nested`] once the room left on the stack has been looked at (as
    /// [`Machine::call_builtin_growing`], out of line for the frame of `eval`).
    #[inline(never)]
    fn eval_growing(&mut self, node: &Node, env: &Env) -> R<Value> {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.eval_nested(node, env))
    }

    /// The builtin a call names globally when it can be made in place by
    /// [`Machine::call_builtin_inline`] (at most [`INLINE_ARGS`] arguments): most calls
    /// (arithmetic, `cons`, `car`). The one test every path that makes such calls (`eval`, an
    /// argument, a form in tail position) asks; each then takes the call's and the head's steps,
    /// in that order, before the call.
    #[inline(always)]
    fn global_builtin(&self, func: &Node, args: &[Node]) -> Option<&'static builtins::BuiltinDef> {
        match (&func.kind, args.len() <= INLINE_ARGS) {
            (NodeKind::Global(sym), true) => match self.globals.get(*sym) {
                Some(&Value::Builtin(b)) => Some(b),
                _ => None,
            },
            _ => None,
        }
    }

    /// Inlined into [`Machine::eval`] (and the closure that grows the stack): as a function of
    /// its own, it was one frame more on the Rust stack for each level of a recursion.
    /// The procedure a call names globally when its arguments fit its parameters exactly
    /// ([`Machine::binds_directly`]).
    #[inline(always)]
    fn global_direct(&self, func: &Node, args: &[Node]) -> Option<Rc<Closure>> {
        match &func.kind {
            NodeKind::Global(sym) => match self.globals.get(*sym) {
                Some(Value::Closure(c)) if Self::binds_directly(c, args.len()) => Some(c.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The frame of a call of `c` whose arguments fit its parameters exactly: each argument,
    /// evaluated in order with its steps, goes straight into a pooled frame, so the call
    /// allocates nothing.
    #[inline(always)]
    fn bind_direct(&mut self, c: &Closure, args: &[Node], env: &Env) -> R<Env> {
        let frame = self.frames.extend(&c.env, args.len());
        for (&p, a) in c.lambda.required.iter().zip(args) {
            let v = self.operand(a, env)?;
            self.bind(&frame, p, v);
        }
        Ok(frame)
    }

    #[inline(always)]
    fn eval_nested(&mut self, node: &Node, env: &Env) -> R<Value> {
        // A call of a global builtin (arithmetic, `cons`, `list`: most calls) is made here,
        // without the detour through `eval_flow`'s tail-call result.
        if let NodeKind::Call {
            func,
            args,
            arg_spans,
        } = &node.kind
        {
            if let Some(b) = self.global_builtin(func, args) {
                self.step2(&node.span, &func.span)?;
                return self.call_builtin_inline(b, args, arg_spans, node.span, env);
            }
            // A procedure named globally whose parameters the arguments fit (most calls of a
            // procedure not in tail position): bound and run here, with the steps `eval_flow`
            // takes, without the detour through its tail-call result.
            if let Some(c) = self.global_direct(func, args) {
                self.step2(&node.span, &func.span)?;
                let frame = self.bind_direct(&c, args, env)?;
                return self.enter_here(c, Entry::Frame(frame), node.span);
            }
        }
        match self.eval_flow(node, env)? {
            Flow::Value(v) => Ok(v),
            Flow::Tail(c, args, span) => self.enter_here(c, Entry::Args(args), span),
            Flow::Bound(c, frame, span) => self.enter_here(c, Entry::Frame(frame), span),
        }
    }

    /// Calls a builtin with at most [`INLINE_ARGS`] arguments, evaluated into a buffer on the
    /// Rust stack, so the call allocates nothing.
    #[inline(never)]
    fn call_builtin_inline(
        &mut self,
        b: &'static builtins::BuiltinDef,
        args: &[Node],
        arg_spans: &[Span],
        span: Span,
        env: &Env,
    ) -> R<Value> {
        match args {
            [a] => {
                // A variable's value is read where it lies: no count taken and given back.
                if let NodeKind::Local(sym, slot) = &a.kind {
                    if let Some(v) = env.with_at(*slot, *sym, |x| fast_one(b.op, x)).flatten() {
                        self.step(&a.span)?;
                        return Ok(v);
                    }
                }
                let mut vals = [self.operand(a, env)?];
                if let Some(v) = fast_builtin(b.op, &mut vals) {
                    std::mem::forget(vals);
                    return Ok(v);
                }
                return builtins::call(self, b, &vals, span, arg_spans);
            }
            [a, c] => {
                let x = self.operand(a, env)?;
                // An integer and an integer variable or constant: no value is built for either.
                if let Value::Int(i) = x {
                    if let Some(v) = self.leaf_int(c, env).and_then(|j| fast_ints(b.op, i, j)) {
                        self.step(&c.span)?;
                        return Ok(v);
                    }
                }
                let mut vals = [x, self.operand(c, env)?];
                if let Some(v) = fast_builtin(b.op, &mut vals) {
                    std::mem::forget(vals);
                    return Ok(v);
                }
                return builtins::call(self, b, &vals, span, arg_spans);
            }
            _ => {}
        }
        self.call_builtin_buffered(b, args, arg_spans, span, env)
    }

    /// [`Machine::call_builtin_inline`] of no argument or of three or four, their values in a
    /// buffer on the Rust stack. Out of line: its buffer made the frame of every builtin call
    /// 64 bytes larger, and a recursion through a builtin's argument (`(+ (car l) (sum (cdr
    /// l)))`) carries that frame at every level.
    #[inline(never)]
    fn call_builtin_buffered(
        &mut self,
        b: &'static builtins::BuiltinDef,
        args: &[Node],
        arg_spans: &[Span],
        span: Span,
        env: &Env,
    ) -> R<Value> {
        let mut vals: [Value; INLINE_ARGS] = Default::default();
        for (slot, a) in vals.iter_mut().zip(args) {
            // The slot holds `Nil`, which owns nothing: forgetting it saves a call of the
            // out-of-line drop per argument.
            std::mem::forget(std::mem::replace(slot, self.operand(a, env)?));
        }
        let n = args.len();
        if let Some(v) = fast_builtin(b.op, &mut vals[..n]) {
            // What a builtin made in place leaves nothing to drop: consing moved every argument
            // out, and arithmetic took only integers. Returned at once, the value is not held
            // through a drop loop (spilled as two words and reloaded as one piece, a stall).
            std::mem::forget(vals);
            return Ok(v);
        }
        let r = builtins::call(self, b, &vals[..n], span, arg_spans);
        // Only the filled slots can hold anything to drop; the rest are `Nil`. Dropping the
        // array as a whole would call the out-of-line drop of a value once per slot.
        for v in &mut vals[..n] {
            if v.owns_something() {
                drop(std::mem::take(v));
            }
        }
        std::mem::forget(vals);
        r
    }

    /// [`Machine::call_builtin_inline`] once the room left on the stack has been looked at
    /// (growing it if it runs low). Out of line: the closure `stacker` runs and its result took
    /// room in the frame of every function that makes nested builtin calls.
    #[inline(never)]
    fn call_builtin_growing(
        &mut self,
        b: &'static builtins::BuiltinDef,
        args: &[Node],
        arg_spans: &[Span],
        span: Span,
        env: &Env,
    ) -> R<Value> {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            self.call_builtin_inline(b, args, arg_spans, span, env)
        })
    }

    /// Evaluates an argument: a variable or a constant (most arguments) here, without the call
    /// of [`Machine::eval`], with the same step and the same answer.
    #[inline(always)]
    fn operand(&mut self, a: &Node, env: &Env) -> R<Value> {
        match &a.kind {
            NodeKind::Local(sym, slot) => {
                self.step(&a.span)?;
                match env.get_at(*slot, *sym) {
                    Some(v) => Ok(v),
                    None => self.lookup(*sym, env, a.span),
                }
            }
            NodeKind::Const(v) => {
                self.step(&a.span)?;
                Ok(share(v))
            }
            // A builtin call nested in a builtin call (`(cadr (car l))`) or a procedure's argument
            // (`(loop (- n 1))`) is made here: one function's frame instead of three.
            NodeKind::Call {
                func,
                args,
                arg_spans,
            } => {
                if let Some(b) = self.global_builtin(func, args) {
                    self.step2(&a.span, &func.span)?;
                    self.nesting += 1;
                    let r = if self.nesting.is_multiple_of(STACK_CHECK_EVERY) {
                        self.call_builtin_growing(b, args, arg_spans, a.span, env)
                    } else {
                        self.call_builtin_inline(b, args, arg_spans, a.span, env)
                    };
                    self.nesting -= 1;
                    return r;
                }
                self.eval(a, env)
            }
            _ => self.eval(a, env),
        }
    }

    /// Whether a test (of `if`, `cond`, `while`) holds. A predicate of a variable (`(null? l)`,
    /// `(pair? t)`) or a comparison of integer variables and constants (`(= n 0)`) is answered
    /// where the values lie, with no value made for the answer; the same steps are taken, in the
    /// same order, as evaluating the test.
    #[inline(never)]
    fn test(&mut self, t: &Node, env: &Env) -> R<bool> {
        if let NodeKind::Call { func, args, .. } = &t.kind {
            if let NodeKind::Global(sym) = &func.kind {
                if let Some(&Value::Builtin(b)) = self.globals.get(*sym) {
                    match args.as_slice() {
                        [a] => {
                            if let NodeKind::Local(s, slot) = &a.kind {
                                let op = b.op;
                                let v = env.with_at(*slot, *s, |x| holds(op, x));
                                if let Some(Some(hit)) = v {
                                    self.step3(&t.span, &func.span, &a.span)?;
                                    return Ok(hit);
                                }
                            }
                        }
                        [a, c] => {
                            let v = self.leaf_int(a, env).and_then(|i| {
                                self.leaf_int(c, env).and_then(|j| fast_ints(b.op, i, j))
                            });
                            if let Some(v) = v {
                                self.step4(&t.span, &func.span, &a.span, &c.span)?;
                                return Ok(v.is_true());
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(self.operand(t, env)?.is_true())
    }

    /// The integer a variable or a constant argument holds, read where it lies (its step still to
    /// be taken); `None` for anything else.
    #[inline(always)]
    fn leaf_int(&self, a: &Node, env: &Env) -> Option<i64> {
        match &a.kind {
            NodeKind::Local(sym, slot) => env
                .with_at(*slot, *sym, |v| match v {
                    Value::Int(i) => Some(*i),
                    _ => None,
                })
                .flatten(),
            NodeKind::Const(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// Applies any procedure to evaluated arguments (used by builtins such as `map`, and by
    /// macro expansion and mappings).
    pub fn apply(&mut self, f: &Value, args: Vec<Value>, span: Span) -> R<Value> {
        match f {
            Value::Builtin(b) => builtins::call(self, b, &args, span, &[]),
            Value::Closure(c) => {
                let c = c.clone();
                match c.kind {
                    ClosureKind::Comm => self.call_comm(c, args, span),
                    _ => self.call_closure(c, args, span),
                }
            }
            other => Err(self.not_callable(other, span)),
        }
    }

    pub(super) fn not_callable(&self, v: &Value, span: Span) -> Diagnostic {
        let mut d = type_error(span, "a procedure to call", v, self.show(v));
        if let Value::Macro(_) = v {
            d = d
                .with_help("a macro can only be used as the head of a form, not passed as a value");
        }
        d
    }

    /// A non-tail call of a closure: counts depth, then runs it (and its tail calls) to the end.
    pub fn call_closure(&mut self, c: Rc<Closure>, args: Vec<Value>, span: Span) -> R<Value> {
        self.enter(c, Entry::Args(args), span)
    }

    /// [`Machine::call_closure`], the frame made either way. A recursion through builtins
    /// (`map`, `apply`) may nest calls without nesting `eval`, so the room left on the stack is
    /// looked at here every few levels, as `eval` does.
    pub(super) fn enter(&mut self, c: Rc<Closure>, entry: Entry, span: Span) -> R<Value> {
        self.nesting += 1;
        let r = if self.nesting.is_multiple_of(STACK_CHECK_EVERY) {
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.enter_here(c, entry, span))
        } else {
            self.enter_here(c, entry, span)
        };
        self.nesting -= 1;
        r
    }

    /// [`Machine::enter`] on the stack as it is: a call `eval` makes, which has looked at the
    /// room left itself (a level of the evaluator's recursion takes about 1 KB, and it looks
    /// every few levels, far inside [`RED_ZONE`]). Without a second look here, the procedure's
    /// run needs one frame of its own on the Rust stack, not two.
    #[inline(never)]
    pub(super) fn enter_here(&mut self, c: Rc<Closure>, entry: Entry, span: Span) -> R<Value> {
        if self.depth >= self.budget.depth {
            return Err(self.runaway_recursion(span));
        }
        self.depth += 1;
        let name = c.name();
        let r = self.run_closure(c, entry, span);
        self.depth -= 1;
        r.map_err(|d| self.add_call_site(d, name, span))
    }

    #[cold]
    #[inline(never)]
    pub(super) fn runaway_recursion(&self, span: Span) -> Diagnostic {
        Diagnostic::new(
            "runaway-recursion",
            format!(
                "runaway recursion: calls nested more than {} deep",
                self.budget.depth
            ),
        )
        .with_label(span, "this call went over the depth limit")
        .with_help(
            "make the recursive call in tail position (the last thing the procedure does), or \
             raise the depth budget if the recursion really is this deep (`--max-depth` on the \
             command line, `Limits::depth` when embedding)",
        )
    }

    /// As an error leaves a procedure, shows where it was called from (the innermost few calls;
    /// not for runaway errors, whose calls are all alike).
    pub(super) fn add_call_site(
        &self,
        mut d: Diagnostic,
        name: Option<Sym>,
        span: Span,
    ) -> Diagnostic {
        const MAX_LABELS: usize = 4;
        let runaway = matches!(d.code.as_str(), "runaway-recursion" | "budget" | "arity");
        if !runaway && d.labels.len() < MAX_LABELS && d.labels.iter().all(|l| l.span != span) {
            let what = match name {
                Some(n) => format!("in this call of `{}`", self.name(n)),
                None => "in this call".to_string(),
            };
            d = d.with_label(span, what);
        }
        d
    }

    /// A `define-comm` pattern: its first argument is the task in whose context the body runs.
    pub(super) fn call_comm(&mut self, c: Rc<Closure>, args: Vec<Value>, span: Span) -> R<Value> {
        let task = match args.first() {
            Some(Value::Task(t)) => *t,
            Some(Value::Int(i)) => self.comm.task_numbered(*i, span)?,
            Some(other) => {
                let name = c
                    .name()
                    .map(|n| self.name(n).to_string())
                    .unwrap_or_default();
                return Err(type_error(
                    span,
                    "a task as the first argument",
                    other,
                    self.show(other),
                )
                .with_help(format!(
                    "`{name}` is a communication pattern: call it as `({name} TASK args…)`"
                )));
            }
            None => {
                return Err(self.arity_error(&c.lambda, 0, span));
            }
        };
        self.ctx.push(task);
        let r = self.call_closure(c, args, span);
        self.ctx.pop();
        r
    }

    /// Inlined into [`Machine::enter_here`]: as a function of its own, it was one frame more on
    /// the Rust stack for each level of a recursion.
    #[inline(always)]
    pub(super) fn run_closure(
        &mut self,
        mut c: Rc<Closure>,
        mut entry: Entry,
        mut span: Span,
    ) -> R<Value> {
        loop {
            let r = if c.lambda.compiled(&self.globals).is_flat() {
                let base = self.flat_entry(&c, entry, span)?;
                self.run_flat_loop(c, base)
            } else {
                let env = match entry {
                    Entry::Args(args) => self.bind_args(&c, args, span)?,
                    Entry::Frame(env) => env,
                    Entry::Stack(from) => {
                        let args = self.stack_args(from);
                        self.bind_args(&c, args, span)?
                    }
                };
                let r = self.run_body(&c.lambda, &env);
                // The call is over, even by an error: its frame serves the next one unless a
                // closure captured it.
                self.frames.give_back(env);
                r
            };
            (c, entry, span) = match self.outcome(r)? {
                Outcome::Value(v) => return Ok(v),
                Outcome::Tail(next, entry, next_span) => (next, entry, next_span),
            };
        }
    }

    /// Whether a call of `c` with `n` arguments can bind them straight into its frame: a
    /// procedure (not a communication pattern, whose first argument sets the task context) of
    /// exactly `n` required parameters, so no arity error or default can arise.
    #[inline]
    pub(super) fn binds_directly(c: &Closure, n: usize) -> bool {
        let l = &c.lambda;
        c.kind != ClosureKind::Comm
            && l.required.len() == n
            && l.optional.is_empty()
            && l.rest.is_none()
    }

    pub fn arity_error(&self, l: &Lambda, got: usize, span: Span) -> Diagnostic {
        let name = l
            .name
            .map(|n| format!("`{}`", self.name(n)))
            .unwrap_or_else(|| "this procedure".to_string());
        Diagnostic::new(
            "arity",
            format!(
                "{name} takes {}, but {got} {} given",
                l.arity_text(),
                if got == 1 { "was" } else { "were" }
            ),
        )
        .with_label(
            span,
            format!("called with {got} argument{}", super::ast::plural(got)),
        )
        .with_label(l.span, "defined here")
    }

    /// Out of line: inlined, its locals made the frame of `run_closure`, which every level of a
    /// recursion carries, twice as large.
    #[inline(never)]
    fn bind_args(&mut self, c: &Closure, args: Vec<Value>, span: Span) -> R<Env> {
        let l = &c.lambda;
        let n = args.len();
        let max = l.required.len() + l.optional.len();
        if n < l.required.len() || (l.rest.is_none() && n > max) {
            return Err(self.arity_error(l, n, span));
        }
        let env = self
            .frames
            .extend(&c.env, max + usize::from(l.rest.is_some()));
        let mut it = args.into_iter();
        for &p in &l.required {
            self.bind(&env, p, it.next().unwrap_or(Value::Nil));
        }
        for (p, default) in &l.optional {
            let v = match it.next() {
                Some(v) => v,
                None => match default {
                    // Defaults see the parameters bound before them.
                    Some(d) => match self.eval(d, &env) {
                        Ok(v) => v,
                        Err(e) => {
                            self.frames.give_back(env);
                            return Err(e);
                        }
                    },
                    None => Value::Nil,
                },
            };
            self.bind(&env, *p, v);
        }
        if let Some(r) = l.rest {
            self.bind(&env, r, Value::list(it.collect::<Vec<_>>()));
        }
        Ok(env)
    }

    /// Binds a body's internal defines, runs all but the last form, and returns the last in tail
    /// position.
    ///
    /// Inlined, with the rare body that has `define`s out of line: each call of a procedure
    /// passed through it and [`Machine::eval_seq_flow`], two frames more on the Rust stack for
    /// every level of a recursion.
    #[inline(always)]
    fn eval_body_flow(&mut self, body: &Body, env: &Env) -> R<Flow> {
        if body.defines.is_empty() {
            return self.eval_seq_flow(&body.forms, env);
        }
        self.eval_body_with_defines(body, env)
    }

    #[inline(never)]
    fn eval_body_with_defines(&mut self, body: &Body, env: &Env) -> R<Flow> {
        let env = self.frames.extend(env, body.defines.len());
        for &d in &body.defines {
            self.bind(&env, d, Value::Nil);
        }
        let r = self.eval_seq_flow(&body.forms, &env);
        self.frames.give_back(env);
        r
    }

    #[inline(always)]
    fn eval_seq_flow(&mut self, forms: &[Node], env: &Env) -> R<Flow> {
        match self.seq_init(forms, env)? {
            Some(last) => self.eval_flow(last, env),
            None => Ok(Flow::Value(Value::Nil)),
        }
    }

    pub fn eval_seq(&mut self, forms: &[Node], env: &Env) -> R<Value> {
        let mut last = Value::Nil;
        for f in forms {
            last = self.eval(f, env)?;
        }
        Ok(last)
    }

    /// Binds a local variable in the innermost frame of `env`. Every local binding is made here,
    /// so the machine knows which names have ever been bound locally. Always inlined: passed to
    /// a call, the value was written to memory as two words and read back as one 16-byte piece,
    /// which the store buffer cannot forward (a stall on every argument bound).
    #[inline(always)]
    pub(super) fn bind(&mut self, env: &Env, sym: Sym, value: Value) {
        // The value is stored first, while it is still in registers: marked first, it was
        // spilled around the marking's possible call and reloaded as one piece (a stall).
        env.push(sym, value);
        self.locals.mark(sym);
    }

    #[inline]
    pub(super) fn lookup(&self, sym: Sym, env: &Env, span: Span) -> R<Value> {
        // A name never bound locally (`+`, `cons`, a global procedure) cannot be in any frame:
        // it goes straight to its global slot instead of walking every enclosing scope.
        if self.locals.may_hold(sym) {
            if let Some(v) = env.get(sym) {
                return Ok(v);
            }
        }
        if let Some(v) = self.globals.get(sym) {
            return Ok(v.clone());
        }
        Err(self.unbound(sym, env, span))
    }

    /// A name no enclosing frame binds lexically: its global slot. (Should a frame bind it after
    /// all, the lookup by name still finds it.)
    #[inline]
    pub(super) fn lookup_global(&self, sym: Sym, env: &Env, span: Span) -> R<Value> {
        match self.globals.get(sym) {
            Some(v) => Ok(share(v)),
            None => self.lookup(sym, env, span),
        }
    }

    pub fn unbound(&self, sym: Sym, env: &Env, span: Span) -> Diagnostic {
        let name = self.name(sym);
        let mut names: Vec<&str> = env.names().into_iter().map(|s| self.name(s)).collect();
        names.extend(self.globals.bound().map(|s| self.name(s)));
        names.extend(super::SPECIAL_FORMS.iter().copied());
        let mut d = Diagnostic::new("unbound", format!("unbound variable `{name}`"))
            .with_label(span, "not defined");
        if let Some(s) = closest(name, names.into_iter()) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else {
            d = d.with_help(format!(
                "define it first, e.g. `(define {name} …)`, or quote it (`'{name}`) to mean the symbol itself"
            ));
        }
        d
    }

    /// Evaluates a form; a call in tail position comes back as `Flow::Tail`.
    ///
    /// A form in tail position inside this one (the branch `if` takes, the last form of a
    /// `begin`, of the clause `cond` takes, of `and` and `or`) is evaluated by this same loop,
    /// not by a nested call: a level of recursion through such forms used to take a frame of
    /// this function for each of them (some 370 bytes), and a recursion thousands of calls deep
    /// spent as much time moving its Rust stack through the cache as evaluating.
    pub fn eval_flow(&mut self, node: &Node, env: &Env) -> R<Flow> {
        let mut node = node;
        loop {
            self.step(&node.span)?;
            let v = match &node.kind {
                NodeKind::Const(v) => share(v),
                NodeKind::Local(sym, slot) => match env.get_at(*slot, *sym) {
                    Some(v) => v,
                    None => self.lookup(*sym, env, node.span)?,
                },
                NodeKind::Global(sym) => self.lookup_global(*sym, env, node.span)?,
                NodeKind::Var(sym) => self.lookup(*sym, env, node.span)?,
                NodeKind::Call {
                    func,
                    args,
                    arg_spans,
                } => {
                    // Most calls are of global builtins with a few arguments (arithmetic, `cons`,
                    // `car`): the procedure is read in place, and the arguments live on the Rust
                    // stack, so such a call allocates nothing.
                    if let Some(b) = self.global_builtin(func, args) {
                        self.step(&func.span)?;
                        return self
                            .call_builtin_inline(b, args, arg_spans, node.span, env)
                            .map(Flow::Value);
                    }
                    let f = match &func.kind {
                        // A procedure named globally (most calls of a procedure) is read here,
                        // as `eval` would read it.
                        NodeKind::Global(sym) => {
                            self.step(&func.span)?;
                            self.lookup_global(*sym, env, func.span)?
                        }
                        _ => self.eval(func, env)?,
                    };
                    // A procedure whose parameters the arguments fit exactly: each argument goes
                    // straight into its frame (a pooled one), so the call allocates nothing. The
                    // arguments are evaluated in the same order, with the same steps.
                    let f = match f {
                        Value::Closure(c) if Self::binds_directly(&c, args.len()) => {
                            let frame = self.bind_direct(&c, args, env)?;
                            return Ok(Flow::Bound(c, frame, node.span));
                        }
                        f => f,
                    };
                    return self.call_value(f, node, func.span, args, arg_spans, env);
                }
                NodeKind::If { test, then, other } => {
                    if self.test(test, env)? {
                        node = then;
                        continue;
                    }
                    match other {
                        Some(o) => {
                            node = o;
                            continue;
                        }
                        None => Value::Nil,
                    }
                }
                NodeKind::Begin(forms) => match self.seq_init(forms, env)? {
                    Some(last) => {
                        node = last;
                        continue;
                    }
                    None => Value::Nil,
                },
                NodeKind::Cond(clauses) => match self.cond_clause(clauses, env)? {
                    Next::Node(n) => {
                        node = n;
                        continue;
                    }
                    Next::Value(v) => v,
                },
                NodeKind::And(forms) => match self.and_or(forms, env, false)? {
                    Next::Node(n) => {
                        node = n;
                        continue;
                    }
                    Next::Value(v) => v,
                },
                NodeKind::Or(forms) => match self.and_or(forms, env, true)? {
                    Next::Node(n) => {
                        node = n;
                        continue;
                    }
                    Next::Value(v) => v,
                },
                NodeKind::Set { name, value, slot } => {
                    let v = self.eval(value, env)?;
                    self.effects += 1;
                    let assigned = slot.is_some_and(|slot| env.set_at(slot, *name, &v))
                        || env.set(*name, v.clone());
                    if !assigned {
                        if !self.globals.is_bound(*name) {
                            return Err(self.unbound(*name, env, node.span).with_note(
                                "`set!` changes an existing variable; use `define` to create one",
                            ));
                        }
                        self.globals.set(*name, v.clone());
                    }
                    v
                }
                _ => return self.eval_form(node, env),
            };
            return Ok(Flow::Value(v));
        }
    }

    /// Evaluates all forms of a sequence but the last, which it returns for its caller to
    /// evaluate in tail position; `None` for no forms.
    #[inline(always)]
    fn seq_init<'a>(&mut self, forms: &'a [Node], env: &Env) -> R<Option<&'a Node>> {
        let Some((last, init)) = forms.split_last() else {
            return Ok(None);
        };
        for f in init {
            self.eval(f, env)?;
        }
        Ok(Some(last))
    }

    /// `cond`: the form to evaluate in tail position (the last of the clause taken, its other
    /// forms evaluated), or its value (a clause without a body answers its test's value; no
    /// clause taken, `nil`).
    #[inline(never)]
    fn cond_clause<'a>(&mut self, clauses: &'a [Clause], env: &Env) -> R<Next<'a>> {
        for c in clauses {
            let hit = match &c.test {
                None => Value::Bool(true),
                // A clause with a body needs only whether its test holds.
                Some(t) if !c.body.is_empty() => {
                    if self.test(t, env)? {
                        return self.seq_next(&c.body, env);
                    }
                    continue;
                }
                Some(t) => self.eval(t, env)?,
            };
            if hit.is_true() {
                if c.body.is_empty() {
                    return Ok(Next::Value(hit));
                }
                return self.seq_next(&c.body, env);
            }
        }
        Ok(Next::Value(Value::Nil))
    }

    /// A sequence as [`Machine::seq_init`] leaves it: its last form, or `nil` for none.
    #[inline]
    fn seq_next<'a>(&mut self, forms: &'a [Node], env: &Env) -> R<Next<'a>> {
        Ok(match self.seq_init(forms, env)? {
            Some(last) => Next::Node(last),
            None => Next::Value(Value::Nil),
        })
    }

    /// `and` (`or` when `or`): the first value that decides it, or the last form, for its
    /// caller to evaluate in tail position (`#t` for an empty `and`, `#f` for an empty `or`).
    #[inline(never)]
    fn and_or<'a>(&mut self, forms: &'a [Node], env: &Env, or: bool) -> R<Next<'a>> {
        let Some((last, init)) = forms.split_last() else {
            return Ok(Next::Value(Value::Bool(!or)));
        };
        for f in init {
            let v = self.eval(f, env)?;
            if v.is_true() == or {
                return Ok(Next::Value(v));
            }
        }
        Ok(Next::Node(last))
    }

    /// The calls other than of a procedure whose parameters its arguments fit: a builtin not
    /// named globally, optional or rest parameters, a communication pattern. Kept out of
    /// `eval_flow`, whose stack frame every level of a recursion carries.
    #[inline(never)]
    fn call_value(
        &mut self,
        f: Value,
        node: &Node,
        func_span: Span,
        args: &[Node],
        arg_spans: &[Span],
        env: &Env,
    ) -> R<Flow> {
        if let (Value::Builtin(b), true) = (&f, args.len() <= INLINE_ARGS) {
            let mut vals: [Value; INLINE_ARGS] = Default::default();
            for (slot, a) in vals.iter_mut().zip(args) {
                *slot = self.eval(a, env)?;
            }
            return builtins::call(self, b, &vals[..args.len()], node.span, arg_spans)
                .map(Flow::Value);
        }
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.eval(a, env)?);
        }
        match f {
            Value::Closure(c) if c.kind != ClosureKind::Comm => Ok(Flow::Tail(c, vals, node.span)),
            Value::Closure(c) => self.call_comm(c, vals, node.span).map(Flow::Value),
            Value::Builtin(b) => {
                builtins::call(self, b, &vals, node.span, arg_spans).map(Flow::Value)
            }
            other => Err(self.not_callable(&other, func_span)),
        }
    }

    /// The forms other than constants, variables, calls, `if`, `begin` and `set!`: kept out of
    /// `eval_flow`, whose every local would otherwise be part of the stack frame of each step.
    #[inline(never)]
    pub(super) fn eval_form(&mut self, node: &Node, env: &Env) -> R<Flow> {
        let v = match &node.kind {
            NodeKind::Case {
                key,
                clauses,
                default,
            } => {
                let k = self.eval(key, env)?;
                for (data, body) in clauses {
                    if data.iter().any(|d| d.equal(&k)) {
                        return self.eval_seq_flow(body, env);
                    }
                }
                match default {
                    Some(body) => return self.eval_seq_flow(body, env),
                    None => Value::Nil,
                }
            }
            NodeKind::While { test, body } => {
                while self.test(test, env)? {
                    self.eval_seq(body, env)?;
                }
                Value::Nil
            }
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => {
                let inner = self.frames.extend(env, bindings.len());
                for (name, init) in bindings {
                    let v = if *sequential {
                        self.eval(init, &inner)
                    } else {
                        self.eval(init, env)
                    };
                    match v {
                        Ok(v) => self.bind(&inner, *name, v),
                        Err(e) => {
                            self.frames.give_back(inner);
                            return Err(e);
                        }
                    }
                }
                let r = self.eval_body_flow(body, &inner);
                self.frames.give_back(inner);
                return r;
            }
            NodeKind::Lambda(l) => self.make_closure(l, env, ClosureKind::Lambda),
            NodeKind::Define { name, value, local } => {
                let v = self.eval(value, env)?;
                self.effects += 1;
                self.assign_define(*name, v, *local, env);
                Value::Symbol(*name)
            }
            NodeKind::DefineProc {
                lambda,
                kind,
                local,
            } => {
                let v = self.make_closure(lambda, env, *kind);
                self.effects += 1;
                let name = lambda.name.unwrap_or(self.known.quote);
                self.assign_define(name, v, *local, env);
                Value::Symbol(name)
            }
            NodeKind::DefMacro(l) => {
                self.effects += 1;
                let Value::Closure(c) = self.make_closure(l, env, ClosureKind::Lambda) else {
                    return Ok(Flow::Value(Value::Nil));
                };
                let name = l.name.unwrap_or(self.known.quote);
                self.globals.set(name, Value::Macro(c));
                Value::Symbol(name)
            }
            NodeKind::Dotimes {
                var,
                count,
                result,
                body,
            } => {
                let n = match self.eval(count, env)? {
                    Value::Int(n) => n,
                    other => {
                        return Err(type_error(
                            count.span,
                            "an integer count",
                            &other,
                            self.show(&other),
                        ))
                    }
                };
                let n = n.max(0) as u64;
                self.check_loop("dotimes", n, node.span)?;
                let before = self.steps;
                let mut inner = Env::new();
                for i in 0..n {
                    if !inner.reuse_single(Value::Int(i as i64)) {
                        inner = env.extend(1);
                        self.bind(&inner, *var, Value::Int(i as i64));
                    }
                    self.eval_seq(body, &inner)?;
                    if i == 0 {
                        self.check_rest("dotimes", n, before, node.span)?;
                    }
                }
                match result {
                    Some(r) => {
                        let inner = env.extend(1);
                        self.bind(&inner, *var, Value::Int(n as i64));
                        return self.eval_flow(r, &inner);
                    }
                    None => Value::Nil,
                }
            }
            NodeKind::Dolist {
                var,
                list,
                result,
                body,
            } => {
                let items = self.eval(list, env)?;
                if !items.is_list() {
                    return Err(type_error(list.span, "a list", &items, self.show(&items)));
                }
                let mut inner = Env::new();
                for item in items.iter() {
                    if !inner.reuse_single(item.clone()) {
                        inner = env.extend(1);
                        self.bind(&inner, *var, item.clone());
                    }
                    self.eval_seq(body, &inner)?;
                }
                match result {
                    Some(r) => {
                        let inner = env.extend(1);
                        self.bind(&inner, *var, Value::Nil);
                        return self.eval_flow(r, &inner);
                    }
                    None => Value::Nil,
                }
            }
            NodeKind::Quasi(q) => self.quasi(q, env)?,
            NodeKind::Iterate { .. }
            | NodeKind::Deftask(_)
            | NodeKind::Task(_)
            | NodeKind::Defmessage { .. }
            | NodeKind::Synchronize(_)
            | NodeKind::WithTask { .. } => self.eval_comm_form(node, env)?,
            NodeKind::MakeNetwork(_) | NodeKind::Target { .. } => {
                self.eval_network_form(node, env)?
            }
            NodeKind::Const(_)
            | NodeKind::Var(_)
            | NodeKind::Local(..)
            | NodeKind::Global(_)
            | NodeKind::Call { .. }
            | NodeKind::If { .. }
            | NodeKind::Begin(_)
            | NodeKind::Cond(_)
            | NodeKind::And(_)
            | NodeKind::Or(_)
            | NodeKind::Set { .. } => return self.eval_flow(node, env),
        };
        Ok(Flow::Value(v))
    }

    pub(super) fn make_closure(&self, l: &Rc<Lambda>, env: &Env, kind: ClosureKind) -> Value {
        Value::Closure(Rc::new(Closure {
            lambda: l.clone(),
            env: env.clone(),
            kind,
        }))
    }

    pub(super) fn assign_define(&mut self, name: Sym, v: Value, local: bool, env: &Env) {
        if !(local && env.set(name, v.clone())) {
            self.globals.set(name, v);
        }
    }

    /// A loop that cannot possibly finish within the step budget is refused before it starts.
    pub fn check_loop(&self, form: &str, count: u64, span: Span) -> R<()> {
        if count > self.steps_left() {
            return Err(self.runaway_loop(form, count, 1, span));
        }
        Ok(())
    }

    /// After the first iteration: would the remaining ones, at the same cost, exceed the budget?
    pub fn check_rest(&self, form: &str, count: u64, before: u64, span: Span) -> R<()> {
        let per = self.steps.saturating_sub(before).max(1);
        if per.saturating_mul(count.saturating_sub(1)) > self.steps_left() {
            return Err(self.runaway_loop(form, count, per, span));
        }
        Ok(())
    }

    fn quasi(&mut self, q: &Quasi, env: &Env) -> R<Value> {
        Ok(match q {
            Quasi::Const(v) => v.clone(),
            Quasi::Unquote(n) => self.eval(n, env)?,
            Quasi::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        QuasiItem::One(q) => out.push(self.quasi(q, env)?),
                        QuasiItem::Splice(n) => {
                            let v = self.eval(n, env)?;
                            match v.to_vec() {
                                Some(vs) => out.extend(vs),
                                None => {
                                    return Err(type_error(
                                        n.span,
                                        "a list to splice with `,@`",
                                        &v,
                                        self.show(&v),
                                    ))
                                }
                            }
                        }
                    }
                }
                Value::list(out)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Interpreter, Limits};

    fn run(src: &str) -> String {
        let mut i = Interpreter::new(Limits::default());
        match i.eval_source("t.ttdl", src) {
            Ok(v) => v,
            Err(d) => format!("error: {} / {}", d[0].code, d[0].message),
        }
    }

    /// A builtin made in place answers as the builtin itself does (reached through `apply`,
    /// which always calls the table), on lists, improper lists, atoms and wrong types alike,
    /// errors included.
    #[test]
    fn builtins_made_in_place_answer_as_the_table_does() {
        let ones = [
            "car", "cdr", "first", "rest", "cadr", "second", "caddr", "third", "cddr", "length",
            "null?", "null", "pair?", "consp", "not",
        ];
        let values = [
            "'()",
            "'(1)",
            "'(1 2)",
            "'(1 2 3 4)",
            "'(1 . 2)",
            "'(1 2 . 3)",
            "'((a b) c)",
            "5",
            "\"str\"",
            "'sym",
            "#f",
            "#t",
        ];
        for f in ones {
            for v in values {
                let direct = run(&format!("({f} {v})"));
                let table = run(&format!("(apply {f} (list {v}))"));
                assert_eq!(direct, table, "({f} {v})");
            }
        }
        let twos = [
            "eq?", "eql", "nth", "list-ref", ">", "<=", ">=", "<", "=", "+", "-", "*", "modulo",
        ];
        let pairs = [
            ("0", "'(1 2)"),
            ("1", "'(1 2)"),
            ("5", "'(1 2)"),
            ("-1", "'(1 2)"),
            ("1", "'(1 . 2)"),
            ("'(1 2)", "1"),
            ("'(1 2)", "-1"),
            ("3", "3"),
            ("3", "4"),
            ("4", "3"),
            ("9223372036854775807", "1"),
            ("3", "2.5"),
            ("'a", "'a"),
            ("\"s\"", "\"s\""),
            ("'(1)", "'(1)"),
            ("nil", "nil"),
            ("7", "0"),
        ];
        for f in twos {
            for (a, b) in pairs {
                let direct = run(&format!("({f} {a} {b})"));
                let table = run(&format!("(apply {f} (list {a} {b}))"));
                assert_eq!(direct, table, "({f} {a} {b})");
            }
        }
        assert_eq!(run("(let ((l '(1 2))) (eq? l l))"), "#t");
    }

    /// The builtins made in place take the steps the general call takes: the same programs with
    /// the builtins reached through local names (called through the table) count the same steps
    /// and answer the same.
    #[test]
    fn builtins_made_in_place_take_the_steps_of_the_table() {
        let steps = |src: &str| {
            let mut i = Interpreter::new(Limits::default());
            let out = i
                .eval_source("t.ttdl", src)
                .unwrap_or_else(|d| d[0].message.clone());
            (out, i.machine().steps)
        };
        let body = concat!(
            "(define (walk l n acc)",
            "  (cond ((null? l) (+ acc n))",
            "        ((< (car l) n) (walk (cdr l) (- n 1) (+ (car (cons (car l) acc)) acc)))",
            "        (else (walk (cdr l) (+ n 1) (+ (cadr (cons 1 l)) acc)))))",
            "(define (tree t) (if (pair? t) (+ (tree (car t)) (tree (cdr t))) t))",
            "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))",
            "(define (second l) (+ (car (cdr l)) (cadr (cdr l))))",
            "(list (walk '(5 1 7 3 9) 4 0) (tree (cons (cons 1 2) (cons 3 4))) (count 10)",
            "      (second '(1 2 3))",
            "      (let ((i 0)) (while (< i 5) (set! i (+ i 1))) i))"
        );
        let names = [
            "null?", "<", "car", "cdr", "-", "cons", "+", "cadr", "pair?", "=",
        ];
        let locals: String = names
            .iter()
            .enumerate()
            .map(|(k, n)| format!("(l{k} {n})"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut through_table = body.to_string();
        for (k, n) in names.iter().enumerate() {
            through_table = through_table.replace(&format!("({n} "), &format!("(l{k} "));
        }
        let direct = steps(body);
        let table = steps(&format!("(let ({locals}) {through_table})"));
        assert_eq!(direct.0, "(30 10 10 5 5)");
        assert_eq!(direct.0, table.0);
        // The `let` binding the names costs one step per name and one for the `let`.
        assert_eq!(
            direct.1 + names.len() as u64 + 1,
            table.1,
            "{through_table}"
        );
    }

    /// Steps taken together (a builtin call and its head, a predicate of a variable) still
    /// stop at the very step that crosses the budget, whatever the budget: each run below ends
    /// with one step over it, as steps taken one at a time do.
    #[test]
    fn a_budget_runs_out_at_the_step_that_crosses_it() {
        let src = "(define (one x) (if (pair? x) 1 0)) \
                   (define (walk l acc) (if (null? l) acc \
                   (walk (cdr l) (if (< (car l) 3) (+ acc (one (cons (car (cdr l)) l))) acc)))) \
                   (walk '(1 2 3 4 5) 0)";
        let mut i = Interpreter::new(Limits::default());
        assert_eq!(i.eval_source("t.ttdl", src).unwrap(), "2");
        let total = i.machine().steps;
        for budget in 1..total {
            let mut i = Interpreter::new(Limits {
                steps: budget,
                ..Limits::default()
            });
            let err = i.eval_source("t.ttdl", src).unwrap_err();
            assert_eq!(err[0].code, "budget", "{}", err[0].message);
            assert_eq!(i.machine().steps, budget + 1, "budget {budget}");
        }
    }

    /// A named `let` or an internal `define` binds a closure in the frame it captures: the
    /// cycle is freed once nothing else holds the frame, on every way out of the call (an error
    /// included), and a frame a kept closure still holds lives on until that closure goes.
    #[test]
    fn frames_closing_on_themselves_are_freed() {
        use crate::eval::env::LIVE_FRAMES;
        let mut i = Interpreter::new(Limits::default());
        let live = |i: &Interpreter| {
            LIVE_FRAMES.with(std::cell::Cell::get) - i.machine.frames.pooled() as isize
        };
        let before = live(&i);
        let programs = [
            "(define (f) (define (g) 1) (g)) (f) (f)",
            "(define (count n) (let loop ((i 0)) (if (< i n) (loop (+ i 1)) i))) (count 10)",
            "(define (bad) (define (g) 1) (car 1)) (bad)",
            "(define (bad2) (let* ((g (lambda () 1)) (x (car 1))) x)) (bad2)",
            "(define (even-odd n) (define (ev? k) (if (= k 0) #t (od? (- k 1)))) \
                 (define (od? k) (if (= k 0) #f (ev? (- k 1)))) (ev? n)) (even-odd 7)",
            // Many calls in one form: collected as they go, not only when the form ends.
            "(dotimes (k 5000) (count 3))",
        ];
        for p in programs {
            let _ = i.eval_source("t.ttdl", p);
        }
        assert_eq!(live(&i), before, "every frame of those calls is freed");
        // A closure kept in a global holds its frame, cycle and all, until it is let go.
        i.eval_source(
            "t.ttdl",
            "(define (make) (define (g) 41) (lambda () (+ (g) 1))) (define k (make))",
        )
        .unwrap();
        assert!(live(&i) > before);
        assert_eq!(i.eval_source("t.ttdl", "(k)").unwrap(), "42");
        i.eval_source("t.ttdl", "(define k 0)").unwrap();
        assert_eq!(live(&i), before);
        // Still held when the interpreter goes: freed with it.
        i.eval_source("t.ttdl", "(define k (make))").unwrap();
        drop(i);
        assert_eq!(LIVE_FRAMES.with(std::cell::Cell::get), before);
    }

    /// A recursion through a builtin that nests calls without nesting `eval` (`map` of the
    /// procedure itself, its arguments plain variables) still watches the stack, as deep as the
    /// depth budget lets it go.
    #[test]
    fn recursion_through_builtins_grows_the_stack() {
        assert_eq!(
            run(
                "(define (nest n acc) (if (= n 0) acc (nest (- n 1) (list acc)))) \
                 (define (f l) (map f l)) \
                 (length (f (nest 9000 nil)))"
            ),
            "1"
        );
    }

    /// The forms whose last part is in tail position (`if`, `begin`, `cond`, `and`, `or`),
    /// evaluated by `eval_flow`'s loop, answer as they always did, empty ones included, and
    /// keep a recursion through them proper tail calls.
    #[test]
    fn tail_positions_answer_as_the_forms_do() {
        assert_eq!(
            run(
                "(list (and) (or) (and 1 2) (and #f 2) (or #f 3) (or 4 5) (cond (#f 1) (2)) \
                 (cond (#f 1)) (cond (else)) (cond ((= 1 1) 7 8)) (begin) (begin 1 2) (if #f 1))"
            ),
            "(#t #f 2 #f 3 4 2 nil #t 8 nil 2 nil)"
        );
        assert_eq!(
            run(
                "(define (f n) (cond ((= n 0) 'done) (else (and #t (or #f (begin (f (- n 1))))))))\
                 (f 200000)"
            ),
            "done"
        );
    }

    /// Frames are reused once their call is over, but never one a closure still holds.
    #[test]
    fn reused_frames_never_change_a_captured_one() {
        assert_eq!(
            run("(define (adder n) (lambda (x) (+ x n))) \
                 (define a (adder 1)) (define b (adder 10)) \
                 (define (f x y) (+ x y)) (f 100 200) (f 300 400) \
                 (list (a 1) (b 1))"),
            "(2 11)"
        );
        assert_eq!(
            run(
                "(define (make k) (let ((v (* k 2))) (lambda () (list k v)))) \
                 (define ps (map make '(1 2 3))) (map (lambda (p) (p)) ps)"
            ),
            "((1 2) (2 4) (3 6))"
        );
        // A tail call that passes a closure capturing the caller's frame.
        assert_eq!(
            run(
                "(define (loop i acc) (if (= i 3) (map (lambda (g) (g)) acc) \
                 (loop (+ i 1) (cons (lambda () i) acc)))) (loop 0 nil)"
            ),
            "(2 1 0)"
        );
        // Arity errors still name the procedure.
        assert_eq!(
            run("(define (g a b) a) (g 1)"),
            "error: arity / `g` takes 2 arguments, but 1 was given"
        );
    }
}
