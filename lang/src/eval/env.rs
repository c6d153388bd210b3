//! Environments. Local scopes are persistent maps (`imbl`): extending one for a call or a `let`
//! shares everything with its parent, and a closure captures its scope by a cheap clone. Each
//! binding is a shared cell so `set!` is seen by every closure that captured it. Globals live in a
//! table indexed by symbol, kept apart from the local scopes.

use std::cell::RefCell;
use std::rc::Rc;

use super::symbol::{Sym, SymBuildHasher};
use super::value::Value;

pub type Cell = Rc<RefCell<Value>>;

/// A local scope (the innermost bindings of a procedure body, `let`, `dotimes` …).
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: imbl::GenericHashMap<Sym, Cell, SymBuildHasher, imbl::shared_ptr::RcK>,
}

impl Env {
    pub fn new() -> Self {
        Env::default()
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    pub fn get(&self, sym: Sym) -> Option<Value> {
        if self.vars.is_empty() {
            return None;
        }
        self.vars.get(&sym).map(|c| c.borrow().clone())
    }

    pub fn cell(&self, sym: Sym) -> Option<&Cell> {
        self.vars.get(&sym)
    }

    /// Adds (or shadows) a binding in place; callers clone first when the old scope must survive.
    pub fn bind(&mut self, sym: Sym, value: Value) {
        self.vars.insert(sym, Rc::new(RefCell::new(value)));
    }

    pub fn names(&self) -> impl Iterator<Item = Sym> + '_ {
        self.vars.keys().copied()
    }
}

/// The global environment: one slot per interned symbol.
#[derive(Clone, Debug, Default)]
pub struct Globals {
    slots: Vec<Option<Value>>,
}

impl Globals {
    pub fn get(&self, sym: Sym) -> Option<&Value> {
        self.slots.get(sym.index()).and_then(Option::as_ref)
    }

    pub fn set(&mut self, sym: Sym, value: Value) {
        let i = sym.index();
        if i >= self.slots.len() {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(value);
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
