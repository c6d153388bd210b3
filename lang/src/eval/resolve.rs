//! Lexical addressing: after a top-level form is compiled, every variable reference is resolved
//! to where its binding will be at run time — `depth` frames out, slot `index` of that frame — or
//! to the global table, when no enclosing frame binds the name. Evaluating a reference is then a
//! few pointer steps instead of a search of every enclosing frame by name.
//!
//! The pass mirrors exactly the frames `exec` makes: a call's frame holds the required, optional
//! and rest parameters in that order; a body with internal `define`s adds a frame of them (sorted,
//! as [`Body::defines`]); `let`/`let*` add one frame of their bindings; `dotimes`/`dolist` one frame
//! of their variable. It runs once the whole form is compiled, so a body's `define`s are all known
//! however late (or from whatever macro expansion) they appear.
//!
//! A name is resolved against each frame's complete contents, last binding first, as the lookup by
//! name did. A frame is filled one binding at a time (`let*`, optional parameters' defaults), so
//! at run time the slot may not be filled yet; then the evaluator falls back to the lookup by name
//! ([`super::env::Env::get`]), which finds what it always found. Every answer is the one the
//! search by name gives.

use std::rc::Rc;

use super::ast::{Body, KeyArg, Lambda, Node, NodeKind, Quasi, QuasiItem, Soft};
use super::symbol::Sym;

/// Where a local variable lives: `depth` frames out from the current one, slot `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub depth: u32,
    pub index: u32,
}

/// Resolves the variable references of a freshly compiled top-level form.
pub fn resolve_top(node: &mut Node) {
    Resolver { frames: Vec::new() }.node(node);
}

struct Resolver {
    /// The frames enclosing the current node at run time, innermost last, each with its names in
    /// binding order.
    frames: Vec<Vec<Sym>>,
}

impl Resolver {
    fn slot(&self, sym: Sym) -> Option<Slot> {
        for (depth, frame) in self.frames.iter().rev().enumerate() {
            if let Some(index) = frame.iter().rposition(|&s| s == sym) {
                return Some(Slot {
                    depth: u32::try_from(depth).ok()?,
                    index: u32::try_from(index).ok()?,
                });
            }
        }
        None
    }

    fn nodes(&mut self, nodes: &mut [Node]) {
        for n in nodes {
            self.node(n);
        }
    }

    fn soft(&mut self, s: &mut Soft) {
        if let Soft::Expr(n) = s {
            self.node(n);
        }
    }

    fn key_args(&mut self, args: &mut [KeyArg]) {
        for a in args {
            self.soft(&mut a.value);
        }
    }

    /// A body run in the current frame: its `define`s get a frame of their own.
    fn body(&mut self, body: &mut Body) {
        if body.defines.is_empty() {
            self.nodes(&mut body.forms);
        } else {
            self.frames.push(body.defines.clone());
            self.nodes(&mut body.forms);
            self.frames.pop();
        }
    }

    fn lambda(&mut self, l: &mut Rc<Lambda>) {
        // A lambda is shared only once closures are made from it, after this pass; should it be
        // shared anyway, its references keep the lookup by name, which is always right.
        let Some(l) = Rc::get_mut(l) else {
            return;
        };
        let mut params = l.required.clone();
        params.extend(l.optional.iter().map(|(s, _)| *s));
        params.extend(l.rest);
        self.frames.push(params);
        for (_, default) in &mut l.optional {
            if let Some(d) = default {
                self.node(d);
            }
        }
        self.body(&mut l.body);
        self.frames.pop();
    }

    fn quasi(&mut self, q: &mut Quasi) {
        match q {
            Quasi::Const(_) => {}
            Quasi::Unquote(n) => self.node(n),
            Quasi::List(items) => {
                for item in items {
                    match item {
                        QuasiItem::One(q) => self.quasi(q),
                        QuasiItem::Splice(n) => self.node(n),
                    }
                }
            }
        }
    }

