//! The tasks file (Minsky Fig 5-5): the text format the front end hands to the backend.
//!
//! The thesis's layout is kept line for line: `#Model`, `#Ntasks`, `#Nphases`, `#nNodes`, `#nx`,
//! `#ny`, `#nz`, `#nt`, then per phase `#Nth phase` and `#Nmsgs` followed by one line per message
//! (`src-task release deadline size dest-task`), then the placement (`#Placement mode :` 1 =
//! anneal, 2 = use the mapping that follows; `#N tasks to read…` and one
//! `task-id wired-down-or-not x-loc y-loc` line per task). A header is a `#` line whose text is one
//! of these keys; every other `#` line is a comment. A file in the thesis's own layout reads as is.
//!
//! Extensions, all optional, so the backend can run a tasks file without the language:
//! - a message line may list several destinations (a multicast) and may end with
//!   `| id iteration [label]` (its message id, the iteration that produced it, its type's name);
//!   without the `|` part, ids follow the order of the lines;
//! - `#Phase` after `#Nth phase`: `start name` of that phase;
//! - `#Tasks`: `id coords name`, coords `x,y,…` or `-` (logical coordinates from `network-tasks`);
//! - `#Programs`: `id op op …`, each op `C<cycles>` compute, `S<msg>` send, `R<msg>` receive,
//!   `Y<phase>` synchronize (the task programs the simulators run);
//! - `#Target`: `key value` lines (`network`, `mapping`, `place`, `route`, `schedule`, `seed`);
//! - `#Logical`: the logical network the tasks came from;
//! - `#Critical path`: the ideal critical path length;
//! - `#Period`: `lower-bound iterations what-sets-it`.
//!
//! Networks are written `KIND:ARGS` (`graph:0-1,1-2` carries its edges; the older
//! `graph:N edges a-b c-d …` is still read).
//! `#nx`/`#ny`/`#nz` hold the target network's extents for a 2D or 3D grid (0 otherwise); `#nt` is
//! written 0 (its meaning is lost from the thesis). A file without `#Target` but with `#nx` and
//! `#ny` describes a mesh of that size.

use std::fmt::Write as _;
use ttdl_ir::limits::Limits;

use crate::topology::{Kind, Network, NetworkSpec};
use crate::traffic::{Message, Op, Period, Phase, Placement, Target, Task, Traffic};

/// A tasks file that cannot be read: where and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TasksFileError {
    /// 1-based line number (0 when the problem is with the file as a whole).
    pub line: usize,
    pub message: String,
}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, TasksFileError> {
    Err(TasksFileError {
        line,
        message: message.into(),
    })
}

