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
//! Locals: a procedure of required parameters only whose body nothing in it could capture or
//! name at run time (no `lambda`, named `let`, internal `define`, walked form) keeps its
//! parameters and `let` bindings in slots of one value stack ([`Stack`]), read by index from the
//! call's base; a call in tail position between such procedures moves its arguments down over
//! the caller's slots and runs in the same region. Every other body keeps pooled frames.
//!
//! Machine code: a procedure of this kind made of the forms list programs use is compiled to
//! machine code once it has been called often ([`native`]); its closures still run it where the
//! code was not made (the switch off, or a form the code does not make).
//!
//! Stack: a non-tail procedure call counts its nesting and looks at the room left on the stack
//! every few levels ([`Machine::enter`]); a body nested deeper than [`LEVELS_PER_CHECK`] forms
//! looks at every such level (code may nest up to `Limits::CODE_NESTING` deep).

mod native;
pub use native::{native_enabled, set_native, set_native_after};

use std::cell::OnceCell;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ptr;
use std::rc::Rc;

use super::ast::{Body, Clause, Lambda, Node, NodeKind};
use super::builtins::{self, BuiltinDef, Op};
use super::env::{Env, Globals};
use super::exec::{
    fast_builtin, fast_ints, fast_one, holds, Entry, Flow, INLINE_ARGS, RED_ZONE,
    STACK_CHECK_EVERY, STACK_SEGMENT,
};
use super::machine::{Machine, R};
use super::resolve::Slot;
use super::symbol::Sym;
use super::value::{Closure, ClosureKind, Value};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// What a compiled form gives back: a value's two words, returned in two registers (a
/// [`Value`], and a `Result` of one, is returned through memory, and each move of it on the way
/// read back as one 16-byte piece the two words just written, a load the store buffer cannot
/// forward: a stall of some ten cycles at every return). Or a signal: an error (the diagnostic
/// in [`Pending`]) or, in tail position, a call for the caller's loop to make (in [`Pending`]).
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct Raw {
    tag: MaybeUninit<u64>,
    word: MaybeUninit<u64>,
}

// A value is its tag's word and its payload's word (`repr(C, u64)`), as a `Raw` is.
const _: () = assert!(
    std::mem::size_of::<Value>() == std::mem::size_of::<Raw>()
        && std::mem::align_of::<Value>() == std::mem::align_of::<Raw>()
);

/// The tags of the signals, past every value's (`Value` has 14 kinds).
const ERR: u64 = 64;
const TAIL: u64 = 65;
/// A call in tail position of a procedure whose locals are on the stack, its arguments pushed
/// (the callee, where they start and the call's span kept in [`Pending`] field by field: moved
/// as one tuple, its words were read back as 16-byte pieces, a stall on every such call).
const FLAT_TAIL: u64 = 66;
/// The tag of `Value::Int` (its place among `Value`'s kinds; a test checks it).
const INT: u64 = 2;

impl Raw {
    const ERR: Raw = Raw::signal(ERR);
    const TAIL: Raw = Raw::signal(TAIL);
    const FLAT_TAIL: Raw = Raw::signal(FLAT_TAIL);

    /// A value or signal from its two words (as code made at run time hands them over).
    #[inline(always)]
    fn words(tag: u64, word: u64) -> Raw {
        Raw {
            tag: MaybeUninit::new(tag),
            word: MaybeUninit::new(word),
        }
    }

    const fn signal(tag: u64) -> Raw {
        Raw {
            tag: MaybeUninit::new(tag),
            word: MaybeUninit::uninit(),
        }
    }

    #[inline(always)]
    fn tag(self) -> u64 {
        // SAFETY: every `Raw` has its tag word set: a value's discriminant fills its first word
        // (`repr(C, u64)`), and a signal's is written.
        unsafe { self.tag.assume_init() }
    }

    /// Whether this is a value (not an error or a tail call).
    #[inline(always)]
    fn is_value(self) -> bool {
        self.tag() < ERR
    }

    /// The integer this value is, if it is one.
    #[inline(always)]
    fn int(self) -> Option<i64> {
        if self.tag() == INT {
            // SAFETY: an integer's payload fills its word.
            Some(unsafe { self.word.assume_init() } as i64)
        } else {
            None
        }
    }

    /// A value's words; the `Raw` owns what the value owned.
    #[inline(always)]
    fn of(v: Value) -> Raw {
        let v = ManuallyDrop::new(v);
        // SAFETY: a value and a `Raw` have the same size and alignment (asserted above); its words
        // are copied as they are, possibly uninitialised bytes of a narrow payload included.
        unsafe { ptr::from_ref(&*v).cast::<Raw>().read() }
    }

    /// A new reference to a value where it lies (a variable's slot, a constant).
    #[inline(always)]
    fn shared(v: &Value) -> Raw {
        if v.owns_something() {
            std::mem::forget(v.clone());
        }
        // SAFETY: as in `Raw::of`; the count taken above is the copy's.
        unsafe { ptr::from_ref(v).cast::<Raw>().read() }
    }

    /// The value these words are.
    ///
    /// # Safety
    /// `self` is a value (not a signal) made by `of` or `shared`, not used again.
    #[inline(always)]
    unsafe fn value(self) -> Value {
        // SAFETY: the words of a value, handed over.
        unsafe { std::mem::transmute::<Raw, Value>(self) }
    }

    /// Lets go of a value.
    #[inline(always)]
    fn release(self) {
        // SAFETY: callers pass values they own and do not use again.
        let v = unsafe { self.value() };
        if v.owns_something() {
            drop(v);
        } else {
            std::mem::forget(v);
        }
    }

    /// A result as words, its error kept in the machine.
    #[inline(always)]
    fn result(m: &mut Machine, r: R<Value>) -> Raw {
        match r {
            Ok(v) => Raw::of(v),
            Err(e) => m.pending.fail(e),
        }
    }
}

/// Propagates a signal: the value of a compiled form, or a return of its error or tail call.
macro_rules! val {
    ($e:expr) => {{
        let r: Raw = $e;
        if !r.is_value() {
            return r;
        }
        r
    }};
}

/// The `Ok` of a result, or a return of its error kept in the machine.
macro_rules! ok {
    ($m:expr, $e:expr) => {
        match $e {
            Ok(x) => x,
            Err(e) => return $m.pending.fail(e),
        }
    };
}

/// What a compiled form signalled and did not return: its error, or the call it leaves to its
/// caller's loop. Each is taken at once by the one who sees the signal.
#[derive(Default)]
pub struct Pending {
    failure: Option<Diagnostic>,
    tail: Option<(Rc<Closure>, Entry, Span)>,
    flat_next: Option<Rc<Closure>>,
    flat_from: usize,
    flat_span: Span,
}

/// A copy of the machine (a snapshot) is taken between evaluations, with nothing pending.
impl Clone for Pending {
    fn clone(&self) -> Self {
        Pending::default()
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("failure", &self.failure)
            .field("tail", &self.tail.is_some())
            .finish()
    }
}

impl Pending {
    #[cold]
    #[inline(never)]
    fn fail(&mut self, e: Diagnostic) -> Raw {
        self.failure = Some(e);
        Raw::ERR
    }

    #[inline(always)]
    fn tail(&mut self, c: Rc<Closure>, entry: Entry, span: Span) -> Raw {
        self.tail = Some((c, entry, span));
        Raw::TAIL
    }

    #[inline(always)]
    fn flat_tail(&mut self, c: Rc<Closure>, from: usize, span: Span) -> Raw {
        self.flat_next = Some(c);
        self.flat_from = from;
        self.flat_span = span;
        Raw::FLAT_TAIL
    }

    /// The call a signal stands for, if it is one: a call in tail position of either kind.
    #[inline(always)]
    fn take_tail(&mut self, r: Raw) -> Option<(Rc<Closure>, Entry, Span)> {
        match r.tag() {
            TAIL => self.tail.take(),
            FLAT_TAIL => self
                .flat_next
                .take()
                .map(|c| (c, Entry::Stack(self.flat_from), self.flat_span)),
            _ => None,
        }
    }
}

/// What a procedure's body came to, for the loop that runs it: its value, its error, or the
/// call in its tail position.
pub(super) enum Outcome {
    Value(Value),
    Tail(Rc<Closure>, Entry, Span),
}

impl Machine {
    /// Runs a procedure's compiled body in its frame.
    #[inline(always)]
    pub(super) fn run_body(&mut self, lambda: &Lambda, env: &Env) -> Raw {
        (lambda.compiled(&self.globals).code)(self, env)
    }

    /// What a body's [`Raw`] stands for, taken out of the machine.
    #[inline(always)]
    pub(super) fn outcome(&mut self, r: Raw) -> R<Outcome> {
        if r.is_value() {
            // SAFETY: a value, handed over.
            return Ok(Outcome::Value(unsafe { r.value() }));
        }
        self.signalled(r)
    }

    #[inline(never)]
    fn signalled(&mut self, r: Raw) -> R<Outcome> {
        match self.pending.take_tail(r) {
            Some((c, entry, span)) => Ok(Outcome::Tail(c, entry, span)),
            None => Err(self.pending.failure.take().unwrap_or_else(|| {
                Diagnostic::new("internal", "an evaluation failed without a diagnostic")
            })),
        }
    }
}

impl Machine {
    /// A non-tail call of a procedure whose frame is bound (as [`Machine::enter`] of a bound
    /// frame, with its nesting, stack, depth and call-site label), its value returned as words:
    /// through `enter`, it came back through memory and was moved on whole (a stall).
    #[inline(always)]
    fn call_bound(&mut self, c: Rc<Closure>, frame: Env, span: Span) -> Raw {
        self.nesting += 1;
        let r = if self.nesting.is_multiple_of(STACK_CHECK_EVERY) {
            self.call_bound_checked(c, frame, span)
        } else {
            self.call_bound_here(c, frame, span)
        };
        self.nesting -= 1;
        r
    }

