//! A register bytecode for the procedures whose locals are on the stack, run by one loop with
//! its own call stack.
//!
//! A body that keeps its locals in slots of the value stack ([`super::Stack`]) and is made of
//! the forms list programs are written in (constants, locals, global names, calls, `if`,
//! `cond`, `and`, `or`, `begin`, `let`, `let*`, `set!` of a local) is compiled, at its first
//! call and while the globals are pristine, into a flat array of instructions whose operands
//! are slots of the call's region: its locals, then temporaries. One loop runs it: a non-tail
//! call of another such procedure pushes a return record (the caller's code, where it goes on,
//! its region's base and where the value goes) and goes on in the same loop, a return pops it,
//! a call in tail position moves its arguments down over the caller's region. A TTDL call so
//! costs no Rust frame: the closures cost five, and in a recursion 5,000 deep every return was
//! mispredicted.
//!
//! Everything else about a call is the closures' ([`super`]), and so the walk's: every node's
//! step is taken in the walk's order — the steps of the nodes an instruction stands for are
//! charged together before it acts, one by one where the budget runs out, so it stops at the
//! same step and span; the depth is counted on each record pushed and checked against the
//! budget; an error leaving a procedure gets the note of each call it passes, as the closures'
//! calls add them. A builtin named globally is fixed when compiled (see [`Globals::pristine`]);
//! each such instruction looks at that one flag and, once the globals are not pristine, calls
//! what the name holds (its value taken where the walk would take it: when an argument could
//! run a procedure, an instruction before the arguments keeps it). Calls out of the loop (of a
//! procedure in pooled frames, of a builtin, of a body not compiled here) are made as the
//! closures make them. A body compiled here also keeps its closures, which run it when the
//! globals are no longer pristine.
//!
//! One difference is left, where the globals stop being pristine in the middle of a call: an
//! instruction of a fixed builtin whose arguments are only locals, constants and other fixed
//! builtins reads the name's value when it acts rather than before its arguments; the two
//! differ only if one of those builtins' names was meanwhile redefined as a procedure that
//! assigns the first name.

use std::rc::Rc;

use super::super::ast::{Body, Clause, Lambda, Node, NodeKind};
use super::super::builtins::{self, BuiltinDef, Op as B};
use super::super::cons::Half;
use super::super::env::{Env, Globals};
use super::super::exec::{fast_builtin, fast_ints, fast_one, holds, Entry, INLINE_ARGS};
use super::super::machine::{Machine, R};
use super::super::symbol::Sym;
use super::super::value::{Closure, ClosureKind, Value};
use super::{
    half_raw, local_refs, lookup_global_in, steps_one_by_one, FlatFrame, FlatScope, Raw, Scope,
};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// An operand is a slot of the region (its index), or a constant (`CONST` set: its index in
/// the constants); `MOVE` set, the slot's value is taken out of it (a temporary, or a local read
/// for the last time), not shared.
/// The width of an instruction's fields: an instruction is 16 bytes (compiling fails for a
/// body too large for it).
type W = u16;

const CONST: W = 1 << 15;
const MOVE: W = 1 << 14;
/// `CAR` or `CDR` set, the operand is that half of the local in the slot (`(car l)`), read in
/// place; only an instruction's last operand is one (see [`Compiler::last_operand`]).
const CAR: W = 1 << 13;
const CDR: W = 1 << 12;
const INDEX: W = CDR - 1;

/// Where an instruction's value goes: a slot, or (these three) pushed on the stack (an argument
/// of a call), let go (a form whose value is not used), or returned from the procedure.
const DROP: W = W::MAX - 2;
const RET: W = W::MAX - 1;
const PUSH: W = W::MAX;

/// No slot (a site without a kept head).
const NONE: W = W::MAX;

/// A procedure's body in bytecode.
pub(in crate::eval) struct Bytecode {
    /// Shared with the loop, which holds the running procedure's code in a register.
    code: Rc<[Ins]>,
    consts: Vec<Value>,
    /// The spans of the steps the instructions take, each instruction's in a run.
    spans: Vec<Span>,
    sites: Vec<Site>,
    /// Slots of a call's region: its locals, then its temporaries.
    pub(super) size: W,
}

/// What an instruction needs only off its fast path: the call it stands for.
struct Site {
    /// The global name of its head (for a call whose head is one).
    sym: Sym,
    /// The builtin the name was fixed to when compiled.
    fixed: Option<&'static BuiltinDef>,
    span: Span,
    fspan: Span,
    args: Box<[Span]>,
    /// A slot where the head's value is kept before the arguments are evaluated, or [`NONE`].
    pin: W,
    /// The site of the `car` or `cdr` its instruction reads in place as its last operand, or
    /// [`NONE`].
    half: W,
    /// The locals in scope, for the diagnostic of an unbound name.
    scope: Scope,
}

/// An instruction: what it does, and the steps it takes first (`spans[sp..sp + n]`).
#[derive(Clone, Copy, Debug)]
struct Ins {
    op: Op,
    n: u16,
    sp: u32,
}

const _: () = assert!(std::mem::size_of::<Ins>() == 16);

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Only the steps.
    Nop,
    Const {
        dst: W,
        k: W,
    },
    Mov {
        dst: W,
        a: W,
    },
    /// A global name's value.
    Global {
        dst: W,
        site: W,
    },
    /// `set!` of a local: its slot, the value.
    Set {
        slot: W,
        a: W,
        dst: W,
    },
    /// Lets go of `n` slots from `at` (a `let` that is over).
    Clear {
        at: W,
        n: W,
    },
    Jump {
        to: W,
    },
    /// Jumps unless `a` is true.
    JFalse {
        a: W,
        to: W,
    },
    /// `and`, `or`, a `cond` clause without a body: when `a`'s truth is `when`, `a` is the form's
    /// value (to `dst`, then on to `to`); else it is let go.
    Br {
        a: W,
        dst: W,
        to: W,
        when: bool,
    },
    /// The fixed builtins of one operand: `car`, `cdr`, the others made by `fast_one`.
    Car {
        dst: W,
        a: W,
        site: W,
    },
    Cdr {
        dst: W,
        a: W,
        site: W,
    },
    One {
        dst: W,
        a: W,
        site: W,
    },
    /// Tests of fixed builtins (jump to `to` when false): `null?`, `pair?`, any of one operand,
    /// any of two (integer comparisons made in place).
    TNull {
        a: W,
        to: W,
        site: W,
    },
    TPair {
        a: W,
        to: W,
        site: W,
    },
    TOne {
        a: W,
        to: W,
        site: W,
    },
    TTwo {
        a: W,
        b: W,
        to: W,
        site: W,
    },
    /// The fixed builtins of two operands: `cons`, `+`, `-`, the others made by `fast_ints` and
    /// `fast_builtin`.
    Cons {
        dst: W,
        a: W,
        b: W,
        site: W,
    },
    Add {
        dst: W,
        a: W,
        b: W,
        site: W,
    },
    Sub {
        dst: W,
        a: W,
        b: W,
        site: W,
    },
    Two {
        dst: W,
        a: W,
        b: W,
        site: W,
    },
    /// A fixed builtin of the `argc` values on top of the stack.
    Builtin {
        dst: W,
        argc: W,
        site: W,
    },
    /// Keeps a fixed builtin's head in slot `t` before arguments that could change it.
    Pin {
        t: W,
        site: W,
    },
    /// A global head's value (unbound: the walk's error).
    Head {
        dst: W,
        site: W,
    },
    /// A call of the value in `head` on the `argc` values on top of the stack.
    Call {
        dst: W,
        head: W,
        argc: W,
        site: W,
    },
    /// A call of a global name's value, read when the call is made: for arguments that can
    /// run no procedure, of a name bound when compiled (a global is never unbound), so it
    /// holds the value it held before them.
    CallG {
        dst: W,
        argc: W,
        site: W,
    },
    /// [`Op::CallG`] of one or two operands, pushed by the instruction.
    CallG1 {
        dst: W,
        a: W,
        site: W,
    },
    CallG2 {
        dst: W,
        a: W,
        b: W,
        site: W,
    },
}