/// Writes `traffic` in the thesis's layout. With a placement, every task's node coordinates are
/// written with placement mode 2; without one, tasks that a canned mapping placed (`mapped`) are
/// written with mode 2, and mode 1 (anneal) is asked for when there are none.
pub fn write(traffic: &Traffic, placement: Option<(&Network, &Placement)>) -> String {
    let mut s = String::new();
    let target_net = traffic.target.as_ref().and_then(|t| t.network.as_ref());
    let grid = |i: usize| -> usize {
        match target_net {
            Some(n) if matches!(n.kind, Kind::Mesh | Kind::Torus) && n.dims.len() <= 3 => {
                n.dims.get(i).copied().unwrap_or(0)
            }
            _ => 0,
        }
    };
    let nodes = placement
        .map(|(n, _)| n.nodes())
        .or(target_net.map(NetworkSpec::node_count))
        .unwrap_or(0);
    let nphases = traffic.phases.len().max(1);
    let _ = writeln!(
        s,
        "#Model\nTDL\n#Ntasks\n{}\n#Nphases\n{nphases}",
        traffic.tasks.len()
    );
    let _ = writeln!(
        s,
        "#nNodes\n{nodes}\n#nx\n{}\n#ny\n{}\n#nz\n{}\n#nt\n0",
        grid(0),
        grid(1),
        grid(2)
    );
    if let Some(t) = &traffic.target {
        s += "# What the program asked the backend to do (key value)\n#Target\n";
        if let Some(n) = &t.network {
            let _ = writeln!(s, "network {}", spec_text(n));
        }
        if let Some(m) = &t.mapping {
            let _ = writeln!(s, "mapping {m}");
        }
        for (setting, v) in t.settings.iter() {
            let _ = writeln!(s, "{} {v}", setting.name);
        }
    }
    if let Some(l) = &traffic.logical {
        let _ = writeln!(
            s,
            "# The logical network the tasks came from\n#Logical\n{}",
            spec_text(l)
        );
    }
    let _ = writeln!(
        s,
        "# Ideal, contention-free length (Minsky Fig 4-3)\n#Critical path\n{}",
        traffic.critical_path
    );
    if let Some(p) = &traffic.period {
        let _ = writeln!(
            s,
            "# Period: lower-bound iterations what-sets-it\n#Period\n{} {} {}",
            p.lower_bound, p.iterations, p.bound_by
        );
    }
    s += "# Tasks: id logical-coords name\n#Tasks\n";
    for t in &traffic.tasks {
        let _ = writeln!(
            s,
            "{} {} {}",
            t.id,
            coords_text(t.coords.as_deref()),
            t.name
        );
    }
    s += "# Programs: id ops (C compute, S send, R receive, Y synchronize)\n#Programs\n";
    for t in &traffic.tasks {
        let _ = write!(s, "{}", t.id);
        for op in &t.ops {
            let _ = match op {
                Op::Compute(c) => write!(s, " C{c}"),
                Op::Send(m) => write!(s, " S{m}"),
                Op::Recv(m) => write!(s, " R{m}"),
                Op::Sync(p) => write!(s, " Y{p}"),
            };
        }
        s.push('\n');
    }

    s += "# Message Traffic Description\n#*******\n";
    for ph in 0..nphases {
        let msgs: Vec<&Message> = traffic.messages.iter().filter(|m| m.phase == ph).collect();
        let _ = writeln!(s, "#Nth phase\n{ph}");
        if let Some(p) = traffic.phases.get(ph) {
            let _ = writeln!(s, "#Phase\n{} {}", p.start, p.name);
        }
        let _ = writeln!(s, "#Nmsgs\n{}", msgs.len());
        s += "#*************\n# Message format:\n";
        s += "# msg := src-task release deadline size dest-task [dest-task…] [| id iteration label]\n";
        s += "#***********\n";
        for m in msgs {
            let _ = write!(s, "{} {} {} {}", m.src, m.release, m.deadline, m.size);
            for d in &m.dst {
                let _ = write!(s, " {d}");
            }
            let _ = write!(s, " | {} {}", m.id, m.iteration);
            if let Some(l) = &m.label {
                let _ = write!(s, " {l}");
            }
            s.push('\n');
        }
    }

    s += "#*******\n# Placement Description\n#********\n#Placement mode :\n";
    s += "# 1 directs backend to place using simulated annealing\n";
    s += "# 2 directs backend to use specified mapping which follows\n";
    let placed: Vec<(usize, bool, Vec<i64>)> = match placement {
        Some((net, p)) => traffic
            .tasks
            .iter()
            .filter_map(|t| {
                let node = *p.node_of.get(t.id)?;
                Some((t.id, t.wired, net.coords.get(node)?.clone()))
            })
            .collect(),
        None => traffic
            .tasks
            .iter()
            .filter_map(|t| Some((t.id, t.wired, t.mapped.clone()?)))
            .collect(),
    };
    let _ = writeln!(s, "{}", if placed.is_empty() { 1 } else { 2 });
    s += "#N tasks to read for specified placement for this problem\n";
    let _ = writeln!(s, "{}", placed.len());
    s += "# Task format: task-id wired-down-or-not x-loc y-loc\n";
    s += "# where wired-down-or-not identifies tasks which should\n";
    s += "# not be moved by the placer.\n";
    for (id, wired, coords) in placed {
        let _ = write!(s, "{id} {}", u8::from(wired));
        for c in coords {
            let _ = write!(s, " {c}");
        }
        s.push('\n');
    }
    s
}

/// The spec as `KIND:ARGS`, which carries a graph's edges and an anynet network's file.
fn spec_text(n: &NetworkSpec) -> String {
    n.to_string()
}

fn coords_text(c: Option<&[i64]>) -> String {
    match c {
        None => "-".into(),
        Some(c) => c.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
    }
}

