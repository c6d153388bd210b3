//! `ttdl::Session`: an interpreter with the standard library loaded, and the way from a script to
//! the backend's `Traffic`.

use std::fmt;
use std::path::Path;

use ttdl_backend::traffic::Traffic;
use ttdl_lang::{Budget, Diagnostic, Interpreter};

/// Why loading or evaluating something failed.
#[derive(Debug)]
pub enum SessionError {
    /// A file could not be read.
    Io { path: String, message: String },
    /// The script is wrong; `rendered` shows the diagnostics like `rustc`.
    Script {
        diagnostics: Vec<Diagnostic>,
        rendered: String,
    },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Io { path, message } => {
                write!(f, "error: cannot read `{path}`: {message}")
            }
            SessionError::Script { rendered, .. } => write!(f, "{}", rendered.trim_end()),
        }
    }
}

impl std::error::Error for SessionError {}

/// One TTDL session: an interpreter, usually with the standard library loaded first.
#[derive(Clone, Debug)]
pub struct Session {
    interp: Interpreter,
}

impl Session {
    /// A session with the standard library loaded and the default budget.
    pub fn new() -> Result<Session, SessionError> {
        Session::with_budget(Budget::default())
    }

    /// A session with the standard library loaded and the given budget.
    pub fn with_budget(budget: Budget) -> Result<Session, SessionError> {
        let mut s = Session {
            interp: Interpreter::new(budget),
        };
        for (name, text) in ttdl_stdlib::SOURCES {
            s.eval_source(name, text).map_err(|d| s.script_error(d))?;
        }
        Ok(s)
    }

    /// A session without the standard library (scripts that opt out, tests).
    pub fn without_stdlib() -> Session {
        Session {
            interp: Interpreter::new(Budget::default()),
        }
    }

    /// Same, with a budget.
    pub fn without_stdlib_with_budget(budget: Budget) -> Session {
        Session {
            interp: Interpreter::new(budget),
        }
    }

    pub fn interpreter(&self) -> &Interpreter {
        &self.interp
    }

    pub fn interpreter_mut(&mut self) -> &mut Interpreter {
        &mut self.interp
    }

    /// Reads and evaluates a file; returns the printed value of its last form.
    pub fn load_file(&mut self, path: impl AsRef<Path>) -> Result<String, SessionError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| SessionError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let name = path.display().to_string();
        self.eval_source(&name, &text)
            .map_err(|d| self.script_error(d))
    }

    /// Evaluates a source text (a file's contents or a REPL entry).
    pub fn eval_source(&mut self, name: &str, text: &str) -> Result<String, Vec<Diagnostic>> {
        self.interp.eval_source(name, text)
    }

    /// What the program printed since the last call.
    pub fn take_output(&mut self) -> String {
        self.interp.take_output()
    }

    /// The communication built so far, matched and timed; `mapping` overrides the script's
    /// `target :mapping`.
    pub fn traffic(&self, mapping: Option<&str>) -> Result<Traffic, Vec<Diagnostic>> {
        self.interp.traffic(mapping)
    }

    /// Diagnostics rendered like `rustc`, without colour.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        self.interp.render(diagnostics, false)
    }

    /// Diagnostics rendered like `rustc`, colour optional.
    pub fn render_color(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        self.interp.render(diagnostics, color)
    }

    /// Wraps diagnostics with their rendering.
    pub fn script_error(&self, diagnostics: Vec<Diagnostic>) -> SessionError {
        let rendered = self.render(&diagnostics);
        SessionError::Script {
            diagnostics,
            rendered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_loads_the_standard_library() {
        let mut s = Session::new().unwrap_or_else(|e| panic!("{e}"));
        let names = s.interpreter().global_names();
        assert!(names.iter().any(|n| n == "torus->mesh"), "{names:?}");
        let bare = Session::without_stdlib();
        assert!(!bare
            .interpreter()
            .global_names()
            .iter()
            .any(|n| n == "torus->mesh"));
        assert_eq!(s.eval_source("t", "(+ 1 2)").ok().as_deref(), Some("3"));
    }

    #[test]
    fn unreadable_file_is_a_clear_error() {
        let mut s = Session::without_stdlib();
        let e = s.load_file("/nonexistent/prog.ttdl").unwrap_err();
        assert!(matches!(e, SessionError::Io { .. }));
        assert!(
            e.to_string()
                .contains("cannot read `/nonexistent/prog.ttdl`"),
            "{e}"
        );
    }

    #[test]
    fn load_file_evaluates_and_reports_script_errors() {
        let dir = std::env::temp_dir().join(format!("ttdl-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let good = dir.join("good.ttdl");
        let bad = dir.join("bad.ttdl");
        std::fs::write(
            &good,
            "(deftask a b)\n(with-task a (write-stream 4 b))\n(with-task b (read-stream 4 a))\n",
        )
        .unwrap_or_default();
        std::fs::write(&bad, "(define x 1)\n(+ x y)\n").unwrap_or_default();
        let mut s = Session::without_stdlib();
        assert!(s.load_file(&good).is_ok());
        let t = s
            .traffic(None)
            .unwrap_or_else(|d| panic!("{}", s.render(&d)));
        assert_eq!(t.messages.len(), 1);
        let e = s.load_file(&bad).unwrap_err();
        let SessionError::Script {
            diagnostics,
            rendered,
        } = &e
        else {
            panic!("expected a script error: {e}");
        };
        assert_eq!(diagnostics[0].code, "unbound");
        assert!(rendered.contains("bad.ttdl:2:"), "{rendered}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn budgets_are_passed_on() {
        let budget = Budget {
            steps: 1_000,
            ..Budget::default()
        };
        let mut s = Session::without_stdlib_with_budget(budget);
        let d = s.eval_source("t", "(define (f) (f)) (f)").unwrap_err();
        assert_eq!(d[0].code, "budget");
    }
}
