//! The evaluator: values, persistent environments, special forms, builtins, macros, tail calls,
//! and the glue to the communication and network forms. One file per concern:
//!
//! - `symbol`: interned symbols; `value`: runtime values (`cons`: the shared cons cell); `env`:
//!   local scopes and globals
//! - `ast` + `compile`: source → analysed nodes (special forms, macro expansion); `resolve`: each
//!   variable reference's frame and slot
//! - `exec`: evaluation with a trampoline for tail calls and a depth budget (top-level forms, the
//!   forms rare in procedures, and procedure calls); `code`: procedure bodies compiled once into
//!   closures that return values in registers, with the walk's steps, answers and errors, and
//!   `code::native`: the bodies of hot list procedures compiled to machine code (Cranelift),
//!   with the same steps, answers and errors
//! - `builtins` (+ `numeric`, `format`): the builtin procedures, in one table
//! - `comm_forms`: `deftask`, `task`, `defmessage`, `define-comm` calls, stream forms
//! - `network_forms`: `make-network`, `network-tasks`, `neighbor`, mappings, `target`
//!
//! Choices where the specification is silent (a Lisp user's expectations, Scheme or Common Lisp):
//! - `/` on integers is exact when they divide evenly and a float otherwise; `quotient` truncates;
//!   `mod` takes the sign of the divisor; `sqrt` of a perfect square is an integer.
//! - `(reduce F LIST)` and `(reduce F INIT LIST)` fold from the left with `(F acc x)`; `nth` is
//!   Common Lisp's `(nth N LIST)`, `list-ref` Scheme's; `last` is the last element; `member` and
//!   `assoc` compare with `equal?`; `(range END)`, `(range START END [STEP])` exclude END;
//!   `(iota COUNT [START [STEP]])` as in SRFI-1.
//! - `print` writes its argument without a newline, `println` writes its arguments separated by
//!   spaces and a newline; output is collected (`Interpreter::take_output`).
//! - A body's internal `define`s are visible to the whole body (so local procedures can call each
//!   other); `set!` of a name that is not defined is an `unbound` error.
//! - Where the thesis writes bare names — `(synchronize phase-zero)`, `(task t3)`,
//!   `:topology mesh`, `:place anneal`, `:mapping torus->mesh` — a bare symbol means its value
//!   when it is bound (to something that fits) and the name itself otherwise. `east west north
//!   south up down` are bound to themselves so `(neighbor net t east)` works unquoted.
//! - `(with-task T body…)` runs stream forms in the context of `T` without a `define-comm`.
//! - Beyond the specified forms: `defun`, named `let`, `case`, `while`; builtins such as
//!   `for-each remove gensym 1+ 1- ash logand logior logxor`, type predicates, `task-name`,
//!   `task-id`, `message-size`, `current-task`, `network-size`, `network-dims`, `network-kind`.
//! - `network-tasks` names its tasks by coordinates (`t2_3`); tasks of a second network get a
//!   prefix (`n1.t2_3`).
//! - The step budget restarts with each evaluated source (a file or a REPL entry). A loop whose
//!   count is more than the steps left, or whose first iteration shows it cannot finish within
//!   them, is refused at once (`runaway-loop`).

pub mod ast;
pub mod builtins;
pub mod code;
pub mod comm_forms;
pub mod compile;
pub mod cons;
pub mod convert;
pub mod env;
pub mod exec;
pub mod format;
pub mod machine;
pub mod network_forms;
pub mod numeric;
pub mod resolve;
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
    "case",
    "while",
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
    /// Compiles and evaluates top-level forms in turn (a file, a REPL entry) until the first
    /// error, returning the last value.
    ///
    /// They run on a stack of their own, reserved once and large enough for any recursion the
    /// depth budget allows: a recursion thousands of calls deep otherwise outgrew the thread's
    /// stack, and each of its descents past that point mapped, faulted in and unmapped a fresh
    /// segment (a hand-written `map` 5,000 calls deep spent more time there than evaluating).
    /// Only the pages the forms touch become resident; reserving costs some microseconds, once
    /// per source rather than once per form.
    pub fn eval_top_all(&mut self, forms: &[Sexpr]) -> Result<Value, Diagnostic> {
        stacker::grow(exec::EVAL_STACK, || {
            let mut last = Value::Nil;
            for f in forms {
                last = self.eval_top(f)?;
            }
            Ok(last)
        })
    }

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
        // A top-level form is over: no call of it is still running, so every frame left holding
        // only its own closures is garbage now.
        self.frames.collect_cycles();
        if r.is_err() {
            // An error unwinds everything: no task context or call depth survives it.
            self.ctx.clear();
            self.depth = 0;
            self.expansions = 0;
        }
        r
    }
}