// ---------------------------------------------------------------------------------------------
// The compiler.

/// Compiles a procedure's body whose locals go on the stack in `nlocals` slots (as the closures'
/// compiler laid them out); `None` for a body with a form this does not compile, or while the
/// globals are not pristine (the builtins could not be fixed).
pub(super) fn compile(l: &Lambda, globals: &Globals, nlocals: u32) -> Option<Bytecode> {
    if !globals.pristine() || !l.optional.is_empty() || l.rest.is_some() {
        return None;
    }
    let mut c = Compiler {
        code: Vec::new(),
        // Constant 0 is `nil`: the half of `nil`, read in place.
        consts: vec![Value::Nil],
        spans: Vec::new(),
        sites: Vec::new(),
        pending: Vec::new(),
        flat: FlatScope::new(&l.required),
        globals,
        movable: Vec::new(),
        temps: nlocals,
        max: nlocals,
        overflow: false,
    };
    c.body(&l.body, RET)?;
    if c.flat.failed || c.overflow || c.flat.next > nlocals || c.max >= u32::from(INDEX) {
        return None;
    }
    Some(Bytecode {
        code: c.code.into(),
        consts: c.consts,
        spans: c.spans,
        sites: c.sites,
        size: W::try_from(c.max).ok()?,
    })
}

struct Compiler<'g> {
    code: Vec<Ins>,
    consts: Vec<Value>,
    spans: Vec<Span>,
    sites: Vec<Site>,
    /// Steps not yet charged: the next instruction takes them.
    pending: Vec<Span>,
    flat: FlatScope,
    globals: &'g Globals,
    /// As the closures' compiler's: locals read once in a call in tail position.
    movable: Vec<Sym>,
    /// The next free temporary, and the most used.
    temps: u32,
    max: u32,
    /// Set when an index does not fit an instruction's field.
    overflow: bool,
}

type Res<T = ()> = Option<T>;

