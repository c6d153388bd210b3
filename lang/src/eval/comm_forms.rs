//! The communication forms (Minsky §4.1, SPEC §1.3): the glue between evaluation and the stream
//! hooks of `Comm`. Stream forms always act on the innermost task context, which `define-comm`
//! calls and `with-task` push.

use std::rc::Rc;

use ttdl_ir::traffic::TaskId;

use super::ast::{Node, NodeKind, Soft};
use super::builtins::Args;
use super::env::Env;
use super::machine::{type_error, Machine, R};
use super::value::{MessageType, Value};
use crate::span::Span;

impl Machine {
    /// A bare name where the thesis writes one: its value when bound, else the symbol itself.
    pub fn eval_soft(&mut self, s: &Soft, env: &Env) -> R<Value> {
        self.eval_soft_as(s, env, |_| true)
    }

    /// Like `eval_soft`, but a bound value that `fits` rejects also means the name itself (so
    /// `:topology mesh` still means the kind `mesh` when a variable `mesh` holds a network).
    pub fn eval_soft_as(&mut self, s: &Soft, env: &Env, fits: fn(&Value) -> bool) -> R<Value> {
        match s {
            Soft::Expr(n) => self.eval(n, env),
            Soft::Name(sym, _) => Ok(env
                .get(*sym)
                .or_else(|| self.globals.get(*sym).cloned())
                .filter(fits)
                .unwrap_or(Value::Symbol(*sym))),
        }
    }

    pub fn eval_comm_form(&mut self, node: &Node, env: &Env) -> R<Value> {
        let span = node.span;
        match &node.kind {
            NodeKind::Iterate { body, count } => {
                let n = match self.eval(count, env)? {
                    Value::Int(n) if n >= 0 => n as u64,
                    other => {
                        return Err(type_error(
                            count.span,
                            "a non-negative repetition count",
                            &other,
                            self.show(&other),
                        )
                        .with_help("the last argument of `iterate` is the number of repetitions"))
                    }
                };
                let task = self.ctx.last().copied();
                // A loop that may fold is checked against the budget once it is known not to.
                if !(self.fold && n >= crate::comm::FOLD_MIN && task.is_some()) {
                    self.check_loop("iterate", n, span)?;
                }
                if let Some(t) = task {
                    self.comm.iterate_begin(t, n, span);
                }
                let r = self.iterate_body(body, env, n, task, span);
                if let Some(t) = task {
                    self.comm.iterate_end(t);
                }
                r?;
                Ok(Value::Nil)
            }
            NodeKind::Deftask(names) => {
                let mut last = Value::Nil;
                for (sym, s) in names {
                    let name = self.name(*sym).to_string();
                    let t = self.comm.fresh_task(&name, *s)?;
                    last = Value::Task(t);
                    self.globals.set(*sym, last.clone());
                }
                Ok(last)
            }
            NodeKind::Task(arg) => {
                let v = self.eval_soft_as(arg, env, |v| {
                    matches!(
                        v,
                        Value::Task(_) | Value::Int(_) | Value::Str(_) | Value::Symbol(_)
                    )
                })?;
                self.task_of(&v, arg.span())
            }
            NodeKind::Defmessage { name, size } => {
                let size_v = self.eval(size, env)?;
                let Value::Int(n) = size_v else {
                    return Err(type_error(
                        size.span,
                        "a message size in words",
                        &size_v,
                        self.show(&size_v),
                    ));
                };
                if n < 0 {
                    return Err(type_error(
                        size.span,
                        "a non-negative message size",
                        &size_v,
                        self.show(&size_v),
                    ));
                }
                let v = Value::Message(Rc::new(MessageType {
                    name: self.name(*name).to_string(),
                    size: n as u64,
                }));
                self.globals.set(*name, v.clone());
                Ok(Value::Symbol(*name))
            }
            NodeKind::Synchronize(arg) => {
                let task = self.current_task("synchronize", span)?;
                let v = self.eval_soft_as(arg, env, |v| {
                    matches!(
                        v,
                        Value::Int(_) | Value::Str(_) | Value::Symbol(_) | Value::Keyword(_)
                    )
                })?;
                let phase = match &v {
                    Value::Int(i) => i.to_string(),
                    Value::Symbol(s) | Value::Keyword(s) => self.name(*s).to_string(),
                    Value::Str(s) => s.to_string(),
                    other => {
                        return Err(type_error(
                            arg.span(),
                            "a phase name or number",
                            other,
                            self.show(other),
                        ))
                    }
                };
                self.comm.synchronize(task, &phase, span)?;
                Ok(Value::Nil)
            }
            NodeKind::WithTask { task, body } => {
                let v = self.eval(task, env)?;
                let t = self.task_of(&v, task.span)?;
                let Value::Task(t) = t else {
                    return Ok(Value::Nil);
                };
                self.ctx.push(t);
                let r = self.eval_seq(body, env);
                self.ctx.pop();
                r
            }
            _ => Ok(Value::Nil),
        }
    }