/// The sections a header line can open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Section {
    #[default]
    None,
    Model,
    Ntasks,
    Nphases,
    Nnodes,
    Nx,
    Ny,
    Nz,
    Nt,
    Target,
    Logical,
    Critical,
    Period,
    Tasks,
    Programs,
    NthPhase,
    Phase,
    Nmsgs,
    PlacementMode,
    Placement,
}

fn header(text: &str) -> Option<Section> {
    let key = text.trim_start_matches('#').trim();
    Some(match key {
        "Model" => Section::Model,
        "Ntasks" => Section::Ntasks,
        "Nphases" => Section::Nphases,
        "nNodes" => Section::Nnodes,
        "nx" => Section::Nx,
        "ny" => Section::Ny,
        "nz" => Section::Nz,
        "nt" => Section::Nt,
        "Target" => Section::Target,
        "Logical" => Section::Logical,
        "Critical path" => Section::Critical,
        "Period" => Section::Period,
        "Tasks" => Section::Tasks,
        "Programs" => Section::Programs,
        "Nth phase" => Section::NthPhase,
        "Phase" => Section::Phase,
        "Nmsgs" => Section::Nmsgs,
        k if k.starts_with("Placement mode") => Section::PlacementMode,
        k if k.starts_with("N tasks to read") => Section::Placement,
        _ => return None,
    })
}

fn num<T: std::str::FromStr>(line: usize, tok: &str, what: &str) -> Result<T, TasksFileError> {
    tok.parse::<T>()
        .or_else(|_| err(line, format!("expected {what}, found `{tok}`")))
}

fn count(line: usize, tok: &str, what: &str) -> Result<usize, TasksFileError> {
    let n: usize = num(line, tok, what)?;
    if n > Limits::TASKS_FILE_COUNT {
        return err(
            line,
            format!("{what} is {n}, more than {0}", Limits::TASKS_FILE_COUNT),
        );
    }
    Ok(n)
}

/// `KIND:ARGS`, or the older `graph:N edges a-b c-d …`.
fn spec_from(line: usize, text: &str) -> Result<NetworkSpec, TasksFileError> {
    let mut parts = text.split_whitespace();
    let head = parts.next().unwrap_or("");
    if parts.next() != Some("edges") {
        return head.parse().or_else(|e| err(line, format!("{e}")));
    }
    let (kind, dims) = head
        .split_once(':')
        .map_or_else(|| err(line, format!("cannot read network `{head}`")), Ok)?;
    let kind: Kind = kind.parse().or_else(|e| err(line, format!("{e}")))?;
    let dims = crate::topology::parse_dims(dims, head).or_else(|e| err(line, format!("{e}")))?;
    let mut spec = NetworkSpec::new(kind, dims);
    for e in parts {
        let (a, b) = e.split_once('-').map_or_else(
            || err(line, format!("expected an edge `a-b`, found `{e}`")),
            Ok,
        )?;
        spec.edges
            .push((num(line, a, "a node id")?, num(line, b, "a node id")?));
    }
    spec.validate().or_else(|e| err(line, format!("{e}")))?;
    Ok(spec)
}

/// Reads a tasks file (the thesis's layout, with or without the extensions): each line into the
/// section its header opened, then the whole checked and assembled.
pub fn read(text: &str) -> Result<Traffic, TasksFileError> {
    let mut r = Reading::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            if let Some(h) = header(line) {
                r.section = h;
                r.awaiting_count = h == Section::Nmsgs;
            }
            continue;
        }
        r.line(i + 1, line)?;
    }
    r.assemble()
}

/// A `#Tasks` line: (line, id, coordinates, name).
type NamedTask = (usize, usize, Option<Vec<i64>>, String);
/// A placement line: (line, id, wired down, node coordinates).
type PlacedTask = (usize, usize, bool, Vec<i64>);