impl Compiler<'_> {
    fn step(&mut self, s: Span) {
        self.pending.push(s);
    }

    /// `x` as an instruction's field (below `limit`), or the overflow noted.
    fn w(&mut self, x: usize, limit: W) -> W {
        match W::try_from(x) {
            Ok(w) if w < limit => w,
            _ => {
                self.overflow = true;
                0
            }
        }
    }

    fn emit(&mut self, op: Op) -> usize {
        let sp = u32::try_from(self.spans.len()).unwrap_or_else(|_| {
            self.overflow = true;
            0
        });
        let n = self.w(self.pending.len(), W::MAX);
        self.spans.append(&mut self.pending);
        self.code.push(Ins { op, sp, n });
        self.code.len() - 1
    }

    /// Where the next instruction goes, as a jump's target (the steps pending before it are
    /// charged by an instruction of their own, not by those who jump there).
    fn here(&mut self) -> W {
        if !self.pending.is_empty() {
            self.emit(Op::Nop);
        }
        self.w(self.code.len(), W::MAX)
    }

    /// Points the jump at `at` to `to`.
    fn patch(&mut self, at: usize, to: W) {
        match &mut self.code[at].op {
            Op::Jump { to: t }
            | Op::JFalse { to: t, .. }
            | Op::Br { to: t, .. }
            | Op::TNull { to: t, .. }
            | Op::TPair { to: t, .. }
            | Op::TOne { to: t, .. }
            | Op::TTwo { to: t, .. } => *t = to,
            _ => unreachable!("only jumps are patched"),
        }
    }

    fn temp(&mut self) -> W {
        let t = self.w(self.temps as usize, INDEX);
        self.temps += 1;
        self.max = self.max.max(self.temps);
        t
    }

    fn konst(&mut self, v: Value) -> W {
        self.consts.push(v);
        self.w(self.consts.len() - 1, INDEX) | CONST
    }

    fn site(
        &mut self,
        sym: Sym,
        fixed: Option<&'static BuiltinDef>,
        span: Span,
        fspan: Span,
        args: &[Span],
    ) -> W {
        let scope = self.scope();
        self.sites.push(Site {
            sym,
            fixed,
            span,
            fspan,
            args: args.into(),
            pin: NONE,
            half: NONE,
            scope,
        });
        self.w(self.sites.len() - 1, NONE)
    }

    fn scope(&self) -> Scope {
        Some(
            self.flat
                .frames
                .iter()
                .map(|fr| (fr.names[..fr.filled].to_vec(), fr.offset))
                .collect(),
        )
    }

    /// The builtin a global name is fixed to, if one the loop makes in place (the others may
    /// call procedures: `map`, `apply`).
    fn fixed(&self, sym: Sym) -> Option<&'static BuiltinDef> {
        self.globals.fixed_builtin(sym)
    }

    /// Whether evaluating a form can run no procedure while the globals are pristine: locals,
    /// constants, and the builtins made in place of such forms.
    fn quiet(&self, n: &Node) -> bool {
        match &n.kind {
            NodeKind::Const(_) | NodeKind::Local(..) => true,
            NodeKind::Call { func, args, .. } => match func.kind {
                NodeKind::Global(s) => {
                    self.fixed(s).is_some_and(|b| b.op != B::Other)
                        && args.iter().all(|a| self.quiet(a))
                }
                _ => false,
            },
            _ => false,
        }
    }

    fn body(&mut self, body: &Body, dst: W) -> Res {
        if !body.defines.is_empty() {
            return None;
        }
        self.seq(&body.forms, dst)
    }

    fn seq(&mut self, forms: &[Node], dst: W) -> Res {
        let Some((last, init)) = forms.split_last() else {
            let k = self.konst(Value::Nil);
            self.emit(Op::Const { dst, k });
            return Some(());
        };
        for f in init {
            self.expr(f, DROP)?;
        }
        self.expr(last, dst)
    }

    /// An operand for an instruction: a local or a constant read where it lies (its step
    /// pending), or a form evaluated into a temporary.
    fn operand(&mut self, n: &Node) -> Res<W> {
        match &n.kind {
            &NodeKind::Local(sym, slot) => {
                self.step(n.span);
                let i = self.flat.loc(sym, slot)?;
                let i = self.w(i as usize, INDEX);
                Some(if self.movable.contains(&sym) {
                    i | MOVE
                } else {
                    i
                })
            }
            NodeKind::Const(v) => {
                self.step(n.span);
                Some(self.konst(v.clone()))
            }
            _ => {
                let t = self.temp();
                self.expr(n, t)?;
                Some(t | MOVE)
            }
        }
    }

    /// The last operand of the instruction of `site`: `(car X)` or `(cdr X)` of a local,
    /// fixed, is read in place by it (its three steps pending, so taken with the instruction's;
    /// being last, nothing after it is evaluated before it); anything else as [`Self::operand`].
    fn last_operand(&mut self, n: &Node, site: W) -> Res<W> {
        if let NodeKind::Call {
            func,
            args,
            arg_spans,
        } = &n.kind
        {
            if let (&NodeKind::Global(f), [x]) = (&func.kind, args.as_slice()) {
                if let (Some(b), &NodeKind::Local(xs, slot)) = (self.fixed(f), &x.kind) {
                    if matches!(b.op, B::Car | B::Cdr) {
                        if let Some(i) = self.flat.loc(xs, slot) {
                            let i = self.w(i as usize, INDEX);
                            self.step(n.span);
                            self.step(func.span);
                            self.step(x.span);
                            let half = self.site(f, Some(b), n.span, func.span, arg_spans);
                            self.sites[site as usize].half = half;
                            return Some(i | if b.op == B::Car { CAR } else { CDR });
                        }
                    }
                }
            }
        }
        self.operand(n)
    }

    fn expr(&mut self, n: &Node, dst: W) -> Res {
        let span = n.span;
        match &n.kind {
            NodeKind::Const(_) | NodeKind::Local(..) => {
                let a = self.operand(n)?;
                if a & CONST != 0 {
                    self.emit(Op::Const { dst, k: a });
                } else {
                    self.emit(Op::Mov { dst, a });
                }
            }
            &NodeKind::Global(sym) => {
                self.step(span);
                let site = self.site(sym, None, span, span, &[]);
                self.emit(Op::Global { dst, site });
            }
            NodeKind::Call {
                func,
                args,
                arg_spans,
            } if dst == RET => {
                // As the closures' compiler: the locals this call reads once may be moved.
                let mut refs = Vec::new();
                let movable = if local_refs(n, &mut refs) {
                    refs.sort_unstable_by_key(|s: &Sym| s.0);
                    refs.iter()
                        .enumerate()
                        .filter(|&(i, s)| {
                            (i == 0 || refs[i - 1] != *s) && refs.get(i + 1) != Some(s)
                        })
                        .map(|(_, &s)| s)
                        .collect()
                } else {
                    Vec::new()
                };
                let saved = std::mem::replace(&mut self.movable, movable);
                let r = self.call(span, func, args, arg_spans, dst);
                self.movable = saved;
                r?;
            }
            NodeKind::Call {
                func,
                args,
                arg_spans,
            } => self.call(span, func, args, arg_spans, dst)?,
            NodeKind::If { test, then, other } => {
                self.step(span);
                let jf = self.test(test)?;
                self.expr(then, dst)?;
                let j = (dst != RET).then(|| self.emit(Op::Jump { to: 0 }));
                let at = self.here();
                self.patch(jf, at);
                match other {
                    Some(o) => self.expr(o, dst)?,
                    None => {
                        let k = self.konst(Value::Nil);
                        self.emit(Op::Const { dst, k });
                    }
                }
                if let Some(j) = j {
                    let end = self.here();
                    self.patch(j, end);
                }
            }
            NodeKind::Begin(forms) => {
                self.step(span);
                self.seq(forms, dst)?;
            }
            NodeKind::Cond(clauses) => {
                self.step(span);
                self.cond(clauses, dst)?;
            }
            NodeKind::And(forms) => self.and_or(span, forms, false, dst)?,
            NodeKind::Or(forms) => self.and_or(span, forms, true, dst)?,
            NodeKind::Set { name, value, slot } => {
                let slot = self.flat.loc(*name, (*slot)?)?;
                let slot = self.w(slot as usize, INDEX);
                self.step(span);
                let t0 = self.temps;
                let a = self.operand(value)?;
                let a = if a & CONST != 0 {
                    // A constant's value, moved from a temporary as any other.
                    let t = self.temp();
                    self.emit(Op::Const { dst: t, k: a });
                    t | MOVE
                } else if a & MOVE == 0 {
                    let t = self.temp();
                    self.emit(Op::Mov { dst: t, a });
                    t | MOVE
                } else {
                    a
                };
                self.emit(Op::Set { slot, a, dst });
                self.temps = t0;
            }
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => self.let_(span, bindings, body, *sequential, dst)?,
            _ => return None,
        }
        Some(())
    }

    /// `let` and `let*` (as the closures' `flat_let`, whose slots these mirror).
    fn let_(
        &mut self,
        span: Span,
        bindings: &[(Sym, Node)],
        body: &Body,
        sequential: bool,
        dst: W,
    ) -> Res {
        if !body.defines.is_empty() {
            return None;
        }
        self.step(span);
        let names: Vec<Sym> = bindings.iter().map(|(s, _)| *s).collect();
        let len = names.len();
        let offset = self.flat.next;
        self.flat.next = self.flat.next.saturating_add(u32::try_from(len).ok()?);
        let frame = FlatFrame {
            names,
            offset,
            filled: 0,
        };
        if sequential {
            self.flat.frames.push(frame);
            for (i, (_, init)) in bindings.iter().enumerate() {
                if let Some(f) = self.flat.frames.last_mut() {
                    f.filled = i;
                }
                let at = self.w(offset as usize + i, INDEX);
                self.expr(init, at)?;
            }
        } else {
            for (i, (_, init)) in bindings.iter().enumerate() {
                let at = self.w(offset as usize + i, INDEX);
                self.expr(init, at)?;
            }
            self.flat.frames.push(frame);
        }
        if let Some(f) = self.flat.frames.last_mut() {
            f.filled = len;
        }
        self.body(body, dst)?;
        self.flat.frames.pop();
        if dst != RET && len > 0 {
            let at = self.w(offset as usize, INDEX);
            let n = self.w(len, INDEX);
            self.emit(Op::Clear { at, n });
        }
        Some(())
    }

    fn and_or(&mut self, span: Span, forms: &[Node], or: bool, dst: W) -> Res {
        self.step(span);
        let Some((last, init)) = forms.split_last() else {
            let k = self.konst(Value::Bool(!or));
            self.emit(Op::Const { dst, k });
            return Some(());
        };
        let mut exits = Vec::new();
        for f in init {
            let t0 = self.temps;
            let t = self.temp();
            self.expr(f, t)?;
            exits.push(self.emit(Op::Br {
                a: t | MOVE,
                dst,
                to: 0,
                when: or,
            }));
            self.temps = t0;
        }
        self.expr(last, dst)?;
        let end = self.here();
        for e in exits {
            self.patch(e, end);
        }
        Some(())
    }

    fn cond(&mut self, clauses: &[Clause], dst: W) -> Res {
        let mut exits = Vec::new();
        let mut taken = false;
        for c in clauses {
            match &c.test {
                None => {
                    if c.body.is_empty() {
                        let k = self.konst(Value::Bool(true));
                        self.emit(Op::Const { dst, k });
                    } else {
                        self.seq(&c.body, dst)?;
                    }
                    taken = true;
                    break;
                }
                Some(t) if !c.body.is_empty() => {
                    let jf = self.test(t)?;
                    self.seq(&c.body, dst)?;
                    if dst != RET {
                        exits.push(self.emit(Op::Jump { to: 0 }));
                    }
                    let next = self.here();
                    self.patch(jf, next);
                }
                Some(t) => {
                    let t0 = self.temps;
                    let v = self.temp();
                    self.expr(t, v)?;
                    exits.push(self.emit(Op::Br {
                        a: v | MOVE,
                        dst,
                        to: 0,
                        when: true,
                    }));
                    self.temps = t0;
                }
            }
        }
        if !taken {
            let k = self.konst(Value::Nil);
            self.emit(Op::Const { dst, k });
        }
        let end = self.here();
        for e in exits {
            self.patch(e, end);
        }
        Some(())
    }

    /// A test of `if` or `cond`: the jump taken when it does not hold (to be patched).
    fn test(&mut self, t: &Node) -> Res<usize> {
        if let NodeKind::Call {
            func,
            args,
            arg_spans,
        } = &t.kind
        {
            if let NodeKind::Global(sym) = func.kind {
                if let Some(b) = self.fixed(sym) {
                    if b.op != B::Other && matches!(args.len(), 1 | 2) {
                        let t0 = self.temps;
                        self.step(t.span);
                        self.step(func.span);
                        let site = self.site(sym, Some(b), t.span, func.span, arg_spans);
                        self.pin(site, args);
                        let at = match args.as_slice() {
                            [x] => {
                                let a = self.last_operand(x, site)?;
                                self.emit(match b.op {
                                    B::NullP => Op::TNull { a, to: 0, site },
                                    B::PairP => Op::TPair { a, to: 0, site },
                                    _ => Op::TOne { a, to: 0, site },
                                })
                            }
                            [x, y] => {
                                let a = self.operand(x)?;
                                let b = self.operand(y)?;
                                self.emit(Op::TTwo { a, b, to: 0, site })
                            }
                            _ => return None,
                        };
                        self.temps = t0;
                        return Some(at);
                    }
                }
            }
        }
        let t0 = self.temps;
        let v = self.temp();
        self.expr(t, v)?;
        let at = self.emit(Op::JFalse { a: v | MOVE, to: 0 });
        self.temps = t0;
        Some(at)
    }

    /// Keeps a fixed builtin's head before arguments that could run a procedure (see the
    /// module's header).
    fn pin(&mut self, site: W, args: &[Node]) {
        if !args.iter().all(|a| self.quiet(a)) {
            let t = self.temp();
            self.sites[site as usize].pin = t;
            self.emit(Op::Pin { t, site });
        }
    }

    fn call(&mut self, span: Span, func: &Node, args: &[Node], arg_spans: &[Span], dst: W) -> Res {
        let t0 = self.temps;
        self.step(span);
        let argc = self.w(args.len(), INDEX);
        if let NodeKind::Global(sym) = func.kind {
            self.step(func.span);
            if let Some(b) = self.fixed(sym) {
                let site = self.site(sym, Some(b), span, func.span, arg_spans);
                self.pin(site, args);
                match (b.op, args) {
                    (B::Car, [x]) => {
                        let a = self.last_operand(x, site)?;
                        self.emit(Op::Car { dst, a, site });
                    }
                    (B::Cdr, [x]) => {
                        let a = self.last_operand(x, site)?;
                        self.emit(Op::Cdr { dst, a, site });
                    }
                    (
                        B::Cadr | B::Caddr | B::Cddr | B::Length | B::NullP | B::PairP | B::Not,
                        [x],
                    ) => {
                        let a = self.last_operand(x, site)?;
                        self.emit(Op::One { dst, a, site });
                    }
                    (op, [x, y]) if op != B::Other && op != B::List => {
                        let a = self.operand(x)?;
                        let b = self.operand(y)?;
                        self.emit(match op {
                            B::Cons => Op::Cons { dst, a, b, site },
                            B::Add => Op::Add { dst, a, b, site },
                            B::Sub => Op::Sub { dst, a, b, site },
                            _ => Op::Two { dst, a, b, site },
                        });
                    }
                    _ => {
                        for a in args {
                            self.expr(a, PUSH)?;
                        }
                        self.emit(Op::Builtin { dst, argc, site });
                    }
                }
                self.temps = t0;
                return Some(());
            }
            let site = self.site(sym, None, span, func.span, arg_spans);
            if self.globals.is_bound(sym) && args.iter().all(|a| self.quiet(a)) {
                match args {
                    [x] => {
                        let a = self.last_operand(x, site)?;
                        self.emit(Op::CallG1 { dst, a, site });
                    }
                    [x, y] => {
                        let a = self.operand(x)?;
                        let b = self.last_operand(y, site)?;
                        self.emit(Op::CallG2 { dst, a, b, site });
                    }
                    _ => {
                        for a in args {
                            self.expr(a, PUSH)?;
                        }
                        self.emit(Op::CallG { dst, argc, site });
                    }
                }
                self.temps = t0;
                return Some(());
            }
            let head = self.temp();
            self.emit(Op::Head { dst: head, site });
            for a in args {
                self.expr(a, PUSH)?;
            }
            self.emit(Op::Call {
                dst,
                head: head | MOVE,
                argc,
                site,
            });
            self.temps = t0;
            return Some(());
        }
        let site = self.site(Sym(0), None, span, func.span, arg_spans);
        let head = self.temp();
        self.expr(func, head)?;
        for a in args {
            self.expr(a, PUSH)?;
        }
        self.emit(Op::Call {
            dst,
            head: head | MOVE,
            argc,
            site,
        });
        self.temps = t0;
        Some(())
    }
}

