//! The extension module `ttdl._ttdl`: a `Session` class over [`ttdl_session::Session`], a
//! `Plan` class over the pipeline's plan, and the exceptions. Results cross as the JSON the
//! command line writes; the package's Python code (`python/ttdl/__init__.py`) turns it into
//! dicts and DataFrames.

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use ttdl_backend::pipeline::{self, PipelineError};
use ttdl_backend::report;
use ttdl_backend::sim::drive::program::SimError;
use ttdl_backend::sim::options::OptionSpec;
use ttdl_backend::sim::registry;
use ttdl_lang::{Diagnostic, Limits};
use ttdl_session::{artifacts, Session, SessionError};

use crate::settings::{self, Settings, Value};

create_exception!(
    ttdl,
    TtdlError,
    PyException,
    "Anything TTDL refuses: the base of ScriptError, PlanError and SimulationError."
);
create_exception!(
    ttdl,
    ScriptError,
    TtdlError,
    "The script is wrong. str(e) is the diagnostic rendered like rustc's (file, line, column, \
     the source underlined); e.diagnostics lists each as a dict (code, message, help, notes)."
);
create_exception!(
    ttdl,
    PlanError,
    TtdlError,
    "The program cannot be planned on the network asked for."
);
create_exception!(
    ttdl,
    SimulationError,
    TtdlError,
    "A hardware model did not finish the program (deadlock, livelock or the cycle cap)."
);

/// A script error carrying its rendering and its diagnostics.
fn script_error(py: Python<'_>, rendered: &str, diagnostics: &[Diagnostic]) -> PyErr {
    let err = ScriptError::new_err(rendered.trim_end().to_string());
    let list: PyResult<Vec<Bound<'_, PyDict>>> = diagnostics
        .iter()
        .map(|d| {
            let dict = PyDict::new(py);
            dict.set_item("code", &d.code)?;
            dict.set_item("message", &d.message)?;
            dict.set_item("help", &d.help)?;
            dict.set_item("notes", &d.notes)?;
            Ok(dict)
        })
        .collect();
    let attached = list.and_then(|l| err.value(py).setattr("diagnostics", l));
    match attached {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A pipeline error as the matching Python exception: a bad setting is a `ValueError` (the
/// command line's usage error), a program that cannot be planned a `PlanError`.
fn pipeline_error(e: PipelineError) -> PyErr {
    match e {
        PipelineError::Config(s) => PyValueError::new_err(s),
        PipelineError::Input(s) => PlanError::new_err(s),
        PipelineError::Internal(s) => PlanError::new_err(format!(
            "internal error: {s}\nThis is a bug in TTDL; please report it with the input that caused it."
        )),
        PipelineError::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
    }
}

fn simulation_error(e: SimError) -> PyErr {
    match e {
        // A bad model name or option, or a model that cannot run on this network.
        SimError::Model(m) => PyValueError::new_err(m.to_string()),
        e @ SimError::Unfinished { .. } => SimulationError::new_err(e.to_string()),
    }
}

fn session_error(py: Python<'_>, e: SessionError) -> PyErr {
    match e {
        SessionError::Io { path, message } => {
            PyOSError::new_err(format!("cannot read `{path}`: {message}"))
        }
        SessionError::Script {
            diagnostics,
            rendered,
        } => script_error(py, &rendered, &diagnostics),
        SessionError::Plan(e) => pipeline_error(e),
        SessionError::Simulation(e) => simulation_error(e),
    }
}

/// A keyword argument's value, for [`settings::settings_from_kwargs`].
fn value_of(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    Ok(if v.is_none() {
        Value::None
    } else if v.is_instance_of::<PyBool>() {
        Value::Bool(v.extract()?)
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => return Err(PyValueError::new_err(format!("{v} is too large"))),
        }
    } else if v.is_instance_of::<PyString>() {
        Value::Str(v.extract()?)
    } else {
        Value::Other(v.get_type().name()?.to_string())
    })
}

/// A model option's value as the model reads it: `vc=2`, `arb=oldest`, `preload=true`.
fn option_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        Ok(if v.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .to_string())
    } else if v.is_instance_of::<PyInt>()
        || v.is_instance_of::<PyFloat>()
        || v.is_instance_of::<PyString>()
    {
        Ok(v.str()?.to_string())
    } else {
        Err(PyValueError::new_err(format!(
            "a model option takes a number, a string or a bool, not a value of type {}",
            v.get_type().name()?
        )))
    }
}

/// The options model `spec` (`"circuit"`, `"wormhole vc=2"`) declares; none for a name no
/// model has (building it then says so).
fn model_options(spec: &str) -> &'static [OptionSpec] {
    let name = spec.trim().split([' ', ':']).next().unwrap_or("");
    registry::find(name).map_or(&[], |m| m.options)
}