/// What the lines read so far said, section by section, each with the line it came from (for
/// the errors the checks at the end find).
#[derive(Default)]
struct Reading {
    section: Section,
    ntasks: Option<(usize, usize)>,
    nphases: Option<usize>,
    grid: [usize; 3],
    target: Option<Target>,
    logical: Option<NetworkSpec>,
    critical: Option<u64>,
    period: Option<Period>,
    names: Vec<NamedTask>,
    programs: Vec<(usize, usize, Vec<Op>)>,
    /// (line, message, explicit id)
    messages: Vec<(usize, Message, bool)>,
    labels: ttdl_ir::Labels,
    phase_now: usize,
    phases: Vec<(usize, Phase)>,
    /// Per phase block: (line of #Nmsgs value, declared count, messages seen).
    counts: Vec<(usize, usize, usize)>,
    placement_expected: Option<(usize, usize)>,
    awaiting_count: bool,
    placed: Vec<PlacedTask>,
}

impl Reading {
    /// One line of the current section.
    fn line(&mut self, ln: usize, line: &str) -> Result<(), TasksFileError> {
        let toks: Vec<&str> = line.split_whitespace().collect();
        let first = toks.first().copied().unwrap_or("");
        match self.section {
            Section::None => {
                return err(
                    ln,
                    format!("`{line}` is outside any section: a tasks file starts with `#Model`"),
                )
            }
            Section::Model => {
                if line != "TDL" {
                    return err(ln, format!("unknown model `{line}`: expected `TDL`"));
                }
            }
            Section::Ntasks => {
                self.ntasks = Some((ln, count(ln, first, "the number of tasks")?));
            }
            Section::Nphases => self.nphases = Some(count(ln, first, "the number of phases")?),
            Section::Nnodes | Section::Nt => {
                let _: u64 = num(ln, first, "a number")?;
            }
            Section::Nx => self.grid[0] = num(ln, first, "the x extent")?,
            Section::Ny => self.grid[1] = num(ln, first, "the y extent")?,
            Section::Nz => self.grid[2] = num(ln, first, "the z extent")?,
            Section::Target => self.target_line(ln, line, first)?,
            Section::Logical => self.logical = Some(spec_from(ln, line)?),
            Section::Critical => {
                self.critical = Some(num(ln, first, "the critical path length")?);
            }
            Section::Period => self.period = Some(period_line(ln, line, &toks)?),
            Section::Tasks => self.names.push(task_line(ln, line, &toks)?),
            Section::Programs => {
                let id = num(ln, first, "a task id")?;
                self.programs.push((ln, id, program_ops(ln, &toks[1..])?));
            }
            Section::NthPhase => {
                self.phase_now = num(ln, first, "a phase number")?;
            }
            Section::Phase => {
                let start = num(ln, first, "the phase's start time")?;
                let name = line[first.len()..].trim().to_string();
                self.phases.push((
                    ln,
                    Phase {
                        id: self.phase_now,
                        name,
                        start,
                    },
                ));
            }
            Section::Nmsgs => {
                if self.awaiting_count {
                    self.awaiting_count = false;
                    let declared = num(ln, first, "the number of messages")?;
                    self.counts.push((ln, declared, 0));
                } else {
                    self.message_line(ln, line)?;
                }
            }
            Section::PlacementMode => {
                let mode: u8 = num(ln, first, "placement mode 1 or 2")?;
                if mode != 1 && mode != 2 {
                    return err(
                        ln,
                        format!("placement mode {mode}: expected 1 (anneal) or 2 (mapping)"),
                    );
                }
            }
            Section::Placement => {
                if self.placement_expected.is_none() {
                    let n = num(ln, first, "the number of placed tasks")?;
                    self.placement_expected = Some((ln, n));
                } else {
                    self.placed.push(placement_line(ln, &toks)?);
                }
            }
        }
        Ok(())
    }

    /// `#Target`: `network KIND:ARGS`, `mapping NAME`, or any plan setting.
    fn target_line(&mut self, ln: usize, line: &str, first: &str) -> Result<(), TasksFileError> {
        let t = self.target.get_or_insert_with(Target::default);
        let rest = line[first.len()..].trim().to_string();
        match first {
            "network" => t.network = Some(spec_from(ln, &rest)?),
            "mapping" => t.mapping = Some(rest),
            k => {
                if let Err(e) = t.settings.set(k, &rest) {
                    return err(ln, format!("target: {e}"));
                }
            }
        }
        Ok(())
    }