// ---------------------------------------------------------------------------------------------
// The loop.

/// A call waiting for its callee: where it goes on (its code, the procedure running there —
/// `None` for the one the loop was entered with —, its region's base, the instruction after
/// the call, where the value goes) and the callee's name and call site for an error's note.
#[derive(Default)]
struct Record {
    bc: Option<Rc<Bytecode>>,
    cur: Option<Rc<Closure>>,
    base: usize,
    pc: u32,
    dst: W,
    site: W,
    name: Option<Sym>,
}

/// The records, a stack that keeps its slots when popped: a record is written field by field
/// into its slot. Built whole and pushed, it was copied in 16-byte pieces read back from the
/// words just written, a stall on every call.
#[derive(Default)]
struct Records {
    slots: Vec<Record>,
    top: usize,
}

impl Records {
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.top == 0
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        bc: Rc<Bytecode>,
        cur: Option<Rc<Closure>>,
        base: usize,
        pc: u32,
        dst: W,
        site: W,
        name: Option<Sym>,
    ) {
        if self.top == self.slots.len() {
            self.slots.push(Record::default());
        }
        let r = &mut self.slots[self.top];
        r.bc = Some(bc);
        r.cur = cur;
        r.base = base;
        r.pc = pc;
        r.dst = dst;
        r.site = site;
        r.name = name;
        self.top += 1;
    }

    /// The record on top, taken: its code, procedure, base, instruction, `dst`, site and
    /// callee's name.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn pop(
        &mut self,
    ) -> Option<(
        Rc<Bytecode>,
        Option<Rc<Closure>>,
        usize,
        u32,
        W,
        W,
        Option<Sym>,
    )> {
        if self.top == 0 {
            return None;
        }
        self.top -= 1;
        let r = &mut self.slots[self.top];
        let bc = r.bc.take()?;
        Some((bc, r.cur.take(), r.base, r.pc, r.dst, r.site, r.name))
    }
}

/// How the loop ends: the value of the procedure it was entered with, an error, or a signal
/// for its caller (a call in tail position it makes, as the closures').
enum Exit {
    Ret(Raw),
    Fail(Diagnostic),
    Signal(Raw),
}

/// What a call made: its value, a frame of the loop entered, or an exit.
enum Made {
    Value(Raw),
    Entered,
    /// The running procedure's value (a call in tail position made out of the loop).
    Ret(Raw),
    Exit(Exit),
}