    /// [`Machine::call_bound`] after a look at the stack, out of line (as
    /// [`Machine::call_flat_checked`]).
    #[cold]
    #[inline(never)]
    fn call_bound_checked(&mut self, c: Rc<Closure>, frame: Env, span: Span) -> Raw {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            self.call_bound_here(c, frame, span)
        })
    }

    /// [`Machine::call_bound`] on the stack as it is (as [`Machine::enter_here`]).
    #[inline(never)]
    fn call_bound_here(&mut self, c: Rc<Closure>, frame: Env, span: Span) -> Raw {
        if self.depth >= self.budget.depth {
            let e = self.runaway_recursion(span);
            return self.pending.fail(e);
        }
        self.depth += 1;
        let r = self.run_body(&c.lambda, &frame);
        // The call is over, even by an error: its frame serves the next one unless a closure
        // captured it.
        self.frames.give_back(frame);
        self.end_call(r, c.name(), span)
    }

    /// The end of a non-tail call whose depth was counted: the call its body left in tail
    /// position run, the depth given back, an error given the call site. Inlined, as it was
    /// written in each caller.
    #[inline(always)]
    pub(super) fn end_call(&mut self, r: Raw, name: Option<Sym>, span: Span) -> Raw {
        let r = if r.tag() == TAIL || r.tag() == FLAT_TAIL {
            self.run_tail(r)
        } else {
            r
        };
        self.depth -= 1;
        if !r.is_value() {
            let e = self.pending.failure.take().unwrap_or_else(|| {
                Diagnostic::new("internal", "an evaluation failed without a diagnostic")
            });
            let e = self.add_call_site(e, name, span);
            return self.pending.fail(e);
        }
        r
    }
}

/// The locals of the running procedures whose locals nothing captures, one region of slots
/// per call, on one vector: a call pushes its arguments and makes room for its `let`s, reads a
/// local by its index from the region's base, and cuts the vector back when it returns. A
/// pooled frame cost a reference-counted, borrow-checked vector of named slots, a name compared
/// on each read, and a trip through the pool on each call.
#[derive(Default)]
pub struct Stack {
    values: Vec<Value>,
    /// Where the running procedure's region starts (its first parameter).
    base: usize,
}

/// A copy of the machine (a snapshot) is taken between evaluations, with the stack empty.
impl Clone for Stack {
    fn clone(&self) -> Self {
        Stack::default()
    }
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack")
            .field("values", &self.values.len())
            .field("base", &self.base)
            .finish()
    }
}

impl Stack {
    /// The running procedure's local `i`.
    #[inline(always)]
    fn local(&self, i: u32) -> &Value {
        &self.values[self.base + i as usize]
    }

    /// Pushes a value given as its words, written word by word: moved as a value, it was read
    /// back as one 16-byte piece from the two words just written, a stall the store buffer
    /// cannot forward.
    #[inline(always)]
    fn push(&mut self, r: Raw) {
        self.values.reserve(1);
        let len = self.values.len();
        // SAFETY: `reserve` made room at `len`; a `Raw` value has a value's layout, and its
        // words (what it owns with them) are handed over to the slot before the length covers it.
        unsafe {
            let dst = self.values.as_mut_ptr().add(len).cast::<MaybeUninit<u64>>();
            dst.write(r.tag);
            dst.add(1).write(r.word);
            self.values.set_len(len + 1);
        }
    }

    /// Puts a value given as its words into slot `at` (word by word, as [`Stack::push`]),
    /// letting go of what it held.
    #[inline(always)]
    fn put(&mut self, at: usize, r: Raw) {
        let slot = &mut self.values[at];
        // SAFETY: the old value is read out whole before its place is overwritten by the words
        // of the new one, which the slot then owns.
        unsafe {
            let old = ptr::read(slot);
            let dst = ptr::from_mut(slot).cast::<MaybeUninit<u64>>();
            dst.write(r.tag);
            dst.add(1).write(r.word);
            Raw::of(old).release();
        }
    }

    /// Lets go of every value from `from` on.
    #[inline(always)]
    fn cut(&mut self, from: usize) {
        self.values.truncate(from);
    }

    /// Moves the values from `from` on down to `base`, letting go of those between (a call in
    /// tail position taking its caller's place). Swapped down one by one and the rest cut: a
    /// `Vec::drain` of a few values went through `memmove` and a general drop, 8 % of quicksort.
    #[inline(always)]
    fn move_down(&mut self, base: usize, from: usize) {
        let n = self.values.len().saturating_sub(from);
        for k in 0..n {
            self.values.swap(base + k, from + k);
        }
        self.values.truncate(base + n);
    }
}

impl Machine {
    /// The arguments of an [`Entry::Stack`], taken off the stack (for a procedure whose locals
    /// are pooled).
    pub(super) fn stack_args(&mut self, from: usize) -> Vec<Value> {
        self.stack
            .values
            .split_off(from.min(self.stack.values.len()))
    }

    /// The base of a call's region, its arguments in place (as `Machine::bind_args`, whose
    /// arity error it gives): pushed, moved out of a frame the walk bound, or already there.
    pub(super) fn flat_entry(&mut self, c: &Closure, entry: Entry, span: Span) -> R<usize> {
        let n = c.lambda.required.len();
        let args = match entry {
            Entry::Stack(from) => return Ok(from),
            Entry::Args(args) => args,
            Entry::Frame(env) => env.into_values(),
        };
        if args.len() != n {
            return Err(self.arity_error(&c.lambda, args.len(), span));
        }
        let base = self.stack.values.len();
        self.stack.values.extend(args);
        Ok(base)
    }

    /// Runs the body of `c`, whose locals are on the stack from `base` (its arguments pushed),
    /// then lets go of them: all of them, or, for a call it leaves in tail position with its
    /// arguments on the stack, all but those arguments, moved down to `base`.
    #[inline(always)]
    pub(super) fn run_flat_at(&mut self, c: &Closure, base: usize) -> Raw {
        let body = c.lambda.compiled(&self.globals);
        if let Some(f) = native::ready(self, c, body) {
            return native::run(self, f, base, &c.env);
        }
        let n = body.flat.unwrap_or(0) as usize;
        // Room for its `let`s, if it has any (the call is not inlined, even with none to make).
        if self.stack.values.len() != base + n {
            self.stack.values.resize_with(base + n, || Value::Nil);
        }
        let saved = std::mem::replace(&mut self.stack.base, base);
        let r = (body.code)(self, &c.env);
        self.stack.base = saved;
        if r.tag() == FLAT_TAIL {
            let args = std::mem::replace(&mut self.pending.flat_from, base);
            self.stack.move_down(base, args);
            return r;
        }
        self.stack.cut(base);
        r
    }

    /// Runs `c`, whose locals are on the stack from `base`, and the calls in tail position of
    /// procedures whose locals are on the stack it makes in turn, in the same region; any other
    /// outcome is returned (a value, an error, a call in tail position of another kind).
    #[inline(always)]
    pub(super) fn run_flat_loop(&mut self, mut c: Rc<Closure>, base: usize) -> Raw {
        loop {
            let r = self.run_flat_at(&c, base);
            if r.tag() != FLAT_TAIL {
                return r;
            }
            match self.pending.flat_next.take() {
                Some(next) if next.lambda.compiled(&self.globals).is_flat() => c = next,
                Some(next) => {
                    self.pending.flat_next = Some(next);
                    return r;
                }
                None => return r,
            }
        }
    }

    /// A non-tail call of `c`, whose locals are on the stack from `base` (as
    /// [`Machine::call_bound`]).
    #[inline(always)]
    fn call_flat(&mut self, c: Rc<Closure>, base: usize, span: Span) -> Raw {
        self.nesting += 1;
        let r = if self.nesting.is_multiple_of(STACK_CHECK_EVERY) {
            self.call_flat_checked(c, base, span)
        } else {
            self.call_flat_here(c, base, span)
        };
        self.nesting -= 1;
        r
    }

    /// [`Machine::call_flat`] after a look at the stack, out of line: inlined, the look took
    /// room in the frame of every call site, held at every level of a recursion.
    #[cold]
    #[inline(never)]
    fn call_flat_checked(&mut self, c: Rc<Closure>, base: usize, span: Span) -> Raw {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
            self.call_flat_here(c, base, span)
        })
    }

    /// The call a body left in tail position, and the calls it makes in turn, run in the loop.
    /// Out of line: inlined, the loop's locals made the frame of every level of a non-tail
    /// recursion larger.
    #[inline(never)]
    fn run_tail(&mut self, r: Raw) -> Raw {
        match self.pending.take_tail(r) {
            Some((next, entry, next_span)) => {
                let v = self.run_closure(next, entry, next_span);
                Raw::result(self, v)
            }
            None => r,
        }
    }

    /// [`Machine::call_flat`] on the stack as it is (as [`Machine::call_bound_here`]).
    #[inline(never)]
    fn call_flat_here(&mut self, c: Rc<Closure>, base: usize, span: Span) -> Raw {
        if self.depth >= self.budget.depth {
            self.stack.cut(base);
            let e = self.runaway_recursion(span);
            return self.pending.fail(e);
        }
        self.depth += 1;
        let name = c.name();
        let r = self.run_flat_loop(c, base);
        self.end_call(r, name, span)
    }
}

/// A compiled form.
type Code = Box<dyn Fn(&mut Machine, &Env) -> Raw>;

/// A compiled test of `if` or `cond`: whether it holds; `None` for an error (kept in the
/// machine).
type Test = Box<dyn Fn(&mut Machine, &Env) -> Option<bool>>;

/// Nesting levels of compiled forms within one body between two looks at the room left on the
/// stack (a level is one closure's frame, some tens to a couple of hundred bytes).
const LEVELS_PER_CHECK: usize = 8;

/// A procedure's body, compiled at its first call.
#[derive(Default)]
pub struct Compiled(OnceCell<CompiledBody>);

/// A compiled body, and where its locals live: in a frame of the pool (`None`), or, for a
/// procedure whose locals nothing captures, in `Some(n)` slots of the machine's value stack
/// (its parameters, then its `let`s' bindings).
pub(super) struct CompiledBody {
    code: Code,
    flat: Option<u32>,
    /// Its machine code, made once it is called often (see [`native`]).
    native: std::cell::Cell<native::State>,
}

impl CompiledBody {
    /// Whether the procedure's locals live on the value stack.
    #[inline(always)]
    pub(super) fn is_flat(&self) -> bool {
        self.flat.is_some()
    }
}

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
    /// The body's code, compiled on first use, its last form in tail position. A procedure of
    /// required parameters only whose body has nothing that could capture or name a local at
    /// run time (a `lambda`, a named `let`, an internal `define`, a form left to the walk) keeps
    /// its locals on the value stack; any other, in pooled frames.
    ///
    /// A builtin named globally is fixed in the code when the globals are pristine at its first
    /// call (see [`Globals`]), its answers made without looking the name up.
    #[inline]
    pub(super) fn compiled(&self, globals: &Globals) -> &CompiledBody {
        self.code.0.get_or_init(|| self.compile(globals))
    }

    #[cold]
    fn compile(&self, globals: &Globals) -> CompiledBody {
        #[cfg(test)]
        let pooled_only = tests::POOLED_ONLY.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let pooled_only = false;
        if self.optional.is_empty() && self.rest.is_none() && !pooled_only {
            let mut c = Compiler {
                depth: 0,
                flat: Some(FlatScope::new(&self.required)),
                globals,
                movable: Vec::new(),
            };
            let code = c.body::<Tail>(&self.body);
            if let Some(f) = c.flat.filter(|f| !f.failed) {
                return CompiledBody {
                    code,
                    flat: Some(f.next),
                    native: std::cell::Cell::new(native::State::Cold(0)),
                };
            }
        }
        let code = Compiler {
            depth: 0,
            flat: None,
            globals,
            movable: Vec::new(),
        }
        .body::<Tail>(&self.body);
        CompiledBody {
            code,
            flat: None,
            native: std::cell::Cell::new(native::State::Never),
        }
    }
}

