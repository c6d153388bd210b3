//! The TTDL session: an interpreter with the standard library loaded, and the whole way from a
//! script to a verified plan, a simulation or a comparison — the same pipeline the command line
//! calls ([`ttdl_backend::pipeline`]). The command line, the REPL and embedders all hold one.
//! (Re-exported by the root package as `ttdl::session`.)

pub mod artifacts;
pub mod dag;

use std::fmt;
use std::path::Path;
pub use ttdl_lang::comm::FOLD_FAILED;

use ttdl_backend::pipeline::{self, ModelRun, PipelineError, Placed, Plan, Settings};
use ttdl_backend::progress::Progress;
use ttdl_backend::sim::drive::program::{SimError, SimReport};
use ttdl_ir::traffic::Traffic;
use ttdl_lang::{Diagnostic, Interpreter, Limits};

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
    /// A setting names something that does not exist, or the program cannot be planned.
    Plan(PipelineError),
    /// A model cannot run the program, or the run could not finish.
    Simulation(SimError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Io { path, message } => {
                write!(f, "error: cannot read `{path}`: {message}")
            }
            SessionError::Script { rendered, .. } => write!(f, "{}", rendered.trim_end()),
            SessionError::Plan(e) => write!(f, "error: {e}"),
            SessionError::Simulation(e) => write!(f, "error: {e}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// One TTDL session: an interpreter, usually with the standard library loaded first.
///
/// ```
/// use ttdl_session::Session;
///
/// let mut s = Session::without_stdlib();
/// let program = "(deftask a b)
///                (with-task a (write-stream 8 b))
///                (with-task b (read-stream 8 a))
///                (println \"two tasks\")";
/// s.eval_source("demo.ttdl", program).map_err(|d| s.render(&d)).unwrap();
/// assert_eq!(s.take_output(), "two tasks\n");
/// let traffic = s.traffic(None).map_err(|d| s.render(&d)).unwrap();
/// assert_eq!(traffic.messages.len(), 1);
/// assert_eq!(traffic.messages[0].size, 8);
/// ```
#[derive(Clone, Debug)]
pub struct Session {
    interp: Interpreter,
    /// The canned mapping plans use (overrides the script's `target :mapping`).
    mapping: Option<String>,
    /// Set (by Ctrl-C, say) to stop a running evaluation or plan.
    interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Session {
    /// A session with the standard library loaded and the default budget.
    pub fn new() -> Result<Session, SessionError> {
        Session::with_budget(Limits::default())
    }

    /// A session with the standard library loaded and the given budget.
    pub fn with_budget(budget: Limits) -> Result<Session, SessionError> {
        let mut s = Session {
            interp: Interpreter::new(budget),
            mapping: None,
            interrupt: None,
        };
        for (name, text) in ttdl_stdlib::SOURCES {
            s.eval_source(name, text).map_err(|d| s.script_error(d))?;
        }
        Ok(s)
    }

    /// A session without the standard library (scripts that opt out, tests).
    pub fn without_stdlib() -> Session {
        Session {
            interp: Interpreter::new(Limits::default()),
            mapping: None,
            interrupt: None,
        }
    }

    /// Same, with a budget.
    pub fn without_stdlib_with_budget(budget: Limits) -> Session {
        Session {
            interp: Interpreter::new(budget),
            mapping: None,
            interrupt: None,
        }
    }

    /// Plans place with this canned mapping (a `define-mapping` name) instead of the script's
    /// `target :mapping`.
    pub fn set_mapping(&mut self, mapping: Option<String>) {
        self.mapping = mapping;
    }

    pub fn mapping(&self) -> Option<&str> {
        self.mapping.as_deref()
    }

    /// A flag that, once set (say by Ctrl-C), stops the running evaluation with an
    /// `interrupted` error; the session and everything defined before stays.
    pub fn set_interrupt(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.interp.set_interrupt(flag.clone());
        self.interrupt = Some(flag);
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
        let mut traffic = self.interp.traffic(mapping)?;
        ttdl_backend::schedule::bounds::refine_unplaced_period(&mut traffic);
        Ok(traffic)
    }

    /// As [`Session::traffic`], a long `iterate` whose iterations repeat kept folded (the
    /// traffic's `repeat` is its count): what `check` and `run` take, so their cost does not
    /// grow with the repetition count. An error with code [`FOLD_FAILED`] asks for the source to
    /// be evaluated again with [`Session::set_fold`] off.
    pub fn traffic_folded(&self, mapping: Option<&str>) -> Result<Traffic, Vec<Diagnostic>> {
        let mut traffic = self.interp.traffic_folded(mapping)?;
        ttdl_backend::schedule::bounds::refine_unplaced_period(&mut traffic);
        Ok(traffic)
    }

    /// What `check` shows (SPEC §2): the program's communication timed as the program's own,
    /// before anything is placed — port-aware by default (each task's writes and reads pass one
    /// port each way, as on a node of its own), or Minsky's instant writes with `timing` =
    /// `thesis`. The command line's `check`, the REPL's `:check` and embedders all get it here,
    /// so they print the same critical path.
    pub fn check(
        &self,
        mapping: Option<&str>,
        timing: Option<&str>,
    ) -> Result<Traffic, SessionError> {
        let mut traffic = match self.traffic_folded(mapping) {
            // Iterations that looked alike but do not fold together: take them unrolled.
            Err(d) if d.iter().any(|d| d.code == FOLD_FAILED) => self.traffic(mapping),
            other => other,
        }
        .map_err(|d| self.script_error(d))?;
        Session::time_for_check(&mut traffic, timing)?;
        Ok(traffic)
    }

    /// The timing of [`Session::check`], for traffic read from a tasks file or a document.
    pub fn time_for_check(traffic: &mut Traffic, timing: Option<&str>) -> Result<(), SessionError> {
        pipeline::time_unplaced(traffic, timing).map_err(SessionError::Plan)
    }

    /// Whether evaluation folds long repeating `iterate`s (on by default). Off before loading
    /// anything, every iteration is evaluated.
    pub fn set_fold(&mut self, on: bool) {
        self.interp.set_fold(on);
    }

    /// Diagnostics rendered like `rustc`, without colour.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        self.interp.render(diagnostics, false)
    }

    /// Diagnostics rendered like `rustc`, colour optional.
    pub fn render_color(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        self.interp.render(diagnostics, color)
    }

    /// Places, routes, schedules, verifies and replays the program evaluated so far, with the
    /// settings table's defaults where neither `settings` nor the script's `(target …)` choose.
    ///
    /// ```
    /// use ttdl_session::Session;
    /// use ttdl_backend::pipeline::Settings;
    ///
    /// let mut s = Session::new().unwrap();
    /// s.eval_source("demo.ttdl", "(deftask a b)
    ///                             (with-task a (write-stream 8 b))
    ///                             (with-task b (read-stream 8 a))").unwrap();
    /// let plan = s.plan(&Settings::new().with("network", "mesh:2x1").unwrap()).unwrap();
    /// assert_eq!(plan.schedule.makespan, 8);
    /// assert!(plan.schedule.deadlines_met());
    /// assert!(plan.to_json().unwrap().contains("\"makespan\": 8"));
    /// ```
    pub fn plan(&self, overrides: &Settings) -> Result<Plan, SessionError> {
        let traffic = self
            .traffic(self.mapping.as_deref())
            .map_err(|d| self.script_error(d))?;
        // The interrupt flag stops the scheduler, the verifier and the replay too.
        let progress = match &self.interrupt {
            Some(flag) => Progress::new(None, flag.clone()),
            None => Progress::none(),
        };
        Session::plan_traffic(&traffic, overrides, &progress)
    }

    /// Plans `traffic` however it was read (a script, a tasks file, a plan document) with
    /// `settings` over the script's `target` and the table's defaults, reporting to `progress`:
    /// the one way every front end plans.
    pub fn plan_traffic(
        traffic: &Traffic,
        settings: &Settings,
        progress: &Progress,
    ) -> Result<Plan, SessionError> {
        let cfg = pipeline::resolve(traffic, settings).map_err(SessionError::Plan)?;
        pipeline::plan_with_progress(traffic, &cfg, progress).map_err(SessionError::Plan)
    }

    /// A plan document (`ttdl run --format json`) read back as its program and the settings it
    /// was planned with, to plan or run it again; `None` when the JSON is not a plan document.
    pub fn read_plan_document(text: &str) -> Result<Option<(Traffic, Settings)>, PipelineError> {
        pipeline::read_plan_document(text)
    }

    /// The program placed for the hardware models, as `plan` would place it.
    pub fn placed(&self, overrides: &Settings) -> Result<Placed, SessionError> {
        let traffic = self
            .traffic(self.mapping.as_deref())
            .map_err(|d| self.script_error(d))?;
        Session::place_traffic(&traffic, overrides)
    }

    /// `traffic` placed for the hardware models with `settings`, as [`Session::plan_traffic`]
    /// would place it.
    pub fn place_traffic(traffic: &Traffic, settings: &Settings) -> Result<Placed, SessionError> {
        pipeline::placed(traffic, settings).map_err(SessionError::Plan)
    }

    /// Runs the program on one hardware model (`"wormhole"`, `"circuit setup=3"`, `"scheduled"`).
    ///
    /// ```
    /// use ttdl_session::Session;
    /// use ttdl_backend::pipeline::Settings;
    ///
    /// let mut s = Session::new().unwrap();
    /// s.eval_source("demo.ttdl", "(deftask a b)
    ///                             (with-task a (write-stream 8 b))
    ///                             (with-task b (read-stream 8 a))").unwrap();
    /// let o = Settings::new().with("network", "mesh:2x1").unwrap();
    /// // One flit per cycle through one router: the header's hop, then 8 flits.
    /// assert_eq!(s.simulate(&o, "wormhole").unwrap().completion, 9);
    /// assert_eq!(s.simulate(&o, "scheduled").unwrap().completion, 8);
    /// ```
    pub fn simulate(&self, overrides: &Settings, model: &str) -> Result<SimReport, SessionError> {
        self.placed(overrides)?
            .simulate(model, None)
            .map_err(SessionError::Simulation)
    }

    /// Runs the program on each model, side by side; an empty list means every registered
    /// model's standard set. Each row holds its report or why it could not run or finish.
    ///
    /// ```
    /// use ttdl_session::Session;
    /// use ttdl_backend::pipeline::Settings;
    ///
    /// let mut s = Session::new().unwrap();
    /// s.eval_source("demo.ttdl", "(all-to-all-on (list (task 'a) (task 'b) (task 'c) (task 'd)))").unwrap();
    /// let o = Settings::new().with("network", "mesh:2x2").unwrap();
    /// let rows = s.compare(&o, &["scheduled", "store-forward", "pms", "compiled algorithm=aapc"]).unwrap();
    /// let done: Vec<u64> = rows.iter().filter_map(|r| r.result.as_ref().ok()).map(|r| r.completion).collect();
    /// assert!(done[0] <= done[1]);
    /// assert!(rows[2].result.is_ok()); // pms runs its circuits over the mesh's links
    /// assert!(rows[3].result.is_err()); // ordered AAPC needs a torus: it refuses a mesh and says so
    /// ```
    pub fn compare(
        &self,
        overrides: &Settings,
        models: &[&str],
    ) -> Result<Vec<ModelRun>, SessionError> {
        let placed = self.placed(overrides)?;
        let list = models.join(",");
        let specs = placed
            .compare_specs((!models.is_empty()).then_some(list.as_str()))
            .map_err(SessionError::Plan)?;
        Ok(placed.compare(&specs, None, |_| {}))
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
        let budget = Limits {
            steps: 1_000,
            ..Limits::default()
        };
        let mut s = Session::without_stdlib_with_budget(budget);
        let d = s.eval_source("t", "(define (f) (f)) (f)").unwrap_err();
        assert_eq!(d[0].code, "budget");
    }
}
