//! Environments, both persistent (shared, never copied).
//!
//! Local scopes are a linked chain of small frames: a call, a `let` or a loop adds one frame in
//! front of the scope it closes over, and a closure captures its scope by cloning one `Rc`. A
//! frame's values can be assigned (`set!`), and every closure that captured the frame sees it.
//! A reference is resolved at compile time to a frame and slot ([`super::resolve`]); frames keep
//! their names too, for the lookup by name that remains (a frame still being filled, bare names,
//! suggestions), where a frame's handful of names makes a linear scan beat hashing.
//!
//! The global environment is a vector indexed by symbol, shared copy-on-write: a snapshot of the
//! interpreter (REPL `:undo`, a scratch evaluator) costs O(1), and a lookup is an index.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use super::resolve::Slot;
use super::symbol::Sym;
use super::value::Value;

/// A copy of a value (a new reference to what it shares), made in place for the values most
/// copied — integers, `nil`, booleans, symbols and lists — where the derived `clone` of the whole
/// enum is a call: reading a variable, a constant or a list element is mostly this.
#[inline(always)]
pub(crate) fn share(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::Nil => Value::Nil,
        Value::Pair(c) => Value::Pair(c.clone()),
        Value::Bool(b) => Value::Bool(*b),
        Value::Symbol(s) => Value::Symbol(*s),
        Value::Closure(c) => Value::Closure(c.clone()),
        other => other.clone(),
    }
}

#[cfg(test)]
thread_local! {
    /// Frames made and not yet dropped on this thread, for the tests that no frame leaks.
    pub(crate) static LIVE_FRAMES: std::cell::Cell<isize> = const { std::cell::Cell::new(0) };
}

#[derive(Debug)]
struct Frame {
    vars: RefCell<Vec<(Sym, Value)>>,
    parent: Env,
}

/// Closures capture frames and frames hold closures, so a loop that wraps a closure in a closure
/// a million times builds a chain a million frames long; dropped recursively it would overflow
/// the stack. A frame nobody else holds is taken apart with an explicit stack instead
/// ([`super::value::drop_deep`]).
impl Drop for Frame {
    fn drop(&mut self) {
        #[cfg(test)]
        LIVE_FRAMES.with(|n| n.set(n.get() - 1));
        let parent_unique = self
            .parent
            .0
            .as_ref()
            .is_some_and(|p| Rc::strong_count(p) == 1);
        let vars = self.vars.get_mut();
        if !parent_unique && !vars.iter().any(|(_, v)| super::value::holds_deep(v)) {
            return;
        }
        let values = vars.drain(..).map(|(_, v)| v).collect();
        super::value::drop_deep(values, vec![std::mem::take(&mut self.parent)]);
    }
}

/// A local scope; the empty scope is the top level.
#[derive(Clone, Debug, Default)]
pub struct Env(Option<Rc<Frame>>);

