//! Interned symbols: a symbol is a small integer, so environments hash and compare integers, and the
//! global table is indexed by it. Each interpreter owns its own table (no global state).

use std::collections::HashMap;
use std::rc::Rc;

/// An interned symbol (or keyword name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

impl Sym {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The symbol table of one interpreter.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    ids: HashMap<Rc<str>, Sym>,
    names: Vec<Rc<str>>,
}

impl Interner {
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(&s) = self.ids.get(name) {
            return s;
        }
        let sym = Sym(self.names.len() as u32);
        let name: Rc<str> = Rc::from(name);
        self.names.push(name.clone());
        self.ids.insert(name, sym);
        sym
    }

    /// The symbol for `name` if it was ever interned.
    pub fn lookup(&self, name: &str) -> Option<Sym> {
        self.ids.get(name).copied()
    }

    pub fn name(&self, sym: Sym) -> &str {
        self.names.get(sym.index()).map(|s| &**s).unwrap_or("?")
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A cheap, deterministic hasher for symbol keys in persistent maps (symbols are dense integers;
/// a multiplicative mix spreads them over the hash trie).
#[derive(Clone, Copy, Debug, Default)]
pub struct SymHasher(u64);

impl std::hash::Hasher for SymHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 29;
    }
}

pub type SymBuildHasher = std::hash::BuildHasherDefault<SymHasher>;