/// The keyword arguments split into plan settings and, when `options` is given, the model's
/// own `key=value` options: every name the model declares (`circuit`'s `setup`, `warp`'s
/// `seed`, as after `ttdl simulate --model`), and every name that is not a plan setting (the
/// model then says what it takes).
fn split_kwargs(
    kwargs: Option<&Bound<'_, PyDict>>,
    mut options: Option<(&[OptionSpec], &mut Vec<String>)>,
) -> PyResult<Settings> {
    let mut pairs = Vec::new();
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            let name: String = k.extract()?;
            match options.as_mut() {
                Some((declared, opts))
                    if declared.iter().any(|o| o.key == name) || !settings::is_setting(&name) =>
                {
                    if !v.is_none() {
                        opts.push(format!("{name}={}", option_text(&v)?));
                    }
                }
                _ => pairs.push((name, value_of(&v)?)),
            }
        }
    }
    settings::settings_from_kwargs(&pairs).map_err(PyValueError::new_err)
}

/// A TTDL session: an interpreter with the standard library loaded, and the way from the
/// program evaluated so far to a plan, a simulation or a comparison. (Unsendable: the
/// interpreter's values are reference-counted for one thread, so a session stays on the thread
/// that made it.)
#[pyclass(name = "Session", module = "ttdl._ttdl", unsendable)]
struct PySession {
    inner: Session,
}

impl PySession {
    /// Runs `f` with the session's canned mapping set to `mapping` (when given), then puts the
    /// session's own back.
    fn with_mapping<T>(
        &mut self,
        mapping: Option<String>,
        f: impl FnOnce(&Session) -> Result<T, SessionError>,
    ) -> Result<T, SessionError> {
        match mapping {
            None => f(&self.inner),
            Some(m) => {
                let saved = self.inner.mapping().map(str::to_string);
                self.inner.set_mapping(Some(m));
                let out = f(&self.inner);
                self.inner.set_mapping(saved);
                out
            }
        }
    }
}

#[pymethods]
impl PySession {
    #[new]
    #[pyo3(signature = (stdlib = true, max_steps = None, max_depth = None))]
    fn new(
        py: Python<'_>,
        stdlib: bool,
        max_steps: Option<u64>,
        max_depth: Option<u64>,
    ) -> PyResult<Self> {
        let mut budget = Limits::default();
        if let Some(n) = max_steps {
            if n == 0 {
                return Err(PyValueError::new_err("`max_steps` must be at least 1"));
            }
            budget.steps = n;
        }
        // As the command line's `--max-depth`.
        if let Some(n) = max_depth {
            if !(1..=10_000_000).contains(&n) {
                return Err(PyValueError::new_err(
                    "`max_depth` must be between 1 and 10,000,000",
                ));
            }
            budget.depth = usize::try_from(n).unwrap_or(usize::MAX);
        }
        let inner = if stdlib {
            Session::with_budget(budget).map_err(|e| session_error(py, e))?
        } else {
            Session::without_stdlib_with_budget(budget)
        };
        Ok(PySession { inner })
    }

    /// Reads and evaluates a file; returns the printed value of its last form.
    fn load(&mut self, py: Python<'_>, path: PathBuf) -> PyResult<String> {
        self.inner
            .load_file(&path)
            .map_err(|e| session_error(py, e))
    }

    /// Evaluates source text; returns the printed value of its last form.
    #[pyo3(signature = (source, name = "<python>"))]
    fn eval(&mut self, py: Python<'_>, source: &str, name: &str) -> PyResult<String> {
        match self.inner.eval_source(name, source) {
            Ok(v) => Ok(v),
            Err(d) => Err(script_error(py, &self.inner.render(&d), &d)),
        }
    }

    /// What the program printed since the last call.
    fn take_output(&mut self) -> String {
        self.inner.take_output()
    }

    /// The canned mapping plans place with, if one was set.
    #[getter]
    fn mapping(&self) -> Option<String> {
        self.inner.mapping().map(str::to_string)
    }

    #[setter]
    fn set_mapping(&mut self, mapping: Option<String>) {
        self.inner.set_mapping(mapping);
    }

    /// The communication evaluated so far, timed before placement as `ttdl check` times it:
    /// `(json, text)`, the JSON and the text `ttdl check` prints.
    #[pyo3(signature = (timing = None, mapping = None))]
    fn check(
        &self,
        py: Python<'_>,
        timing: Option<String>,
        mapping: Option<String>,
    ) -> PyResult<(String, String)> {
        let mapping = mapping.or_else(|| self.inner.mapping().map(str::to_string));
        let traffic = self
            .inner
            .check(mapping.as_deref(), timing.as_deref())
            .map_err(|e| session_error(py, e))?;
        let json = serde_json::to_string(&report::traffic::json(&traffic))
            .map_err(|e| PlanError::new_err(e.to_string()))?;
        Ok((json, report::traffic::text(&traffic)))
    }