struct Vm<'e> {
    bc: Rc<Bytecode>,
    cur: Option<Rc<Closure>>,
    env: &'e Env,
    base: usize,
    pc: usize,
    records: Records,
}

/// Lets go of a value (no drop glue run for one that owns nothing).
#[inline(always)]
fn release(v: Value) {
    Raw::of(v).release();
}

#[inline(always)]
fn rd<'a>(vals: &'a [Value], consts: &'a [Value], base: usize, o: W) -> &'a Value {
    if o & CONST != 0 {
        &consts[(o & INDEX) as usize]
    } else {
        &vals[base + (o & INDEX) as usize]
    }
}

/// An operand read in place: a value where it lies, or a half borrowed in its cell.
enum Ref<'a> {
    V(&'a Value),
    H(Half<'a>),
}

impl std::ops::Deref for Ref<'_> {
    type Target = Value;
    #[inline(always)]
    fn deref(&self) -> &Value {
        match self {
            Ref::V(v) => v,
            Ref::H(h) => h,
        }
    }
}

/// An operand read in place, a half of a local included; `None` for a half of a local that is
/// no list (the builtin's error, on the slow path).
#[inline(always)]
fn get<'a>(vals: &'a [Value], consts: &'a [Value], base: usize, o: W) -> Option<Ref<'a>> {
    if o & (CAR | CDR) == 0 {
        return Some(Ref::V(rd(vals, consts, base, o)));
    }
    match &vals[base + (o & INDEX) as usize] {
        Value::Pair(c) => Some(Ref::H(if o & CAR != 0 { c.car() } else { c.cdr() })),
        Value::Nil => Some(Ref::V(&consts[0])),
        _ => None,
    }
}

/// An operand's value as its words, owned: moved out of its slot, or shared.
#[inline(always)]
fn own(m: &mut Machine, consts: &[Value], base: usize, o: W) -> Raw {
    if o & MOVE != 0 {
        m.stack.take_words(base + (o & INDEX) as usize)
    } else {
        Raw::shared(rd(&m.stack.values, consts, base, o))
    }
}

/// An operand's value, owned (off the fast paths).
fn own_value(m: &mut Machine, consts: &[Value], base: usize, o: W) -> Value {
    if o & MOVE != 0 {
        std::mem::take(&mut m.stack.values[base + (o & INDEX) as usize])
    } else {
        rd(&m.stack.values, consts, base, o).clone()
    }
}

/// Lets go of an operand read in place if it was to be moved.
#[inline(always)]
fn done(m: &mut Machine, base: usize, o: W) {
    if o & MOVE != 0 {
        m.stack.take_words(base + (o & INDEX) as usize).release();
    }
}

/// The error a compiled call left in the machine.
fn failure(m: &mut Machine) -> Diagnostic {
    m.pending
        .failure
        .take()
        .unwrap_or_else(|| Diagnostic::new("internal", "an evaluation failed without a diagnostic"))
}

/// A call's words as what it made.
#[inline(always)]
fn made_of(m: &mut Machine, r: Raw) -> Made {
    if r.is_value() {
        Made::Value(r)
    } else {
        Made::Exit(Exit::Fail(failure(m)))
    }
}

/// A result as what it made.
#[inline(always)]
fn made(r: R<Value>) -> Made {
    match r {
        Ok(v) => Made::Value(Raw::of(v)),
        Err(e) => Made::Exit(Exit::Fail(e)),
    }
}

/// A builtin on owned values, made in place where it can be (as the closures' `call_on`).
fn builtin_on(
    m: &mut Machine,
    b: &'static BuiltinDef,
    vals: &mut [Value],
    site: &Site,
) -> R<Value> {
    if let Some(v) = fast_builtin(b.op, vals) {
        return Ok(v);
    }
    let r = builtins::call(m, b, vals, site.span, &site.args);
    for v in vals.iter_mut() {
        release(std::mem::take(v));
    }
    r
}

/// A non-tail call made outside the loop (a test's, once the globals are not pristine).
fn call_out(m: &mut Machine, head: Value, mut vals: Vec<Value>, site: &Site) -> R<Value> {
    match head {
        Value::Closure(c) if c.kind != ClosureKind::Comm => {
            m.enter(c, Entry::Args(vals), site.span)
        }
        Value::Closure(c) => m.call_comm(c, vals, site.span),
        Value::Builtin(b) if vals.len() <= INLINE_ARGS => builtin_on(m, b, &mut vals, site),
        Value::Builtin(b) => builtins::call(m, b, &vals, site.span, &site.args),
        other => Err(m.not_callable(&other, site.fspan)),
    }
}

/// A pooled frame for a call of `c` whose arguments are on the stack from `from`, taken off it.
fn bind_from_stack(m: &mut Machine, c: &Closure, from: usize) -> Env {
    let frame = m.frames.extend(&c.env, c.lambda.required.len());
    for (i, &p) in c.lambda.required.iter().enumerate() {
        let v = std::mem::take(&mut m.stack.values[from + i]);
        frame.push(p, v);
        m.locals.mark(p);
    }
    m.stack.cut_words(from);
    frame
}

/// Makes room for a region of `size` slots from `base`.
#[inline(always)]
fn room(m: &mut Machine, base: usize, size: W) {
    m.stack.grow_nil(base + size as usize);
}

