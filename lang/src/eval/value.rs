//! Runtime values. Lists are cons cells shared by a counted reference ([`ConsRef`], so `cdr` and
//! closure capture are free);
//! compound values are shared, never deep-cloned.

use std::fmt::Write as _;
use std::ptr;
use std::rc::Rc;

use ttdl_ir::topology::{Network, NetworkSpec};
use ttdl_ir::traffic::TaskId;

use super::ast::Lambda;
use super::builtins::BuiltinDef;
use super::cons::{CellRef, ConsRef, Half, Packed};
use super::env::Env;
use super::symbol::{Interner, Sym};
use crate::span::Span;

/// A packed half of a cell ([`Value::into_raw`]): a pointer, so that a shared value's pointer
/// keeps its provenance; an atom is the address of a pointer that reaches nothing.
pub(crate) type Word = *mut ();

// An atom's 64 bits (an `i64`, an `f64`) travel as an address.
const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "a cons cell packs 64-bit atoms into pointer-sized words"
);

/// An atom's bits as a word: a pointer without provenance, never dereferenced.
#[inline]
fn atom_word(bits: u64) -> Word {
    ptr::without_provenance_mut(bits as usize)
}

/// `repr(C, u64)`: the tag fills the first word and every payload sits in the second, so a value
/// has no padding and moves as two words. With Rust's own layout a `bool` sat at byte 1 and a
/// symbol at byte 4, and a move of a value copied bytes 1 to 7 as two overlapping 4-byte pieces
/// through the stack, whose reload stalled on the store buffer on the hottest paths of the
/// evaluator (a one-byte tag with the payloads at byte 8 still copied the padding that way). Still
/// 16 bytes, and a `Result` of it too (the tag's unused values are the niche).
#[derive(Clone, Debug, Default)]
#[repr(C, u64)]
pub enum Value {
    /// The empty list, also false.
    #[default]
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<String>),
    Symbol(Sym),
    Keyword(Sym),
    Pair(ConsRef),
    Closure(Rc<Closure>),
    Builtin(&'static BuiltinDef),
    /// A `defmacro` expander: a closure applied to the unevaluated argument forms.
    Macro(Rc<Closure>),
    Task(TaskId),
    Message(Rc<MessageType>),
    Network(Rc<NetValue>),
}

/// A cons cell. Dropping a long or deeply nested list unlinks it with an explicit stack, so no
/// shape of list can overflow the Rust stack in `Drop`.
#[derive(Debug)]
pub struct Cons {
    pub car: Value,
    pub cdr: Value,
}

impl Drop for Cons {
    fn drop(&mut self) {
        drop_halves(std::mem::take(&mut self.car), std::mem::take(&mut self.cdr));
    }
}

/// Drops the two halves of a cell nothing refers to any more. Halves that cannot start a chain
/// (atoms, shared values) are dropped in place; otherwise [`drop_from`] takes the structure apart
/// with an explicit stack, allocating only when both halves need it.
pub(crate) fn drop_halves(car: Value, cdr: Value) {
    match (holds_deep(&car), holds_deep(&cdr)) {
        (false, false) => {
            drop_shallow(car);
            drop_shallow(cdr);
        }
        (true, false) => {
            drop_shallow(cdr);
            drop_from(car, Vec::new(), Vec::new());
        }
        (false, true) => {
            drop_shallow(car);
            drop_from(cdr, Vec::new(), Vec::new());
        }
        (true, true) => drop_from(car, vec![Packed::new(cdr)], Vec::new()),
    }
}

/// Whether dropping `v` could start a long chain of drops: a cell, closure or macro held
/// nowhere else.
#[inline]
pub(crate) fn holds_deep(v: &Value) -> bool {
    match v {
        Value::Pair(rc) => ConsRef::strong_count(rc) == 1,
        Value::Closure(rc) | Value::Macro(rc) => Rc::strong_count(rc) == 1,
        _ => false,
    }
}

/// Drops a value that cannot start a chain, looking at its tag in place: most are integers or
/// `nil`, and moving them out to the drop glue would copy them through memory for nothing.
#[inline]
fn drop_shallow(v: Value) {
    if v.owns_something() {
        drop(v);
    } else {
        std::mem::forget(v);
    }
}