    /// Places, routes, schedules, verifies and replays the program; keyword arguments are SPEC
    /// §3's settings.
    #[pyo3(signature = (**kwargs))]
    fn plan(&mut self, py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyPlan> {
        let s = split_kwargs(kwargs, None)?;
        let plan = self
            .with_mapping(s.mapping, |session| session.plan(&s.overrides))
            .map_err(|e| session_error(py, e))?;
        Ok(PyPlan {
            plan,
            json: std::sync::OnceLock::new(),
        })
    }

    /// Runs the program on one hardware model; keyword arguments that are plan settings place
    /// the program, the rest are the model's options. Returns the run as JSON.
    #[pyo3(signature = (model, **kwargs))]
    fn simulate(
        &mut self,
        py: Python<'_>,
        model: &str,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let mut options = Vec::new();
        let s = split_kwargs(kwargs, Some((model_options(model), &mut options)))?;
        let mut spec = model.trim().to_string();
        for o in &options {
            spec.push(' ');
            spec.push_str(o);
        }
        let report = self
            .with_mapping(s.mapping, |session| session.simulate(&s.overrides, &spec))
            .map_err(|e| session_error(py, e))?;
        serde_json::to_string(&report).map_err(|e| PlanError::new_err(e.to_string()))
    }

    /// Runs the program on each model (all the registered models' standard sets when `models`
    /// is None); returns the rows of `ttdl compare --format json` as JSON.
    #[pyo3(signature = (models = None, **kwargs))]
    fn compare(
        &mut self,
        py: Python<'_>,
        models: Option<Vec<String>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let s = split_kwargs(kwargs, None)?;
        let specs: Vec<String> = models
            .unwrap_or_default()
            .iter()
            .map(|m| m.trim().to_string())
            .collect();
        for spec in &specs {
            let name = spec.split([' ', ':']).next().unwrap_or("");
            if registry::find(name).is_none() {
                return Err(PyValueError::new_err(format!(
                    "unknown model `{name}`; known models: {}",
                    registry::MODELS
                        .iter()
                        .map(|m| m.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        let names: Vec<&str> = specs.iter().map(String::as_str).collect();
        let rows = self
            .with_mapping(s.mapping, |session| session.compare(&s.overrides, &names))
            .map_err(|e| session_error(py, e))?;
        serde_json::to_string(&report::compare::json(&rows))
            .map_err(|e| PlanError::new_err(e.to_string()))
    }
}

/// A verified plan; its JSON is the document `ttdl run --format json` writes.
/// (Frozen: a plan never changes, so any thread may read it.)
#[pyclass(name = "Plan", module = "ttdl._ttdl", frozen)]
struct PyPlan {
    plan: pipeline::Plan,
    /// The JSON, built once (it lists every link and schedule row).
    json: std::sync::OnceLock<String>,
}

#[pymethods]
impl PyPlan {
    /// The SPEC §4 JSON document, as `ttdl run --format json` prints it.
    fn to_json(&self) -> PyResult<String> {
        if let Some(j) = self.json.get() {
            return Ok(j.clone());
        }
        let j = self.plan.to_json().map_err(pipeline_error)?;
        let _ = self.json.set(j.clone());
        Ok(j)
    }

    /// The text summary `ttdl run` prints.
    fn summary(&self) -> PyResult<String> {
        self.plan.summary().map_err(pipeline_error)
    }

    /// The self-contained HTML report `ttdl run --html` writes.
    #[pyo3(signature = (title = "plan"))]
    fn html(&self, title: &str) -> PyResult<String> {
        self.plan.to_html(title).map_err(pipeline_error)
    }

    /// Writes every artifact `ttdl run --out DIR` writes (the tasks file, switch programs,
    /// JSON and its CSV tables, summary, task graph, pictures, `report.html`), named after
    /// `name`; refuses to replace a file TTDL did not write there. Returns how many files it
    /// wrote.
    #[pyo3(signature = (directory, name = "plan"))]
    fn save(&self, directory: PathBuf, name: &str) -> PyResult<usize> {
        let files = artifacts::files(&self.plan, name, "").map_err(PlanError::new_err)?;
        artifacts::write(&directory, &files).map_err(PyOSError::new_err)
    }

    /// The link-by-time chart of the schedule (SVG), as in `--out`'s `NAME.schedule.svg`.
    fn timeline_svg(&self) -> PyResult<String> {
        let problem = self.plan.problem().map_err(pipeline_error)?;
        let windows = self.plan.routed_as.as_ref().unwrap_or(&self.plan.traffic);
        let pictures = report::Plan::new(&problem, &self.plan.schedule, windows);
        Ok(report::svg::timeline(&pictures))
    }
}

/// The setting names the keyword arguments take, in SPEC §3's order.
#[pyfunction]
fn setting_names() -> Vec<&'static str> {
    settings::names()
}

/// The registered hardware models' names.
#[pyfunction]
fn model_names() -> Vec<&'static str> {
    registry::MODELS.iter().map(|m| m.name).collect()
}

/// TTDL's session, plans and exceptions, for the `ttdl` package.
#[pymodule]
fn _ttdl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PySession>()?;
    m.add_class::<PyPlan>()?;
    m.add_function(wrap_pyfunction!(setting_names, m)?)?;
    m.add_function(wrap_pyfunction!(model_names, m)?)?;
    m.add("TtdlError", py.get_type::<TtdlError>())?;
    m.add("ScriptError", py.get_type::<ScriptError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    Ok(())
}
