//! The interpreter an embedder (CLI, REPL, tests) drives: read + evaluate sources, then hand the
//! communication built so far to the backend as `Traffic`.

use ttdl_ir::traffic::Traffic;

use crate::comm::Comm;
use crate::diagnostic::{Diagnostic, SourceMap};
use crate::eval::{Machine, Value};
use crate::sexpr::Sexpr;

pub use ttdl_ir::limits::Limits;

/// An interpreter: its own symbols, globals, communication and sources. Two can live in one
/// process; cloning one is a cheap snapshot of the evaluator state (values are shared).
#[derive(Clone, Debug)]
pub struct Interpreter {
    sources: SourceMap,
    pub(crate) machine: Machine,
}

impl Default for Interpreter {
    fn default() -> Self {
        Interpreter::new(Limits::default())
    }
}

impl Interpreter {
    pub fn new(budget: Limits) -> Self {
        Interpreter {
            sources: SourceMap::default(),
            machine: Machine::new(budget),
        }
    }

    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// A flag that stops a running evaluation at its next check (within a few thousand steps)
    /// with an `interrupted` error; the flag is cleared when it is seen. The REPL sets it on
    /// Ctrl-C. Everything defined before the interrupted form stays.
    pub fn set_interrupt(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.machine.interrupt = Some(flag);
        self.machine.reset_steps();
    }

    /// Whether long repeating `iterate`s are folded (the default; see [`Interpreter::traffic_folded`]).
    pub fn set_fold(&mut self, on: bool) {
        self.machine.fold = on;
    }

    pub fn budget(&self) -> Limits {
        self.machine.budget
    }

    /// The communication built so far (tasks, streams), before matching is checked.
    pub fn comm(&self) -> &Comm {
        &self.machine.comm
    }

    /// The evaluator's state, for embedders that need more than this API.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Reads and evaluates every form of a source text (a file or a REPL entry). On success,
    /// returns the printed value of the last form. Syntax errors stop before anything runs.
    pub fn eval_source(&mut self, name: &str, text: &str) -> Result<String, Vec<Diagnostic>> {
        let file = self.sources.add(name, text);
        let (forms, errors) = crate::syntax::read(file, text);
        if !errors.is_empty() {
            return Err(errors);
        }
        self.eval_forms(&forms)
    }

    /// Evaluates forms already read. The step budget starts afresh for each call.
    pub fn eval_forms(&mut self, forms: &[Sexpr]) -> Result<String, Vec<Diagnostic>> {
        self.machine.reset_steps();
        let last = self.machine.eval_top_all(forms).map_err(|d| vec![d])?;
        Ok(self.machine.show(&last))
    }