/// Drops values and scopes with an explicit stack: lists hold closures, closures hold frames and
/// frames hold lists and closures, so a chain of any mix of them, however long, never
/// overflows the Rust stack. Only what nobody else holds is taken apart; the rest just loses
/// one reference.
pub(crate) fn drop_deep(values: Vec<Value>, envs: Vec<Env>) {
    let mut stack: Vec<Packed> = values.into_iter().map(Packed::new).collect();
    let first = stack.pop().map_or(Value::Nil, Packed::into_value);
    drop_from(first, stack, envs);
}

/// Frees the cells of a list nobody else holds for as long as their elements own nothing that
/// could start a chain; returns what is left to take apart (the first cell whose element could,
/// or a tail that could), if anything.
#[inline]
fn drop_flat(v: Value) -> Option<Value> {
    let mut v = v;
    loop {
        v = match v {
            Value::Pair(rc) => ConsRef::free_atoms(rc),
            other => return holds_deep(&other).then_some(other),
        };
        // A cell `free_atoms` stopped at: shared (this reference just goes), or holding something
        // in its car. A car that cannot start a chain (a string, a shared list) is dropped here
        // and the walk goes on; one that can is left to the caller's stack.
        let Value::Pair(rc) = v else {
            continue;
        };
        if holds_deep(&rc.car()) {
            return Some(Value::Pair(rc));
        }
        let Ok((car, cdr)) = ConsRef::into_halves(rc) else {
            return None;
        };
        drop(car);
        v = cdr;
    }
}

/// [`drop_deep`], starting with `v`; the values waiting are packed ([`Packed`]).
fn drop_from(mut v: Value, mut stack: Vec<Packed>, mut envs: Vec<Env>) {
    loop {
        match v {
            Value::Pair(rc) => {
                // Along a list without the stack. An element that could start a chain of its own
                // (a nested list, a closure) is taken apart first while the rest of the spine
                // waits on the stack: a list of records then keeps one entry on the stack, where
                // spine first would stack every record before freeing any.
                let mut next = Value::Pair(rc);
                while let Value::Pair(rc) = next {
                    // A run of cells of atoms (a list of numbers, a record) is freed on the
                    // packed words, no `Value` made per cell: made and dropped one by one, each
                    // half was stored whole and read back, a third of the walk's time (qsort).
                    let rc = match ConsRef::free_atoms(rc) {
                        Value::Pair(rc) => rc,
                        rest => {
                            next = rest;
                            break;
                        }
                    };
                    // A cell held elsewhere just loses this reference.
                    let Ok((car, cdr)) = ConsRef::into_halves(rc) else {
                        next = Value::Nil;
                        break;
                    };
                    if holds_deep(&car) {
                        // A list of atoms (a record) is freed here and now; only an element with
                        // deeper structure of its own sends the walk through the stack.
                        let Some(rest) = drop_flat(car) else {
                            next = cdr;
                            continue;
                        };
                        if holds_deep(&cdr) {
                            stack.push(Packed::new(cdr));
                        } else {
                            drop_shallow(cdr);
                        }
                        next = rest;
                    } else {
                        drop_shallow(car);
                        next = cdr;
                    }
                }
                if holds_deep(&next) {
                    stack.push(Packed::new(next));
                } else {
                    drop_shallow(next);
                }
            }
            Value::Closure(rc) | Value::Macro(rc) => {
                if let Ok(mut closure) = Rc::try_unwrap(rc) {
                    envs.push(std::mem::take(&mut closure.env));
                }
            }
            other => drop_shallow(other),
        }
        v = loop {
            if let Some(p) = stack.pop() {
                break p.into_value();
            }
            let Some(mut env) = envs.pop() else {
                return;
            };
            if let Some((vars, parent)) = env.take_apart() {
                stack.extend(vars.into_iter().map(Packed::new));
                envs.push(parent);
            }
        };
    }
}

/// What kind of procedure a closure is: plain, a communication pattern (`define-comm`: its first
/// argument is the task in whose context the body runs), or a canned mapping (`define-mapping`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClosureKind {
    Lambda,
    Comm,
    Mapping,
}

#[derive(Debug)]
pub struct Closure {
    pub lambda: Rc<Lambda>,
    pub env: Env,
    pub kind: ClosureKind,
}

impl Closure {
    pub fn name(&self) -> Option<Sym> {
        self.lambda.name
    }
}