    /// A message: `src-task release deadline size dest-task…`, maybe `| id iteration [label]`.
    fn message_line(&mut self, ln: usize, line: &str) -> Result<(), TasksFileError> {
        let (fields, ext) = match line.split_once('|') {
            Some((a, b)) => (a, Some(b)),
            None => (line, None),
        };
        let f: Vec<&str> = fields.split_whitespace().collect();
        if f.len() < 5 {
            return err(ln, "expected `src-task release deadline size dest-task`");
        }
        let src = num(ln, f[0], "the source task")?;
        let release = num(ln, f[1], "the release time")?;
        let deadline = num(ln, f[2], "the deadline")?;
        let size = num(ln, f[3], "the size")?;
        let dst = f[4..]
            .iter()
            .map(|d| num(ln, d, "a destination task"))
            .collect::<Result<ttdl_ir::Dests, _>>()?;
        let mut m = Message {
            id: self.messages.len(),
            src,
            dst,
            size,
            release,
            deadline,
            phase: self.phase_now,
            iteration: 0,
            label: None,
        };
        let mut explicit = false;
        if let Some(ext) = ext {
            let e: Vec<&str> = ext.split_whitespace().collect();
            if e.len() < 2 {
                return err(
                    ln,
                    "expected `| id iteration [label]` after the destinations",
                );
            }
            m.id = num(ln, e[0], "a message id")?;
            m.iteration = num(ln, e[1], "an iteration")?;
            explicit = true;
            if e.len() > 2 {
                m.label = Some(self.labels.intern(e[2..].join(" ")));
            }
        }
        if let Some(c) = self.counts.last_mut() {
            c.2 += 1;
        }
        self.messages.push((ln, m, explicit));
        Ok(())
    }

    /// The whole file, checked: every task, message and phase a line names exists, and every
    /// count announced is the count listed.
    fn assemble(self) -> Result<Traffic, TasksFileError> {
        let Some((tline, n)) = self.ntasks else {
            return err(0, "no `#Ntasks` section");
        };
        let task_at = |ln: usize, id: usize| -> Result<usize, TasksFileError> {
            if id < n {
                Ok(id)
            } else {
                err(
                    ln,
                    format!("task {id} does not exist: `#Ntasks` (line {tline}) says {n}"),
                )
            }
        };
        let tasks = assemble_tasks(
            n,
            self.names,
            self.programs,
            self.placement_expected,
            self.placed,
            &task_at,
        )?;
        for &(ln, declared, seen) in &self.counts {
            if declared != seen {
                return err(ln, format!("{declared} messages announced, {seen} listed"));
            }
        }
        let messages = assemble_messages(self.messages, &task_at)?;
        let declared_phases = self.nphases.unwrap_or(1).max(1);
        let phases = assemble_phases(declared_phases, self.phases, &messages)?;
        check_programs(&tasks, messages.len(), declared_phases)?;
        let mut target = self.target;
        let [nx, ny, nz] = self.grid;
        if target.as_ref().and_then(|t| t.network.as_ref()).is_none() && nx > 0 && ny > 0 {
            let dims = if nz > 0 {
                vec![nx, ny, nz]
            } else {
                vec![nx, ny]
            };
            target.get_or_insert_with(Target::default).network =
                Some(NetworkSpec::new(Kind::Mesh, dims));
        }
        Ok(Traffic {
            tasks,
            messages,
            phases,
            critical_path: self.critical.unwrap_or(0),
            period: self.period,
            logical: self.logical,
            target,
            repeat: None,
        })
    }
}

/// `#Period`: `lower-bound iterations what-sets-it`.
fn period_line(ln: usize, line: &str, toks: &[&str]) -> Result<Period, TasksFileError> {
    if toks.len() < 2 {
        return err(ln, "expected `lower-bound iterations what-sets-it`");
    }
    let lower_bound = num(ln, toks[0], "the period lower bound")?;
    let iterations = num(ln, toks[1], "the number of iterations")?;
    let bound_by = line
        .splitn(3, char::is_whitespace)
        .nth(2)
        .unwrap_or("")
        .trim()
        .to_string();
    Ok(Period {
        iterations,
        lower_bound,
        bound_by,
    })
}