/// Where a compiled form stands: in tail position or not.
trait Out: 'static {
    /// Whether this is tail position (the caller's locals go once its value is made).
    const TAIL: bool;
    /// A call of `c` whose frame is bound.
    fn bound(m: &mut Machine, c: Rc<Closure>, frame: Env, span: Span) -> Raw;
    /// A call of `c` whose arguments are on the stack from `base`.
    fn flat(m: &mut Machine, c: Rc<Closure>, base: usize, span: Span) -> Raw;
    /// A call of `c` with these arguments (to bind, with their arity checked).
    fn args(m: &mut Machine, c: Rc<Closure>, vals: Vec<Value>, span: Span) -> Raw;
    /// A form left to the walk.
    fn walk(m: &mut Machine, node: &Node, env: &Env) -> Raw;
}

/// Out of tail position: a call is made at once.
struct NonTail;

/// In tail position: a call goes back to the caller's loop.
struct Tail;

impl Out for NonTail {
    const TAIL: bool = false;
    #[inline(always)]
    fn bound(m: &mut Machine, c: Rc<Closure>, frame: Env, span: Span) -> Raw {
        m.call_bound(c, frame, span)
    }
    #[inline(always)]
    fn flat(m: &mut Machine, c: Rc<Closure>, base: usize, span: Span) -> Raw {
        m.call_flat(c, base, span)
    }
    fn args(m: &mut Machine, c: Rc<Closure>, vals: Vec<Value>, span: Span) -> Raw {
        let r = m.enter(c, Entry::Args(vals), span);
        Raw::result(m, r)
    }
    fn walk(m: &mut Machine, node: &Node, env: &Env) -> Raw {
        let r = m.eval(node, env);
        Raw::result(m, r)
    }
}

impl Out for Tail {
    const TAIL: bool = true;
    #[inline(always)]
    fn bound(m: &mut Machine, c: Rc<Closure>, frame: Env, span: Span) -> Raw {
        m.pending.tail(c, Entry::Frame(frame), span)
    }
    #[inline(always)]
    fn flat(m: &mut Machine, c: Rc<Closure>, base: usize, span: Span) -> Raw {
        m.pending.flat_tail(c, base, span)
    }
    fn args(m: &mut Machine, c: Rc<Closure>, vals: Vec<Value>, span: Span) -> Raw {
        m.pending.tail(c, Entry::Args(vals), span)
    }
    fn walk(m: &mut Machine, node: &Node, env: &Env) -> Raw {
        // As `eval_flow` takes the forms it does not evaluate itself.
        ok!(m, m.step(&node.span));
        match ok!(m, m.eval_form(node, env)) {
            Flow::Value(v) => Raw::of(v),
            Flow::Tail(c, vals, span) => m.pending.tail(c, Entry::Args(vals), span),
            Flow::Bound(c, frame, span) => m.pending.tail(c, Entry::Frame(frame), span),
        }
    }
}

/// An argument: a variable or a constant (most arguments) read in place, a builtin of a
/// variable or of two integer leaves made in place (`(car l)`, `(- n 1)`), or a compiled form.
enum Operand {
    Local(Sym, Slot, Span),
    /// A local of a procedure whose locals are on the stack: its index in the call's region.
    Flat(u32, Span),
    /// A local of the stack read for the last time (see [`Compiler::movable`]): its value is
    /// moved out of its slot, no count taken there and given back when the slot goes.
    Move(u32, Span),
    Const(Value, Span),
    Apply1(Box<Apply1>),
    /// `(car X)`, `X` a local, `car` the builtin fixed (see [`Globals::pristine`]).
    Car(Box<Half1>),
    /// `(cdr X)`, as [`Operand::Car`].
    Cdr(Box<Half1>),
    Apply11(Box<Apply11>),
    Apply2(Box<Apply2>),
    Code(Code),
}

/// `(F X)`, `F` a global name, `X` a variable: when `F` is a builtin made in place on `X`'s
/// value, it is, with the three steps of the call, its head and `X`; otherwise `code` runs.
struct Apply1 {
    f: Sym,
    x: Loc,
    spans: [Span; 3],
    code: Code,
}

/// `(car X)` or `(cdr X)`, `X` a local, the builtin fixed when the body was compiled: while the
/// globals are pristine, the half is read where `X` lies, with the call's three steps (its own,
/// its head's and `X`'s); otherwise, and where `X` is no list, `code` runs.
struct Half1 {
    x: Loc,
    spans: [Span; 3],
    code: Code,
}

/// The car (`CAR`) or cdr of a list borrowed where it lies, as a new reference; `nil` of `nil`;
/// `None` for anything else (the builtin's error).
#[inline(always)]
fn half_raw<const CAR: bool>(x: &Value) -> Option<Raw> {
    match x {
        Value::Pair(c) => Some(Raw::shared(&*if CAR { c.car() } else { c.cdr() })),
        Value::Nil => Some(Raw::of(Value::Nil)),
        _ => None,
    }
}

/// The integer in the car (`CAR`) or cdr of a list borrowed where it lies.
#[inline(always)]
fn half_int<const CAR: bool>(x: &Value) -> Option<i64> {
    match x {
        Value::Pair(c) => match *if CAR { c.car() } else { c.cdr() } {
            Value::Int(i) => Some(i),
            _ => None,
        },
        _ => None,
    }
}

impl Half1 {
    /// `(car X)` or `(cdr X)` made in place (see [`Half1`]).
    #[inline(always)]
    fn eval<const CAR: bool>(&self, m: &mut Machine, env: &Env) -> Raw {
        if m.globals.pristine() {
            let v = match self.x {
                Loc::Flat(i) => half_raw::<CAR>(m.stack.local(i)),
                Loc::Env(sym, slot) => match env.at(slot, sym) {
                    Some(x) => half_raw::<CAR>(&x),
                    None => None,
                },
            };
            if let Some(r) = v {
                let [s, f, x] = &self.spans;
                if let Err(e) = m.step3(s, f, x) {
                    r.release();
                    return m.pending.fail(e);
                }
                return r;
            }
        }
        (self.code)(m, env)
    }

    /// The integer `(car X)` or `(cdr X)` is, read in place, its steps still to take.
    #[inline(always)]
    fn int<const CAR: bool>(&self, m: &Machine, env: &Env) -> Option<i64> {
        if !m.globals.pristine() {
            return None;
        }
        match self.x {
            Loc::Flat(i) => half_int::<CAR>(m.stack.local(i)),
            Loc::Env(sym, slot) => env.with_at(slot, sym, half_int::<CAR>).flatten(),
        }
    }
}

/// `(F (G X))`, `F` and `G` global names, `X` a variable (`(cadr (car l))`): when `G` is `car`
/// or `cdr`, `X` a pair, and `F` a builtin made in place on that half of it, borrowed in the
/// cell, it is, with the five steps of the two calls, their heads and `X`, in their order; the
/// half is neither counted nor let go. Otherwise `code` runs.
struct Apply11 {
    f: Sym,
    g: Sym,
    x: Loc,
    spans: [Span; 5],
    code: Code,
}

/// `F` of the car or cdr (by `inner`) of `x`, borrowed in the cell (see [`Apply11`]).
#[inline(always)]
fn fast_of_half(outer: Op, inner: Op, x: &Value) -> Option<Value> {
    match (inner, x) {
        (Op::Car, Value::Pair(c)) => fast_one(outer, &c.car()),
        (Op::Cdr, Value::Pair(c)) => fast_one(outer, &c.cdr()),
        _ => None,
    }
}

/// `(F X Y)`, `F` a global name, `X` and `Y` variables or constants: when `F` is integer
/// arithmetic or comparison and both are integers, it is made in place with the four steps of
/// the call, its head, `X` and `Y`; otherwise `code` runs.
struct Apply2 {
    f: Sym,
    /// `F`'s operation, fixed when the body was compiled (see [`Globals::pristine`]).
    fixed: Option<Op>,
    x: Operand,
    y: Operand,
    spans: [Span; 2],
    code: Code,
}

/// Where a local variable lies: in a pooled frame (its resolved slot, checked to hold its name)
/// or in the running call's region of the stack.
#[derive(Clone, Copy)]
enum Loc {
    Env(Sym, Slot),
    Flat(u32),
}

/// `$f` (a function of a `&Value` answering an `Option`) of a local's value, borrowed where it
/// lies; `None` when `$f` answers none, or a pooled slot does not hold the name yet (a frame
/// still being filled). A macro: through a closure, the answer came back through memory.
macro_rules! at {
    ($m:expr, $env:expr, $loc:expr, $f:path, $op:expr) => {
        match $loc {
            Loc::Flat(i) => $f($op, $m.stack.local(i)),
            Loc::Env(sym, slot) => match $env.at(slot, sym) {
                Some(x) => $f($op, &x),
                None => None,
            },
        }
    };
}

/// A local of the stack, with its step.
#[inline(always)]
fn flat_local(m: &mut Machine, i: u32, span: &Span) -> Raw {
    ok!(m, m.step(span));
    Raw::shared(m.stack.local(i))
}

/// A variable's value where its resolved slot holds it, or found by name (a frame still being
/// filled), with its step.
#[inline(always)]
fn local(m: &mut Machine, env: &Env, sym: Sym, slot: Slot, span: &Span) -> Raw {
    ok!(m, m.step(span));
    if let Some(v) = env.at(slot, sym) {
        return Raw::shared(&v);
    }
    let r = m.lookup(sym, env, *span);
    Raw::result(m, r)
}

