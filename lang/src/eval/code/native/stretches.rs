//! The stretches of a compiled procedure's body that read the pristine flag once.
//!
//! A builtin named globally is made in place only while the globals are pristine (see
//! [`Globals::pristine`]), so each such call read the flag and branched on it: nine times in a
//! step of a loop like the eight queens' `ok?`. But the flag can only be cleared by a procedure
//! the code calls (a compiled body assigns no global), and once cleared it stays cleared while the
//! code runs (it is set again only between evaluations, when a snapshot is taken back). So a
//! stretch of code that calls no procedure before its value is made, or before control leaves
//! in tail position, can read the flag once at its start and be made in copies: with every
//! builtin in place and no flag read (twice where it gives variables to integer arithmetic:
//! once for when they are all integers, see `Gen::stretch`), and with every builtin called the
//! general way.
//!
//! A stretch here is a node whose code calls nothing but builtins that are made in place or
//! that call no procedure (every [`Op`] but [`Op::Other`]), and that makes at least two of them
//! (one is already one read of the flag); only the outermost such nodes are taken.

use std::collections::HashSet;

use super::super::super::ast::{Body, Lambda, Node, NodeKind};
use super::super::super::builtins::Op;
use super::super::super::env::Globals;
use super::super::super::exec::INLINE_ARGS;

/// The nodes of `l`'s body to make as stretches, by address.
pub(super) fn stretches(globals: &Globals, l: &Lambda) -> HashSet<*const Node> {
    let mut s = Survey {
        globals,
        found: HashSet::new(),
    };
    s.body(&l.body, true);
    s.found
}

struct Survey<'a> {
    globals: &'a Globals,
    found: HashSet<*const Node>,
}

/// What a node's code does: whether it calls no procedure before its value is made (or control
/// leaves), and how many builtins it makes in place.
#[derive(Clone, Copy)]
struct Facts {
    free: bool,
    builtins: usize,
}

impl Facts {
    const LEAF: Facts = Facts {
        free: true,
        builtins: 0,
    };

    fn and(self, other: Facts) -> Facts {
        Facts {
            free: self.free && other.free,
            builtins: self.builtins + other.builtins,
        }
    }
}

impl Survey<'_> {
    fn body(&mut self, body: &Body, tail: bool) -> Facts {
        self.seq(&body.forms, tail)
    }

    fn seq(&mut self, forms: &[Node], tail: bool) -> Facts {
        let n = forms.len();
        forms.iter().enumerate().fold(Facts::LEAF, |f, (i, x)| {
            f.and(self.node(x, tail && i + 1 == n))
        })
    }

    /// A node's facts; the node is taken as a stretch when they say so, and then the stretches
    /// found inside it are dropped (it reads the flag for them).
    fn node(&mut self, n: &Node, tail: bool) -> Facts {
        let outer = std::mem::take(&mut self.found);
        let facts = self.facts(n, tail);
        let inner = std::mem::replace(&mut self.found, outer);
        if facts.free && facts.builtins >= 2 {
            self.found.insert(n);
        } else {
            self.found.extend(inner);
        }
        facts
    }

    fn facts(&mut self, n: &Node, tail: bool) -> Facts {
        match &n.kind {
            NodeKind::Call { func, args, .. } => {
                // Few enough arguments for a builtin to be made in place.
                let fit = args.len() <= INLINE_ARGS;
                let args = args
                    .iter()
                    .fold(Facts::LEAF, |f, a| f.and(self.node(a, false)));
                let fixed = match func.kind {
                    NodeKind::Global(sym) => self
                        .globals
                        .fixed_builtin(sym)
                        .filter(|b| b.op != Op::Other && fit),
                    _ => None,
                };
                if fixed.is_some() {
                    return Facts {
                        free: args.free,
                        builtins: args.builtins + 1,
                    };
                }
                // Any other call runs a procedure; in tail position, as control leaves.
                let head = self.node(func, false);
                Facts {
                    free: tail && head.free && args.free,
                    builtins: head.builtins + args.builtins,
                }
            }
            NodeKind::If { test, then, other } => {
                let f = self.node(test, false).and(self.node(then, tail));
                match other {
                    Some(o) => f.and(self.node(o, tail)),
                    None => f,
                }
            }
            NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
                self.seq(forms, tail)
            }
            NodeKind::Cond(clauses) => clauses.iter().fold(Facts::LEAF, |f, c| {
                let t = c.test.as_ref().map_or(Facts::LEAF, |t| self.node(t, false));
                f.and(t).and(self.seq(&c.body, tail))
            }),
            NodeKind::Let { bindings, body, .. } => bindings
                .iter()
                .fold(Facts::LEAF, |f, (_, x)| f.and(self.node(x, false)))
                .and(self.body(body, tail)),
            // Constants, locals, and globals read through Rust (which runs no procedure).
            _ => Facts::LEAF,
        }
    }
}