impl Vm<'_> {
    fn env(&self) -> &Env {
        match &self.cur {
            Some(c) => &c.env,
            None => self.env,
        }
    }

    fn site(&self, i: W) -> &Site {
        &self.bc.sites[i as usize]
    }

    /// Runs `c`, compiled here as `bc`, on the `argc` values on top of the stack: a non-tail
    /// call pushes a record of where the value goes (`dst`); one in tail position (`RET`) takes
    /// the running procedure's place in its region.
    #[inline(always)]
    fn enter(
        &mut self,
        m: &mut Machine,
        c: Rc<Closure>,
        bc: Rc<Bytecode>,
        argc: usize,
        dst: W,
        site: W,
    ) -> Made {
        let from = m.stack.values.len() - argc;
        if dst == RET {
            m.stack.move_down(self.base, from);
            room(m, self.base, bc.size);
            self.bc = bc;
            self.cur = Some(c);
            self.pc = 0;
            return Made::Entered;
        }
        if m.depth >= m.budget.depth {
            let span = self.site(site).span;
            return Made::Exit(Exit::Fail(m.runaway_recursion(span)));
        }
        m.depth += 1;
        room(m, from, bc.size);
        let name = c.name();
        let caller = std::mem::replace(&mut self.bc, bc);
        let cur = self.cur.replace(c);
        self.records.push(
            caller,
            cur,
            self.base,
            (self.pc + 1) as u32,
            dst,
            site,
            name,
        );
        self.base = from;
        m.stack.base = from;
        self.pc = 0;
        Made::Entered
    }

    /// The head a fixed builtin's instruction calls once the globals are not pristine: kept
    /// before its arguments, or the name's value.
    fn head_of(&self, m: &mut Machine, site: W) -> Value {
        let s = self.site(site);
        if s.pin != NONE {
            return std::mem::take(&mut m.stack.values[self.base + s.pin as usize]);
        }
        m.globals.get(s.sym).cloned().unwrap_or(Value::Nil)
    }

    /// An operand's value, off the fast paths: a half of a local made by what `car` or `cdr`
    /// is now (its error, for a local that is no list), called out of the loop.
    fn operand_value(&self, m: &mut Machine, o: W, site: W) -> R<Value> {
        if o & (CAR | CDR) == 0 {
            return Ok(own_value(m, &self.bc.consts, self.base, o));
        }
        let x = m.stack.values[self.base + (o & INDEX) as usize].clone();
        let s = self.site(self.site(site).half);
        if m.globals.pristine() {
            let b = s.fixed.expect("a fixed site");
            return builtin_on(m, b, &mut [x], s);
        }
        let head = m.globals.get(s.sym).cloned().unwrap_or(Value::Nil);
        call_out(m, head, vec![x], s)
    }

    /// The operands' values, in order (off the fast paths).
    fn operand_values(&self, m: &mut Machine, ops: &[W], site: W) -> R<Vec<Value>> {
        ops.iter()
            .map(|&o| self.operand_value(m, o, site))
            .collect()
    }

    /// A fixed builtin of operands, off its fast path: the builtin itself while the globals are
    /// pristine, else what its name holds, called with the operands (into `dst`).
    #[cold]
    #[inline(never)]
    fn slow(&mut self, m: &mut Machine, ops: &[W], dst: W, site: W) -> Made {
        let bc = self.bc.clone();
        let s = &bc.sites[site as usize];
        let head = (!m.globals.pristine()).then(|| self.head_of(m, site));
        let mut vals = match self.operand_values(m, ops, site) {
            Ok(vals) => vals,
            Err(e) => return Made::Exit(Exit::Fail(e)),
        };
        let Some(head) = head else {
            let b = s.fixed.expect("a fixed site");
            return made(builtin_on(m, b, &mut vals, s));
        };
        let n = vals.len();
        m.stack.values.extend(vals);
        self.call(m, head, n, dst, site)
    }

    /// Pushes the operand of a call of a global name, off the fast path (a half of a local that
    /// is no list, or read once the globals are not pristine).
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, m: &mut Machine, o: W, site: W) -> R<()> {
        let v = self.operand_value(m, o, site)?;
        m.stack.values.push(v);
        Ok(())
    }

    /// A test of a fixed builtin off its fast path (as [`Vm::slow`], the call made outside the
    /// loop): whether it holds.
    #[cold]
    #[inline(never)]
    fn slow_test(&mut self, m: &mut Machine, ops: &[W], site: W) -> R<bool> {
        let bc = self.bc.clone();
        let s = &bc.sites[site as usize];
        let head = if m.globals.pristine() {
            Value::Builtin(s.fixed.expect("a fixed site"))
        } else {
            self.head_of(m, site)
        };
        let vals = self.operand_values(m, ops, site)?;
        let v = call_out(m, head, vals, s)?;
        let t = v.is_true();
        release(v);
        Ok(t)
    }

    /// A call of `head` on the `argc` values on top of the stack, its value for `dst` (`RET`:
    /// in tail position). A procedure compiled here runs in this loop; the rest are called as
    /// the closures call them.
    #[inline(never)]
    fn call(&mut self, m: &mut Machine, head: Value, argc: usize, dst: W, site: W) -> Made {
        let from = m.stack.values.len() - argc;
        let span = self.site(site).span;
        let c = match head {
            Value::Closure(c) if Machine::binds_directly(&c, argc) => c,
            head => return self.call_general(m, head, from, dst, site),
        };
        let body = c.lambda.compiled(&m.globals);
        let vm = if m.globals.pristine() {
            body.vm.clone()
        } else {
            None
        };
        let flat = body.is_flat();
        if let Some(bc) = vm {
            return self.enter(m, c, bc, argc, dst, site);
        }
        if dst == RET {
            if self.records.is_empty() {
                // The loop's caller makes it, as it makes the closures'.
                let r = if flat {
                    m.pending.flat_tail(c, from, span)
                } else {
                    let frame = bind_from_stack(m, &c, from);
                    m.pending.tail(c, Entry::Frame(frame), span)
                };
                return Made::Exit(Exit::Signal(r));
            }
            // In place of the running procedure, its locals let go first.
            let entry = if flat {
                m.stack.move_down(self.base, from);
                Entry::Stack(self.base)
            } else {
                let frame = bind_from_stack(m, &c, from);
                m.stack.cut_words(self.base);
                Entry::Frame(frame)
            };
            return match m.run_closure(c, entry, span) {
                Ok(v) => Made::Ret(Raw::of(v)),
                Err(e) => Made::Exit(Exit::Fail(e)),
            };
        }
        let r = if flat {
            m.call_flat(c, from, span)
        } else {
            let frame = bind_from_stack(m, &c, from);
            m.call_bound(c, frame, span)
        };
        made_of(m, r)
    }

    /// The calls other than of a procedure whose parameters the arguments fit (as the
    /// closures' `general`).
    #[inline(never)]
    fn call_general(&mut self, m: &mut Machine, head: Value, from: usize, dst: W, site: W) -> Made {
        let mut vals = m.stack_args(from);
        let bc = self.bc.clone();
        let s = &bc.sites[site as usize];
        let r = match head {
            Value::Closure(c) if c.kind != ClosureKind::Comm => {
                if dst != RET {
                    m.enter(c, Entry::Args(vals), s.span)
                } else if self.records.is_empty() {
                    return Made::Exit(Exit::Signal(m.pending.tail(c, Entry::Args(vals), s.span)));
                } else {
                    m.stack.cut_words(self.base);
                    return match m.run_closure(c, Entry::Args(vals), s.span) {
                        Ok(v) => Made::Ret(Raw::of(v)),
                        Err(e) => Made::Exit(Exit::Fail(e)),
                    };
                }
            }
            Value::Closure(c) => m.call_comm(c, vals, s.span),
            Value::Builtin(b) if vals.len() <= INLINE_ARGS => builtin_on(m, b, &mut vals, s),
            Value::Builtin(b) => builtins::call(m, b, &vals, s.span, &s.args),
            other => Err(m.not_callable(&other, s.fspan)),
        };
        made(r)
    }
}

/// Runs a body compiled here, whose locals are on the stack from `m.stack.base` (its arguments
/// there, room made for its locals), and every procedure compiled here it calls; its value, its
/// error or the call in tail position it leaves to its caller (as the closures' code returns).
pub(super) fn run(m: &mut Machine, env: &Env, bc: &Rc<Bytecode>) -> Raw {
    let mut vm = Vm {
        bc: bc.clone(),
        cur: None,
        env,
        base: m.stack.base,
        pc: 0,
        records: Records::default(),
    };
    room(m, vm.base, vm.bc.size);
    match step_loop(m, &mut vm) {
        Exit::Ret(r) | Exit::Signal(r) => r,
        Exit::Fail(mut e) => {
            m.stack.cut_words(vm.base);
            while let Some((bc, _, base, _, _, site, name)) = vm.records.pop() {
                m.depth -= 1;
                let span = bc.sites[site as usize].span;
                e = m.add_call_site(e, name, span);
                m.stack.cut_words(base);
                vm.base = base;
            }
            m.stack.base = vm.base;
            m.pending.fail(e)
        }
    }
}

