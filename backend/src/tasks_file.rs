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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
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

/// Reads a tasks file (the thesis's layout, with or without the extensions).
pub fn read(text: &str) -> Result<Traffic, TasksFileError> {
    let mut sec = Section::None;
    let mut ntasks: Option<(usize, usize)> = None;
    let mut nphases: Option<usize> = None;
    let (mut nx, mut ny, mut nz) = (0usize, 0usize, 0usize);
    let mut target: Option<Target> = None;
    let mut logical = None;
    let mut critical: Option<u64> = None;
    let mut period = None;
    let mut names: Vec<(usize, usize, Option<Vec<i64>>, String)> = Vec::new();
    let mut programs: Vec<(usize, usize, Vec<Op>)> = Vec::new();
    // (line, message, explicit id)
    let mut messages: Vec<(usize, Message, bool)> = Vec::new();
    let mut labels = ttdl_ir::Labels::default();
    let mut phase_now: usize = 0;
    let mut phases: Vec<(usize, Phase)> = Vec::new();
    // Per phase block: (line of #Nmsgs value, declared count, messages seen).
    let mut counts: Vec<(usize, usize, usize)> = Vec::new();
    let mut placement_expected: Option<(usize, usize)> = None;
    let mut awaiting_count = false;
    let mut placed: Vec<(usize, usize, bool, Vec<i64>)> = Vec::new();

    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            if let Some(h) = header(line) {
                sec = h;
                awaiting_count = h == Section::Nmsgs;
            }
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let first = toks.first().copied().unwrap_or("");
        match sec {
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
                ntasks = Some((ln, count(ln, first, "the number of tasks")?));
            }
            Section::Nphases => nphases = Some(count(ln, first, "the number of phases")?),
            Section::Nnodes | Section::Nt => {
                let _: u64 = num(ln, first, "a number")?;
            }
            Section::Nx => nx = num(ln, first, "the x extent")?,
            Section::Ny => ny = num(ln, first, "the y extent")?,
            Section::Nz => nz = num(ln, first, "the z extent")?,
            Section::Target => {
                let t = target.get_or_insert_with(Target::default);
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
            }
            Section::Logical => logical = Some(spec_from(ln, line)?),
            Section::Critical => critical = Some(num(ln, first, "the critical path length")?),
            Section::Period => {
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
                period = Some(Period {
                    iterations,
                    lower_bound,
                    bound_by,
                });
            }
            Section::Tasks => {
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
                names.push((ln, id, coords, name.to_string()));
            }
            Section::Programs => {
                let id = num(ln, first, "a task id")?;
                let mut ops = Vec::new();
                for tok in &toks[1..] {
                    let (kind, n) = tok.split_at(tok.chars().next().map_or(0, char::len_utf8));
                    let what = "an op: C<cycles>, S<msg>, R<msg> or Y<phase>";
                    let v: u64 = num(ln, n, what)?;
                    let idx =
                        || usize::try_from(v).or_else(|_| err(ln, format!("`{tok}` is too large")));
                    ops.push(match kind {
                        "C" => Op::Compute(v),
                        "S" => Op::Send(idx()?),
                        "R" => Op::Recv(idx()?),
                        "Y" => Op::Sync(idx()?),
                        _ => return err(ln, format!("expected {what}, found `{tok}`")),
                    });
                }
                programs.push((ln, id, ops));
            }
            Section::NthPhase => {
                phase_now = num(ln, first, "a phase number")?;
            }
            Section::Phase => {
                let start = num(ln, first, "the phase's start time")?;
                let name = line[first.len()..].trim().to_string();
                phases.push((
                    ln,
                    Phase {
                        id: phase_now,
                        name,
                        start,
                    },
                ));
            }
            Section::Nmsgs => {
                if awaiting_count {
                    awaiting_count = false;
                    counts.push((ln, num(ln, first, "the number of messages")?, 0));
                    continue;
                }
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
                    id: messages.len(),
                    src,
                    dst,
                    size,
                    release,
                    deadline,
                    phase: phase_now,
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
                        m.label = Some(labels.intern(e[2..].join(" ")));
                    }
                }
                if let Some(c) = counts.last_mut() {
                    c.2 += 1;
                }
                messages.push((ln, m, explicit));
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
                if placement_expected.is_none() {
                    placement_expected = Some((ln, num(ln, first, "the number of placed tasks")?));
                    continue;
                }
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
                placed.push((ln, id, wired, coords));
            }
        }
    }

    // Assemble and check.
    let Some((tline, n)) = ntasks else {
        return err(0, "no `#Ntasks` section");
    };
    let mut tasks: Vec<Task> = (0..n)
        .map(|id| Task {
            id,
            name: id.to_string(),
            ..Task::default()
        })
        .collect();
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
    for &(ln, declared, seen) in &counts {
        if declared != seen {
            return err(ln, format!("{declared} messages announced, {seen} listed"));
        }
    }
    let nmsg = messages.len();
    let mut slots: Vec<Option<Message>> = vec![None; nmsg];
    for (ln, m, _) in messages {
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
    let messages: Vec<Message> = slots.into_iter().flatten().collect();
    let declared_phases = nphases.unwrap_or(1).max(1);
    let mut phase_list: Vec<Phase> = (0..declared_phases)
        .map(|id| Phase {
            id,
            name: id.to_string(),
            start: 0,
        })
        .collect();
    for (ln, p) in phases {
        match phase_list.get_mut(p.id) {
            Some(slot) => *slot = p,
            None => {
                return err(
                    ln,
                    format!("phase {} is beyond `#Nphases` ({declared_phases})", p.id),
                )
            }
        }
    }
    for m in &messages {
        if m.phase >= declared_phases {
            return err(
                0,
                format!(
                    "message {} is in phase {}, beyond `#Nphases` ({declared_phases})",
                    m.id, m.phase
                ),
            );
        }
    }
    for t in &tasks {
        for op in &t.ops {
            let bad = match *op {
                Op::Send(m) | Op::Recv(m) => m >= nmsg,
                Op::Sync(p) => p >= declared_phases,
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
        phases: phase_list,
        critical_path: critical.unwrap_or(0),
        period,
        logical,
        target,
        repeat: None,
    })
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
