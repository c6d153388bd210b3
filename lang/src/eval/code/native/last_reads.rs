//! The reads of a compiled procedure's variables that are their last: on every path the code
//! can take from such a read, nothing reads the variable again. A variable of a compiled body
//! is never assigned (no `set!`, nothing captures it), so its value there is the one it holds
//! until the body lets it go: a last read can take the value over instead of counting it once
//! more, and the variable is let go of nothing later.
//!
//! That is what lets a list walked by a loop be freed as the walk goes: in
//! `(partition pivot (cdr l) (cons (car l) lo) hi)` the last read of `l` hands `l` to `car`,
//! which, holding the only count on the cell, frees it then and there, while it is in the cache;
//! counted again and let go when the procedure ends, the cell would have waited for the whole
//! list and been read a second time to be freed.

use std::collections::{HashMap, HashSet};

use super::super::super::ast::{Lambda, Node, NodeKind};
use super::super::FlatScope;

/// The `Local` nodes of `l`'s body that are their variable's last read, by address.
pub(super) fn last_reads(l: &Lambda, nvars: usize) -> HashSet<*const Node> {
    let mut r = Resolve {
        scope: FlatScope::new(&l.required),
        var_of: HashMap::new(),
        let_at: HashMap::new(),
    };
    for f in &l.body.forms {
        r.node(f);
    }
    let mut live = Live {
        var_of: r.var_of,
        let_at: r.let_at,
        last: HashSet::new(),
    };
    live.seq(&l.body.forms, Set::new(nvars));
    live.last
}

/// Variables live at a point: a bit each.
#[derive(Clone)]
struct Set(Vec<u64>);

impl Set {
    fn new(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64)])
    }

    fn has(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    fn add(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }

    fn union(mut self, other: &Set) -> Set {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
        self
    }
}

/// The variable each read reads and the first variable of each `let`, found in the order the
/// code is made, with the scopes [`super::Gen::flat_let`] opens ([`FlatScope::open_let`]: every
/// `let` takes the variables after all those before it).
struct Resolve {
    scope: FlatScope,
    var_of: HashMap<*const Node, usize>,
    let_at: HashMap<*const Node, usize>,
}

impl Resolve {
    fn node(&mut self, n: &Node) {
        match &n.kind {
            &NodeKind::Local(sym, slot) => {
                let i = self
                    .scope
                    .loc(sym, slot)
                    .expect("a flat body's locals resolve");
                self.var_of.insert(n, i as usize);
            }
            NodeKind::Call { func, args, .. } => {
                self.node(func);
                args.iter().for_each(|a| self.node(a));
            }
            NodeKind::If { test, then, other } => {
                self.node(test);
                self.node(then);
                if let Some(o) = other {
                    self.node(o);
                }
            }
            NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
                forms.iter().for_each(|f| self.node(f));
            }
            NodeKind::Cond(clauses) => {
                for c in clauses {
                    if let Some(t) = &c.test {
                        self.node(t);
                    }
                    c.body.iter().for_each(|f| self.node(f));
                }
            }
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => {
                let names: Vec<_> = bindings.iter().map(|(s, _)| *s).collect();
                let (offset, pending) = self.scope.open_let(names, *sequential);
                self.let_at.insert(n, offset as usize);
                for (i, (_, init)) in bindings.iter().enumerate() {
                    self.scope.let_init(i, *sequential);
                    self.node(init);
                }
                self.scope.let_body(pending);
                body.forms.iter().for_each(|f| self.node(f));
                self.scope.frames.pop();
            }
            _ => {}
        }
    }
}

/// Liveness backwards through the body: the variables read on some path after each point.
struct Live {
    var_of: HashMap<*const Node, usize>,
    let_at: HashMap<*const Node, usize>,
    last: HashSet<*const Node>,
}

impl Live {
    /// The variables live before `forms`, run in order, when `after` are live after them.
    fn seq(&mut self, forms: &[Node], after: Set) -> Set {
        forms.iter().rev().fold(after, |l, f| self.node(f, l))
    }

    fn node(&mut self, n: &Node, after: Set) -> Set {
        match &n.kind {
            NodeKind::Local(..) => {
                let i = self.var_of[&(n as *const Node)];
                let mut l = after;
                if !l.has(i) {
                    self.last.insert(n);
                }
                l.add(i);
                l
            }
            NodeKind::Call { func, args, .. } => {
                let l = self.seq(args, after);
                self.node(func, l)
            }
            NodeKind::If { test, then, other } => {
                let yes = self.node(then, after.clone());
                let no = match other {
                    Some(o) => self.node(o, after),
                    None => after,
                };
                self.node(test, yes.union(&no))
            }
            // A form of `and` or `or` goes on to the next or leaves with its value; what is live
            // after the form is what is live before the next (which holds what is live after).
            NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
                self.seq(forms, after)
            }
            NodeKind::Cond(clauses) => {
                // Past the last clause the value is `nil`.
                let mut next = after.clone();
                for c in clauses.iter().rev() {
                    let body = self.seq(&c.body, after.clone());
                    next = match &c.test {
                        None => body,
                        Some(t) => self.node(t, body.union(&next)),
                    };
                }
                next
            }
            NodeKind::Let { bindings, body, .. } => {
                let offset = self.let_at[&(n as *const Node)];
                let mut l = self.seq(&body.forms, after);
                // Each variable is bound once its initial value is made (a `let*`'s next
                // value reads it).
                for (i, (_, init)) in bindings.iter().enumerate().rev() {
                    l.remove(offset + i);
                    l = self.node(init, l);
                }
                l
            }
            _ => after,
        }
    }
}