    fn iterate_body(
        &mut self,
        body: &[Node],
        env: &Env,
        n: u64,
        task: Option<TaskId>,
        span: Span,
    ) -> R<()> {
        let before = self.steps;
        // A long outermost `iterate` whose body changes nothing but the communication records
        // the same iterations every time: after `FOLD_AFTER` of them, checked equal, the rest
        // are recorded as a count (`Comm::fold`) instead of being evaluated.
        let foldable =
            self.fold && n >= crate::comm::FOLD_MIN && task.is_some_and(|t| self.comm.outermost(t));
        let mut pure = true;
        for i in 0..n {
            if let Some(t) = task {
                self.comm.iterate_next(t, i);
            }
            let state = (self.effects, self.output.len(), self.comm.task_count());
            let mark = task.map(|t| self.comm.mark(t));
            self.eval_seq(body, env)?;
            if foldable {
                pure &= state == (self.effects, self.output.len(), self.comm.task_count());
                if let (Some(t), Some(mark)) = (task, mark) {
                    self.comm.end_iteration(t, mark);
                }
                if i + 1 == crate::comm::FOLD_AFTER {
                    if let Some(t) = task.filter(|&t| pure && self.comm.iterations_repeat(t)) {
                        self.comm.fold(t, n);
                        return Ok(());
                    }
                    // Not folded: would the remaining iterations, at the same cost, fit?
                    let per = (self.steps.saturating_sub(before) / (i + 1)).max(1);
                    if per.saturating_mul(n - i - 1) > self.steps_left() {
                        return Err(self.runaway_loop("iterate", n, per, span));
                    }
                }
            } else if i == 0 {
                self.check_rest("iterate", n, before, span)?;
            }
        }
        Ok(())
    }

    /// `(task X)`: a task value passes through; an integer is a task id; a name is a task name.
    pub fn task_of(&mut self, v: &Value, span: Span) -> R<Value> {
        let t = match v {
            Value::Task(t) => *t,
            Value::Int(i) => self.comm.task_numbered(*i, span)?,
            Value::Symbol(s) => {
                let name = self.name(*s).to_string();
                self.comm.task_named(&name, span)?
            }
            Value::Str(s) => self.comm.task_named(s, span)?,
            other => {
                return Err(type_error(
                    span,
                    "a task name or id",
                    other,
                    self.show(other),
                ))
            }
        };
        Ok(Value::Task(t))
    }
}

/// A message argument: a `defmessage` type, or an integer (an anonymous message of that size).
fn message(m: &Machine, a: &Args, i: usize) -> R<(u64, Option<Rc<MessageType>>)> {
    match a.get(i) {
        Value::Message(t) => Ok((t.size, Some(t.clone()))),
        Value::Int(n) if *n >= 0 => Ok((*n as u64, None)),
        _ => Err(a
            .type_err(m, i, "a message type or a size in words")
            .with_help("define one with `(defmessage NAME SIZE)`, or give the size as an integer")),
    }
}

fn peer(m: &mut Machine, a: &Args, v: &Value, i: usize) -> R<TaskId> {
    match v {
        Value::Task(t) => Ok(*t),
        Value::Int(id) => m.comm.task_numbered(*id, a.span(i)),
        Value::Nil => Err(a.type_err(m, i, "a task").with_help(
            "`neighbor` gives nil off the edge of a mesh: skip that peer, e.g. \
             `(when peer (write-stream m peer))`, or use a torus",
        )),
        _ => Err(a.type_err(m, i, "a task").with_help(
            "a peer is a task: from `deftask`, `(task NAME)`, `network-tasks` or `neighbor`",
        )),
    }
}

pub fn compute(m: &mut Machine, a: &Args) -> R<Value> {
    let task = m.current_task("compute", a.span)?;
    let cycles = match a.get(0) {
        Value::Int(n) if *n >= 0 => *n as u64,
        Value::Float(f) if *f >= 0.0 && f.is_finite() => f.ceil() as u64,
        _ => return Err(a.type_err(m, 0, "a non-negative number of cycles")),
    };
    m.comm.compute(task, cycles, a.span)?;
    Ok(Value::Nil)
}

pub fn write_stream(m: &mut Machine, a: &Args) -> R<Value> {
    let task = m.current_task("write-stream", a.span)?;
    let (size, label) = message(m, a, 0)?;
    let to = peer(m, a, a.get(1), 1)?;
    m.comm.write(
        task,
        to,
        size,
        label.as_ref().map(|t| t.name.as_str()),
        a.span,
    )?;
    Ok(Value::Nil)
}

pub fn read_stream(m: &mut Machine, a: &Args) -> R<Value> {
    let task = m.current_task("read-stream", a.span)?;
    let (size, label) = message(m, a, 0)?;
    let from = peer(m, a, a.get(1), 1)?;
    m.comm.read(
        task,
        from,
        size,
        label.as_ref().map(|t| t.name.as_str()),
        a.span,
    )?;
    Ok(Value::Nil)
}

/// `(broadcast M P0 P1 …)` or `(broadcast M (list P0 P1 …))`.
pub fn broadcast(m: &mut Machine, a: &Args) -> R<Value> {
    let task = m.current_task("broadcast", a.span)?;
    let (size, label) = message(m, a, 0)?;
    let mut peers = Vec::new();
    for i in 1..a.len() {
        let v = a.get(i).clone();
        match &v {
            Value::Pair(_) | Value::Nil => {
                for p in v.iter() {
                    peers.push(peer(m, a, &p, i)?);
                }
            }
            other => peers.push(peer(m, a, other, i)?),
        }
    }
    m.comm.broadcast(
        task,
        &peers,
        size,
        label.as_ref().map(|t| t.name.as_str()),
        a.span,
    )?;
    Ok(Value::Nil)
}

pub fn current_task(m: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Task(m.current_task("current-task", a.span)?))
}

pub fn taskp(_: &mut Machine, a: &Args) -> R<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Task(_))))
}

pub fn task_name(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        Value::Task(t) => Ok(Value::str(m.comm.task_name(*t).to_string())),
        _ => Err(a.type_err(m, 0, "a task")),
    }
}

pub fn task_id(m: &mut Machine, a: &Args) -> R<Value> {
    match a.get(0) {
        Value::Task(t) => Ok(Value::Int(*t as i64)),
        _ => Err(a.type_err(m, 0, "a task")),
    }
}

pub fn message_size(m: &mut Machine, a: &Args) -> R<Value> {
    let (size, _) = message(m, a, 0)?;
    Ok(Value::Int(size as i64))
}
