//! The REPL session: one [`Session`] (interpreter, standard library, the pipeline), the plan
//! settings and the last plan, the input typed so far, and the `:commands`.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ttdl_backend::pipeline::{Plan, Settings, SETTINGS};
use ttdl_backend::report;
use ttdl_lang::diagnostic::render;
use ttdl_lang::syntax::{is_incomplete, read};
use ttdl_lang::{Diagnostic, Limits, SourceMap};
use ttdl_session::{artifacts, dag, Session};

/// The `:commands`, with a one-line description each (for `:help` and completion).
pub const COMMANDS: &[(&str, &str)] = &[
    (":help", "show this help"),
    (":quit", "leave (also Ctrl-D)"),
    (
        ":load",
        "FILE  read and evaluate a file; loading it again replaces what it defined and made",
    ),
    (
        ":check",
        "[MAPPING]  summary of the traffic built so far: tasks, messages, phases, critical path, period",
    ),
    (
        ":run",
        "[--network N --place P --route R --schedule S --seed N --ports N --latency C --timing T]  place, route, schedule, verify and replay; print the summary",
    ),
    (
        ":simulate",
        "MODEL [KEY=VALUE…]  run the program on a hardware model (`:simulate wormhole vc=2`)",
    ),
    (
        ":compare",
        "[MODEL,MODEL…]  every model (or those named) side by side",
    ),
    (":dag", "[dot|json]  the task graph"),
    (
        ":show",
        "schedule|routes|deadlines|bounds  a table of the last plan",
    ),
    (
        ":set",
        "[KEY VALUE]  a plan setting (`:set` alone lists them all, with their defaults); `:set KEY` alone clears it",
    ),
    (":save", "DIR  write what `ttdl run --out DIR` writes, for the last plan"),
    (
        ":undo",
        "take back the last entry or `:load` (its definitions, tasks and messages)",
    ),
    (":reset", "start over with a fresh interpreter"),
    (
        ":env",
        "[PREFIX]  the names bound in the global environment",
    ),
];

/// What one call of [`Repl::handle`] produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// For standard output: what the program printed, then the value or the command's report
    /// (each ending with a newline). Empty for blank input, comments, or nothing to show.
    pub text: String,
    /// For standard error: rendered diagnostics. The session carries on.
    pub error: String,
    pub status: Status,
}

/// What the loop does next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Status {
    /// Ready for a new entry.
    #[default]
    Done,
    /// The entry is not finished (an open list, string or block comment): ask for another line.
    More,
    /// The user asked to leave.
    Quit,
}

impl Output {
    pub fn text(text: impl Into<String>) -> Output {
        Output {
            text: text.into(),
            ..Output::default()
        }
    }

    pub fn error(error: impl Into<String>) -> Output {
        Output {
            error: error.into(),
            ..Output::default()
        }
    }

    pub fn more() -> Output {
        Output {
            status: Status::More,
            ..Output::default()
        }
    }

    pub fn quit() -> Output {
        Output {
            status: Status::Quit,
            ..Output::default()
        }
    }
}

/// How to start a session.
#[derive(Clone, Debug)]
pub struct ReplOptions {
    /// Load the standard library into every fresh interpreter (SPEC §1.5).
    pub stdlib: bool,
    /// Colour in rendered diagnostics.
    pub color: bool,
    pub budget: Limits,
    /// The canned mapping `:check` applies (overrides `target :mapping`).
    pub mapping: Option<String>,
    /// Set (by Ctrl-C) to stop a running evaluation or plan and return to the prompt.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl Default for ReplOptions {
    fn default() -> Self {
        ReplOptions {
            stdlib: true,
            color: false,
            budget: Limits::default(),
            mapping: None,
            interrupt: None,
        }
    }
}

/// An interactive session. Feed it lines with [`Repl::handle`].
pub struct Repl {
    session: Session,
    options: ReplOptions,
    /// What `:set` chose; `:run` flags override it for one run.
    settings: Settings,
    /// The last plan `:run` made (`:show` and `:save` use it); cleared when the program changes.
    plan: Option<Plan>,
    /// Lines of an entry that is not complete yet.
    pending: String,
    /// Entries evaluated so far, to name each entry's source `<repl:N>`.
    entries: usize,
    /// What was evaluated since the session started, in order, so that loading a file again
    /// can replace it ([`Repl::load`]).
    journal: Vec<Event>,
}

