//! The evaluator: values, persistent environments, special forms, builtins, macros, tail calls,
//! and the glue to the communication and network forms. One file per concern:
//!
//! - `symbol`: interned symbols; `value`: runtime values; `env`: local scopes and globals
//! - `ast` + `compile`: source → analysed nodes (special forms, macro expansion)
//! - `exec`: evaluation with a trampoline for tail calls and a depth budget
//! - `builtins` (+ `numeric`, `format`): the builtin procedures, in one table
//! - `comm_forms`: `deftask`, `task`, `defmessage`, `define-comm` calls, stream forms
//! - `network_forms`: `make-network`, `network-tasks`, `neighbor`, mappings, `target`

pub mod ast;
pub mod builtins;
pub mod comm_forms;
pub mod compile;
pub mod convert;
pub mod env;
pub mod exec;
pub mod format;
pub mod machine;
pub mod network_forms;
pub mod numeric;
pub mod symbol;
pub mod value;

pub use env::Env;
pub use machine::Machine;
pub use symbol::Sym;
pub use value::Value;

use crate::diagnostic::Diagnostic;
use crate::sexpr::Sexpr;

/// Names the compiler treats as special forms (offered as suggestions for unbound names).
pub const SPECIAL_FORMS: &[&str] = &[
    "quote",
    "quasiquote",
    "define",
    "defvar",
    "defparameter",
    "defun",
    "set!",
    "setf",
    "lambda",
    "let",
    "let*",
    "if",
    "when",
    "unless",
    "cond",
    "and",
    "or",
    "begin",
    "progn",
    "sequence",
    "dotimes",
    "dolist",
    "defmacro",
    "define-comm",
    "define-mapping",
    "iterate",
    "deftask",
    "task",
    "defmessage",
    "synchronize",
    "with-task",
    "make-network",
    "target",
];

impl Machine {
    /// Compiles and evaluates one top-level form. A top-level `begin` is taken one part at a
    /// time, so a macro it defines can be used by the parts after it.
    pub fn eval_top(&mut self, form: &Sexpr) -> Result<Value, Diagnostic> {
        if let Some(parts) = compile::top_level_parts(form) {
            let mut last = Value::Nil;
            for p in parts {
                last = self.eval_top(p)?;
            }
            return Ok(last);
        }
        let node = compile::compile_top(self, form)?;
        let r = self.eval(&node, &Env::new());
        if r.is_err() {
            // An error unwinds everything: no task context or call depth survives it.
            self.ctx.clear();
            self.depth = 0;
            self.expansions = 0;
        }
        r
    }
}