/// `#Tasks`: `id coords name`, coords `x,y,…` or `-`.
fn task_line(ln: usize, line: &str, toks: &[&str]) -> Result<NamedTask, TasksFileError> {
    if toks.len() < 2 {
        return err(ln, "expected `id coords name`");
    }
    let id = num(ln, toks[0], "a task id")?;
    let coords = if toks[1] == "-" {
        None
    } else {
        Some(
            toks[1]
                .split(',')
                .map(|c| num(ln, c, "a coordinate"))
                .collect::<Result<Vec<i64>, _>>()?,
        )
    };
    let name = line
        .splitn(3, char::is_whitespace)
        .nth(2)
        .unwrap_or("")
        .trim();
    Ok((ln, id, coords, name.to_string()))
}

/// `#Programs`: the ops after the task id, `C<cycles>`, `S<msg>`, `R<msg>` or `Y<phase>`.
fn program_ops(ln: usize, toks: &[&str]) -> Result<Vec<Op>, TasksFileError> {
    let mut ops = Vec::new();
    for tok in toks {
        let (kind, n) = tok.split_at(tok.chars().next().map_or(0, char::len_utf8));
        let what = "an op: C<cycles>, S<msg>, R<msg> or Y<phase>";
        let v: u64 = num(ln, n, what)?;
        let idx = || usize::try_from(v).or_else(|_| err(ln, format!("`{tok}` is too large")));
        ops.push(match kind {
            "C" => Op::Compute(v),
            "S" => Op::Send(idx()?),
            "R" => Op::Recv(idx()?),
            "Y" => Op::Sync(idx()?),
            _ => return err(ln, format!("expected {what}, found `{tok}`")),
        });
    }
    Ok(ops)
}

/// A placement line: `task-id wired-down-or-not x-loc y-loc…`.
fn placement_line(ln: usize, toks: &[&str]) -> Result<PlacedTask, TasksFileError> {
    if toks.len() < 3 {
        return err(ln, "expected `task-id wired-down-or-not x-loc y-loc`");
    }
    let id = num(ln, toks[0], "a task id")?;
    let wired = match toks[1] {
        "0" => false,
        "1" => true,
        w => {
            return err(
                ln,
                format!("expected 0 or 1 for wired-down-or-not, found `{w}`"),
            )
        }
    };
    let coords = toks[2..]
        .iter()
        .map(|c| num(ln, c, "a coordinate"))
        .collect::<Result<Vec<i64>, _>>()?;
    Ok((ln, id, wired, coords))
}

type TaskAt<'a> = &'a dyn Fn(usize, usize) -> Result<usize, TasksFileError>;

/// The `n` tasks with the names, coordinates, programs and placement the lines gave them.
fn assemble_tasks(
    n: usize,
    names: Vec<NamedTask>,
    programs: Vec<(usize, usize, Vec<Op>)>,
    placement_expected: Option<(usize, usize)>,
    placed: Vec<PlacedTask>,
    task_at: TaskAt<'_>,
) -> Result<Vec<Task>, TasksFileError> {
    let mut tasks: Vec<Task> = (0..n)
        .map(|id| Task {
            id,
            name: id.to_string(),
            ..Task::default()
        })
        .collect();
    for (ln, id, coords, name) in names {
        let t = task_at(ln, id)?;
        tasks[t].coords = coords;
        if !name.is_empty() {
            tasks[t].name = name;
        }
    }
    for (ln, id, ops) in programs {
        let t = task_at(ln, id)?;
        tasks[t].ops = ops;
    }
    if let Some((ln, k)) = placement_expected {
        if placed.len() != k {
            return err(
                ln,
                format!("{k} placed tasks announced, {} listed", placed.len()),
            );
        }
    }
    for (ln, id, wired, coords) in placed {
        let t = task_at(ln, id)?;
        tasks[t].wired = wired;
        tasks[t].mapped = Some(coords);
    }
    Ok(tasks)
}

