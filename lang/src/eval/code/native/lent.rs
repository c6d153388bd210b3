//! The parameters a compiled procedure borrows from its caller instead of owning.
//!
//! A procedure that reads a list its caller holds — `ok?` down the queens placed so far, a fold
//! over a tree, a sum down a list — took a count on each cell it stepped to and let go of the
//! one before: two writes to two cells per step, each read back by the next step. A parameter is
//! *lent* when the caller keeps its value alive for the whole call and the callee never lets go
//! of it: then every pair reached from it by `car` and `cdr` is alive too (pairs never change),
//! and the walk counts nothing.
//!
//! The callee's code keeps the value borrowed (a read is never a last read that takes it over;
//! nothing lets it go at the end), and a call of itself in tail position may pass only a
//! borrowed view of a lent parameter in a lent position (`(ok? row (+ dist 1) (cdr placed))`):
//! anything else there goes the general way, as a call of another procedure
//! ([`super::Gen::jump_to_self`]). A caller lends what it holds as it is and lets go of what it
//! made once the call returns; the entry from Rust lets go of the arguments it was handed.
//!
//! Lending pays where the procedure only reads the parameter; where it keeps part of it (conses
//! a half onto a new list, returns it, binds it, hands it to another procedure), owning is
//! better: the last read takes the value over and a list the callee alone holds is freed as it
//! is walked. So a parameter is lent when no half of it (`car`, `cdr` and their compositions) is
//! kept — every half is only looked at (tested, compared, counted, given to arithmetic,
//! returned) or passed back to the same parameter of a call of itself; the parameter kept whole
//! is counted where it is kept, as the caller's count would have been — and when a loop walks it
//! (a call of itself in tail position passes a view of it on) or a call of itself passes it on as
//! it is. A tree or a list made for the call
//! and folded by a recursion is better owned: the recursion frees it as it goes, where a lent
//! one would be freed by the caller afterwards, its cells out of the cache by then. The code
//! checks each call of itself as it makes it, so a guess that is wrong costs speed, not
//! answers.

use super::super::super::ast::{Lambda, Node, NodeKind};
use super::super::super::builtins::Op;
use super::super::super::env::Globals;

/// For each required parameter of `l`, whether it is lent.
pub(super) fn lent_params(globals: &Globals, l: &Lambda) -> Vec<bool> {
    let n = l.required.len();
    let mut s = Survey {
        globals,
        l,
        kept: vec![false; n],
        walked: vec![false; n],
        passed: vec![false; n],
    };
    // The value returned is counted once as it leaves, which costs no more than the caller's
    // count handed over would have: returned is as good as read.
    s.seq(&l.body.forms, Use::Read, true);
    (0..n)
        .map(|i| !s.kept[i] && (s.walked[i] || s.passed[i]))
        .collect()
}

struct Survey<'a> {
    globals: &'a Globals,
    l: &'a Lambda,
    /// The parameters a half of which is kept, or that a call of itself in tail position does
    /// not pass a view of on: better owned.
    kept: Vec<bool>,
    /// The parameters a call of itself in tail position passes a view of on: walked by a loop.
    walked: Vec<bool>,
    /// The parameters a call of itself passes on as they are.
    passed: Vec<bool>,
}

/// What is done with a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Looked at and dropped: tested, compared, counted, added.
    Read,
    /// Passed to parameter `i` of a call of the procedure itself (`half`: a half of it).
    Passed { i: usize, half: bool },
    /// Kept: bound, stored in a pair, handed to another procedure (`half`: a half of it).
    Kept { half: bool },
}

impl Use {
    /// The use of a value whose half is used so.
    fn of_half(self) -> Use {
        match self {
            Use::Read => Use::Read,
            Use::Passed { i, .. } => Use::Passed { i, half: true },
            Use::Kept { .. } => Use::Kept { half: true },
        }
    }
}