impl Env {
    pub fn new() -> Self {
        Env(None)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// If this scope is the only holder of its innermost frame: that frame's values and its
    /// parent scope, leaving this scope empty (for [`super::value::drop_deep`]).
    pub(crate) fn take_apart(&mut self) -> Option<(Vec<Value>, Env)> {
        let mut frame = Rc::try_unwrap(self.0.take()?).ok()?;
        let vars = std::mem::take(frame.vars.get_mut());
        let parent = std::mem::take(&mut frame.parent);
        Some((vars.into_iter().map(|(_, v)| v).collect(), parent))
    }

    /// The values of this scope's innermost frame, in binding order: moved out when no one
    /// else holds the frame, copied otherwise.
    pub(crate) fn into_values(mut self) -> Vec<Value> {
        let Some(rc) = self.0.take() else {
            return Vec::new();
        };
        match Rc::try_unwrap(rc) {
            Ok(mut frame) => std::mem::take(frame.vars.get_mut())
                .into_iter()
                .map(|(_, v)| v)
                .collect(),
            Err(rc) => rc.vars.borrow().iter().map(|(_, v)| v.clone()).collect(),
        }
    }

    /// A new, empty frame in front of this scope.
    pub fn extend(&self, capacity: usize) -> Env {
        #[cfg(test)]
        LIVE_FRAMES.with(|n| n.set(n.get() + 1));
        Env(Some(Rc::new(Frame {
            vars: RefCell::new(Vec::with_capacity(capacity)),
            parent: self.clone(),
        })))
    }

    /// Adds a binding to the innermost frame (which must exist: made by `extend`). Always
    /// inlined, as [`Env::get_at`], so the value is not passed through memory.
    ///
    /// The binding's fields are written in place ([`super::cons::push_binding`]): pushed as a
    /// pair, the value was copied into the pair and the pair into the frame, each copy a stall
    /// (14 % of a list program's time).
    #[inline(always)]
    pub fn push(&self, sym: Sym, value: Value) {
        if let Some(f) = &self.0 {
            super::cons::push_binding(&mut f.vars.borrow_mut(), sym, value);
        }
    }

    /// [`Env::push`] of a value given as its two words (`code::Raw`: moved whole, a value just
    /// returned was read back as one piece the two words just written, a stall).
    ///
    /// # Safety
    /// As [`super::cons::push_binding_words`]: the words of a value then forgotten.
    #[inline(always)]
    pub(crate) unsafe fn push_words(&self, sym: Sym, words: [std::mem::MaybeUninit<u64>; 2]) {
        if let Some(f) = &self.0 {
            // SAFETY: as this function's own contract.
            unsafe { super::cons::push_binding_words(&mut f.vars.borrow_mut(), sym, words) };
        }
    }

    pub fn get(&self, sym: Sym) -> Option<Value> {
        let mut cur = &self.0;
        while let Some(f) = cur {
            if let Some((_, v)) = f.vars.borrow().iter().rev().find(|(s, _)| *s == sym) {
                return Some(v.clone());
            }
            cur = &f.parent.0;
        }
        None
    }

    /// The frame `depth` steps out from the innermost one.
    #[inline(always)]
    fn frame_at(&self, depth: u32) -> Option<&Frame> {
        let mut f = self.0.as_deref()?;
        for _ in 0..depth {
            f = f.parent.0.as_deref()?;
        }
        Some(f)
    }

    /// The value in a resolved slot, if that slot is filled and holds `sym` (a frame still being
    /// filled, as `let*`'s, may not have reached it yet: then the caller looks `sym` up by name).
    /// Always inlined: returned through memory, the value was written as two words and read back
    /// as one 16-byte piece, which the store buffer cannot forward (a stall on every variable
    /// reference).
    #[inline(always)]
    pub fn get_at(&self, slot: Slot, sym: Sym) -> Option<Value> {
        let vars = self.frame_at(slot.depth)?.vars.borrow();
        match vars.get(slot.index as usize) {
            Some((s, v)) if *s == sym => Some(super::cons::share_stored(v)),
            _ => None,
        }
    }

    /// `f` of the value in a resolved slot, borrowed where it lies, when the slot holds `sym`
    /// (as [`Env::get_at`]); `f` must not touch any frame.
    #[inline(always)]
    pub fn with_at<T>(&self, slot: Slot, sym: Sym, f: impl FnOnce(&Value) -> T) -> Option<T> {
        let vars = self.frame_at(slot.depth)?.vars.borrow();
        match vars.get(slot.index as usize) {
            Some((s, v)) if *s == sym => Some(f(v)),
            _ => None,
        }
    }

    /// The value in a resolved slot, borrowed where it lies, when the slot holds `sym` (as
    /// [`Env::with_at`], for a caller that must not run a closure there: outlined, its answer
    /// came back through memory). The frame must not be changed while the borrow lasts.
    #[inline(always)]
    pub fn at(&self, slot: Slot, sym: Sym) -> Option<std::cell::Ref<'_, Value>> {
        let vars = self.frame_at(slot.depth)?.vars.borrow();
        std::cell::Ref::filter_map(vars, |vars| match vars.get(slot.index as usize) {
            Some((s, v)) if *s == sym => Some(v),
            _ => None,
        })
        .ok()
    }