/// The messages in id order: each id used once and in range, each task named existing.
fn assemble_messages(
    read: Vec<(usize, Message, bool)>,
    task_at: TaskAt<'_>,
) -> Result<Vec<Message>, TasksFileError> {
    let nmsg = read.len();
    let mut slots: Vec<Option<Message>> = vec![None; nmsg];
    for (ln, m, _) in read {
        task_at(ln, m.src)?;
        for &d in &m.dst {
            task_at(ln, d)?;
        }
        let id = m.id;
        match slots.get_mut(id) {
            Some(slot @ None) => *slot = Some(m),
            Some(Some(_)) => return err(ln, format!("message id {id} is used twice")),
            None => {
                return err(
                    ln,
                    format!("message id {id} is out of range: there are {nmsg} messages"),
                )
            }
        }
    }
    Ok(slots.into_iter().flatten().collect())
}

/// The `declared` phases with the starts and names the lines gave, every message in one of them.
fn assemble_phases(
    declared: usize,
    read: Vec<(usize, Phase)>,
    messages: &[Message],
) -> Result<Vec<Phase>, TasksFileError> {
    let mut phases: Vec<Phase> = (0..declared)
        .map(|id| Phase {
            id,
            name: id.to_string(),
            start: 0,
        })
        .collect();
    for (ln, p) in read {
        match phases.get_mut(p.id) {
            Some(slot) => *slot = p,
            None => {
                return err(
                    ln,
                    format!("phase {} is beyond `#Nphases` ({declared})", p.id),
                )
            }
        }
    }
    if let Some(m) = messages.iter().find(|m| m.phase >= declared) {
        return err(
            0,
            format!(
                "message {} is in phase {}, beyond `#Nphases` ({declared})",
                m.id, m.phase
            ),
        );
    }
    Ok(phases)
}