/// A message type (`defmessage`): a name and a size in words.
#[derive(Debug, PartialEq, Eq)]
pub struct MessageType {
    pub name: String,
    pub size: u64,
}

/// A network value (`make-network`). `id` keys the interpreter's table of tasks made for it.
#[derive(Debug)]
pub struct NetValue {
    pub id: usize,
    pub spec: NetworkSpec,
    /// The built network, when the backend can build this kind.
    pub net: Option<Network>,
    /// The thesis's `:routing` keyword, kept for the user's information.
    pub routing: Option<String>,
    pub span: Span,
}

impl NetValue {
    pub fn nodes(&self) -> usize {
        match &self.net {
            Some(n) => n.nodes(),
            None => self.spec.node_count(),
        }
    }

    /// Coordinates of a node, x first; a one-number index for kinds without geometry.
    pub fn coords(&self, node: usize) -> Vec<i64> {
        match &self.net {
            Some(n) => n.coords.get(node).cloned().unwrap_or_default(),
            None => vec![node as i64],
        }
    }

    pub fn node_at(&self, coords: &[i64]) -> Option<usize> {
        match &self.net {
            Some(n) => n.node_at(coords),
            None => match coords {
                [i] if *i >= 0 && (*i as usize) < self.nodes() => Some(*i as usize),
                _ => None,
            },
        }
    }
}

impl Value {
    /// The tag [`Value::into_raw`] gives a pair.
    pub(crate) const PAIR_TAG: u8 = 7;

    /// Whether a value packed with this tag owns something ([`Value::owns_something`]).
    #[inline]
    pub(crate) fn tag_owns_something(tag: u8) -> bool {
        !matches!(tag, 0 | 1 | 2 | 3 | 5 | 6 | 9 | 11)
    }

    /// Whether dropping this value does anything (it holds a count on something shared).
    #[inline]
    pub fn owns_something(&self) -> bool {
        !matches!(
            self,
            Value::Nil
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Symbol(_)
                | Value::Keyword(_)
                | Value::Builtin(_)
                | Value::Task(_)
        )
    }

    pub fn is_true(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    pub fn cons(car: Value, cdr: Value) -> Value {
        Value::Pair(ConsRef::new(car, cdr))
    }

    /// The value as a tag and a word, owning what the value owned (a packed half of a cell).
    ///
    /// The word is a pointer, so a pointer half keeps its provenance (what memory it may reach)
    /// through the cell: an atom's bits ride in the address of a pointer that may reach nothing
    /// (`without_provenance_mut`), and a shared value's pointer is stored as it is. No integer
    /// is ever turned back into a pointer, so Miri checks every access under
    /// `-Zmiri-strict-provenance`. A word is 64 bits, as an `i64` needs (asserted below).
    pub(crate) fn into_raw(self) -> (u8, Word) {
        match self {
            Value::Nil => (0, atom_word(0)),
            Value::Bool(b) => (1, atom_word(u64::from(b))),
            Value::Int(i) => (2, atom_word(i as u64)),
            Value::Float(f) => (3, atom_word(f.to_bits())),
            Value::Str(s) => (4, Rc::into_raw(s).cast_mut().cast()),
            Value::Symbol(s) => (5, atom_word(u64::from(s.0))),
            Value::Keyword(s) => (6, atom_word(u64::from(s.0))),
            Value::Pair(c) => (7, ConsRef::into_raw(c)),
            Value::Closure(c) => (8, Rc::into_raw(c).cast_mut().cast()),
            Value::Builtin(b) => (9, ptr::from_ref(b).cast_mut().cast()),
            Value::Macro(c) => (10, Rc::into_raw(c).cast_mut().cast()),
            Value::Task(t) => (11, atom_word(t as u64)),
            Value::Message(m) => (12, Rc::into_raw(m).cast_mut().cast()),
            Value::Network(n) => (13, Rc::into_raw(n).cast_mut().cast()),
        }
    }

    /// The value [`Value::into_raw`] packed.
    ///
    /// # Safety
    /// `(tag, word)` came from `into_raw`, and what it owned is handed over (or, for a value
    /// that is never dropped, lent).
    #[inline(always)]
    pub(crate) unsafe fn from_raw(tag: u8, word: Word) -> Value {
        let bits = word.addr() as u64;
        // SAFETY: each pointer was made by the `into_raw` of its own kind, with its provenance.
        unsafe {
            match tag {
                0 => Value::Nil,
                1 => Value::Bool(bits != 0),
                2 => Value::Int(bits as i64),
                3 => Value::Float(f64::from_bits(bits)),
                4 => Value::Str(Rc::from_raw(word.cast::<String>())),
                5 => Value::Symbol(Sym(bits as u32)),
                6 => Value::Keyword(Sym(bits as u32)),
                7 => Value::Pair(ConsRef::from_raw(word)),
                8 => Value::Closure(Rc::from_raw(word.cast::<Closure>())),
                9 => Value::Builtin(&*word.cast::<BuiltinDef>()),
                10 => Value::Macro(Rc::from_raw(word.cast::<Closure>())),
                11 => Value::Task(word.addr() as TaskId),
                12 => Value::Message(Rc::from_raw(word.cast::<MessageType>())),
                _ => Value::Network(Rc::from_raw(word.cast::<NetValue>())),
            }
        }
    }

    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(Rc::new(s.into()))
    }