impl Operand {
    /// The argument's value, with its steps (as `Machine::operand`).
    #[inline(always)]
    fn eval(&self, m: &mut Machine, env: &Env) -> Raw {
        match self {
            Operand::Local(sym, slot, span) => local(m, env, *sym, *slot, span),
            Operand::Flat(i, span) => flat_local(m, *i, span),
            Operand::Move(i, span) => {
                ok!(m, m.step(span));
                let at = m.stack.base + *i as usize;
                Raw::of(std::mem::take(&mut m.stack.values[at]))
            }
            Operand::Const(v, span) => {
                ok!(m, m.step(span));
                Raw::shared(v)
            }
            Operand::Apply1(a) => {
                if let Some(&Value::Builtin(b)) = m.globals.get(a.f) {
                    let op = b.op;
                    if let Some(v) = at!(m, env, a.x, fast_one, op) {
                        let [s, f, x] = &a.spans;
                        let r = Raw::of(v);
                        if let Err(e) = m.step3(s, f, x) {
                            r.release();
                            return m.pending.fail(e);
                        }
                        return r;
                    }
                }
                (a.code)(m, env)
            }
            Operand::Car(a) => a.eval::<true>(m, env),
            Operand::Cdr(a) => a.eval::<false>(m, env),
            Operand::Apply11(a) => {
                if let (Some(&Value::Builtin(f)), Some(&Value::Builtin(g))) =
                    (m.globals.get(a.f), m.globals.get(a.g))
                {
                    let (outer, inner) = (f.op, g.op);
                    let v = match a.x {
                        Loc::Flat(i) => fast_of_half(outer, inner, m.stack.local(i)),
                        Loc::Env(sym, slot) => match env.at(slot, sym) {
                            Some(x) => fast_of_half(outer, inner, &x),
                            None => None,
                        },
                    };
                    if let Some(v) = v {
                        let r = Raw::of(v);
                        if let Err(e) = step_all(m, &a.spans) {
                            r.release();
                            return m.pending.fail(e);
                        }
                        return r;
                    }
                }
                (a.code)(m, env)
            }
            Operand::Apply2(a) => {
                let op = match (a.fixed, m.globals.pristine()) {
                    (Some(op), true) => Some(op),
                    _ => match m.globals.get(a.f) {
                        Some(&Value::Builtin(b)) => Some(b.op),
                        _ => None,
                    },
                };
                if let Some(op) = op {
                    if let (Some((i, xs)), Some((j, ys))) = (a.x.int(m, env), a.y.int(m, env)) {
                        if let Some(v) = fast_ints(op, i, j) {
                            let [s, f] = &a.spans;
                            ok!(m, m.step4(s, f, xs, ys));
                            return Raw::of(v);
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
    fn int(&self, m: &Machine, env: &Env) -> Option<(i64, &Span)> {
        match self {
            Operand::Flat(i, span) | Operand::Move(i, span) => match m.stack.local(*i) {
                Value::Int(i) => Some((*i, span)),
                _ => None,
            },
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

    /// The integer a variable, a constant, or the car or cdr of a variable made in place (see
    /// [`Half1`]) is, read where it lies; `None` for anything else.
    #[inline(always)]
    fn int_in_place(&self, m: &Machine, env: &Env) -> Option<i64> {
        match self {
            Operand::Car(a) => a.int::<true>(m, env),
            Operand::Cdr(a) => a.int::<false>(m, env),
            _ => self.int(m, env).map(|(i, _)| i),
        }
    }

    /// The spans of the steps of an operand [`Operand::int_in_place`] reads, in order.
    fn step_spans(&self) -> Vec<Span> {
        match self {
            Operand::Local(_, _, s)
            | Operand::Flat(_, s)
            | Operand::Move(_, s)
            | Operand::Const(_, s) => vec![*s],
            Operand::Car(a) | Operand::Cdr(a) => a.spans.to_vec(),
            _ => Vec::new(),
        }
    }

    /// Whether [`Operand::int_in_place`] may read this operand.
    fn is_simple(&self) -> bool {
        self.is_leaf() || matches!(self, Operand::Car(_) | Operand::Cdr(_))
    }

    fn is_leaf(&self) -> bool {
        matches!(
            self,
            Operand::Local(..) | Operand::Flat(..) | Operand::Move(..) | Operand::Const(..)
        )
    }
}

/// Runs a sequence's forms, the last in the sequence's own position; `nil` for none.
#[inline(always)]
fn run_seq(init: &[Code], last: &Option<Code>, m: &mut Machine, env: &Env) -> Raw {
    for f in init {
        val!(f(m, env)).release();
    }
    match last {
        Some(l) => l(m, env),
        None => Raw::of(Value::Nil),
    }
}

/// The frame of a call of `c` whose arguments fit its parameters exactly (as
/// `Machine::bind_direct`): each argument, evaluated in order with its steps, goes straight into
/// a pooled frame, as its two words. `None` for an error (kept in the machine).
#[inline(never)]
fn bind(m: &mut Machine, c: &Closure, ops: &[Operand], env: &Env) -> Option<Env> {
    let frame = m.frames.extend(&c.env, ops.len());
    for (&p, a) in c.lambda.required.iter().zip(ops) {
        let r = a.eval(m, env);
        if !r.is_value() {
            return None;
        }
        // SAFETY: the words of a value this frame now owns.
        unsafe { frame.push_words(p, [r.tag, r.word]) };
        m.locals.mark(p);
    }
    Some(frame)
}

/// A call of `c`, whose parameters the arguments fit exactly: its arguments pushed on the
/// stack when its locals live there, else bound into a pooled frame.
#[inline(always)]
fn call_proc<O: Out>(
    m: &mut Machine,
    c: Rc<Closure>,
    ops: &[Operand],
    env: &Env,
    span: Span,
) -> Raw {
    if c.lambda.compiled(&m.globals).is_flat() {
        match push_args(m, ops, env) {
            Some(base) => O::flat(m, c, base, span),
            None => Raw::ERR,
        }
    } else {
        match bind(m, &c, ops, env) {
            Some(frame) => O::bound(m, c, frame, span),
            None => Raw::ERR,
        }
    }
}

/// Evaluates arguments, in order with their steps, onto the stack; where they start, or `None`
/// for an error (kept in the machine; what was pushed let go).
#[inline(never)]
fn push_args(m: &mut Machine, ops: &[Operand], env: &Env) -> Option<usize> {
    let base = m.stack.values.len();
    for a in ops {
        let r = a.eval(m, env);
        if !r.is_value() {
            m.stack.cut(base);
            return None;
        }
        m.stack.push(r);
    }
    Some(base)
}

/// Room for `N` values filled from their words in place (moved into an array, each was copied
/// through the stack).
struct Buffer<const N: usize>(MaybeUninit<[Value; N]>);

impl<const N: usize> Buffer<N> {
    fn new() -> Self {
        Buffer(MaybeUninit::uninit())
    }

    /// Writes value `i`.
    #[inline(always)]
    fn put(&mut self, i: usize, r: Raw) {
        assert!(i < N);
        // SAFETY: in bounds (checked above); a `Raw` has a value's layout.
        unsafe { self.0.as_mut_ptr().cast::<Raw>().add(i).write(r) };
    }

    /// The first `n` values.
    ///
    /// # Safety
    /// Values `0..n` were put, and are not yet given back or dropped.
    #[inline(always)]
    unsafe fn filled(&mut self, n: usize) -> &mut [Value] {
        // SAFETY: as the caller promises.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<Value>(), n.min(N)) }
    }
}

/// Calls a builtin on the values in `vals` (made in place when it can be), then lets go of
/// them.
///
/// # Safety
/// `vals` were put in a buffer and are owned by the call.
#[inline(always)]
unsafe fn call_on(
    m: &mut Machine,
    b: &'static BuiltinDef,
    vals: &mut [Value],
    span: Span,
    spans: &[Span],
) -> Raw {
    if let Some(v) = fast_builtin(b.op, vals) {
        // What a builtin made in place leaves nothing to drop: consing moved every argument
        // out, and arithmetic took only integers.
        return Raw::of(v);
    }
    let r = builtins::call(m, b, vals, span, spans);
    for v in vals.iter_mut() {
        if v.owns_something() {
            drop(std::mem::take(v));
        }
    }
    Raw::result(m, r)
}

/// A call of a builtin with at most [`INLINE_ARGS`] arguments (as
/// `Machine::call_builtin_inline`): a variable's value read where it lies, integers compared and
/// added without values made, consing moving both values into the cell, the rest in a buffer.
#[inline(never)]
fn builtin(
    m: &mut Machine,
    b: &'static BuiltinDef,
    ops: &[Operand],
    spans: &[Span],
    span: Span,
    env: &Env,
) -> Raw {
    match ops {
        [a] => {
            let leaf = match a {
                Operand::Local(sym, slot, aspan) => Some((Loc::Env(*sym, *slot), aspan)),
                Operand::Flat(i, aspan) => Some((Loc::Flat(*i), aspan)),
                _ => None,
            };
            if let Some((loc, aspan)) = leaf {
                if let Some(v) = at!(m, env, loc, fast_one, b.op) {
                    let r = Raw::of(v);
                    if let Err(e) = m.step(aspan) {
                        r.release();
                        return m.pending.fail(e);
                    }
                    return r;
                }
            }
            let x = val!(a.eval(m, env));
            builtin_on1(m, b, x, span, spans)
        }
        [a, c] => {
            let x = val!(a.eval(m, env));
            if let Some(i) = x.int() {
                if let Some((v, cspan)) = c
                    .int(m, env)
                    .and_then(|(j, s)| fast_ints(b.op, i, j).map(|v| (v, s)))
                {
                    ok!(m, m.step(cspan));
                    return Raw::of(v);
                }
            }
            let y = c.eval(m, env);
            if !y.is_value() {
                x.release();
                return y;
            }
            if b.op == Op::Cons {
                // SAFETY: two values owned here, moved into the cell.
                return Raw::of(Value::cons(unsafe { x.value() }, unsafe { y.value() }));
            }
            // Two integers, the second the value of a call (`(+ (car l) (sum (cdr l)))`).
            if let (Some(i), Some(j)) = (x.int(), y.int()) {
                if let Some(v) = fast_ints(b.op, i, j) {
                    return Raw::of(v);
                }
            }
            builtin_on2(m, b, x, y, span, spans)
        }
        _ => builtin_buffered(m, b, ops, spans, span, env),
    }
}

/// [`builtin`] of one evaluated argument, out of line: its buffer and the table call took room
/// in the frame of every call of a builtin, which a recursion through an argument
/// (`(+ (car l) (sum (cdr l)))`) holds on the stack at every level.
#[inline(never)]
fn builtin_on1(m: &mut Machine, b: &'static BuiltinDef, x: Raw, span: Span, spans: &[Span]) -> Raw {
    let mut buf = Buffer::<1>::new();
    buf.put(0, x);
    // SAFETY: the value just put, owned here.
    let vals = unsafe { buf.filled(1) };
    if let Some(v) = fast_one(b.op, &vals[0]) {
        Raw::of(std::mem::take(&mut vals[0])).release();
        return Raw::of(v);
    }
    // SAFETY: as above.
    unsafe { call_on(m, b, vals, span, spans) }
}

/// [`builtin`] of two evaluated arguments, out of line (as [`builtin_on1`]).
#[inline(never)]
fn builtin_on2(
    m: &mut Machine,
    b: &'static BuiltinDef,
    x: Raw,
    y: Raw,
    span: Span,
    spans: &[Span],
) -> Raw {
    let mut buf = Buffer::<2>::new();
    buf.put(0, x);
    buf.put(1, y);
    // SAFETY: the two values just put, owned here.
    unsafe { call_on(m, b, buf.filled(2), span, spans) }
}

/// [`builtin`] of no argument or of three or four.
#[inline(never)]
fn builtin_buffered(
    m: &mut Machine,
    b: &'static BuiltinDef,
    ops: &[Operand],
    spans: &[Span],
    span: Span,
    env: &Env,
) -> Raw {
    let mut buf = Buffer::<INLINE_ARGS>::new();
    for (i, a) in ops.iter().enumerate().take(INLINE_ARGS) {
        let r = a.eval(m, env);
        if !r.is_value() {
            // SAFETY: the values put before this one, owned here.
            for v in unsafe { buf.filled(i) } {
                Raw::of(std::mem::take(v)).release();
            }
            return r;
        }
        buf.put(i, r);
    }
    let n = ops.len().min(INLINE_ARGS);
    // SAFETY: the values just put, owned here.
    unsafe { call_on(m, b, buf.filled(n), span, spans) }
}

/// Evaluates arguments into a vector (for the rare calls); `None` for an error.
fn eval_all(m: &mut Machine, ops: &[Operand], env: &Env) -> Option<Vec<Value>> {
    let mut vals = Vec::with_capacity(ops.len());
    for a in ops {
        let r = a.eval(m, env);
        if !r.is_value() {
            return None;
        }
        // SAFETY: a value, handed over.
        vals.push(unsafe { r.value() });
    }
    Some(vals)
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
) -> Raw {
    let Some(vals) = eval_all(m, ops, env) else {
        return Raw::ERR;
    };
    match f {
        Value::Closure(c) if c.kind != ClosureKind::Comm => O::args(m, c, vals, span),
        Value::Closure(c) => {
            let r = m.call_comm(c, vals, span);
            Raw::result(m, r)
        }
        Value::Builtin(b) => {
            let r = builtins::call(m, b, &vals, span, spans);
            Raw::result(m, r)
        }
        other => {
            let e = m.not_callable(&other, fspan);
            m.pending.fail(e)
        }
    }
}

/// The frames of a procedure whose locals are on the stack, as the walk would have them at a
/// form: each one's names bound so far and where its slots start, outermost first. Only for
/// the diagnostic of an unbound name, which suggests the names in scope; `None` for a body
/// whose frames are pooled (the scope is then the frame itself).
type Scope = Option<Rc<[(Vec<Sym>, u32)]>>;

/// A global name's value (as `Machine::lookup_global`), the locals in scope on the stack made
/// into frames for the diagnostic when it is unbound.
fn lookup_global_in(m: &Machine, sym: Sym, env: &Env, scope: &Scope, span: Span) -> R<Value> {
    if let Some(v) = m.globals.get(sym) {
        return Ok(super::env::share(v));
    }
    let env = match scope {
        Some(frames) => {
            let mut e = env.clone();
            for (names, offset) in frames.iter() {
                let f = e.extend(names.len());
                for (i, &n) in names.iter().enumerate() {
                    f.push(n, m.stack.local(*offset + i as u32).clone());
                }
                e = f;
            }
            e
        }
        None => env.clone(),
    };
    m.lookup(sym, &env, span)
}

/// The frames of a body whose locals go on the stack, as its compiler meets them (mirroring
/// [`super::resolve`]'s): each frame's names, where its slots start in the call's region, and
/// how many of them are bound where the compiler stands (`let*` fills its frame one binding at a
/// time). `failed` once the body has a form that needs its locals in frames.
struct FlatScope {
    frames: Vec<FlatFrame>,
    next: u32,
    failed: bool,
}

struct FlatFrame {
    names: Vec<Sym>,
    offset: u32,
    filled: usize,
}

impl FlatScope {
    fn new(params: &[Sym]) -> Self {
        FlatScope {
            frames: vec![FlatFrame {
                names: params.to_vec(),
                offset: 0,
                filled: params.len(),
            }],
            next: u32::try_from(params.len()).unwrap_or(u32::MAX),
            failed: false,
        }
    }

    /// A `let`'s frame, its variables in the slots after every one taken before (the first of
    /// them returned). A `let*`'s frame is in scope at once, filled one binding at a time
    /// ([`FlatScope::let_init`]); a `let`'s is handed back, to come into scope with the body
    /// ([`FlatScope::let_body`]).
    fn open_let(&mut self, names: Vec<Sym>, sequential: bool) -> (u32, Option<FlatFrame>) {
        let offset = self.next;
        let len = u32::try_from(names.len()).unwrap_or(u32::MAX);
        self.next = self.next.saturating_add(len);
        let frame = FlatFrame {
            names,
            offset,
            filled: 0,
        };
        if sequential {
            self.frames.push(frame);
            (offset, None)
        } else {
            (offset, Some(frame))
        }
    }

    /// Before a `let*`'s `i`th initial value: the bindings before it are in scope.
    fn let_init(&mut self, i: usize, sequential: bool) {
        if sequential {
            if let Some(f) = self.frames.last_mut() {
                f.filled = i;
            }
        }
    }

    /// The `let`'s body: every binding in scope (the frame `open_let` handed back, if any).
    fn let_body(&mut self, pending: Option<FlatFrame>) {
        self.frames.extend(pending);
        if let Some(f) = self.frames.last_mut() {
            f.filled = f.names.len();
        }
    }

    /// Where a reference resolved to `slot` reads: its slot, if bound there already; else, as
    /// the walk's lookup by name, the latest binding of the name in the innermost frame that has
    /// one. `None` for a reference out of the procedure's own frames (a captured variable).
    fn loc(&self, sym: Sym, slot: Slot) -> Option<u32> {
        let n = self.frames.len();
        let depth = slot.depth as usize;
        if depth >= n {
            return None;
        }
        let f = &self.frames[n - 1 - depth];
        let i = slot.index as usize;
        if i < f.filled && f.names.get(i) == Some(&sym) {
            return Some(f.offset + slot.index);
        }
        self.frames.iter().rev().find_map(|f| {
            f.names[..f.filled]
                .iter()
                .rposition(|&s| s == sym)
                .map(|i| f.offset + i as u32)
        })
    }
}

/// The compiler of one body; `depth` is the nesting of the form being compiled within it;
/// `flat`, for a body compiled to keep its locals on the stack.
struct Compiler<'g> {
    depth: usize,
    flat: Option<FlatScope>,
    globals: &'g Globals,
    /// The locals an argument may move out of its slot: inside a call in tail position of a
    /// body whose locals are on the stack, the names it reads once and nowhere else. The call
    /// is the last thing the body does, its slots go when it is made, and no loop runs inside
    /// it (a named `let` or a `lambda` keeps a body's locals in frames): a name read once is
    /// read for the last time. Passing `lo` and `hi` on to the next round of a loop
    /// (`(partition pivot (cdr l) (cons (car l) lo) hi)`) then takes and gives back no count.
    movable: Vec<Sym>,
}

/// A `cond` clause's test: `else`, a test of a clause with a body (whether it holds), or of one
/// without (its value is the answer).
enum CondTest {
    Else,
    Holds(Test),
    Value(Code),
}

struct CondClause {
    test: CondTest,
    init: Vec<Code>,
    last: Option<Code>,
}

impl Compiler<'_> {
    /// The builtin a global name is fixed to (see [`Globals::fixed_builtin`]).
    fn fixed(&self, sym: Sym) -> Option<&'static BuiltinDef> {
        self.globals.fixed_builtin(sym)
    }

    /// The body being compiled needs its locals in frames after all.
    fn unflat(&mut self) {
        if let Some(f) = &mut self.flat {
            f.failed = true;
        }
    }

    /// Where a local variable lies (see [`FlatScope::loc`]).
    fn loc(&mut self, sym: Sym, slot: Slot) -> Loc {
        match &self.flat {
            None => Loc::Env(sym, slot),
            Some(f) => match f.loc(sym, slot) {
                Some(i) => Loc::Flat(i),
                None => {
                    self.unflat();
                    Loc::Env(sym, slot)
                }
            },
        }
    }

    /// The locals in scope on the stack where the compiler stands (see [`Scope`]).
    fn scope(&self) -> Scope {
        let f = self.flat.as_ref()?;
        Some(
            f.frames
                .iter()
                .map(|fr| (fr.names[..fr.filled].to_vec(), fr.offset))
                .collect(),
        )
    }

    fn body<O: Out>(&mut self, body: &Body) -> Code {
        if !body.defines.is_empty() {
            self.unflat();
        }
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
    fn seq<O: Out>(&mut self, forms: &[Node]) -> (Vec<Code>, Option<Code>) {
        match forms.split_last() {
            Some((last, init)) => (
                init.iter().map(|f| self.node::<NonTail>(f)).collect(),
                Some(self.node::<O>(last)),
            ),
            None => (Vec::new(), None),
        }
    }

    fn node<O: Out>(&mut self, n: &Node) -> Code {
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
            &NodeKind::Local(sym, slot) => match self.loc(sym, slot) {
                Loc::Flat(i) if self.movable.contains(&sym) => Operand::Move(i, a.span),
                Loc::Flat(i) => Operand::Flat(i, a.span),
                Loc::Env(sym, slot) => Operand::Local(sym, slot, a.span),
            },
            NodeKind::Const(v) => Operand::Const(v.clone(), a.span),
            NodeKind::Call { func, args, .. } => {
                let (f, fspan) = match func.kind {
                    NodeKind::Global(f) => (f, func.span),
                    _ => return Operand::Code(self.node::<NonTail>(a)),
                };
                match args.as_slice() {
                    [x] => match &x.kind {
                        &NodeKind::Local(xs, slot)
                            if self
                                .fixed(f)
                                .is_some_and(|b| matches!(b.op, Op::Car | Op::Cdr)) =>
                        {
                            let car = self.fixed(f).is_some_and(|b| b.op == Op::Car);
                            let half = Box::new(Half1 {
                                x: self.loc(xs, slot),
                                spans: [a.span, fspan, x.span],
                                code: self.node::<NonTail>(a),
                            });
                            if car {
                                Operand::Car(half)
                            } else {
                                Operand::Cdr(half)
                            }
                        }
                        &NodeKind::Local(xs, slot) => Operand::Apply1(Box::new(Apply1 {
                            f,
                            x: self.loc(xs, slot),
                            spans: [a.span, fspan, x.span],
                            code: self.node::<NonTail>(a),
                        })),
                        NodeKind::Call {
                            func: g, args: xs, ..
                        } => match (&g.kind, xs.as_slice()) {
                            (&NodeKind::Global(gs), [y]) => match y.kind {
                                NodeKind::Local(ys, slot) => Operand::Apply11(Box::new(Apply11 {
                                    f,
                                    g: gs,
                                    x: self.loc(ys, slot),
                                    spans: [a.span, fspan, x.span, g.span, y.span],
                                    code: self.node::<NonTail>(a),
                                })),
                                _ => Operand::Code(self.node::<NonTail>(a)),
                            },
                            _ => Operand::Code(self.node::<NonTail>(a)),
                        },
                        _ => Operand::Code(self.node::<NonTail>(a)),
                    },
                    [x, y] => {
                        let (x, y) = (self.operand(x), self.operand(y));
                        if x.is_leaf() && y.is_leaf() {
                            Operand::Apply2(Box::new(Apply2 {
                                f,
                                fixed: self.fixed(f).map(|b| b.op),
                                x,
                                y,
                                spans: [a.span, fspan],
                                code: self.node::<NonTail>(a),
                            }))
                        } else {
                            Operand::Code(self.node::<NonTail>(a))
                        }
                    }
                    _ => Operand::Code(self.node::<NonTail>(a)),
                }
            }
            _ => Operand::Code(self.node::<NonTail>(a)),
        }
    }

    fn node_inner<O: Out>(&mut self, n: &Node) -> Code {
        let span = n.span;
        match &n.kind {
            NodeKind::Const(v) => {
                let v = v.clone();
                Box::new(move |m, _| {
                    ok!(m, m.step(&span));
                    Raw::shared(&v)
                })
            }
            &NodeKind::Local(sym, slot) => match self.loc(sym, slot) {
                Loc::Flat(i) => Box::new(move |m, _| flat_local(m, i, &span)),
                Loc::Env(sym, slot) => Box::new(move |m, env| local(m, env, sym, slot, &span)),
            },
            &NodeKind::Global(sym) => {
                let scope = self.scope();
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    let r = lookup_global_in(m, sym, env, &scope, span);
                    Raw::result(m, r)
                })
            }
            &NodeKind::Var(sym) => {
                self.unflat();
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    let r = m.lookup(sym, env, span);
                    Raw::result(m, r)
                })
            }
            NodeKind::Call {
                func,
                args,
                arg_spans,
            } if O::TAIL && self.flat.is_some() => {
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
                let code = self.call::<O>(span, func, args, arg_spans);
                self.movable = saved;
                code
            }
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
                            ok!(m, m.step(&span));
                            match test(m, env) {
                                Some(true) => then(m, env),
                                Some(false) => other(m, env),
                                None => Raw::ERR,
                            }
                        })
                    }
                    None => Box::new(move |m, env| {
                        ok!(m, m.step(&span));
                        match test(m, env) {
                            Some(true) => then(m, env),
                            Some(false) => Raw::of(Value::Nil),
                            None => Raw::ERR,
                        }
                    }),
                }
            }
            NodeKind::Begin(forms) => {
                let (init, last) = self.seq::<O>(forms);
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    run_seq(&init, &last, m, env)
                })
            }
            NodeKind::Cond(clauses) => self.cond::<O>(span, clauses),
            NodeKind::And(forms) => self.and_or::<O>(span, forms, false),
            NodeKind::Or(forms) => self.and_or::<O>(span, forms, true),
            NodeKind::Set { name, value, slot } => {
                let (name, slot) = (*name, *slot);
                let value = self.node::<NonTail>(value);
                if self.flat.is_some() {
                    let Some(Loc::Flat(i)) = slot.map(|slot| self.loc(name, slot)) else {
                        self.unflat();
                        return value;
                    };
                    return Box::new(move |m, env| {
                        ok!(m, m.step(&span));
                        // SAFETY: a value, handed over.
                        let v = unsafe { val!(value(m, env)).value() };
                        m.effects += 1;
                        let at = m.stack.base + i as usize;
                        m.stack.values[at] = v.clone();
                        Raw::of(v)
                    });
                }
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    // SAFETY: a value, handed over.
                    let v = unsafe { val!(value(m, env)).value() };
                    m.effects += 1;
                    let assigned = slot.is_some_and(|slot| env.set_at(slot, name, &v))
                        || env.set(name, v.clone());
                    if !assigned {
                        if !m.globals.is_bound(name) {
                            let e = m.unbound(name, env, span).with_note(
                                "`set!` changes an existing variable; use `define` to create one",
                            );
                            return m.pending.fail(e);
                        }
                        m.globals.set(name, v.clone());
                    }
                    Raw::of(v)
                })
            }
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } if self.flat.is_some() => self.flat_let::<O>(span, bindings, body, *sequential),
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => {
                let sequential = *sequential;
                let names: Vec<Sym> = bindings.iter().map(|(s, _)| *s).collect();
                let inits: Vec<Code> = bindings
                    .iter()
                    .map(|(_, i)| self.node::<NonTail>(i))
                    .collect();
                let body = self.body::<O>(body);
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    let inner = m.frames.extend(env, names.len());
                    for (&name, init) in names.iter().zip(&inits) {
                        let r = if sequential {
                            init(m, &inner)
                        } else {
                            init(m, env)
                        };
                        if !r.is_value() {
                            m.frames.give_back(inner);
                            return r;
                        }
                        // SAFETY: the words of a value this frame now owns.
                        unsafe { inner.push_words(name, [r.tag, r.word]) };
                        m.locals.mark(name);
                    }
                    let r = body(m, &inner);
                    m.frames.give_back(inner);
                    r
                })
            }
            NodeKind::Lambda(l) => {
                self.unflat();
                let l = l.clone();
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    Raw::of(m.make_closure(&l, env, ClosureKind::Lambda))
                })
            }
            NodeKind::Define { name, value, local } => {
                self.unflat();
                let (name, local) = (*name, *local);
                let value = self.node::<NonTail>(value);
                Box::new(move |m, env| {
                    ok!(m, m.step(&span));
                    // SAFETY: a value, handed over.
                    let v = unsafe { val!(value(m, env)).value() };
                    m.effects += 1;
                    m.assign_define(name, v, local, env);
                    Raw::of(Value::Symbol(name))
                })
            }
            _ => {
                self.unflat();
                let node = n.clone();
                Box::new(move |m, env| O::walk(m, &node, env))
            }
        }
    }

    /// `let` and `let*` in a body whose locals are on the stack (as the pooled `let`): each
    /// binding fills its slot of the call's region, let go again when the `let` is over.
    fn flat_let<O: Out>(
        &mut self,
        span: Span,
        bindings: &[(Sym, Node)],
        body: &Body,
        sequential: bool,
    ) -> Code {
        let names: Vec<Sym> = bindings.iter().map(|(s, _)| *s).collect();
        let len = names.len();
        let Some(flat) = &mut self.flat else {
            return Box::new(|_, _| Raw::of(Value::Nil));
        };
        // `let*`: each init sees the bindings before it.
        let (offset, pending) = flat.open_let(names, sequential);
        let mut inits = Vec::with_capacity(len);
        for (i, (_, init)) in bindings.iter().enumerate() {
            if let Some(f) = &mut self.flat {
                f.let_init(i, sequential);
            }
            inits.push(self.node::<NonTail>(init));
        }
        if let Some(f) = &mut self.flat {
            f.let_body(pending);
        }
        let body = self.body::<O>(body);
        if let Some(f) = &mut self.flat {
            f.frames.pop();
        }
        let offset = offset as usize;
        Box::new(move |m, env| {
            ok!(m, m.step(&span));
            let start = m.stack.base + offset;
            for (i, init) in inits.iter().enumerate() {
                let r = init(m, env);
                if !r.is_value() {
                    clear(m, start, i);
                    return r;
                }
                m.stack.put(start + i, r);
            }
            let r = body(m, env);
            clear(m, start, len);
            r
        })
    }

    fn call<O: Out>(&mut self, span: Span, func: &Node, args: &[Node], arg_spans: &[Span]) -> Code {
        let ops: Vec<Operand> = args.iter().map(|a| self.operand(a)).collect();
        let spans: Box<[Span]> = arg_spans.into();
        let fspan = func.span;
        if let NodeKind::Global(sym) = func.kind {
            let scope = self.scope();
            let fixed = self.fixed(sym);
            return match ops.len() {
                1 => match <[Operand; 1]>::try_from(ops) {
                    Ok(ops) => global_call::<O, 1>(span, fspan, (sym, fixed), ops, spans, scope),
                    Err(ops) => global_call_any::<O>(span, fspan, (sym, fixed), ops, spans, scope),
                },
                2 => match <[Operand; 2]>::try_from(ops) {
                    Ok(ops) => global_call::<O, 2>(span, fspan, (sym, fixed), ops, spans, scope),
                    Err(ops) => global_call_any::<O>(span, fspan, (sym, fixed), ops, spans, scope),
                },
                _ => global_call_any::<O>(span, fspan, (sym, fixed), ops, spans, scope),
            };
        }
        let head = self.node::<NonTail>(func);
        Box::new(move |m, env| {
            ok!(m, m.step(&span));
            // SAFETY: a value, handed over.
            match unsafe { val!(head(m, env)).value() } {
                Value::Closure(c) if Machine::binds_directly(&c, ops.len()) => {
                    call_proc::<O>(m, c, &ops, env, span)
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
                            let x = self.loc(s, slot);
                            let general = self.node::<NonTail>(t);
                            if let Some(b) = self.fixed(sym) {
                                let spans = [tspan, fspan, aspan];
                                return match b.op {
                                    Op::NullP => pred_test(
                                        |v| Some(matches!(v, Value::Nil)),
                                        x,
                                        spans,
                                        general,
                                    ),
                                    Op::PairP => pred_test(
                                        |v| Some(matches!(v, Value::Pair(_))),
                                        x,
                                        spans,
                                        general,
                                    ),
                                    op => pred_test(move |v| holds(op, v), x, spans, general),
                                };
                            }
                            return Box::new(move |m, env| {
                                if let Some(&Value::Builtin(b)) = m.globals.get(sym) {
                                    let op = b.op;
                                    if let Some(hit) = at!(m, env, x, holds, op) {
                                        return match m.step3(&tspan, &fspan, &aspan) {
                                            Ok(()) => Some(hit),
                                            Err(e) => {
                                                m.pending.fail(e);
                                                None
                                            }
                                        };
                                    }
                                }
                                truth(general(m, env))
                            });
                        }
                    }
                    [a, c] => {
                        let (x, y) = (self.operand(a), self.operand(c));
                        let op = self.fixed(sym).map(|b| b.op);
                        if x.is_simple() && y.is_simple() && op.is_some_and(is_comparison) {
                            let mut spans = vec![tspan, fspan];
                            spans.extend(x.step_spans());
                            spans.extend(y.step_spans());
                            let general = self.node::<NonTail>(t);
                            let test = CmpTest {
                                x,
                                y,
                                spans: spans.into(),
                                general,
                            };
                            return match op {
                                Some(Op::Lt) => test.boxed(|i, j| i < j),
                                Some(Op::NumEq) => test.boxed(|i, j| i == j),
                                Some(Op::Gt) => test.boxed(|i, j| i > j),
                                Some(Op::Le) => test.boxed(|i, j| i <= j),
                                _ => test.boxed(|i, j| i >= j),
                            };
                        }
                        if x.is_leaf() && y.is_leaf() {
                            let general = self.node::<NonTail>(t);
                            return Box::new(move |m, env| {
                                if let Some(&Value::Builtin(b)) = m.globals.get(sym) {
                                    if let (Some((i, xs)), Some((j, ys))) =
                                        (x.int(m, env), y.int(m, env))
                                    {
                                        if let Some(v) = fast_ints(b.op, i, j) {
                                            return match m.step4(&tspan, &fspan, xs, ys) {
                                                Ok(()) => Some(v.is_true()),
                                                Err(e) => {
                                                    m.pending.fail(e);
                                                    None
                                                }
                                            };
                                        }
                                    }
                                }
                                truth(general(m, env))
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        let code = self.node::<NonTail>(t);
        Box::new(move |m, env| truth(code(m, env)))
    }

    /// `cond` (as `Machine::cond_clause`): the clause taken runs its body in `cond`'s position;
    /// a clause without a body answers its test's value; none taken, `nil`.
    fn cond<O: Out>(&mut self, span: Span, clauses: &[Clause]) -> Code {
        let clauses: Vec<CondClause> = clauses
            .iter()
            .map(|c| {
                let test = match &c.test {
                    None => CondTest::Else,
                    Some(t) if !c.body.is_empty() => CondTest::Holds(self.test(t)),
                    Some(t) => CondTest::Value(self.node::<NonTail>(t)),
                };
                let (init, last) = self.seq::<O>(&c.body);
                CondClause { test, init, last }
            })
            .collect();
        Box::new(move |m, env| {
            ok!(m, m.step(&span));
            for c in &clauses {
                match &c.test {
                    CondTest::Else => {
                        if c.last.is_none() {
                            return Raw::of(Value::Bool(true));
                        }
                        return run_seq(&c.init, &c.last, m, env);
                    }
                    CondTest::Holds(t) => match t(m, env) {
                        Some(true) => return run_seq(&c.init, &c.last, m, env),
                        Some(false) => {}
                        None => return Raw::ERR,
                    },
                    // A clause without a body: its test's value, if true, is the answer.
                    CondTest::Value(t) => {
                        let r = val!(t(m, env));
                        // SAFETY: a value, handed over.
                        let hit = unsafe { r.value() };
                        if hit.is_true() {
                            return Raw::of(hit);
                        }
                        Raw::of(hit).release();
                    }
                }
            }
            Raw::of(Value::Nil)
        })
    }

    /// `and` (`or` when `or`): the first value that decides it, else the last form in the
    /// form's own position (`#t` for an empty `and`, `#f` for an empty `or`).
    fn and_or<O: Out>(&mut self, span: Span, forms: &[Node], or: bool) -> Code {
        let (init, last) = self.seq::<O>(forms);
        Box::new(move |m, env| {
            ok!(m, m.step(&span));
            let Some(last) = &last else {
                return Raw::of(Value::Bool(!or));
            };
            for f in &init {
                let r = val!(f(m, env));
                // SAFETY: a value, handed over.
                let v = unsafe { r.value() };
                if v.is_true() == or {
                    return Raw::of(v);
                }
                Raw::of(v).release();
            }
            last(m, env)
        })
    }
}

/// Gathers the names a form reads or assigns (a name assigned twice, so it is never taken as
/// read once); `false` for a form with anything else in it (a `lambda`, a walked form), whose
/// names are not all seen.
fn local_refs(n: &Node, out: &mut Vec<Sym>) -> bool {
    match &n.kind {
        NodeKind::Const(_) | NodeKind::Global(_) => true,
        &NodeKind::Local(s, _) | &NodeKind::Var(s) => {
            out.push(s);
            true
        }
        NodeKind::Set { name, value, .. } => {
            out.extend([*name, *name]);
            local_refs(value, out)
        }
        NodeKind::Call { func, args, .. } => {
            local_refs(func, out) && args.iter().all(|a| local_refs(a, out))
        }
        NodeKind::If { test, then, other } => {
            local_refs(test, out)
                && local_refs(then, out)
                && other.as_deref().is_none_or(|o| local_refs(o, out))
        }
        NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
            forms.iter().all(|f| local_refs(f, out))
        }
        NodeKind::Cond(clauses) => clauses.iter().all(|c| {
            c.test.as_ref().is_none_or(|t| local_refs(t, out))
                && c.body.iter().all(|f| local_refs(f, out))
        }),
        NodeKind::Let { bindings, body, .. } => {
            body.defines.is_empty()
                && bindings.iter().all(|(_, i)| local_refs(i, out))
                && body.forms.iter().all(|f| local_refs(f, out))
        }
        _ => false,
    }
}

/// Whether a builtin's operation is a comparison of two integers (`fast_ints` answers a boolean).
fn is_comparison(op: Op) -> bool {
    matches!(op, Op::Lt | Op::NumEq | Op::Gt | Op::Le | Op::Ge)
}

/// A test that is a predicate fixed when the body was compiled (see [`Globals::pristine`]) of a
/// local, answered where the local lies with the steps of the call, its head and the local;
/// `general` runs otherwise. Generic in the predicate, so each is compiled in.
fn pred_test<P: Fn(&Value) -> Option<bool> + 'static>(
    pred: P,
    x: Loc,
    spans: [Span; 3],
    general: Code,
) -> Test {
    Box::new(move |m, env| {
        if m.globals.pristine() {
            let hit = match x {
                Loc::Flat(i) => pred(m.stack.local(i)),
                Loc::Env(sym, slot) => match env.at(slot, sym) {
                    Some(v) => pred(&v),
                    None => None,
                },
            };
            if let Some(hit) = hit {
                let [t, f, a] = &spans;
                return match m.step3(t, f, a) {
                    Ok(()) => Some(hit),
                    Err(e) => {
                        m.pending.fail(e);
                        None
                    }
                };
            }
        }
        truth(general(m, env))
    })
}

/// A test that is a comparison fixed when the body was compiled of two integers read in place
/// (variables, constants, or the car or cdr of a variable: `(< (car l) pivot)`), with the steps
/// the walk takes for it (`spans`, in its order); `general` runs otherwise.
struct CmpTest {
    x: Operand,
    y: Operand,
    spans: Box<[Span]>,
    general: Code,
}

impl CmpTest {
    /// The test with its comparison compiled in.
    fn boxed<C: Fn(i64, i64) -> bool + 'static>(self, cmp: C) -> Test {
        Box::new(move |m, env| {
            if m.globals.pristine() {
                if let (Some(i), Some(j)) =
                    (self.x.int_in_place(m, env), self.y.int_in_place(m, env))
                {
                    return match step_all(m, &self.spans) {
                        Ok(()) => Some(cmp(i, j)),
                        Err(e) => {
                            m.pending.fail(e);
                            None
                        }
                    };
                }
            }
            truth((self.general)(m, env))
        })
    }
}

/// Takes one step for each span, in order, with one comparison when none reaches the next
/// checkpoint (as `Machine::step2`); where one would, one by one, so a budget runs out at the
/// same step and span.
#[inline(always)]
fn step_all(m: &mut Machine, spans: &[Span]) -> R<()> {
    let n = spans.len() as u64;
    if m.steps + n <= m.next_check {
        m.steps += n;
        return Ok(());
    }
    steps_one_by_one(m, spans)
}

#[cold]
#[inline(never)]
fn steps_one_by_one(m: &mut Machine, spans: &[Span]) -> R<()> {
    for s in spans {
        m.step(s)?;
    }
    Ok(())
}

/// Lets go of `n` slots of the stack from `start` (a `let` that is over).
#[inline(always)]
fn clear(m: &mut Machine, start: usize, n: usize) {
    for v in &mut m.stack.values[start..start + n] {
        Raw::of(std::mem::take(v)).release();
    }
}

/// Whether a compiled form's value is true; `None` for an error.
#[inline(always)]
fn truth(r: Raw) -> Option<bool> {
    if !r.is_value() {
        return None;
    }
    // SAFETY: a value, handed over.
    let v = unsafe { r.value() };
    let t = v.is_true();
    Raw::of(v).release();
    Some(t)
}

/// A sequence's code: its last form alone when there is nothing before it.
fn seq_code(init: Vec<Code>, last: Option<Code>) -> Code {
    match (init.is_empty(), last) {
        (true, Some(last)) => last,
        (_, last) => Box::new(move |m, env| run_seq(&init, &last, m, env)),
    }
}

/// The builtin a global name was fixed to when the body was compiled, if it was (see
/// [`Globals::pristine`]).
type Fixed = Option<&'static BuiltinDef>;

/// A call whose head is a global name, with `N` arguments (see [`call_global`]); the count
/// known when compiled.
fn global_call<O: Out, const N: usize>(
    span: Span,
    fspan: Span,
    (sym, fixed): (Sym, Fixed),
    ops: [Operand; N],
    spans: Box<[Span]>,
    scope: Scope,
) -> Code {
    Box::new(move |m, env| {
        call_global::<O>(m, env, (sym, fixed), &ops, &spans, span, fspan, &scope)
    })
}

/// [`global_call`] of any number of arguments.
fn global_call_any<O: Out>(
    span: Span,
    fspan: Span,
    (sym, fixed): (Sym, Fixed),
    ops: Vec<Operand>,
    spans: Box<[Span]>,
    scope: Scope,
) -> Code {
    Box::new(move |m, env| {
        call_global::<O>(m, env, (sym, fixed), &ops, &spans, span, fspan, &scope)
    })
}

/// A call whose head is a global name: a builtin is called in place (up to [`INLINE_ARGS`]
/// arguments), a procedure whose parameters the arguments fit is bound straight into its
/// frame, anything else goes the general way; each after the call's step and its head's (as
/// `eval` and `eval_flow`). Inlined into each closure, so a fixed count's test is folded away.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn call_global<O: Out>(
    m: &mut Machine,
    env: &Env,
    (sym, fixed): (Sym, Fixed),
    ops: &[Operand],
    spans: &[Span],
    span: Span,
    fspan: Span,
    scope: &Scope,
) -> Raw {
    ok!(m, m.step2(&span, &fspan));
    if let Some(b) = fixed {
        if m.globals.pristine() && ops.len() <= INLINE_ARGS {
            return builtin(m, b, ops, spans, span, env);
        }
    }
    match m.globals.get(sym) {
        Some(&Value::Builtin(b)) if ops.len() <= INLINE_ARGS => {
            builtin(m, b, ops, spans, span, env)
        }
        Some(Value::Closure(c)) if Machine::binds_directly(c, ops.len()) => {
            let c = c.clone();
            call_proc::<O>(m, c, ops, env, span)
        }
        _ => {
            let f = ok!(m, lookup_global_in(m, sym, env, scope, fspan));
            general::<O>(m, f, span, fspan, ops, spans, env)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Interpreter, Limits};

    thread_local! {
        /// Compiles every body with its locals in pooled frames (to compare with the stack).
        pub(super) static POOLED_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// A program's printed value or full diagnostics (rendered), and its step count, with
    /// locals on the stack where they can be or in pooled frames only.
    fn run_both(src: &str, limits: Limits) -> [(String, u64); 2] {
        [false, true].map(|pooled| {
            POOLED_ONLY.with(|p| p.set(pooled));
            let mut i = Interpreter::new(limits);
            let out = match i.eval_source("t.ttdl", src) {
                Ok(v) => v,
                Err(d) => format!("{}\n{d:?}", i.render(&d, false)),
            };
            POOLED_ONLY.with(|p| p.set(false));
            (out, i.machine().steps)
        })
    }

    /// Procedures whose locals live on the stack answer, fail (diagnostics, suggestions of the
    /// names in scope, call sites) and count steps exactly as with pooled frames: `let*`
    /// filling its frame, shadowing, `set!`, tail and non-tail calls between the two kinds,
    /// calls from the walk and from builtins, arity, depth and step limits.
    #[test]
    fn stack_locals_answer_as_pooled_frames() {
        let programs = [
            "(define (f abc) (let* ((xyz 1) (q abx)) q)) (f 1)",
            "(define (f abc) (let ((xyz 1)) (abx xyz))) (f 1)",
            "(define (f x) (let* ((a x) (x 2) (b x)) (list a x b))) (f 1)",
            "(define (f x) (let* ((x (+ x 1)) (x (* x 10))) x)) (f 1)",
            "(define (f x) (let ((x (+ x 1)) (y x)) (list x y))) (f 1)",
            "(define (f x) (set! x (+ x 1)) (let ((y x)) (set! y (* y 2)) (list x y))) (f 1)",
            "(define (l n acc) (if (= n 0) acc (l (- n 1) (+ acc 1)))) (l 100000 0)",
            "(define (r n) (+ 1 (r n))) (r 1)",
            "(define (g a b) a) (define (f x) (g x)) (f 1)",
            "(define (g a b) a) (apply g '(1))",
            "(define (g a b) (car a)) (define (f x) (list (g x 2))) (f 5)",
            "(map (lambda (x) (* x 2)) '(1 2 3))",
            "(define (p x &optional y) (list x y)) (define (f x) (p x)) (f 1)",
            "(define (f x) (list (let ((a (car x))) a) 2)) (f 5)",
            "(define (f x) (let ((a 1) (b (car x))) a)) (f 5)",
            "((lambda (x x) x) 1 2)",
            "(define (ev n) (if (= n 0) #t (od (- n 1))))              (define (od n) (let loop ((i 0)) (if (= n 0) #f (ev (- n 1))))) (ev 1001)",
            "(define (f n) (let ((k (lambda (y) (+ n y)))) (g (k 1)))) (define (g x) (* x 2)) (f 3)",
            "(define (sum l) (if (null? l) 0 (+ (car l) (sum (cdr l)))))              (define (iota n acc) (if (= n 0) acc (iota (- n 1) (cons n acc)))) (sum (iota 3000 '()))",
            "(define (f x) (let* ((a (cons x x)) (b (car a))) (if (pair? a) (g b a) 0)))              (define (g u v) (cdr v)) (f 7)",
            "(define (f x) (cond ((null? x) 'none) ((pair? x) (let ((h (car x))) (f (cdr x)))) (else x))) (f '(1 2 3))",
            "(define (f x) (undefined-proc x)) (f 1)",
            "(define (f x) (set! x (car x)) x) (f 1)",
            // Locals read once in a call in tail position, moved out of their slots.
            "(define (g a b) (list a b)) (define (f x y) (g (cons x y) y)) (f '(1) '(2))",
            "(define (f l acc) (if (null? l) acc (f (cdr l) (cons (car l) acc)))) (f '(1 2 3) '())",
            "(define (g a b) a) (define (f x y) (g x (car y))) (f (list 1 2) 5)",
            "(define (f x) (let ((y (list x))) (g y))) (define (g z) (length z)) (f 1)",
            "(define (g a b) (list a b)) (define (f x) (g x (set! x 2))) (f 1)",
            "(define (f x y) (cons x (undefined-proc y))) (f (list 1) 2)",
        ];
        for p in programs {
            let [flat, pooled] = run_both(p, Limits::default());
            assert_eq!(flat, pooled, "{p}");
        }
        // A runaway tail loop stops at the same step, with the same error.
        let limits = Limits {
            steps: 5_000,
            ..Limits::default()
        };
        for p in [
            "(define (l n) (let ((m (+ n 1))) (l m))) (l 0)",
            "(define (l n) (if (< n 0) n (l (+ n 1)))) (l 0)",
        ] {
            let [flat, pooled] = run_both(p, limits);
            assert_eq!(flat, pooled, "{p}");
        }
    }

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
                    "(list (H (car x)) (H (cdr x)))",
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

    /// A value passed through compiled code, on every way out of it (errors at each place a
    /// value is held: an argument evaluated before one that fails, a `let` being filled, a
    /// test), keeps its count: nothing the code held is leaked or freed twice.
    #[test]
    fn compiled_code_keeps_counts_on_every_way_out() {
        use super::super::value::Value;
        let mut i = Interpreter::new(Limits::default());
        i.eval_source(
            "t.ttdl",
            "(define s (string-append \"a\" \"b\")) (define l (list s s))",
        )
        .unwrap();
        let programs = [
            "(define (f x) (cons x (car 5))) (f s)",
            "(define (f x) (cons x (cons x x))) (f s)",
            "(define (f x) (list x x (car 5))) (f s)",
            "(define (f x) (list x x x x)) (f s)",
            "(define (f x) (and x x (car 5))) (f s)",
            "(define (f x) (or #f x)) (f s)",
            "(define (f x) (cond ((car 5) 1) (x))) (f s)",
            "(define (f x) (cond (#f 1) (x))) (f s)",
            "(define (f x) (let ((a x) (b (car 5))) a)) (f s)",
            "(define (f x) (let* ((a x) (b (list a a))) b)) (f s)",
            "(define (f x) (begin x x (car 5))) (f s)",
            "(define (f x) (if (car x) 1 2)) (f l)",
            "(define (k a b) a) (define (f x) (k x (car 5))) (f s)",
            "(define (k a b) a) (define (f x) (k x (k x x))) (f s)",
            "(define (o a &optional b) a) (define (f x) (o x (car 5))) (f s)",
            "(define (o a &optional b) a) (define (f x) (o x x)) (f s)",
            "(define (f x) (set! x (car l)) x) (f s)",
            "(define (f x) (eq? x (car (cdr x)))) (f l)",
            "(define (f x) (length (list x (cadr x) (car 5)))) (f l)",
            "(define (f x n) (if (= n 0) x (f (cons x x) (- n 1)))) (f s 3)",
            "(define (f x) (+ 1 (car x))) (f l)",
            "(define (f x) (+ (car x) 1)) (f l)",
            "(define (k a b) a) (define (f x y) (k x (car 5))) (f s s)",
            "(define (k a b) b) (define (f x) (k (car 5) x)) (f s)",
            "(define (f x y) (cons y (list x (car 5)))) (f s l)",
            "(define (f x) (let ((y (list x x))) (cons y (car 5)))) (f s)",
        ];
        for p in programs {
            let _ = i.eval_source("t.ttdl", p);
        }
        let s = i.machine.intern("s");
        let l = i.machine.intern("l");
        let (Some(Value::Str(s)), Some(Value::Pair(l))) =
            (i.machine.globals.get(s), i.machine.globals.get(l))
        else {
            panic!("s and l are defined");
        };
        // `s` is held by the global and by the two cells of `l`; `l` by its global alone.
        assert_eq!(std::rc::Rc::strong_count(s), 3);
        assert_eq!(super::super::cons::ConsRef::strong_count(l), 1);
    }

    /// A value's words, moved through a `Raw` and back, are the value, of every kind.
    #[test]
    fn values_round_trip_through_their_words() {
        use super::super::value::Value;
        use super::Raw;
        let s = std::rc::Rc::new(String::from("s"));
        let values = [
            Value::Nil,
            Value::Bool(true),
            Value::Bool(false),
            Value::Int(-7),
            Value::Float(2.5),
            Value::Str(s.clone()),
            Value::list([Value::Int(1), Value::Str(s.clone())]),
        ];
        for v in &values {
            let r = Raw::shared(v);
            assert!(r.is_value());
            assert_eq!(
                r.int(),
                if let Value::Int(i) = v {
                    Some(*i)
                } else {
                    None
                }
            );
            // SAFETY: a value just made, used once.
            let back = unsafe { r.value() };
            assert!(back.equal(v));
            Raw::of(back).release();
        }
        assert_eq!(std::rc::Rc::strong_count(&s), 3);
        drop(values);
        assert_eq!(std::rc::Rc::strong_count(&s), 1);
        assert!(!Raw::ERR.is_value() && !Raw::TAIL.is_value());
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
        // Builtins fixed in compiled code: a test, a comparison of a car, an accessor.
        assert_eq!(
            run(
                "(define (f l) (if (null? l) 'empty (if (< (car l) 2) (cdr l) 'big))) \
                 (define a (list (f '()) (f '(1 5)) (f '(3)))) \
                 (define (cdr x) 'mine) (define b (f '(1 5))) \
                 (define (null? x) #t) (list a b (f '(7)))"
            ),
            "((empty (5) big) mine empty)"
        );
        assert_eq!(
            run(
                "(define (f l) (if (< (car l) 2) 'low 'high)) (define a (f '(1))) \
                 (define (car x) 5) (list a (f '(1)))"
            ),
            "(low high)"
        );
        // A builtin stored under another name, and that name assigned.
        assert_eq!(
            run(
                "(define first car) (define (f l) (first l)) (define a (f '(1 2))) \
                 (set! first cdr) (list a (f '(1 2)))"
            ),
            "(1 (2))"
        );
        // A fresh interpreter's builtins are where it installed them (else nothing is fixed).
        let i = Interpreter::new(Limits::default());
        assert!(i.machine().globals.pristine());
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