    /// Assigns a resolved slot as [`Env::get_at`] reads it; `false` if the slot is not there.
    #[inline]
    pub fn set_at(&self, slot: Slot, sym: Sym, value: &Value) -> bool {
        let Some(f) = self.frame_at(slot.depth) else {
            return false;
        };
        match f.vars.borrow_mut().get_mut(slot.index as usize) {
            Some((s, v)) if *s == sym => {
                *v = value.clone();
                true
            }
            _ => false,
        }
    }

    /// Assigns an existing local binding; `false` if there is none.
    pub fn set(&self, sym: Sym, value: Value) -> bool {
        let mut cur = &self.0;
        while let Some(f) = cur {
            if let Some((_, v)) = f
                .vars
                .borrow_mut()
                .iter_mut()
                .rev()
                .find(|(s, _)| *s == sym)
            {
                *v = value;
                return true;
            }
            cur = &f.parent.0;
        }
        false
    }

    /// Rebinds the innermost frame's only variable when no closure has captured the frame (so a
    /// loop can reuse its frame); returns `false` when a fresh frame is needed.
    pub fn reuse_single(&mut self, value: Value) -> bool {
        let Some(f) = &mut self.0 else {
            return false;
        };
        if Rc::strong_count(f) != 1 {
            return false;
        }
        let mut vars = f.vars.borrow_mut();
        match vars.as_mut_slice() {
            [(_, v)] => {
                *v = value;
                true
            }
            _ => false,
        }
    }

    /// Empties this scope's innermost frame for reuse by another call, when no one else holds it
    /// (no closure captured it): its values and its parent are let go, its storage kept. `None`
    /// when the frame is shared, which then lives on as before.
    pub fn recycle(mut self) -> Option<Env> {
        let frame = Rc::get_mut(self.0.as_mut()?)?;
        // Each value drops on its own: lists and closures take long chains apart without
        // recursion (see `Frame`'s `Drop`).
        let vars = frame.vars.get_mut();
        while let Some((_, v)) = vars.pop() {
            // Most are integers or `nil`: nothing to run a drop for.
            if v.owns_something() {
                drop(v);
            } else {
                std::mem::forget(v);
            }
        }
        frame.parent = Env::new();
        Some(self)
    }

    /// A frame from [`Env::recycle`] put in front of `parent`, as [`Env::extend`] makes one;
    /// `false` if the frame is held elsewhere after all.
    fn reuse_in_front_of(&mut self, parent: &Env) -> bool {
        let Some(frame) = self.0.as_mut().and_then(Rc::get_mut) else {
            return false;
        };
        frame.parent = parent.clone();
        true
    }

    /// Every local name, innermost first (for suggestions).
    pub fn names(&self) -> Vec<Sym> {
        let mut out = Vec::new();
        let mut cur = &self.0;
        while let Some(f) = cur {
            out.extend(f.vars.borrow().iter().map(|(s, _)| *s));
            cur = &f.parent.0;
        }
        out
    }
}

/// The global environment: one slot per interned symbol, in a vector shared copy-on-write. A
/// lookup (every reference to a builtin or a global procedure) is one bounds-checked index, which
/// a persistent vector's tree walk is not; a snapshot (REPL `:undo`, a scratch evaluator) is still
/// one `Rc` clone, and only the first assignment after a snapshot copies the slots (a few
/// thousand words).
///
/// `pristine` says that every builtin is still where the interpreter installed it: no global
/// that held a builtin was assigned since, and no builtin was stored into a global. Compiled code
/// fixes a call of a builtin named globally when its body is compiled, and looks at this one flag
/// where it looked the name up and dispatched on the builtin found ([`super::code`]). Every
/// interpreter installs the same builtins under the same names, so the flag of the machine that
/// runs the code vouches for the names the code was compiled with, whichever machine compiled it.
#[derive(Clone, Debug, Default)]
pub struct Globals {
    slots: Rc<Vec<Option<Value>>>,
    pristine: bool,
    /// A number no other assignment of any machine's globals has: it changes at every `set`
    /// (0 before any), so code made at run time (`code::native`) that saw a global hold a
    /// procedure at this number knows it still does while the number stays.
    version: u64,
}