/// Runs instructions until the procedure the loop was entered with returns, an error, or a
/// signal for the loop's caller.
#[inline(never)]
fn step_loop(m: &mut Machine, vm: &mut Vm<'_>) -> Exit {
    // The running procedure's code, instruction and base, in registers (written back to `vm`
    // around the calls that read them).
    let mut pc = vm.pc;
    let mut base = vm.base;
    // An instruction's value (as its words) to its `dst`, then on to the next; returned, to
    // the record on top (or out of the loop).
    macro_rules! deliver {
        ($r:expr, $dst:expr) => {{
            let r: Raw = $r;
            let d: W = $dst;
            if d < DROP {
                m.stack.put_words(base + d as usize, r);
                pc += 1;
                continue;
            }
            if d == PUSH {
                m.stack.push(r);
                pc += 1;
                continue;
            }
            if d == DROP {
                r.release();
                pc += 1;
                continue;
            }
            ret!(r)
        }};
    }
    macro_rules! ret {
        ($r:expr) => {{
            let r: Raw = $r;
            let Some((bc, cur, rbase, rpc, d, _, _)) = vm.records.pop() else {
                return Exit::Ret(r);
            };
            m.stack.cut_words(base);
            m.depth -= 1;
            vm.bc = bc;
            vm.cur = cur;
            base = rbase;
            vm.base = rbase;
            m.stack.base = rbase;
            pc = rpc as usize;
            if d < DROP {
                m.stack.put_words(base + d as usize, r);
            } else if d == PUSH {
                m.stack.push(r);
            } else {
                r.release();
            }
            continue;
        }};
    }
    // What a call or a slow path made.
    macro_rules! made {
        ($made:expr, $dst:expr) => {{
            vm.pc = pc;
            match $made {
                Made::Value(r) => deliver!(r, $dst),
                Made::Entered => {
                    pc = vm.pc;
                    base = vm.base;
                    continue;
                }
                Made::Ret(r) => ret!(r),
                Made::Exit(x) => return x,
            }
        }};
    }
    macro_rules! test {
        ($r:expr, $to:expr) => {
            match $r {
                Ok(true) => {
                    pc += 1;
                    continue;
                }
                Ok(false) => {
                    pc = $to as usize;
                    continue;
                }
                Err(e) => return Exit::Fail(e),
            }
        };
    }
    // A call of a global name's value (see [`Op::CallG`]), its arguments pushed.
    macro_rules! callg {
        ($dst:expr, $argc:expr, $site:expr) => {{
            let (dst, argc, site): (W, W, W) = ($dst, $argc, $site);
            let s = &vm.bc.sites[site as usize];
            let f = match m.globals.get(s.sym) {
                Some(Value::Closure(c))
                    if Machine::binds_directly(c, argc as usize) && m.globals.pristine() =>
                {
                    if let Some(bc) = &c.lambda.compiled(&m.globals).vm {
                        let (c, bc) = (c.clone(), bc.clone());
                        made!(vm.enter(m, c, bc, argc as usize, dst, site), dst)
                    }
                    Value::Closure(c.clone())
                }
                Some(v) => v.clone(),
                None => match lookup_global_in(m, s.sym, vm.env(), &s.scope, s.fspan) {
                    Ok(v) => v,
                    Err(e) => return Exit::Fail(e),
                },
            };
            made!(vm.call(m, f, argc as usize, dst, site), dst)
        }};
    }
    // Pushes a call's operand, a half of a local read in place and shared.
    macro_rules! push_op {
        ($o:expr, $site:expr) => {{
            let (o, site): (W, W) = ($o, $site);
            if o & (CAR | CDR) == 0 {
                let r = own(m, &vm.bc.consts, base, o);
                m.stack.push(r);
            } else {
                let r = if m.globals.pristine() {
                    get(&m.stack.values, &vm.bc.consts, base, o).map(|x| Raw::shared(&x))
                } else {
                    None
                };
                match r {
                    Some(r) => m.stack.push(r),
                    None => {
                        vm.pc = pc;
                        if let Err(e) = vm.push_slow(m, o, site) {
                            return Exit::Fail(e);
                        }
                    }
                }
            }
        }};
    }
    loop {
        let ins = &vm.bc.code[pc];
        if ins.n != 0 {
            let n = u64::from(ins.n);
            if m.steps + n <= m.next_check {
                m.steps += n;
            } else {
                let bc = vm.bc.clone();
                let sp = ins.sp as usize;
                let spans = &bc.spans[sp..sp + usize::from(ins.n)];
                if let Err(e) = steps_one_by_one(m, spans) {
                    return Exit::Fail(e);
                }
            }
        }
        match ins.op {
            Op::Nop => pc += 1,
            Op::Const { dst, k } => {
                let r = Raw::shared(&vm.bc.consts[(k & INDEX) as usize]);
                deliver!(r, dst)
            }
            Op::Mov { dst, a } => {
                let r = own(m, &vm.bc.consts, base, a);
                deliver!(r, dst)
            }
            Op::Global { dst, site } => {
                let s = vm.site(site);
                match lookup_global_in(m, s.sym, vm.env(), &s.scope, s.span) {
                    Ok(v) => deliver!(Raw::of(v), dst),
                    Err(e) => return Exit::Fail(e),
                }
            }
            Op::Set { slot, a, dst } => {
                // SAFETY: an operand's words, owned here.
                let v = unsafe { own(m, &vm.bc.consts, base, a).value() };
                m.effects += 1;
                m.stack.put_words(base + slot as usize, Raw::shared(&v));
                deliver!(Raw::of(v), dst)
            }
            Op::Clear { at, n } => {
                for i in at..at + n {
                    m.stack.take_words(base + i as usize).release();
                }
                pc += 1;
            }
            Op::Jump { to } => pc = to as usize,
            Op::JFalse { a, to } => {
                let t = rd(&m.stack.values, &vm.bc.consts, base, a).is_true();
                done(m, base, a);
                pc = if t { pc + 1 } else { to as usize };
            }
            Op::Br { a, dst, to, when } => {
                if rd(&m.stack.values, &vm.bc.consts, base, a).is_true() == when {
                    let r = own(m, &vm.bc.consts, base, a);
                    if dst == RET {
                        ret!(r)
                    }
                    if dst < DROP {
                        m.stack.put_words(base + dst as usize, r);
                    } else if dst == PUSH {
                        m.stack.push(r);
                    } else {
                        r.release();
                    }
                    pc = to as usize;
                } else {
                    done(m, base, a);
                    pc += 1;
                }
            }
            Op::Car { dst, a, site } => {
                if m.globals.pristine() {
                    let r = get(&m.stack.values, &vm.bc.consts, base, a)
                        .and_then(|x| half_raw::<true>(&x));
                    if let Some(r) = r {
                        done(m, base, a);
                        deliver!(r, dst)
                    }
                }
                made!(vm.slow(m, &[a], dst, site), dst)
            }
            Op::Cdr { dst, a, site } => {
                if m.globals.pristine() {
                    let r = get(&m.stack.values, &vm.bc.consts, base, a)
                        .and_then(|x| half_raw::<false>(&x));
                    if let Some(r) = r {
                        done(m, base, a);
                        deliver!(r, dst)
                    }
                }
                made!(vm.slow(m, &[a], dst, site), dst)
            }
            Op::One { dst, a, site } => {
                if m.globals.pristine() {
                    let op = vm.site(site).fixed.map_or(B::Other, |b| b.op);
                    let v =
                        get(&m.stack.values, &vm.bc.consts, base, a).and_then(|x| fast_one(op, &x));
                    if let Some(v) = v {
                        done(m, base, a);
                        deliver!(Raw::of(v), dst)
                    }
                }
                made!(vm.slow(m, &[a], dst, site), dst)
            }
            Op::TNull { a, to, site } => {
                if m.globals.pristine() {
                    let t = get(&m.stack.values, &vm.bc.consts, base, a)
                        .map(|x| matches!(*x, Value::Nil));
                    if let Some(t) = t {
                        done(m, base, a);
                        test!(Ok(t), to)
                    }
                }
                test!(
                    {
                        vm.pc = pc;
                        vm.slow_test(m, &[a], site)
                    },
                    to
                )
            }
            Op::TPair { a, to, site } => {
                if m.globals.pristine() {
                    let t = get(&m.stack.values, &vm.bc.consts, base, a)
                        .map(|x| matches!(*x, Value::Pair(_)));
                    if let Some(t) = t {
                        done(m, base, a);
                        test!(Ok(t), to)
                    }
                }
                test!(
                    {
                        vm.pc = pc;
                        vm.slow_test(m, &[a], site)
                    },
                    to
                )
            }
            Op::TOne { a, to, site } => {
                if m.globals.pristine() {
                    let op = vm.site(site).fixed.map_or(B::Other, |b| b.op);
                    let t =
                        get(&m.stack.values, &vm.bc.consts, base, a).and_then(|x| holds(op, &x));
                    if let Some(t) = t {
                        done(m, base, a);
                        test!(Ok(t), to)
                    }
                }
                test!(
                    {
                        vm.pc = pc;
                        vm.slow_test(m, &[a], site)
                    },
                    to
                )
            }
            Op::TTwo { a, b, to, site } => {
                if m.globals.pristine() {
                    let op = vm.site(site).fixed.map_or(B::Other, |b| b.op);
                    let x = rd(&m.stack.values, &vm.bc.consts, base, a);
                    let y = rd(&m.stack.values, &vm.bc.consts, base, b);
                    let t = match (op, x, y) {
                        (_, Value::Int(x), Value::Int(y)) => {
                            fast_ints(op, *x, *y).map(|v| v.is_true())
                        }
                        (B::EqP, x, y) => Some(x.is_eq(y)),
                        _ => None,
                    };
                    if let Some(t) = t {
                        done(m, base, a);
                        done(m, base, b);
                        test!(Ok(t), to)
                    }
                }
                test!(
                    {
                        vm.pc = pc;
                        vm.slow_test(m, &[a, b], site)
                    },
                    to
                )
            }
            Op::Cons { dst, a, b, site } => {
                if m.globals.pristine() {
                    let x = own(m, &vm.bc.consts, base, a);
                    let y = own(m, &vm.bc.consts, base, b);
                    // SAFETY: two operands' words, owned here, moved into the cell.
                    let v = unsafe { Value::cons(x.value(), y.value()) };
                    deliver!(Raw::of(v), dst)
                }
                made!(vm.slow(m, &[a, b], dst, site), dst)
            }
            Op::Add { dst, a, b, site } => {
                if m.globals.pristine() {
                    if let (Value::Int(x), Value::Int(y)) = (
                        rd(&m.stack.values, &vm.bc.consts, base, a),
                        rd(&m.stack.values, &vm.bc.consts, base, b),
                    ) {
                        if let Some(s) = x.checked_add(*y) {
                            deliver!(Raw::of(Value::Int(s)), dst)
                        }
                    }
                }
                made!(vm.slow(m, &[a, b], dst, site), dst)
            }
            Op::Sub { dst, a, b, site } => {
                if m.globals.pristine() {
                    if let (Value::Int(x), Value::Int(y)) = (
                        rd(&m.stack.values, &vm.bc.consts, base, a),
                        rd(&m.stack.values, &vm.bc.consts, base, b),
                    ) {
                        if let Some(s) = x.checked_sub(*y) {
                            deliver!(Raw::of(Value::Int(s)), dst)
                        }
                    }
                }
                made!(vm.slow(m, &[a, b], dst, site), dst)
            }
            Op::Two { dst, a, b, site } => {
                if m.globals.pristine() {
                    let op = vm.site(site).fixed.map_or(B::Other, |b| b.op);
                    let x = rd(&m.stack.values, &vm.bc.consts, base, a);
                    let y = rd(&m.stack.values, &vm.bc.consts, base, b);
                    let v = match (op, x, y) {
                        (_, Value::Int(x), Value::Int(y)) => fast_ints(op, *x, *y),
                        (B::EqP, x, y) => Some(Value::Bool(x.is_eq(y))),
                        _ => None,
                    };
                    if let Some(v) = v {
                        done(m, base, a);
                        done(m, base, b);
                        deliver!(Raw::of(v), dst)
                    }
                }
                made!(vm.slow(m, &[a, b], dst, site), dst)
            }
            Op::Builtin { dst, argc, site } => {
                let from = m.stack.values.len() - argc as usize;
                if m.globals.pristine() {
                    let bc = vm.bc.clone();
                    let s = &bc.sites[site as usize];
                    let b = s.fixed.expect("a fixed site");
                    let n = argc as usize;
                    let r = if n <= INLINE_ARGS {
                        // In a buffer on the Rust stack (a vector cost an allocation a call).
                        let mut buf: [Value; INLINE_ARGS] = Default::default();
                        for (i, v) in buf.iter_mut().enumerate().take(n) {
                            *v = std::mem::take(&mut m.stack.values[from + i]);
                        }
                        m.stack.cut_words(from);
                        builtin_on(m, b, &mut buf[..n], s)
                    } else {
                        let vals = m.stack_args(from);
                        builtins::call(m, b, &vals, s.span, &s.args)
                    };
                    made!(made(r), dst)
                }
                let head = vm.head_of(m, site);
                made!(vm.call(m, head, argc as usize, dst, site), dst)
            }
            Op::Pin { t, site } => {
                let s = vm.site(site);
                let v = if m.globals.pristine() {
                    Value::Builtin(s.fixed.expect("a fixed site"))
                } else {
                    m.globals.get(s.sym).cloned().unwrap_or(Value::Nil)
                };
                m.stack.put_words(base + t as usize, Raw::of(v));
                pc += 1;
            }
            Op::Head { dst, site } => {
                let s = vm.site(site);
                let r = match m.globals.get(s.sym) {
                    Some(v) => Raw::shared(v),
                    None => match lookup_global_in(m, s.sym, vm.env(), &s.scope, s.fspan) {
                        Ok(v) => Raw::of(v),
                        Err(e) => return Exit::Fail(e),
                    },
                };
                deliver!(r, dst)
            }
            Op::Call {
                dst,
                head,
                argc,
                site,
            } => {
                // SAFETY: the head's words, owned here.
                let f = unsafe { m.stack.take_words(base + (head & INDEX) as usize).value() };
                if let Value::Closure(c) = &f {
                    if Machine::binds_directly(c, argc as usize) && m.globals.pristine() {
                        if let Some(bc) = &c.lambda.compiled(&m.globals).vm {
                            let bc = bc.clone();
                            let Value::Closure(c) = f else { unreachable!() };
                            made!(vm.enter(m, c, bc, argc as usize, dst, site), dst)
                        }
                    }
                }
                made!(vm.call(m, f, argc as usize, dst, site), dst)
            }
            Op::CallG1 { dst, a, site } => {
                push_op!(a, site);
                callg!(dst, 1, site)
            }
            Op::CallG2 { dst, a, b, site } => {
                let r = own(m, &vm.bc.consts, base, a);
                m.stack.push(r);
                push_op!(b, site);
                callg!(dst, 2, site)
            }
            Op::CallG { dst, argc, site } => callg!(dst, argc, site),
        }
    }
}