/// Every op of every program names a message or phase that exists.
fn check_programs(tasks: &[Task], messages: usize, phases: usize) -> Result<(), TasksFileError> {
    for t in tasks {
        for op in &t.ops {
            let bad = match *op {
                Op::Send(m) | Op::Recv(m) => m >= messages,
                Op::Sync(p) => p >= phases,
                Op::Compute(_) => false,
            };
            if bad {
                return err(
                    0,
                    format!(
                        "the program of task {} refers to {op:?}, which does not exist",
                        t.id
                    ),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts announced in the header size tables before any line backs them: a huge one is an
    /// error, not a terabyte allocation.
    #[test]
    fn huge_announced_counts_are_errors() {
        for text in [
            "#Model\nTDL\n#Ntasks\n10000000000\n",
            "#Model\nTDL\n#Ntasks\n2\n#Nphases\n10000000000\n",
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains("more than"), "{e}");
        }
    }
    use crate::topology::Network;

    fn sample() -> Traffic {
        let msg =
            |id, src, dst: Vec<usize>, size, release, deadline, phase, label: Option<&str>| {
                Message {
                    id,
                    src,
                    dst: dst.into(),
                    size,
                    release,
                    deadline,
                    phase,
                    iteration: id as u64 % 2,
                    label: label.map(Into::into),
                }
            };
        Traffic {
            repeat: None,
            tasks: vec![
                Task {
                    id: 0,
                    name: "host".into(),
                    coords: Some(vec![0, 0]),
                    mapped: Some(vec![1, 1]),
                    wired: true,
                    ops: vec![Op::Sync(1), Op::Compute(3), Op::Send(0), Op::Send(2)],
                    iterations: vec![],
                },
                Task {
                    id: 1,
                    name: "a b".into(),
                    coords: None,
                    mapped: None,
                    wired: false,
                    ops: vec![Op::Sync(1), Op::Recv(0), Op::Send(1), Op::Recv(2)],
                    iterations: vec![],
                },
                Task {
                    id: 2,
                    name: "c".into(),
                    ops: vec![Op::Sync(1), Op::Recv(1), Op::Recv(0)],
                    ..Task::default()
                },
            ],
            messages: vec![
                msg(0, 0, vec![1, 2], 8, 3, 11, 1, Some("lexicon")),
                msg(1, 1, vec![2], 4, 11, 15, 1, None),
                msg(2, 0, vec![1], 2, 3, 11, 0, Some("m0")),
            ],
            phases: vec![
                Phase {
                    id: 0,
                    name: "0".into(),
                    start: 0,
                },
                Phase {
                    id: 1,
                    name: "phase-zero".into(),
                    start: 0,
                },
            ],
            critical_path: 15,
            period: Some(Period {
                iterations: 2,
                lower_bound: 12,
                bound_by: "compute of task host (12 cycles per iteration)".into(),
            }),
            logical: Some("torus:3x1".parse().unwrap()),
            target: Some(Target {
                network: Some("mesh:4x4".parse().unwrap()),
                mapping: Some("torus->mesh".into()),
                settings: ttdl_ir::settings::Settings::new()
                    .with("route", "dor")
                    .unwrap()
                    .with("seed", 7)
                    .unwrap(),
            }),
        }
    }

    #[test]
    fn round_trip() {
        let t = sample();
        let text = write(&t, None);
        assert_eq!(read(&text), Ok(t.clone()));
        // Writing what was read gives the same text.
        assert_eq!(write(&read(&text).unwrap(), None), text);
    }

    #[test]
    fn layout() {
        let text = write(&sample(), None);
        expect_test::expect_file!["../tests/golden/sample.tasks"].assert_eq(&text);
    }

    #[test]
    fn with_a_placement() {
        let mut t = sample();
        t.tasks[0].mapped = None;
        let net = Network::build(&"mesh:4x4".parse().unwrap()).unwrap();
        let p = Placement {
            node_of: vec![5, 0, 15],
        };
        let back = read(&write(&t, Some((&net, &p)))).unwrap();
        let locs: Vec<_> = back
            .tasks
            .iter()
            .map(|t| (t.wired, t.mapped.clone()))
            .collect();
        assert_eq!(
            locs,
            vec![
                (true, Some(vec![1, 1])),
                (false, Some(vec![0, 0])),
                (false, Some(vec![3, 3]))
            ]
        );
    }

    /// The layout of Minsky Fig 5-5, with the values the scan lost filled in.
    #[test]
    fn thesis_layout_reads() {
        let text =
            "#Model\nTDL\n#Ntasks\n16\n#Nphases\n1\n#nNodes\n16\n#nx\n4\n#ny\n4\n#nz\n0\n#nt\n0\n\
# Message Traffic Description\n#*******\n#Nth phase\n0\n#Nmsgs\n3\n#*************\n\
# Message format:\n# msg := src-task release deadline size dest-task\n#***********\n\
0 0 8 4 12\n4 0 8 4 0\n15 24 32 4 14\n#*******\n# Placement Description\n#********\n\
#Placement mode :\n# 1 directs backend to place using simulated annealing\n\
# 2 directs backend to use specified mapping which follows\n2\n\
#N tasks to read for specified placement for this problem\n4\n\
# Task format: task-id wired-down-or-not x-loc y-loc\n0 1 0 0\n1 1 0 2\n14 1 1 3\n15 1 1 1\n";
        let t = read(text).unwrap();
        assert_eq!(t.tasks.len(), 16);
        assert_eq!(t.messages.len(), 3);
        assert_eq!(
            (
                t.messages[2].src,
                t.messages[2].dst.to_vec(),
                t.messages[2].release,
                t.messages[2].deadline,
                t.messages[2].size
            ),
            (15, vec![14], 24, 32, 4)
        );
        assert_eq!(t.tasks[14].mapped, Some(vec![1, 3]));
        assert!(t.tasks[14].wired);
        assert_eq!(t.target.unwrap().network, Some("mesh:4x4".parse().unwrap()));
    }

    #[test]
    fn errors_have_line_numbers() {
        let good = write(&sample(), None);
        let bad = good.replace(
            "0 3 11 8 1 2 | 0 0 lexicon",
            "0 3 eleven 8 1 2 | 0 0 lexicon",
        );
        let e = read(&bad).unwrap_err();
        assert!(e.message.contains("`eleven`"), "{e}");
        assert_eq!(
            bad.lines()
                .nth(e.line - 1)
                .map(|l| l.starts_with("0 3 eleven")),
            Some(true)
        );
        let e = read(&good.replace("#Ntasks\n3", "#Ntasks\n2")).unwrap_err();
        assert!(e.to_string().contains("task 2 does not exist"), "{e}");
        let e = read(&good.replace("#Nmsgs\n2", "#Nmsgs\n5")).unwrap_err();
        assert!(
            e.to_string().contains("5 messages announced, 2 listed"),
            "{e}"
        );
        assert!(read("hello").is_err());
        assert!(read("").is_err());
    }
}