/// One evaluated source in a [`Repl`]'s journal.
#[derive(Clone, Debug)]
enum Event {
    /// A typed entry, by its source name (`<repl:N>`).
    Entry { name: String, text: String },
    /// A loaded file: its canonical path (what identifies it when it is loaded again), the name
    /// it was shown by, and the session just before it was first loaded (a cheap snapshot:
    /// values are shared).
    Load {
        key: std::path::PathBuf,
        name: String,
        text: String,
        before: Box<Session>,
    },
}

impl Repl {
    /// A fresh session (with the standard library unless `options.stdlib` is off). Fails with the
    /// rendered diagnostics if the standard library does not load.
    pub fn new(options: ReplOptions) -> Result<Repl, String> {
        let session = fresh_session(&options)?;
        Ok(Repl {
            session,
            options,
            settings: Settings::default(),
            plan: None,
            pending: String::new(),
            entries: 0,
            journal: Vec::new(),
        })
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// True while an entry is being continued over several lines.
    pub fn is_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Drops the entry being typed (Ctrl-C).
    /// From now on, setting `flag` stops a running evaluation or plan with an `interrupted`
    /// error; the session and its definitions stay.
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.session.set_interrupt(flag.clone());
        self.options.interrupt = Some(flag);
    }

    pub fn cancel(&mut self) {
        self.pending.clear();
    }

    /// Names to complete: the global environment and the `:commands`, sorted.
    pub fn completions(&self) -> Vec<String> {
        let mut names = self.session.interpreter().global_names();
        names.extend(COMMANDS.iter().map(|(c, _)| c.to_string()));
        // `:set KEY`: the settings table's names.
        names.extend(SETTINGS.iter().map(|s| s.name.to_string()));
        names.sort();
        names.dedup();
        names
    }

    /// One line (or several) of input. An entry that is not complete is kept and `More` is
    /// returned; the next call continues it.
    pub fn handle(&mut self, input: &str) -> Output {
        if !self.pending.is_empty() {
            self.pending.push('\n');
        }
        self.pending.push_str(input);
        if is_incomplete(&self.pending) {
            return Output::more();
        }
        let entry = std::mem::take(&mut self.pending);
        let trimmed = entry.trim();
        if let Some(out) = self.command(trimmed) {
            return out;
        }
        self.eval_entry(&entry)
    }

    /// The input has ended (Ctrl-D, end of a pipe): an entry left open is read as it is, so
    /// its syntax errors are shown rather than lost.
    pub fn finish(&mut self) -> Output {
        if self.pending.is_empty() {
            return Output::default();
        }
        let entry = std::mem::take(&mut self.pending);
        self.eval_entry(&entry)
    }

