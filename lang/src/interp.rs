//! The interpreter an embedder (CLI, REPL, tests) drives: read + evaluate sources, then hand the
//! communication built so far to the backend as `Traffic`.
//!
//! INTERFACE STUB: signatures are the contract; bodies are to be written.

use ttdl_backend::traffic::Traffic;

use crate::diagnostic::{Diagnostic, SourceMap};

/// Limits that stop runaway scripts within seconds, with a clear error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Evaluation steps in all.
    pub steps: u64,
    /// Nested (non-tail) call depth.
    pub depth: usize,
    pub tasks: usize,
    pub messages: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: 200_000_000,
            depth: 10_000,
            tasks: 1 << 20,
            messages: 1 << 24,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Interpreter {
    sources: SourceMap,
}

impl Interpreter {
    pub fn new(budget: Budget) -> Self {
        let _ = budget;
        Interpreter::default()
    }

    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// Reads and evaluates every form of a source text (a file or a REPL entry). On success,
    /// returns the printed value of the last form.
    pub fn eval_source(&mut self, name: &str, text: &str) -> Result<String, Vec<Diagnostic>> {
        let _ = (name, text);
        Err(vec![Diagnostic::new("todo", "the evaluator is not built yet")])
    }

    /// The communication built so far, matched and timed. `mapping` overrides `target :mapping`.
    pub fn traffic(&self, mapping: Option<&str>) -> Result<Traffic, Vec<Diagnostic>> {
        let _ = mapping;
        Err(vec![Diagnostic::new("todo", "the evaluator is not built yet")])
    }

    /// Names bound in the global environment, sorted (for completion).
    pub fn global_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// Diagnostics rendered like `rustc` (ariadne), colour optional.
    pub fn render(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        let _ = color;
        diagnostics
            .iter()
            .map(|d| format!("error[{}]: {}\n", d.code, d.message))
            .collect()
    }
}