/// The next [`Globals::version`] (process-wide, so two machines that share a history never
/// number different assignments alike).
static NEXT_VERSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Globals {
    /// Where the pristine flag lies in a `Globals` (for code made at run time, `code::native`).
    pub(crate) const PRISTINE_AT: usize = std::mem::offset_of!(Globals, pristine);
    /// Where the version lies.
    pub(crate) const VERSION_AT: usize = std::mem::offset_of!(Globals, version);

    /// See [`Globals::version`].
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    #[inline]
    pub fn get(&self, sym: Sym) -> Option<&Value> {
        self.slots.get(sym.index()).and_then(Option::as_ref)
    }

    pub fn set(&mut self, sym: Sym, value: Value) {
        let i = sym.index();
        let slots = Rc::make_mut(&mut self.slots);
        if slots.len() <= i {
            slots.resize(i + 1, None);
        }
        if matches!(value, Value::Builtin(_)) || matches!(slots[i], Some(Value::Builtin(_))) {
            self.pristine = false;
        }
        slots[i] = Some(value);
        self.version = NEXT_VERSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The builtins are installed: from here on the globals are pristine until one of them is
    /// assigned, or a builtin is stored into a global.
    pub fn seal(&mut self) {
        self.pristine = true;
    }

    /// Whether every builtin is still bound where it was installed (see [`Globals`]).
    #[inline(always)]
    pub fn pristine(&self) -> bool {
        self.pristine
    }

    /// The builtin `sym` names for good: the one bound to it while the globals are pristine.
    pub fn fixed_builtin(&self, sym: Sym) -> Option<&'static super::builtins::BuiltinDef> {
        match self.get(sym) {
            Some(&Value::Builtin(b)) if self.pristine => Some(b),
            _ => None,
        }
    }

    pub fn is_bound(&self, sym: Sym) -> bool {
        self.get(sym).is_some()
    }

    /// Every bound symbol, in symbol order.
    pub fn bound(&self) -> impl Iterator<Item = Sym> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_some())
            .map(|(i, _)| Sym(i as u32))
    }
}

/// The names that have ever been bound in some local frame, by symbol. A name outside this set is
/// in no frame, so looking it up skips the scope chain. It only grows (a snapshot of the machine
/// copies it, a few bytes per symbol).
#[derive(Clone, Debug, Default)]
pub struct LocalNames {
    bound: Vec<bool>,
}

impl LocalNames {
    #[inline]
    pub fn mark(&mut self, sym: Sym) {
        let i = sym.index();
        if i >= self.bound.len() {
            self.bound.resize(i + 1, false);
        }
        self.bound[i] = true;
    }

    #[inline]
    pub fn may_hold(&self, sym: Sym) -> bool {
        self.bound.get(sym.index()).copied().unwrap_or(false)
    }
}

/// Emptied frames kept for the next calls and `let`s, so a call costs no allocation of its frame
/// (a procedure call's frame is, in most programs, let go when the call returns). A copy of the
/// machine (a snapshot) starts with none: the pooled frames are never shared.
///
/// It also frees the reference cycles the language makes: a named `let` or an internal `define`
/// binds, in a frame, a closure that captures that frame. A frame still held when its call or
/// `let` ends is a *suspect*; [`FramePool::collect_cycles`] frees each suspect that nothing holds
/// but its own closures (trial deletion, restricted to the cycles a frame closes on itself).
#[derive(Debug, Default)]
pub struct FramePool {
    frames: Vec<Env>,
    suspects: Vec<Weak<Frame>>,
    /// Suspects kept before the next collection: twice the survivors of the last one, so a
    /// program that keeps many closures alive does not pay for re-checking them on every call.
    collect_at: usize,
}