    /// Reads and evaluates a file into the session (`:load`, `ttdl repl FILE`).
    ///
    /// Loading a file that was loaded before *replaces* it: the session goes back to what it
    /// was just before the first load of that file, evaluates the file's text as it is now, and
    /// evaluates again, in order and without printing, every entry and load that came after.
    /// So an edited file's definitions replace the old ones, and the tasks and messages it made
    /// are made once, not twice — as if the file had always had its new text.
    pub fn load(&mut self, path: &Path) -> Output {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                return Output::error(format!("error: cannot read {}: {e}\n", path.display()))
            }
        };
        self.plan = None;
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let name = path.display().to_string();
        let earlier = self
            .journal
            .iter()
            .position(|e| matches!(e, Event::Load { key: k, .. } if *k == key));
        let Some(at) = earlier else {
            let before = Box::new(self.session.clone());
            let result = self.session.eval_source(&name, &text);
            self.journal.push(Event::Load {
                key,
                name: name.clone(),
                text,
                before,
            });
            let mut out = self.printed();
            match result {
                Ok(_) => out.text.push_str(&format!("; loaded {name}\n")),
                Err(diags) => out.error = self.render(&diags),
            }
            return out;
        };
        // Back to the session before the first load, then the file anew, then what followed.
        let later = self.journal.split_off(at + 1);
        let Some(Event::Load { before, .. }) = self.journal.pop() else {
            return Output::error("error: the session's journal is inconsistent\n");
        };
        self.session = (*before).clone();
        self.session.take_output();
        let result = self.session.eval_source(&name, &text);
        self.journal.push(Event::Load {
            key,
            name: name.clone(),
            text,
            before,
        });
        let mut out = self.printed();
        if let Err(diags) = result {
            out.error = self.render(&diags);
        }
        let replayed = later.len();
        for event in later {
            self.replay(event, &mut out);
        }
        out.text.push_str(&format!(
            "; reloaded {name}: it replaces the earlier load's definitions, tasks and messages{}\n",
            match replayed {
                0 => String::new(),
                1 => "; the 1 entry after it was evaluated again".to_string(),
                n => format!("; the {n} entries after it were evaluated again"),
            }
        ));
        out
    }

    /// `:undo`: the session as it was before the last entry or load. The state before a load is
    /// kept (a snapshot whose values are shared, not copied); back to the latest such snapshot
    /// before the undone event, then what came between is evaluated again, silently.
    fn undo(&mut self) -> Output {
        let Some(last) = self.journal.pop() else {
            return Output::text("; nothing to undo\n");
        };
        let what = match &last {
            Event::Entry { name, .. } => format!("entry {name}"),
            Event::Load { name, .. } => format!("`:load {name}`"),
        };
        self.plan = None;
        let mut out = Output::default();
        // The undone load itself carries the state before it.
        if let Event::Load { before, .. } = last {
            self.session = *before;
            self.session.take_output();
            out.text = format!("; took back {what}\n");
            return out;
        }
        let from = self
            .journal
            .iter()
            .rposition(|e| matches!(e, Event::Load { .. }));
        let later = match from {
            Some(at) => {
                let later = self.journal.split_off(at);
                let Some(Event::Load { before, .. }) = later.first() else {
                    return Output::error("error: the session's journal is inconsistent\n");
                };
                // From the state before that load; the load and what followed it again.
                self.session = (**before).clone();
                later
            }
            None => match fresh_session(&self.options) {
                Ok(session) => {
                    self.session = session;
                    std::mem::take(&mut self.journal)
                }
                Err(e) => return Output::error(e),
            },
        };
        self.session.take_output();
        for event in later {
            self.replay(event, &mut out);
        }
        out.text.push_str(&format!("; took back {what}\n"));
        out
    }

    /// Evaluates a journal event again after a reload, silently but for its errors (an entry
    /// that now fails says so: the reloaded file may have dropped something it used).
    fn replay(&mut self, event: Event, out: &mut Output) {
        let (name, text) = match &event {
            Event::Entry { name, text } => (name.clone(), text.clone()),
            Event::Load { name, text, .. } => (name.clone(), text.clone()),
        };
        let event = match event {
            Event::Load {
                key, name, text, ..
            } => Event::Load {
                key,
                name,
                text,
                before: Box::new(self.session.clone()),
            },
            entry => entry,
        };
        let result = self.session.eval_source(&name, &text);
        self.session.take_output();
        if let Err(diags) = result {
            out.error.push_str(&self.render(&diags));
        }
        self.journal.push(event);
    }

    fn eval_entry(&mut self, entry: &str) -> Output {
        // Blank lines and comments are not entries.
        let (forms, syntax) = read(0, entry);
        if forms.is_empty() && syntax.is_empty() {
            return Output::default();
        }
        self.entries += 1;
        let name = format!("<repl:{}>", self.entries);
        // Syntax errors are shown without evaluating any of the entry.
        if !syntax.is_empty() {
            let mut sources = SourceMap::default();
            let file = sources.add(name, entry);
            let diags: Vec<Diagnostic> = read(file, entry).1;
            return Output::error(render(&sources, &diags, self.options.color));
        }
        self.plan = None;
        let result = self.session.eval_source(&name, entry);
        self.journal.push(Event::Entry {
            name,
            text: entry.to_string(),
        });
        let mut out = self.printed();
        match result {
            Ok(value) if value.is_empty() => {}
            Ok(value) => {
                out.text.push_str(&value);
                out.text.push('\n');
            }
            Err(diags) => out.error = self.render(&diags),
        }
        out
    }

    /// What the program printed since the last entry, as the start of an output; a line that
    /// was left open is ended so the value starts on its own line.
    fn printed(&mut self) -> Output {
        let mut text = self.session.take_output();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Output::text(text)
    }

    fn render(&self, diags: &[Diagnostic]) -> String {
        self.session.render_color(diags, self.options.color)
    }

    /// A `:command`, or `None` if the entry is not one. Any entry that starts with `:` and a
    /// word is a command; an unknown one is an error that suggests the closest (a keyword is
    /// evaluated quoted: `':topology`).
    fn command(&mut self, entry: &str) -> Option<Output> {
        let (word, arg) = match entry.split_once(char::is_whitespace) {
            Some((w, a)) => (w, a.trim()),
            None => (entry, ""),
        };
        if !word.starts_with(':') || word.len() < 2 || word.contains(['(', ')', '"']) {
            return None;
        }
        let out = match word {
            ":help" | ":h" | ":?" => Output::text(help()),
            ":quit" | ":q" | ":exit" => Output::quit(),
            ":load" | ":l" => {
                if arg.is_empty() {
                    Output::error("error: `:load` needs a file name, e.g. `:load jacobi.ttdl`\n")
                } else {
                    // A quoted name (for spaces) works too.
                    self.load(Path::new(arg.trim_matches('"')))
                }
            }
            ":check" | ":c" => {
                let mapping = if arg.is_empty() {
                    self.session.mapping().map(str::to_string)
                } else {
                    Some(arg.to_string())
                };
                match self
                    .session
                    .check(mapping.as_deref(), self.settings.word("timing"))
                {
                    Ok(t) => Output::text(report::traffic::text(&t)),
                    Err(e) => Output::error(format!("{e}\n")),
                }
            }
            ":run" | ":r" => self.run(arg),
            ":simulate" | ":sim" => self.simulate(arg),
            ":compare" => self.compare(arg),
            ":dag" => self.dag(arg),
            ":show" => self.show(arg),
            ":set" => self.set(arg),
            ":save" => self.save(arg),
            ":undo" => self.undo(),
            ":reset" => match fresh_session(&self.options) {
                Ok(session) => {
                    self.session = session;
                    self.plan = None;
                    self.entries = 0;
                    self.journal.clear();
                    Output::text("; the session starts over (the :set settings are kept)\n")
                }
                Err(e) => Output::error(e),
            },
            ":env" => {
                let names: Vec<String> = self
                    .session
                    .interpreter()
                    .global_names()
                    .into_iter()
                    .filter(|n| n.starts_with(arg))
                    .collect();
                if names.is_empty() {
                    Output::text("; no names bound\n")
                } else {
                    Output::text(columns(&names, 100))
                }
            }
            other => Output::error(format!(
                "error: unknown command `{other}`{}; `:help` lists the commands (to evaluate a keyword, quote it: `'{other}`)\n",
                match closest(other) {
                    Some(c) => format!(" — did you mean `{c}`?"),
                    None => String::new(),
                }
            )),
        };
        Some(out)
    }

    /// `:run [flags]`: plans with the settings, the flags overriding them for this run.
    fn run(&mut self, arg: &str) -> Output {
        let mut o = self.settings.clone();
        let words: Vec<&str> = arg.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            let Some(flag) = w.strip_prefix("--") else {
                return Output::error(format!(
                    "error: `:run` takes flags like `--schedule exact`, not `{w}`\n"
                ));
            };
            if flag == "throughput" {
                if let Err(e) = o.set("throughput", "on") {
                    return Output::error(format!("error: {e}\n"));
                }
                i += 1;
                continue;
            }
            let (key, value) = match flag.split_once('=') {
                Some((k, v)) => (k, v),
                None => {
                    i += 1;
                    match words.get(i) {
                        Some(v) => (flag, *v),
                        None => return Output::error(format!("error: `--{flag}` needs a value\n")),
                    }
                }
            };
            if let Err(e) = o.set(key, value.trim_matches('"')) {
                return Output::error(format!("error: --{key}: {e}\n"));
            }
            i += 1;
        }
        match self.session.plan(&o) {
            Ok(plan) => {
                let out = match plan.summary() {
                    Ok(s) => Output::text(s),
                    Err(e) => Output::error(format!("error: {e}\n")),
                };
                self.plan = Some(plan);
                out
            }
            Err(e) => Output::error(format!("{e}\n")),
        }
    }

    /// `:simulate MODEL [KEY=VALUE…]`.
    fn simulate(&mut self, arg: &str) -> Output {
        if arg.is_empty() {
            return Output::error(
                "error: `:simulate` needs a model, e.g. `:simulate wormhole vc=2`; `ttdl simulate --help` lists them\n",
            );
        }
        let placed = match self.session.placed(&self.settings) {
            Ok(p) => p,
            Err(e) => return Output::error(format!("{e}\n")),
        };
        match placed.simulate(arg, None) {
            Ok(r) => Output::text(report::simulation::summary(&placed, &r)),
            Err(e) => Output::error(format!("error: {e}\n")),
        }
    }

    /// `:compare [MODEL,MODEL…]`.
    fn compare(&mut self, arg: &str) -> Output {
        let models: Vec<&str> = arg
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .collect();
        let placed = match self.session.placed(&self.settings) {
            Ok(p) => p,
            Err(e) => return Output::error(format!("{e}\n")),
        };
        let list = models.join(",");
        let specs = match placed.compare_specs((!models.is_empty()).then_some(list.as_str())) {
            Ok(s) => s,
            Err(e) => return Output::error(format!("error: {e}\n")),
        };
        let rows = placed.compare(&specs, None, |_| {});
        Output::text(report::compare::text("the program", &placed, &rows))
    }

    /// `:dag [dot|json]`.
    fn dag(&mut self, arg: &str) -> Output {
        let traffic = match self.session.traffic(self.session.mapping()) {
            Ok(t) => t,
            Err(diags) => return Output::error(self.render(&diags)),
        };
        let graph = match dag::graph_of(&traffic) {
            Ok(g) => g,
            Err(e) => return Output::error(format!("error: {e}\n")),
        };
        match arg {
            "" | "dot" => Output::text(dag::to_dot(&traffic, &graph.0, &graph.1)),
            "json" => Output::text(
                serde_json::to_string_pretty(&dag::to_json(&traffic, &graph.0, &graph.1))
                    .unwrap_or_default()
                    + "\n",
            ),
            other => Output::error(format!(
                "error: `:dag` shows `dot` or `json`, not `{other}`\n"
            )),
        }
    }

    /// The last plan, made now with the settings if there is none.
    fn last_plan(&mut self) -> Result<&Plan, Output> {
        if self.plan.is_none() {
            match self.session.plan(&self.settings) {
                Ok(p) => self.plan = Some(p),
                Err(e) => return Err(Output::error(format!("{e}\n"))),
            }
        }
        self.plan
            .as_ref()
            .ok_or_else(|| Output::error("error: no plan\n"))
    }

    /// `:show schedule|routes|deadlines|bounds`.
    fn show(&mut self, arg: &str) -> Output {
        let view = match arg {
            "schedule" | "routes" | "deadlines" | "bounds" => arg.to_string(),
            other => {
                return Output::error(format!(
                    "error: `:show` shows schedule, routes, deadlines or bounds{}\n",
                    if other.is_empty() {
                        String::new()
                    } else {
                        format!(", not `{other}`")
                    }
                ))
            }
        };
        let plan = match self.last_plan() {
            Ok(p) => p,
            Err(out) => return out,
        };
        match view.as_str() {
            "schedule" => Output::text(report::tables::schedule(plan)),
            "routes" => Output::text(report::tables::routes(plan)),
            "deadlines" => Output::text(report::tables::deadlines(plan)),
            _ => match report::tables::bounds(plan) {
                Ok(s) => Output::text(s),
                Err(e) => Output::error(format!("error: {e}\n")),
            },
        }
    }

    /// `:set` shows the settings; `:set KEY VALUE` changes one (`:set KEY` alone clears it).
    /// The settings are the table's (SPEC §3): the same names, checks and defaults as the
    /// command line's flags and a script's `target`.
    fn set(&mut self, arg: &str) -> Output {
        if arg.is_empty() {
            let mut s = String::new();
            for row in SETTINGS {
                let value = match row.name {
                    "mapping" => self.session.mapping().map(str::to_string),
                    name => self.settings.get(name).map(|v| v.to_string()),
                };
                let value = value.unwrap_or_else(|| {
                    format!("(the script's target, else {})", row.default_text())
                });
                s.push_str(&format!("{:<10} {value}\n", row.name));
            }
            return Output::text(s);
        }
        let (key, value) = match arg.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim().trim_matches('"')),
            None => (arg, ""),
        };
        let row = match ttdl_backend::pipeline::Setting::find(key) {
            Ok(row) => row,
            Err(e) => return Output::error(format!("error: {e}\n")),
        };
        let result = match (row.name, value.is_empty()) {
            ("mapping", true) => {
                self.session.set_mapping(None);
                Ok(())
            }
            ("mapping", false) => row.parse(value).map(|v| {
                self.session.set_mapping(Some(v.to_string()));
            }),
            (name, true) => self.settings.clear(name),
            (name, false) => self.settings.set(name, value).map(|_| ()),
        };
        match result {
            Ok(()) => {
                self.plan = None;
                let now = match row.name {
                    "mapping" => self.session.mapping().map(str::to_string),
                    name => self.settings.get(name).map(|v| v.to_string()),
                };
                Output::text(format!(
                    "; {} = {}\n",
                    row.name,
                    now.unwrap_or_else(|| "(the script's target, else the default)".into())
                ))
            }
            Err(e) => Output::error(format!("error: {e}\n")),
        }
    }

    /// `:save DIR`.
    fn save(&mut self, arg: &str) -> Output {
        if arg.is_empty() {
            return Output::error("error: `:save` needs a directory, e.g. `:save out`\n");
        }
        let dir = Path::new(arg.trim_matches('"')).to_path_buf();
        let plan = match self.last_plan() {
            Ok(p) => p,
            Err(out) => return out,
        };
        let written =
            artifacts::files(plan, "plan", "").and_then(|files| artifacts::write(&dir, &files));
        match written {
            Ok(n) => Output::text(format!("; wrote {n} files to {}\n", dir.display())),
            Err(e) => Output::error(format!("error: {e}\n")),
        }
    }
}