    /// A proper list from values, in order.
    pub fn list(items: impl IntoIterator<Item = Value, IntoIter: DoubleEndedIterator>) -> Value {
        items
            .into_iter()
            .rev()
            .fold(Value::Nil, |acc, v| Value::cons(v, acc))
    }

    /// Iterates the elements of a list (stops at the first non-pair tail).
    pub fn iter(&self) -> ListIter<'_> {
        ListIter {
            cur: match self {
                Value::Pair(c) => Some(c.cell()),
                _ => None,
            },
        }
    }

    /// The length of a proper list, or `None` if this is not one.
    pub fn list_len(&self) -> Option<usize> {
        let mut cell = match self {
            Value::Nil => return Some(0),
            Value::Pair(c) => c.cell(),
            _ => return None,
        };
        let mut n = 1;
        loop {
            let cdr = cell.cdr();
            match cdr.pair() {
                Some(next) => cell = next,
                None => return matches!(*cdr, Value::Nil).then_some(n),
            }
            n += 1;
        }
    }

    /// The elements of a proper list, or `None` if this is not one.
    pub fn to_vec(&self) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        let mut cell = match self {
            Value::Nil => return Some(out),
            Value::Pair(c) => c.cell(),
            _ => return None,
        };
        loop {
            out.push(Value::clone(&cell.car()));
            let cdr = cell.cdr();
            match cdr.pair() {
                Some(next) => cell = next,
                None => return matches!(*cdr, Value::Nil).then_some(out),
            }
        }
    }

    pub fn is_list(&self) -> bool {
        self.list_len().is_some()
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Symbol(_) => "symbol",
            Value::Keyword(_) => "keyword",
            Value::Pair(_) => "list",
            Value::Closure(c) => match c.kind {
                ClosureKind::Lambda => "procedure",
                ClosureKind::Comm => "communication pattern",
                ClosureKind::Mapping => "mapping",
            },
            Value::Builtin(_) => "procedure",
            Value::Macro(_) => "macro",
            Value::Task(_) => "task",
            Value::Message(_) => "message type",
            Value::Network(_) => "network",
        }
    }

    /// `eq?`: identity for compound values, value equality for atoms.
    pub fn is_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => Rc::ptr_eq(a, b) || a == b,
            (Value::Symbol(a), Value::Symbol(b)) => a == b,
            (Value::Keyword(a), Value::Keyword(b)) => a == b,
            (Value::Pair(a), Value::Pair(b)) => ConsRef::ptr_eq(a, b),
            (Value::Closure(a), Value::Closure(b)) => Rc::ptr_eq(a, b),
            (Value::Macro(a), Value::Macro(b)) => Rc::ptr_eq(a, b),
            (Value::Builtin(a), Value::Builtin(b)) => std::ptr::eq(*a, *b),
            (Value::Task(a), Value::Task(b)) => a == b,
            (Value::Message(a), Value::Message(b)) => Rc::ptr_eq(a, b),
            (Value::Network(a), Value::Network(b)) => a.id == b.id,
            _ => false,
        }
    }

    /// `equal?`: structural equality (numbers compare by value across int and float).
    pub fn equal(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Pair(x), Value::Pair(y)) => cells_equal(x.cell(), y.cell()),
            (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => {
                (*x as f64) == *y
            }
            (Value::Message(x), Value::Message(y)) => x == y,
            _ => self.is_eq(other),
        }
    }

    /// Printed form: `write` style (`~s`, REPL) quotes strings; `display` style (`~a`) does not.
    pub fn to_text(&self, names: &Names<'_>, write: bool) -> String {
        let mut out = String::new();
        print_value(&mut out, self, names, write);
        out
    }
}