impl Survey<'_> {
    /// A sequence, its last form in the sequence's use and tail position.
    fn seq(&mut self, forms: &[Node], u: Use, tail: bool) {
        if let Some((last, init)) = forms.split_last() {
            for f in init {
                self.node(f, Use::Read, false);
            }
            self.node(last, u, tail);
        }
    }

    fn node(&mut self, n: &Node, u: Use, tail: bool) {
        match &n.kind {
            NodeKind::Local(sym, _) => {
                if let Some(i) = self.l.required.iter().position(|p| p == sym) {
                    match u {
                        // A lent value kept whole is counted where it is kept, as the caller's
                        // would have been; a half kept is what a last read would have taken.
                        Use::Read | Use::Kept { half: false } => {}
                        Use::Passed { i: j, half } if j == i => {
                            if !half {
                                self.passed[i] = true;
                            }
                        }
                        Use::Passed { half: false, .. } => {}
                        Use::Passed { half: true, .. } | Use::Kept { half: true } => {
                            self.kept[i] = true
                        }
                    }
                }
            }
            NodeKind::Call { func, args, .. } => self.call(func, args, u, tail),
            NodeKind::If { test, then, other } => {
                self.node(test, Use::Read, false);
                self.node(then, u, tail);
                if let Some(o) = other {
                    self.node(o, u, tail);
                }
            }
            NodeKind::Begin(forms) => self.seq(forms, u, tail),
            // A form of `and` or `or` may be the value of the whole.
            NodeKind::And(forms) | NodeKind::Or(forms) => {
                if let Some((last, init)) = forms.split_last() {
                    for f in init {
                        self.node(f, u, false);
                    }
                    self.node(last, u, tail);
                }
            }
            NodeKind::Cond(clauses) => {
                for c in clauses {
                    if let Some(t) = &c.test {
                        let tu = if c.body.is_empty() { u } else { Use::Read };
                        self.node(t, tu, false);
                    }
                    self.seq(&c.body, u, tail);
                }
            }
            NodeKind::Let { bindings, body, .. } => {
                for (_, init) in bindings {
                    self.node(init, Use::Kept { half: false }, false);
                }
                self.seq(&body.forms, u, tail);
            }
            _ => {}
        }
    }

    fn call(&mut self, func: &Node, args: &[Node], u: Use, tail: bool) {
        let NodeKind::Global(sym) = func.kind else {
            self.node(func, Use::Kept { half: false }, false);
            for a in args {
                self.node(a, Use::Kept { half: false }, false);
            }
            return;
        };
        if let Some(b) = self.globals.fixed_builtin(sym) {
            let arg = match b.op {
                // A half is what its pair is: a view, used as the half is.
                op if op.is_half() && args.len() == 1 => u.of_half(),
                // Stored, or handed to a builtin that may keep it.
                Op::Cons | Op::List | Op::Other => Use::Kept { half: false },
                _ => Use::Read,
            };
            for a in args {
                self.node(a, arg, false);
            }
            return;
        }
        let to_self = self.l.name == Some(sym) && args.len() == self.l.required.len();
        for (j, a) in args.iter().enumerate() {
            // A call of itself in tail position jumps: a lent parameter takes a view of itself
            // there, or it is not lent (one not in tail position lends what it is given).
            if to_self && tail {
                if self.view_of(j, a) {
                    self.walked[j] = true;
                } else {
                    self.kept[j] = true;
                }
            }
            self.node(
                a,
                if to_self {
                    Use::Passed { i: j, half: false }
                } else {
                    Use::Kept { half: false }
                },
                false,
            );
        }
    }

    /// Whether `n` reads parameter `i`, or a half of a half … of it.
    fn view_of(&self, i: usize, n: &Node) -> bool {
        match &n.kind {
            NodeKind::Local(sym, _) => *sym == self.l.required[i],
            NodeKind::Call { func, args, .. } => {
                let NodeKind::Global(sym) = func.kind else {
                    return false;
                };
                let half = self
                    .globals
                    .fixed_builtin(sym)
                    .is_some_and(|b| b.op.is_half());
                half && args.len() == 1 && self.view_of(i, &args[0])
            }
            _ => false,
        }
    }
}