/// The command closest to `word` by edit distance, if it is close enough to be a typo.
fn closest(word: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|(c, _)| (ttdl_ir::settings::edit_distance(word, c), *c))
        .filter(|&(d, c)| d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}

fn fresh_session(options: &ReplOptions) -> Result<Session, String> {
    let mut session = if options.stdlib {
        {
            let mut s = Session::with_budget(options.budget).map_err(|e| e.to_string())?;
            // The REPL evaluates bit by bit and cannot evaluate again: every iteration is kept.
            s.set_fold(false);
            s
        }
    } else {
        Session::without_stdlib_with_budget(options.budget)
    };
    // Whatever the library printed while loading is not the user's.
    let _ = session.take_output();
    session.set_mapping(options.mapping.clone());
    if let Some(flag) = &options.interrupt {
        session.set_interrupt(flag.clone());
    }
    Ok(session)
}

fn help() -> String {
    let mut out = String::from(
        "Type TTDL forms to evaluate them; an entry continues until its parentheses balance.\n\
         Ctrl-C drops the entry being typed or stops what is running; Ctrl-D leaves. Tab completes names.\n",
    );
    for (cmd, what) in COMMANDS {
        out.push_str(&format!("  {cmd:<10} {what}\n"));
    }
    out
}

/// Names laid out in columns no wider than `width`, in order down the rows.
fn columns(names: &[String], width: usize) -> String {
    let cell = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) + 2;
    let per_row = (width / cell).max(1);
    let mut out = String::new();
    for row in names.chunks(per_row) {
        let line: String = row.iter().map(|n| format!("{n:<cell$}")).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