/// `equal?` of two lists: element by element along the spine, nested lists recursively.
fn cells_equal(mut x: CellRef<'_>, mut y: CellRef<'_>) -> bool {
    loop {
        if x.ptr_eq(y) {
            return true;
        }
        let same_car = stacker::maybe_grow(64 * 1024, 1024 * 1024, || x.car().equal(&y.car()));
        if !same_car {
            return false;
        }
        let (a, b) = (x.cdr(), y.cdr());
        match (a.pair(), b.pair()) {
            (Some(p), Some(q)) => {
                x = p;
                y = q;
            }
            _ => return a.equal(&b),
        }
    }
}

/// The elements of a list, lent for as long as the list is borrowed.
pub struct ListIter<'a> {
    cur: Option<CellRef<'a>>,
}

impl<'a> Iterator for ListIter<'a> {
    type Item = Half<'a>;
    fn next(&mut self) -> Option<Half<'a>> {
        let c = self.cur?;
        self.cur = c.cdr().pair();
        Some(c.car())
    }
}

fn print_value(out: &mut String, v: &Value, syms: &Names<'_>, write: bool) {
    // Lists nest without bound (built by loops, not recursion), so printing grows the stack.
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        print_atom_or_list(out, v, syms, write)
    })
}

fn print_atom_or_list(out: &mut String, v: &Value, syms: &Names<'_>, write: bool) {
    match v {
        Value::Nil => out.push_str("nil"),
        Value::Bool(true) => out.push_str("#t"),
        Value::Bool(false) => out.push_str("#f"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&float_text(*f)),
        Value::Str(s) => {
            if write {
                out.push('"');
                for ch in s.chars() {
                    match ch {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        c => out.push(c),
                    }
                }
                out.push('"');
            } else {
                out.push_str(s);
            }
        }
        Value::Symbol(s) => out.push_str(syms.name(*s)),
        Value::Keyword(s) => {
            out.push(':');
            out.push_str(syms.name(*s));
        }
        Value::Pair(_) => print_list(out, v, syms, write),
        Value::Closure(c) => {
            let kind = match c.kind {
                ClosureKind::Lambda => "procedure",
                ClosureKind::Comm => "comm",
                ClosureKind::Mapping => "mapping",
            };
            match c.name() {
                Some(n) => {
                    let _ = write!(out, "#<{kind} {}>", syms.name(n));
                }
                None => {
                    let _ = write!(out, "#<{kind}>");
                }
            }
        }
        Value::Builtin(b) => {
            let _ = write!(out, "#<builtin {}>", b.name);
        }
        Value::Macro(c) => match c.name() {
            Some(n) => {
                let _ = write!(out, "#<macro {}>", syms.name(n));
            }
            None => out.push_str("#<macro>"),
        },
        Value::Task(t) => {
            let _ = write!(out, "#<task {}>", syms.task(*t));
        }
        Value::Message(m) => {
            let _ = write!(out, "#<message {} {}>", m.name, m.size);
        }
        Value::Network(n) => {
            let _ = write!(out, "#<network {}>", n.spec);
        }
    }
}

fn print_list(out: &mut String, v: &Value, syms: &Names<'_>, write: bool) {
    // Reader-macro forms print back in their short spelling.
    let Value::Pair(c) = v else {
        return print_value(out, v, syms, write);
    };
    {
        let (head, rest) = (c.car(), c.cdr());
        if let (Value::Symbol(head), Value::Pair(rest)) = (&*head, &*rest) {
            if matches!(*rest.cdr(), Value::Nil) {
                let prefix = match syms.name(*head) {
                    "quote" => Some("'"),
                    "quasiquote" => Some("`"),
                    "unquote" => Some(","),
                    "unquote-splicing" => Some(",@"),
                    _ => None,
                };
                if let Some(p) = prefix {
                    out.push_str(p);
                    print_value(out, &rest.car(), syms, write);
                    return;
                }
            }
        }
    }
    out.push('(');
    let mut cell = c.cell();
    loop {
        print_value(out, &cell.car(), syms, write);
        let cdr = cell.cdr();
        match cdr.pair() {
            Some(next) => {
                out.push(' ');
                cell = next;
            }
            None => {
                if !matches!(*cdr, Value::Nil) {
                    out.push_str(" . ");
                    print_value(out, &cdr, syms, write);
                }
                break;
            }
        }
    }
    out.push(')');
}