    fn node(&mut self, node: &mut Node) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.node_inner(node))
    }

    fn node_inner(&mut self, node: &mut Node) {
        match &mut node.kind {
            NodeKind::Var(sym) => {
                node.kind = match self.slot(*sym) {
                    Some(slot) => NodeKind::Local(*sym, slot),
                    None => NodeKind::Global(*sym),
                };
            }
            NodeKind::Const(_)
            | NodeKind::Local(..)
            | NodeKind::Global(_)
            | NodeKind::Deftask(_) => {}
            NodeKind::Define { value, .. } => self.node(value),
            NodeKind::Set { name, value, slot } => {
                *slot = self.slot(*name);
                self.node(value);
            }
            NodeKind::If { test, then, other } => {
                self.node(test);
                self.node(then);
                if let Some(o) = other {
                    self.node(o);
                }
            }
            NodeKind::Lambda(l) | NodeKind::DefMacro(l) => self.lambda(l),
            NodeKind::DefineProc { lambda, .. } => self.lambda(lambda),
            NodeKind::Let {
                bindings,
                body,
                sequential,
            } => {
                let names: Vec<Sym> = bindings.iter().map(|(s, _)| *s).collect();
                if *sequential {
                    // `let*`: each init runs in the new frame, with the bindings before it.
                    self.frames.push(names);
                    for (_, init) in bindings.iter_mut() {
                        self.node(init);
                    }
                } else {
                    for (_, init) in bindings.iter_mut() {
                        self.node(init);
                    }
                    self.frames.push(names);
                }
                self.body(body);
                self.frames.pop();
            }
            NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => {
                self.nodes(forms)
            }
            NodeKind::Cond(clauses) => {
                for c in clauses {
                    if let Some(t) = &mut c.test {
                        self.node(t);
                    }
                    self.nodes(&mut c.body);
                }
            }
            NodeKind::Case {
                key,
                clauses,
                default,
            } => {
                self.node(key);
                for (_, body) in clauses {
                    self.nodes(body);
                }
                if let Some(d) = default {
                    self.nodes(d);
                }
            }
            NodeKind::While { test, body } => {
                self.node(test);
                self.nodes(body);
            }
            NodeKind::Dotimes {
                var,
                count: over,
                result,
                body,
            }
            | NodeKind::Dolist {
                var,
                list: over,
                result,
                body,
            } => {
                self.node(over);
                self.frames.push(vec![*var]);
                self.nodes(body);
                if let Some(r) = result {
                    self.node(r);
                }
                self.frames.pop();
            }
            NodeKind::Call { func, args, .. } => {
                self.node(func);
                self.nodes(args);
            }
            NodeKind::Quasi(q) => self.quasi(q),
            NodeKind::Iterate { body, count } => {
                self.nodes(body);
                self.node(count);
            }
            NodeKind::Task(s) | NodeKind::Synchronize(s) => self.soft(s),
            NodeKind::Defmessage { size, .. } => self.node(size),
            NodeKind::WithTask { task, body } => {
                self.node(task);
                self.nodes(body);
            }
            NodeKind::MakeNetwork(args) => self.key_args(args),
            NodeKind::Target { network, options } => {
                self.node(network);
                self.key_args(options);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Interpreter, Limits};

    fn run(src: &str) -> String {
        let mut i = Interpreter::new(Limits::default());
        match i.eval_source("t.ttdl", src) {
            Ok(v) => v,
            Err(d) => format!("error: {}", d[0].message),
        }
    }

    /// Resolved references answer what the search by name answered, even where a frame is
    /// still being filled when a reference runs.
    #[test]
    fn resolved_references_agree_with_the_search_by_name() {
        // `let*`: a reference in an init runs before later bindings exist; a closure made there
        // and called afterwards sees the frame complete (the latest binding of a name).
        assert_eq!(
            run("(let ((x 1)) (let* ((a x) (x 2)) (list a x)))"),
            "(1 2)"
        );
        assert_eq!(
            run("(let ((x 1)) (let* ((f (lambda () x)) (x 2)) (f)))"),
            "2"
        );
        assert_eq!(
            run("(let* ((x 1) (y (+ x 1)) (x (* y 10))) (list x y))"),
            "(20 2)"
        );
        // Optional parameters' defaults see the parameters before them.
        assert_eq!(
            run("(define (f a &optional (b (+ a 1)) (c (* b 2))) (list a b c)) (f 1)"),
            "(1 2 4)"
        );
        // `set!` of a captured variable, seen by every closure that shares it.
        assert_eq!(
            run(
                "(define (counter) (let ((n 0)) (lambda () (set! n (+ n 1)) n))) \
                 (define c (counter)) (c) (c) (c)"
            ),
            "3"
        );
        // Internal defines: mutual recursion, and a define inside a loop assigns the nearest
        // binding of its name.
        assert_eq!(
            run(
                "(define (f n) (define (ev? k) (if (= k 0) #t (od? (- k 1)))) \
                 (define (od? k) (if (= k 0) #f (ev? (- k 1)))) (ev? n)) (f 10)"
            ),
            "#t"
        );
        assert_eq!(
            run("(define (g) (define k 0) (dotimes (i 3) (define k i)) k) (g)"),
            "2"
        );
        // Named let, and a global assigned from inside a procedure.
        assert_eq!(
            run("(let loop ((i 0) (acc nil)) (if (= i 3) acc (loop (+ i 1) (cons i acc))))"),
            "(2 1 0)"
        );
        assert_eq!(
            run("(define z 1) (define (bump) (set! z (+ z 1))) (bump) z"),
            "2"
        );
        // Duplicate parameters: the last one, as before.
        assert_eq!(run("((lambda (x x) x) 1 2)"), "2");
        assert_eq!(run("(dolist (x '(1 2) x) x)"), "nil");
        assert_eq!(run("(dotimes (i 3 i) i)"), "3");
        assert_eq!(
            run("(define (h) undefined-name) (h)"),
            "error: unbound variable `undefined-name`"
        );
    }
}