/// Frames kept at most: a non-tail recursion thousands of calls deep (a list walked by hand,
/// `(+ (car l) (sum (cdr l)))`) gives back all its frames as it returns and takes them again on
/// its next descent; with only a few dozen kept, each of the rest was allocated and freed every
/// time (two allocations a frame, 20-27 % of such a program). At about 150 bytes a frame this is
/// at most some 600 KB.
const POOL_FRAMES: usize = 4096;

/// Suspect frames gathered before a collection at the least.
const SUSPECTS: usize = 1024;

impl Clone for FramePool {
    fn clone(&self) -> Self {
        FramePool::default()
    }
}

impl FramePool {
    /// A new, empty frame in front of `parent`: a pooled one when there is one.
    #[inline]
    pub fn extend(&mut self, parent: &Env, capacity: usize) -> Env {
        if let Some(mut env) = self.frames.pop() {
            if env.reuse_in_front_of(parent) {
                return env;
            }
        }
        parent.extend(capacity)
    }

    /// Frames kept for reuse (alive, though no scope holds them).
    #[cfg(test)]
    pub(crate) fn pooled(&self) -> usize {
        self.frames.len()
    }

    /// Takes back a frame whose call or `let` is over, if no one else holds it; a frame still
    /// held becomes a suspect (see [`FramePool`]).
    #[inline]
    pub fn give_back(&mut self, env: Env) {
        let Some(frame) = &env.0 else {
            return;
        };
        if Rc::strong_count(frame) != 1 {
            self.suspect(frame);
        } else if self.frames.len() < POOL_FRAMES {
            if let Some(env) = env.recycle() {
                self.frames.push(env);
            }
        }
    }

    #[inline(never)]
    fn suspect(&mut self, frame: &Rc<Frame>) {
        self.suspects.push(Rc::downgrade(frame));
        if self.suspects.len() >= self.collect_at.max(SUSPECTS) {
            self.collect_cycles();
        }
    }

    /// Frees every suspect frame held only by closures in its own slots. The survivors (frames a
    /// running call or a kept closure still holds) stay suspects until the next collection.
    pub fn collect_cycles(&mut self) {
        let suspects = std::mem::take(&mut self.suspects);
        for weak in suspects {
            let Some(frame) = weak.upgrade() else {
                continue;
            };
            if own_cycles_only(&frame) {
                // Taken out first: dropping the closures lets go of this very frame.
                let values = std::mem::take(&mut *frame.vars.borrow_mut());
                super::value::drop_deep(values.into_iter().map(|(_, v)| v).collect(), Vec::new());
            } else {
                self.suspects.push(weak);
            }
        }
        self.collect_at = 2 * self.suspects.len();
    }
}

/// Whether `frame` (held here once) is held by nothing but closures in its own slots, each held
/// only there, reaching it through frames held only by them: then the frame is garbage.
fn own_cycles_only(frame: &Rc<Frame>) -> bool {
    let me = Rc::as_ptr(frame);
    let inner = frame
        .vars
        .borrow()
        .iter()
        .filter(|(_, v)| match v {
            Value::Closure(c) if Rc::strong_count(c) == 1 => {
                let mut cur = c.env.0.as_ref();
                loop {
                    match cur {
                        Some(f) if Rc::as_ptr(f) == me => break true,
                        Some(f) if Rc::strong_count(f) == 1 => cur = f.parent.0.as_ref(),
                        _ => break false,
                    }
                }
            }
            _ => false,
        })
        .count();
    inner > 0 && Rc::strong_count(frame) == 1 + inner
}