/// Floats print so the reader gives back the same float: the shortest form that round-trips,
/// always with a `.` or an exponent (`1.0`, `0.1`, `1e16`, `1.5e-7`), as [`crate::syntax::format_float`].
pub fn float_text(f: f64) -> String {
    crate::syntax::format_float(f)
}

/// What printing needs besides the value: the names of symbols and of tasks.
pub struct Names<'a> {
    pub syms: &'a Interner,
    pub comm: &'a crate::comm::Comm,
}

impl Names<'_> {
    pub fn name(&self, s: Sym) -> &str {
        self.syms.name(s)
    }

    fn task(&self, t: TaskId) -> &str {
        self.comm.task_name(t)
    }
}

/// Run under Miri too (`.ci/run`, `-Zmiri-strict-provenance`): every kind of value through a
/// cell's packed halves and back, and a small program through the reader and the evaluator.
#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of value packs into a half and comes back the same, keeping its count.
    #[test]
    fn every_value_round_trips_through_a_half() {
        let s = Rc::new(String::from("s"));
        let cell = Value::list([Value::Int(1)]);
        let values = [
            Value::Nil,
            Value::Bool(true),
            Value::Int(i64::MIN),
            Value::Int(-1),
            Value::Float(-0.5),
            Value::Str(s.clone()),
            Value::Symbol(Sym(7)),
            Value::Keyword(Sym(u32::MAX)),
            cell.clone(),
            Value::Task(usize::MAX),
            Value::Message(Rc::new(MessageType {
                name: "m".into(),
                size: 8,
            })),
        ];
        for v in values {
            let kept = v.clone();
            let (tag, word) = v.into_raw();
            // SAFETY: packed just above; its count is handed back.
            let back = unsafe { Value::from_raw(tag, word) };
            assert!(back.equal(&kept) && kept.equal(&back), "{kept:?}");
            assert_eq!(back.type_name(), kept.type_name());
        }
        assert_eq!(Rc::strong_count(&s), 1);
        let Value::Pair(c) = &cell else {
            panic!("a list")
        };
        assert_eq!(ConsRef::strong_count(c), 1);
    }

    /// Lists share their tails, compare by structure, and free what they alone hold.
    #[test]
    fn lists_share_compare_and_free() {
        let tail = Value::list([Value::Int(2), Value::str("x")]);
        let a = Value::cons(Value::Int(1), tail.clone());
        let b = Value::cons(Value::Int(1), tail.clone());
        assert!(a.equal(&b) && !a.is_eq(&b));
        assert_eq!(a.list_len(), Some(3));
        let items: Vec<String> = a.iter().map(|h| format!("{:?}", *h)).collect();
        assert_eq!(items.len(), 3);
        let nested = (0..200).fold(Value::Nil, |acc, i| Value::list([acc, Value::Int(i)]));
        assert_eq!(nested.list_len(), Some(2));
        drop((a, b, nested));
        let Value::Pair(c) = &tail else {
            panic!("a list")
        };
        assert_eq!(ConsRef::strong_count(c), 1);
    }

    /// A small program, read and evaluated: closures, recursion, lists of records, strings.
    #[test]
    fn a_small_program_evaluates() {
        let mut i = crate::Interpreter::default();
        let out = i.eval_source(
            "t.ttdl",
            "(define (records n acc) (if (= n 0) acc (records (- n 1) (cons (list n (* 2 n) 8) acc))))
             (define rs (records 20 nil))
             (define (sum l) (if (null? l) 0 (+ (third (car l)) (sum (cdr l)))))
             (list (length rs) (sum rs) (car (car rs)) (string-append \"a\" \"b\"))",
        );
        assert_eq!(out.ok().as_deref(), Some("(20 160 1 \"ab\")"));
    }
}