    /// What `print`, `println` and `(format t …)` have written since the last call.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.machine.output)
    }

    /// The printed value of a global, if it is bound.
    pub fn global(&self, name: &str) -> Option<String> {
        let sym = self.machine.syms.lookup(name)?;
        self.machine.globals.get(sym).map(|v| self.machine.show(v))
    }

    /// The communication built so far, matched and timed. `mapping` overrides `target :mapping`:
    /// the mapping is applied to every task with logical coordinates (from `network-tasks`) and
    /// its result becomes the task's physical coordinates (`Task::mapped`).
    pub fn traffic(&self, mapping: Option<&str>) -> Result<Traffic, Vec<Diagnostic>> {
        self.traffic_as(mapping, false)
    }

    /// As [`Interpreter::traffic`], a long `iterate` whose iterations repeat kept folded: the
    /// traffic holds its first iterations and `repeat` says how many there are.
    pub fn traffic_folded(&self, mapping: Option<&str>) -> Result<Traffic, Vec<Diagnostic>> {
        self.traffic_as(mapping, true)
    }

    fn traffic_as(&self, mapping: Option<&str>, folded: bool) -> Result<Traffic, Vec<Diagnostic>> {
        let mut traffic = if folded {
            self.machine.comm.finish_folded()?
        } else {
            self.machine.comm.finish()?
        };
        let from_target = self.machine.target.as_ref().and_then(|t| t.mapping.clone());
        let Some(name) = mapping.map(str::to_string).or(from_target) else {
            return Ok(traffic);
        };
        let mapped = self.mapped_coords(&name).map_err(|d| vec![d])?;
        // The same as `Comm::set_mapped` before `finish` (timing does not depend on placement),
        // without copying the communication built so far. A canned mapping is a placement the
        // placer may use (`--place mapping`, a candidate of `best`), not a constraint: the tasks
        // are not wired down, so `--place anneal` or another `--network` still apply.
        for (task, coords) in mapped {
            if let Some(t) = traffic.tasks.get_mut(task) {
                t.mapped = Some(coords);
            }
        }
        if mapping.is_some() {
            traffic.target.get_or_insert_with(Default::default).mapping = Some(name);
        }
        Ok(traffic)
    }

    /// Runs mapping `name` on every network task's logical coordinates, on a scratch copy of
    /// the evaluator (so the communication built so far is untouched).
    fn mapped_coords(&self, name: &str) -> Result<Vec<(usize, Vec<i64>)>, Diagnostic> {
        let mut m = self.machine.scratch();
        let target_span = self.machine.target_net.as_ref().map(|n| n.span);
        let span = target_span.unwrap_or_default();
        // A mapping named on the command line, with no `target` form, has no place in the source:
        // a label would point at the start of whatever file came first.
        let unplaced = |mut d: Diagnostic| {
            if target_span.is_none() {
                d.labels.clear();
            }
            d
        };
        let sym = m.intern(name);
        let Some(f) = m.globals.get(sym).cloned() else {
            let d = m
                .unbound(sym, &crate::eval::Env::new(), span)
                .with_note(format!("`{name}` was given as the mapping"));
            return Err(unplaced(d));
        };
        if !matches!(f, Value::Closure(_) | Value::Builtin(_)) {
            return Err(unplaced(
                Diagnostic::new(
                    "type",
                    format!("the mapping `{name}` is {}, not a procedure", m.show(&f)),
                )
                .with_label(span, "used as the target's mapping")
                .with_help(
                    "define it with `(define-mapping NAME (COORDS LOGICAL PHYSICAL) body…)`",
                ),
            ));
        }
        let mut out = Vec::new();
        for net in m.nets.clone() {
            let Some(Some(tasks)) = m.net_tasks.get(net.id).cloned() else {
                continue;
            };
            for (node, &task) in tasks.iter().enumerate() {
                let coords = net.coords(node);
                let phys = m.map_coords(&f, &coords, &net, span)?;
                if let Some(target) = &m.target_net {
                    if target.node_at(&phys).is_none() {
                        return Err(Diagnostic::new(
                            "type",
                            format!(
                                "mapping `{name}` sends logical {:?} to {:?}, which is not a node of {}",
                                coords, phys, target.spec
                            ),
                        )
                        .with_label(span, "the physical network"));
                    }
                }
                out.push((task, phys));
            }
        }
        Ok(out)
    }

    /// Names bound in the global environment, sorted (for completion).
    pub fn global_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .machine
            .globals
            .bound()
            .map(|s| self.machine.name(s).to_string())
            .chain(crate::eval::SPECIAL_FORMS.iter().map(|s| s.to_string()))
            .filter(|n| !n.starts_with("#:"))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Diagnostics rendered like `rustc`, colour optional.
    pub fn render(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        crate::diagnostic::render(&self.sources, diagnostics, color)
    }
}

/// A plain `rustc`-like rendering without ariadne (for logs and embedders that want one line
/// per label): code, message, `--> file:line:col`, the source line
/// with the labelled range underlined, then notes and help.
pub fn render_plain(sources: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&format!("error[{}]: {}\n", d.code, d.message));
        for (i, label) in d.labels.iter().enumerate() {
            let Some(file) = sources.get(label.span.file) else {
                continue;
            };
            let text = &file.text;
            let start = label.span.start.min(text.len());
            let line_start = text[..start].rfind('\n').map(|p| p + 1).unwrap_or(0);
            let line_end = text[start..]
                .find('\n')
                .map(|p| start + p)
                .unwrap_or(text.len());
            let line_no = text[..start].matches('\n').count() + 1;
            let col = text[line_start..start].chars().count() + 1;
            let gutter = " ".repeat(line_no.to_string().len());
            let arrow = if i == 0 { "-->" } else { ":::" };
            out.push_str(&format!("{gutter}{arrow} {}:{line_no}:{col}\n", file.name));
            out.push_str(&format!("{gutter} |\n"));
            out.push_str(&format!("{line_no} | {}\n", &text[line_start..line_end]));
            let end = label.span.end.clamp(start, line_end.max(start));
            let width = text[start..end].chars().count().max(1);
            let mark = if i == 0 { "^" } else { "-" };
            out.push_str(&format!(
                "{gutter} | {}{} {}\n",
                " ".repeat(col - 1),
                mark.repeat(width),
                label.message
            ));
        }
        for n in &d.notes {
            out.push_str(&format!("  = note: {n}\n"));
        }
        if let Some(h) = &d.help {
            out.push_str(&format!("  = help: {h}\n"));
        }
    }
    out
}
