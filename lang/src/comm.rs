//! Streams and task programs (Minsky §4.1.2). The evaluator calls these hooks as it evaluates the
//! communication forms, always *in the context of* a task; matching of writes and reads by
//! (writer, reader) in FIFO order happens here, with the thesis's pending-read and pending-write
//! queues. `finish` checks what is left unmatched, builds the subtask DAG, times it and returns the
//! backend's `Traffic`.
//!
//! A stream is the ordered pair (writer, reader) (thesis §4.1: "a stream is specified completely by
//! a source task and a destination task"). Each stream keeps one queue: of writes not yet read, or
//! of reads not yet written (never both). A write (read) first looks for a pending read (write) at
//! the head of its stream's queue and is matched with it, otherwise it joins the queue. So the k-th
//! write on a stream is matched with the k-th read, whichever is evaluated first. A `broadcast` is
//! one write placed on several streams at once; it becomes a message when every reader has read it.
//! Message ids follow the order in which messages became complete.
//!
//! Interface: the signatures of the hooks are the contract with the evaluator.

use std::collections::{BTreeMap, HashMap, VecDeque};
use ttdl_ir::iterations::Shape;
use ttdl_ir::limits::Limits;

use ttdl_ir::topology::NetworkSpec;
use ttdl_ir::traffic::{
    IterationMark, Message, MsgId, Op, Phase, PhaseId, Target, Task, TaskId, Traffic,
};

use crate::dag::{Dependence, SubtaskGraph, SubtaskKind};
use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::timing::{self, IterationLoad};

/// Limits that stop runaway scripts (an embedder's budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommLimits {
    pub max_tasks: usize,
    pub max_messages: usize,
}

impl Default for CommLimits {
    fn default() -> Self {
        CommLimits {
            max_tasks: 1 << 20,
            max_messages: 1 << 24,
        }
    }
}

/// A small, fast hasher for the stream table (keys are pairs of task ids, never attacker-chosen
/// in a way that matters here): the multiply-rotate step of rustc's FxHasher.
#[derive(Clone, Copy, Debug, Default)]
struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

type StreamMap = HashMap<(TaskId, TaskId), Stream, std::hash::BuildHasherDefault<PairHasher>>;

type WriteId = u32;
type ReadId = u32;

/// "None" in the 32-bit fields of the records below.
const NONE32: u32 = u32::MAX;
/// "Not inside an `iterate`" in the iteration fields.
const NO_ITERATION: u64 = u64::MAX;

/// The records below keep every id in 32 bits and every span as an index into `Comm::spans`
/// (a form evaluated in a loop is one span, stored once): a program of millions of stream
/// operations keeps one write, one read, one destination and two steps per message, so their
/// size is the evaluator's memory per message. Ids fit: stream operations are fewer than
/// `u32::MAX` (the message limit is checked first) and so are tasks.
fn id32(id: usize) -> u32 {
    u32::try_from(id).unwrap_or(NONE32)
}

fn opt32(id: u32) -> Option<usize> {
    (id != NONE32).then_some(id as usize)
}

fn iteration_of(i: u64) -> Option<u64> {
    (i != NO_ITERATION).then_some(i)
}

fn iteration_code(i: Option<u64>) -> u64 {
    i.unwrap_or(NO_ITERATION)
}

/// One step of a task's program as evaluated, before matching is final (8 bytes).
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Index into `Comm::computes`.
    Compute(u32),
    Write(WriteId),
    Read(ReadId),
    /// Index into `Comm::syncs`.
    Sync(u32),
}

/// A `compute` step: cycles, and the iteration it belongs to (`NO_ITERATION` outside one).
#[derive(Clone, Copy, Debug)]
struct ComputeRec {
    cycles: u64,
    iteration: u64,
}

#[derive(Clone, Debug, Default)]
struct TaskRec {
    name: String,
    span: Span,
    coords: Option<Vec<i64>>,
    mapped: Option<Vec<i64>>,
    steps: Vec<Step>,
    /// Nesting depth of `iterate` forms this task is inside.
    depth: u32,
    /// Index of the current iteration of the outermost `iterate`, if inside one.
    iteration: Option<u64>,
    /// The phase this task is in (its last `synchronize`).
    phase: PhaseId,
    /// Step ranges of the outermost `iterate`'s iterations evaluated so far (while folding).
    iteration_steps: Vec<(usize, usize)>,
    /// The count of a folded `iterate`: the records hold its first [`FOLD_AFTER`] iterations.
    folded: Option<u64>,
}

/// Tasks folded their `iterate`s differently (see [`Comm::folded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldMismatch;

/// The code of the diagnostic that asks for the program to be evaluated again unfolded.
pub const FOLD_FAILED: &str = "fold";

/// Iterations from which an outermost `iterate` may be folded.
pub const FOLD_MIN: u64 = 64;
/// Iterations evaluated (and checked equal) before the rest of a foldable `iterate` is recorded
/// as a count.
pub const FOLD_AFTER: u64 = 4;

/// A write (48 bytes).
#[derive(Clone, Debug)]
struct WriteRec {
    size: u64,
    /// `NO_ITERATION` outside an `iterate`.
    iteration: u64,
    task: u32,
    /// Index into `Comm::labels`, or `NONE32`.
    label: u32,
    /// Index into `Comm::spans`.
    span: u32,
    phase: u32,
    /// Range of this write's destinations in `Comm::dsts`.
    first_dst: u32,
    ndst: u32,
    /// Destinations still to read it.
    unread: u32,
    /// The message it became, or `NONE32`.
    msg: u32,
}

impl WriteRec {
    fn task(&self) -> TaskId {
        self.task as TaskId
    }
    fn iteration(&self) -> Option<u64> {
        iteration_of(self.iteration)
    }
    fn msg(&self) -> Option<MsgId> {
        opt32(self.msg)
    }
}

/// A read (32 bytes).
#[derive(Clone, Debug)]
struct ReadRec {
    size: u64,
    iteration: u64,
    task: u32,
    span: u32,
    /// The write it matched, or `NONE32`.
    write: u32,
}

impl ReadRec {
    fn task(&self) -> TaskId {
        self.task as TaskId
    }
    fn iteration(&self) -> Option<u64> {
        iteration_of(self.iteration)
    }
    fn write(&self) -> Option<WriteId> {
        (self.write != NONE32).then_some(self.write)
    }
}

/// The pending-write or pending-read queue of one stream.
#[derive(Clone, Debug, Default)]
struct Stream {
    /// Writes not yet read: (write, index of this stream's reader among the write's destinations).
    writes: VecDeque<(WriteId, u32)>,
    reads: VecDeque<ReadId>,
    /// Pairs matched so far (for messages about what is left over).
    matched: usize,
}

/// Everything the communication forms have built so far. Cheap enough to clone for REPL snapshots.
#[derive(Clone, Debug, Default)]
pub struct Comm {
    limits: CommLimits,
    tasks: Vec<TaskRec>,
    by_name: HashMap<String, TaskId>,
    writes: Vec<WriteRec>,
    reads: Vec<ReadRec>,
    /// Destinations of every write: (reader task, the read that matched it or `NONE32`).
    dsts: Vec<(u32, ReadId)>,
    computes: Vec<ComputeRec>,
    /// `synchronize` steps: (phase, span).
    syncs: Vec<(PhaseId, Span)>,
    /// Every distinct span of a stream form, and its index.
    spans: Vec<Span>,
    span_ids: HashMap<Span, u32, std::hash::BuildHasherDefault<PairHasher>>,
    streams: StreamMap,
    /// Complete messages, in completion order (index = `MsgId`).
    complete: Vec<WriteId>,
    /// First size mismatch per stream.
    mismatches: Vec<(WriteId, ReadId)>,
    mismatch_streams: HashMap<(TaskId, TaskId), usize>,
    labels: Vec<ttdl_ir::Label>,
    label_ids: HashMap<String, u32>,
    phases: Vec<String>,
    phase_ids: HashMap<String, PhaseId>,
    /// Largest count of an outermost `iterate` (0 when the program does not repeat).
    iterations: u64,
    repeats: bool,
    target: Option<Target>,
    logical: Option<NetworkSpec>,
}

impl Comm {
    pub fn new(limits: CommLimits) -> Self {
        Comm {
            limits,
            ..Comm::default()
        }
    }

    pub fn limits(&self) -> CommLimits {
        self.limits
    }

    /// A fresh task (`deftask`), even if the name was used before.
    pub fn fresh_task(&mut self, name: &str, span: Span) -> Result<TaskId, Diagnostic> {
        if self.tasks.len() >= self.limits.max_tasks {
            return Err(Diagnostic::new(
                "limit",
                format!("too many tasks: the limit is {}", self.limits.max_tasks),
            )
            .with_label(span, "this would create one more")
            .with_help("create fewer tasks, or raise the task limit of the session"));
        }
        let id = self.tasks.len();
        self.tasks.push(TaskRec {
            name: name.to_string(),
            span,
            ..TaskRec::default()
        });
        self.by_name.insert(name.to_string(), id);
        Ok(id)
    }

    /// `(task NAME)`: the task with that name, created on first use.
    pub fn task_named(&mut self, name: &str, span: Span) -> Result<TaskId, Diagnostic> {
        match self.by_name.get(name) {
            Some(&t) => Ok(t),
            None => self.fresh_task(name, span),
        }
    }

    /// `(task 3)`: the task with that integer id, created on first use. Tasks with smaller ids that
    /// do not exist yet are created too (named by their number), so ids stay dense.
    pub fn task_numbered(&mut self, id: i64, span: Span) -> Result<TaskId, Diagnostic> {
        let Ok(want) = usize::try_from(id) else {
            return Err(Diagnostic::new("type", format!("no task has the id {id}"))
                .with_label(span, "task ids are 0, 1, 2, …")
                .with_help("use a task id that is zero or more"));
        };
        if want >= self.limits.max_tasks {
            return Err(Diagnostic::new(
                "limit",
                format!(
                    "task id {id} is beyond the task limit of {}",
                    self.limits.max_tasks
                ),
            )
            .with_label(span, "this task id")
            .with_help("number tasks from 0, without large gaps"));
        }
        while self.tasks.len() <= want {
            let n = self.tasks.len().to_string();
            self.fresh_task(&n, span)?;
        }
        Ok(want)
    }

    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    pub fn task_name(&self, task: TaskId) -> &str {
        self.tasks.get(task).map(|t| t.name.as_str()).unwrap_or("?")
    }

    /// Logical coordinates of a task made by `network-tasks`.
    pub fn set_coords(&mut self, task: TaskId, coords: Vec<i64>) {
        if let Some(t) = self.tasks.get_mut(task) {
            t.coords = Some(coords);
        }
    }

    pub fn coords(&self, task: TaskId) -> Option<&[i64]> {
        self.tasks.get(task)?.coords.as_deref()
    }

    /// Physical coordinates chosen by a canned mapping.
    pub fn set_mapped(&mut self, task: TaskId, coords: Vec<i64>) {
        if let Some(t) = self.tasks.get_mut(task) {
            t.mapped = Some(coords);
        }
    }

    /// Physical coordinates chosen by a canned mapping, if any.
    pub fn mapped(&self, task: TaskId) -> Option<&[i64]> {
        self.tasks.get(task)?.mapped.as_deref()
    }

    fn task_mut(&mut self, task: TaskId, span: Span) -> Result<&mut TaskRec, Diagnostic> {
        self.tasks.get_mut(task).ok_or_else(|| no_task(task, span))
    }

    fn check_peer(&self, peer: TaskId, span: Span) -> Result<(), Diagnostic> {
        if peer < self.tasks.len() {
            Ok(())
        } else {
            Err(no_task(peer, span))
        }
    }

    fn check_room(&self, span: Span) -> Result<(), Diagnostic> {
        if self.writes.len() + self.reads.len() >= self.limits.max_messages {
            return Err(Diagnostic::new(
                "limit",
                format!(
                    "too many stream operations: the limit is {}",
                    self.limits.max_messages
                ),
            )
            .with_label(span, "this would be one more")
            .with_help("check the counts of `iterate` and `dotimes`, or raise the message limit"));
        }
        Ok(())
    }

    /// The index of a span in `spans`, stored on first use.
    fn span_id(&mut self, span: Span) -> u32 {
        if let Some(&id) = self.span_ids.get(&span) {
            return id;
        }
        let id = id32(self.spans.len());
        self.spans.push(span);
        self.span_ids.insert(span, id);
        id
    }

    fn label_id(&mut self, label: Option<&str>) -> Option<u32> {
        let l = label?;
        if let Some(&id) = self.label_ids.get(l) {
            return Some(id);
        }
        let id = self.labels.len() as u32;
        self.labels.push(l.into());
        self.label_ids.insert(l.to_string(), id);
        Some(id)
    }

    pub fn compute(&mut self, task: TaskId, cycles: u64, span: Span) -> Result<(), Diagnostic> {
        let index = id32(self.computes.len());
        let t = self.task_mut(task, span)?;
        let iteration = iteration_code(t.iteration);
        t.steps.push(Step::Compute(index));
        self.computes.push(ComputeRec { cycles, iteration });
        Ok(())
    }

    /// `(write-stream M PEER)` by `task`; `label` is the message type's name, if any.
    pub fn write(
        &mut self,
        task: TaskId,
        peer: TaskId,
        size: u64,
        label: Option<&str>,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.broadcast(task, &[peer], size, label, span)
    }

    /// `(read-stream M PEER)` by `task`.
    pub fn read(
        &mut self,
        task: TaskId,
        peer: TaskId,
        size: u64,
        label: Option<&str>,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let _ = label;
        self.check_peer(peer, span)?;
        self.check_room(span)?;
        check_size(size, span)?;
        let rid = self.reads.len() as ReadId;
        self.task_mut(task, span)?;
        let span = self.span_id(span);
        let t = &mut self.tasks[task];
        let iteration = iteration_code(t.iteration);
        t.steps.push(Step::Read(rid));
        self.reads.push(ReadRec {
            task: id32(task),
            size,
            span,
            iteration,
            write: NONE32,
        });
        let stream = self.streams.entry((peer, task)).or_default();
        match stream.writes.pop_front() {
            Some((w, slot)) => {
                stream.matched += 1;
                self.matched(w, slot, rid)
            }
            None => stream.reads.push_back(rid),
        }
        Ok(())
    }

    /// `(broadcast M P0 P1 …)` by `task`: one multicast message.
    pub fn broadcast(
        &mut self,
        task: TaskId,
        peers: &[TaskId],
        size: u64,
        label: Option<&str>,
        span: Span,
    ) -> Result<(), Diagnostic> {
        if peers.is_empty() {
            return Err(
                Diagnostic::new("arity", "a broadcast needs at least one reader")
                    .with_label(span, "no tasks to send to")
                    .with_help("name the reading tasks after the message: (broadcast m t1 t2 …)"),
            );
        }
        for (i, &p) in peers.iter().enumerate() {
            self.check_peer(p, span)?;
            if peers[..i].contains(&p) {
                return Err(Diagnostic::new(
                    "type",
                    format!(
                        "task `{}` appears twice among the readers of this broadcast",
                        self.task_name(p)
                    ),
                )
                .with_label(span, "one message reaches each reader once")
                .with_help("list every reading task once"));
            }
        }
        self.check_room(span)?;
        check_size(size, span)?;
        let label = self.label_id(label).unwrap_or(NONE32);
        let wid = self.writes.len() as WriteId;
        self.task_mut(task, span)?;
        let span = self.span_id(span);
        let t = &mut self.tasks[task];
        let (iteration, phase) = (iteration_code(t.iteration), id32(t.phase));
        t.steps.push(Step::Write(wid));
        let first_dst = self.dsts.len() as u32;
        self.dsts.extend(peers.iter().map(|&p| (id32(p), NONE32)));
        self.writes.push(WriteRec {
            task: id32(task),
            size,
            label,
            span,
            iteration,
            phase,
            first_dst,
            ndst: peers.len() as u32,
            unread: peers.len() as u32,
            msg: NONE32,
        });
        for (slot, &p) in peers.iter().enumerate() {
            let stream = self.streams.entry((task, p)).or_default();
            match stream.reads.pop_front() {
                Some(r) => {
                    stream.matched += 1;
                    self.matched(wid, slot as u32, r)
                }
                None => stream.writes.push_back((wid, slot as u32)),
            }
        }
        Ok(())
    }

    /// Records a write/read pair; the write becomes a message once all its readers have read it.
    fn matched(&mut self, w: WriteId, slot: u32, r: ReadId) {
        let (wi, ri) = (w as usize, r as usize);
        let (first, size, writer) = {
            let wr = &self.writes[wi];
            (wr.first_dst, wr.size, wr.task())
        };
        self.dsts[(first + slot) as usize].1 = r;
        self.reads[ri].write = w;
        if self.reads[ri].size != size {
            let key = (writer, self.reads[ri].task());
            let n = self.mismatch_streams.entry(key).or_insert(0);
            if *n == 0 {
                self.mismatches.push((w, r));
            }
            *n += 1;
        }
        let wr = &mut self.writes[wi];
        wr.unread -= 1;
        if wr.unread == 0 {
            wr.msg = id32(self.complete.len());
            self.complete.push(w);
        }
    }

    /// `(synchronize PHASE)` by `task`; integer phases are passed as their decimal text.
    pub fn synchronize(&mut self, task: TaskId, phase: &str, span: Span) -> Result<(), Diagnostic> {
        self.task_mut(task, span)?;
        self.ensure_phase0();
        let id = match self.phase_ids.get(phase) {
            Some(&id) => id,
            None => {
                let id = self.phases.len();
                self.phases.push(phase.to_string());
                self.phase_ids.insert(phase.to_string(), id);
                id
            }
        };
        let index = id32(self.syncs.len());
        let t = self.task_mut(task, span)?;
        t.steps.push(Step::Sync(index));
        t.phase = id;
        self.syncs.push((id, span));
        Ok(())
    }

    /// Phase 0 is the implicit phase every task starts in; it is named `0`, so `(synchronize 0)`
    /// (thesis Fig 5-2) makes the tasks start it together.
    fn ensure_phase0(&mut self) {
        if self.phases.is_empty() {
            self.phases.push("0".to_string());
            self.phase_ids.insert("0".to_string(), 0);
        }
    }

    /// `task` enters an `(iterate … N)` form.
    pub fn iterate_begin(&mut self, task: TaskId, count: u64, span: Span) {
        let _ = span;
        if let Some(t) = self.tasks.get_mut(task) {
            if t.depth == 0 && count > 0 {
                self.iterations = self.iterations.max(count);
                self.repeats = true;
            }
            t.depth += 1;
        }
    }

    /// Whether `task` is in its outermost `iterate` (and no other iterated before).
    pub fn outermost(&self, task: TaskId) -> bool {
        self.tasks
            .get(task)
            .is_some_and(|t| t.depth == 1 && t.folded.is_none())
    }

    /// Where `task`'s next step will go.
    pub fn mark(&self, task: TaskId) -> usize {
        self.tasks.get(task).map_or(0, |t| t.steps.len())
    }

    /// `task` finished an iteration of its outermost `iterate` that began at step `mark`.
    pub fn end_iteration(&mut self, task: TaskId, mark: usize) {
        if let Some(t) = self.tasks.get_mut(task) {
            let end = t.steps.len();
            t.iteration_steps.push((mark, end));
        }
    }

    /// Whether every iteration of `task`'s outermost `iterate` so far recorded the same steps:
    /// the same computes, writes to the same readers with the same sizes, labels and phases,
    /// reads of the same form and size, the same synchronizations.
    pub fn iterations_repeat(&self, task: TaskId) -> bool {
        let Some(t) = self.tasks.get(task) else {
            return false;
        };
        let key = |s: &Step| -> (u8, u64, u64, u64, Vec<u32>) {
            match *s {
                Step::Compute(c) => (0, self.computes[c as usize].cycles, 0, 0, Vec::new()),
                Step::Write(w) => {
                    let w = &self.writes[w as usize];
                    let dsts = (w.first_dst..w.first_dst + w.ndst)
                        .map(|d| self.dsts[d as usize].0)
                        .collect();
                    (1, w.size, u64::from(w.label), u64::from(w.phase), dsts)
                }
                Step::Read(r) => {
                    let r = &self.reads[r as usize];
                    (2, r.size, u64::from(r.span), 0, Vec::new())
                }
                Step::Sync(i) => (3, self.syncs[i as usize].0 as u64, 0, 0, Vec::new()),
            }
        };
        t.iteration_steps.windows(2).all(|w| {
            let (a, b) = (&t.steps[w[0].0..w[0].1], &t.steps[w[1].0..w[1].1]);
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| key(x) == key(y))
        })
    }

    /// Records that `task`'s outermost `iterate` runs `count` times, its later iterations the
    /// same as those evaluated (the traffic then carries `repeat`).
    pub fn fold(&mut self, task: TaskId, count: u64) {
        if let Some(t) = self.tasks.get_mut(task) {
            t.folded = Some(count);
            t.iteration_steps = Vec::new();
        }
    }

    /// The count every folded task repeats to, when some folded; `Err` when the folding is
    /// not one the whole program agrees on (tasks folded to different counts, or a task that
    /// repeats without folding beside one that folded): evaluate again without folding.
    pub fn folded(&self) -> Result<Option<u64>, FoldMismatch> {
        let mut count = None;
        for t in &self.tasks {
            if let Some(n) = t.folded {
                if *count.get_or_insert(n) != n {
                    return Err(FoldMismatch);
                }
            }
        }
        if count.is_some()
            && self.tasks.iter().any(|t| {
                t.folded.is_none()
                    && t.steps.iter().any(|s| match *s {
                        Step::Compute(c) => self.computes[c as usize].iteration != NO_ITERATION,
                        Step::Write(w) => self.writes[w as usize].iteration().is_some(),
                        Step::Read(r) => self.reads[r as usize].iteration().is_some(),
                        Step::Sync(_) => false,
                    })
            })
        {
            return Err(FoldMismatch);
        }
        Ok(count)
    }

    /// `task` starts iteration `index` (0-based) of its innermost `iterate`.
    pub fn iterate_next(&mut self, task: TaskId, index: u64) {
        if let Some(t) = self.tasks.get_mut(task) {
            if t.depth == 1 {
                t.iteration = Some(index);
            }
        }
    }

    /// `task` leaves its innermost `iterate`.
    pub fn iterate_end(&mut self, task: TaskId) {
        if let Some(t) = self.tasks.get_mut(task) {
            t.depth = t.depth.saturating_sub(1);
            if t.depth == 0 {
                t.iteration = None;
            }
        }
    }

    pub fn set_target(&mut self, target: Target) {
        self.target = Some(target);
    }

    pub fn target(&self) -> Option<&Target> {
        self.target.as_ref()
    }

    pub fn set_logical(&mut self, spec: NetworkSpec) {
        self.logical = Some(spec);
    }

    pub fn logical(&self) -> Option<&NetworkSpec> {
        self.logical.as_ref()
    }

    /// Number of write and read forms evaluated so far.
    pub fn stream_ops(&self) -> usize {
        self.writes.len() + self.reads.len()
    }

    /// End of evaluation: every write and read must be matched, sizes must agree, and no set of
    /// tasks may wait on each other forever. Builds the DAG, assigns release and deadline times
    /// (Minsky Fig 4-3) and the period bound.
    pub fn finish(&self) -> Result<Traffic, Vec<Diagnostic>> {
        self.finish_with_dag().map(|(t, _)| t)
    }

    /// As [`Comm::finish`], also returning the subtask graph (for `ttdl dag`).
    pub fn finish_with_dag(&self) -> Result<(Traffic, SubtaskGraph), Vec<Diagnostic>> {
        self.finish_as(false)
    }

    /// As [`Comm::finish`], a folded `iterate` kept folded: the traffic holds its first
    /// iterations and `repeat` its count, timed as evaluated.
    pub fn finish_folded(&self) -> Result<Traffic, Vec<Diagnostic>> {
        self.finish_as(true).map(|(t, _)| t)
    }

    fn finish_as(&self, folded: bool) -> Result<(Traffic, SubtaskGraph), Vec<Diagnostic>> {
        let repeat = self.folded();
        let mut diags = self.unmatched();
        diags.extend(self.size_mismatches());
        if repeat.is_err() || (!diags.is_empty() && repeat.is_ok_and(|r| r.is_some())) {
            return Err(vec![Diagnostic::new(
                FOLD_FAILED,
                "the iterations of this program's `iterate` forms do not fold into one count",
            )
            .with_help("evaluate it again with every iteration unrolled")]);
        }
        if !diags.is_empty() {
            return Err(diags);
        }
        let mut traffic = self.traffic_untimed();
        if let Some(count) = repeat.ok().flatten() {
            match Shape::of(&traffic) {
                Some(shape) if !folded => {
                    let per = shape.per_iteration(&traffic) as u64;
                    if per.saturating_mul(count) > self.limits.max_messages as u64 {
                        return Err(vec![Diagnostic::new(
                            "limit",
                            format!(
                                "unrolled, the program's `iterate` makes {count} × {per} messages: the limit is {}",
                                self.limits.max_messages
                            ),
                        )
                        .with_help("`ttdl check` and `ttdl run` keep it folded; simulating it needs fewer iterations")]);
                    }
                    traffic = shape.with_count(&traffic, count).0
                }
                Some(_) => traffic.repeat = Some(count),
                None => {
                    return Err(vec![Diagnostic::new(
                        FOLD_FAILED,
                        "the iterations of this program do not fold into one count",
                    )])
                }
            }
        }
        let dag = SubtaskGraph::build(&traffic).map_err(|e| {
            vec![Diagnostic::new(
                "internal",
                format!("the task graph is inconsistent: {e}"),
            )]
        })?;
        match timing::solve(&dag) {
            Ok(timing) => timing::assign(&mut traffic, &dag, &timing),
            Err(cycle) => return Err(vec![self.deadlock(&traffic, &dag, &cycle)]),
        }
        if self.repeats {
            traffic.period = Some(timing::period_bound(
                &traffic,
                self.iterations,
                &self.iteration_loads(),
            ));
            // The recurrences and port bounds are the backend's to add (SPEC §2): the session
            // calls `schedule::bounds::refine_unplaced_period` on what this returns.
        }
        Ok((traffic, dag))
    }

    /// The tasks and messages with their programs, before timing.
    fn traffic_untimed(&self) -> Traffic {
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .map(|(id, t)| Task {
                id,
                name: t.name.clone(),
                coords: t.coords.clone(),
                mapped: t.mapped.clone(),
                wired: false,
                iterations: self.iteration_marks(t),
                ops: t
                    .steps
                    .iter()
                    .filter_map(|s| match *s {
                        Step::Compute(c) => Some(Op::Compute(self.computes[c as usize].cycles)),
                        Step::Write(w) => self.writes[w as usize].msg().map(Op::Send),
                        Step::Read(r) => self.reads[r as usize]
                            .write()
                            .and_then(|w| self.writes[w as usize].msg())
                            .map(Op::Recv),
                        Step::Sync(s) => Some(Op::Sync(self.syncs[s as usize].0)),
                    })
                    .collect(),
            })
            .collect();
        let messages = self
            .complete
            .iter()
            .enumerate()
            .map(|(id, &w)| {
                let wr = &self.writes[w as usize];
                let first = wr.first_dst as usize;
                Message {
                    id,
                    src: wr.task(),
                    dst: self.dsts[first..first + wr.ndst as usize]
                        .iter()
                        .map(|d| d.0 as TaskId)
                        .collect(),
                    size: wr.size,
                    release: 0,
                    deadline: 0,
                    phase: wr.phase as PhaseId,
                    iteration: wr.iteration().unwrap_or(0),
                    label: opt32(wr.label).and_then(|l| self.labels.get(l).cloned()),
                }
            })
            .collect();
        let mut phases: Vec<Phase> = self
            .phases
            .iter()
            .enumerate()
            .map(|(id, name)| Phase {
                id,
                name: name.clone(),
                start: 0,
            })
            .collect();
        if phases.is_empty() {
            phases.push(Phase {
                id: 0,
                name: "0".into(),
                start: 0,
            });
        }
        Traffic {
            tasks,
            messages,
            phases,
            critical_path: 0,
            period: None,
            logical: self.logical.clone(),
            target: self.target.clone(),
            repeat: None,
        }
    }

    /// Where each iteration of the outermost `iterate` begins in a task's program (ops are the
    /// steps one for one once every stream is matched).
    fn iteration_marks(&self, t: &TaskRec) -> Vec<IterationMark> {
        let mut marks = Vec::new();
        let mut cur: Option<u64> = None;
        for (i, s) in t.steps.iter().enumerate() {
            let it = match *s {
                Step::Compute(c) => iteration_of(self.computes[c as usize].iteration),
                Step::Write(w) => self.writes[w as usize].iteration(),
                Step::Read(r) => self.reads[r as usize].iteration(),
                Step::Sync(_) => continue,
            };
            if it != cur {
                marks.push(IterationMark {
                    op: i,
                    iteration: it,
                });
                cur = it;
            }
        }
        marks
    }

    /// Per task, phase and iteration of the outermost `iterate`: compute, words sent and words
    /// received. Iterations are counted per phase: the `iterate`s of different phases (Viterbi,
    /// Minsky Fig 5-16) do not overlap, so each phase has its own steady state.
    fn iteration_loads(&self) -> Vec<(TaskId, IterationLoad)> {
        let mut out = Vec::new();
        for (t, task) in self.tasks.iter().enumerate() {
            let mut loads: BTreeMap<(PhaseId, u64), IterationLoad> = BTreeMap::new();
            let mut phase = 0;
            for s in &task.steps {
                let (iteration, add): (Option<u64>, IterationLoad) = match *s {
                    Step::Compute(c) => (
                        iteration_of(self.computes[c as usize].iteration),
                        IterationLoad {
                            compute: self.computes[c as usize].cycles,
                            ..IterationLoad::default()
                        },
                    ),
                    Step::Write(w) => {
                        let w = &self.writes[w as usize];
                        (
                            w.iteration(),
                            IterationLoad {
                                inject: w.size,
                                ..IterationLoad::default()
                            },
                        )
                    }
                    Step::Read(r) => {
                        let r = &self.reads[r as usize];
                        (
                            r.iteration(),
                            IterationLoad {
                                eject: r.size,
                                ..IterationLoad::default()
                            },
                        )
                    }
                    Step::Sync(s) => {
                        phase = self.syncs[s as usize].0;
                        continue;
                    }
                };
                if let Some(k) = iteration {
                    let l = loads.entry((phase, k)).or_default();
                    l.compute = l.compute.saturating_add(add.compute);
                    l.inject = l.inject.saturating_add(add.inject);
                    l.eject = l.eject.saturating_add(add.eject);
                }
            }
            out.extend(loads.into_values().map(|l| (t, l)));
        }
        out
    }

    /// One diagnostic per stream with writes or reads left over, in stream order.
    fn unmatched(&self) -> Vec<Diagnostic> {
        let mut keys: Vec<&(TaskId, TaskId)> = self
            .streams
            .iter()
            .filter(|(_, s)| !s.writes.is_empty() || !s.reads.is_empty())
            .map(|(k, _)| k)
            .collect();
        keys.sort();
        let mut out: Vec<Diagnostic> = Vec::new();
        let total = keys.len();
        for (shown, &(w, r)) in keys.into_iter().enumerate() {
            if shown == Limits::UNMATCHED_STREAMS {
                if let Some(last) = out.pop() {
                    out.push(last.with_note(format!(
                        "…and {} more streams with writes or reads left over",
                        total - shown
                    )));
                }
                break;
            }
            let Some(s) = self.streams.get(&(w, r)) else {
                continue;
            };
            let (wn, rn) = (self.task_name(w), self.task_name(r));
            let matched = s.matched;
            if !s.writes.is_empty() {
                let n = s.writes.len();
                let spans = distinct(
                    s.writes
                        .iter()
                        .map(|&(id, _)| self.spans[self.writes[id as usize].span as usize]),
                );
                let mut d = Diagnostic::new(
                    "unmatched-write",
                    format!(
                        "task `{wn}` writes {} to task `{rn}` that `{rn}` never reads",
                        plural(n, "message", "messages")
                    ),
                );
                d = label_each(
                    d,
                    &spans,
                    format!("`{wn}` writes here; `{rn}` has no read left to match it"),
                );
                d = d
                    .with_note(format!(
                        "the stream `{wn}` → `{rn}` has {} and {}",
                        plural(matched + n, "write", "writes"),
                        plural(matched, "read", "reads")
                    ))
                    .with_help(format!(
                        "add a matching (read-stream M {wn}) to `{rn}`'s program, or remove the extra write"
                    ));
                out.push(d);
            }
            if !s.reads.is_empty() {
                let n = s.reads.len();
                let spans = distinct(
                    s.reads
                        .iter()
                        .map(|&id| self.spans[self.reads[id as usize].span as usize]),
                );
                let mut d = Diagnostic::new(
                    "unmatched-read",
                    format!(
                        "task `{rn}` reads {} from task `{wn}` that `{wn}` never writes",
                        plural(n, "message", "messages")
                    ),
                );
                d = label_each(
                    d,
                    &spans,
                    format!("`{rn}` waits here forever: `{wn}` has no write left to match it"),
                );
                d = d
                    .with_note(format!(
                        "the stream `{wn}` → `{rn}` has {} and {}",
                        plural(matched, "write", "writes"),
                        plural(matched + n, "read", "reads")
                    ))
                    .with_help(format!(
                        "add a matching (write-stream M {rn}) to `{wn}`'s program, or remove the extra read"
                    ));
                out.push(d);
            }
        }
        out
    }

    fn size_mismatches(&self) -> Vec<Diagnostic> {
        let mut list = self.mismatches.clone();
        list.sort_by_key(|&(w, r)| (self.writes[w as usize].task, self.reads[r as usize].task, w));
        let total = list.len();
        list.truncate(Limits::UNMATCHED_STREAMS);
        let mut out: Vec<Diagnostic> = list
            .into_iter()
            .map(|(w, r)| {
                let (wr, rr) = (&self.writes[w as usize], &self.reads[r as usize]);
                let (wn, rn) = (self.task_name(wr.task()), self.task_name(rr.task()));
                let count = self
                    .mismatch_streams
                    .get(&(wr.task(), rr.task()))
                    .copied()
                    .unwrap_or(1);
                let mut d = Diagnostic::new(
                    "size-mismatch",
                    format!(
                        "task `{wn}` writes {} but task `{rn}` reads {}",
                        plural(wr.size as usize, "word", "words"),
                        plural(rr.size as usize, "word", "words")
                    ),
                )
                .with_label(self.spans[wr.span as usize], format!("this write sends {} words", wr.size))
                .with_label(self.spans[rr.span as usize], format!("this read, which matches it, expects {} words", rr.size));
                if count > 1 {
                    d = d.with_note(format!(
                        "{count} matched pairs on the stream `{wn}` → `{rn}` disagree; this is the first"
                    ));
                }
                d.with_help("use the same message type (or size) in the write and the read it matches; the k-th write on a stream matches the k-th read")
            })
            .collect();
        if total > Limits::UNMATCHED_STREAMS {
            if let Some(last) = out.last_mut() {
                last.notes.push(format!(
                    "…and {} more streams whose sizes disagree",
                    total - Limits::UNMATCHED_STREAMS
                ));
            }
        }
        out
    }

    /// The span of the form that created a subtask, if it has one.
    fn span_of(&self, dag: &SubtaskGraph, n: petgraph::graph::NodeIndex) -> Option<Span> {
        let s = dag.graph.node_weight(n)?;
        let task = self.tasks.get(s.task?)?;
        // `op` indexes the task's ops, which are its steps one for one (every step is kept).
        match task.steps.get(s.op)? {
            Step::Read(r) => Some(self.spans[self.reads[*r as usize].span as usize]),
            Step::Write(w) => Some(self.spans[self.writes[*w as usize].span as usize]),
            Step::Sync(s) => Some(self.syncs[*s as usize].1),
            Step::Compute(_) => Some(task.span),
        }
    }

    fn deadlock(&self, traffic: &Traffic, dag: &SubtaskGraph, cycle: &timing::Cycle) -> Diagnostic {
        // Tasks along the cycle, in waiting order, each once per stretch.
        let mut order: Vec<TaskId> = Vec::new();
        let mut labels: Vec<(Span, String)> = Vec::new();
        let g = &dag.graph;
        for &(n, dep) in &cycle.waits {
            let s = g[n];
            if let Some(t) = s.task {
                if order.last() != Some(&t) {
                    order.push(t);
                }
            }
            let Some(span) = self.span_of(dag, n) else {
                continue;
            };
            match (s.task, s.kind, dep) {
                (Some(t), SubtaskKind::Recv(m), Dependence::Message(_)) => {
                    let from = traffic.messages.get(m).map(|m| m.src).unwrap_or(t);
                    labels.push((
                        span,
                        format!(
                            "`{}` waits here for a message from `{}`",
                            self.task_name(t),
                            self.task_name(from)
                        ),
                    ));
                }
                (Some(t), SubtaskKind::Sync(p), _) => {
                    labels.push((
                        span,
                        format!(
                            "`{}` waits here until every task reaches phase `{}`",
                            self.task_name(t),
                            self.phases.get(p).map(String::as_str).unwrap_or("?")
                        ),
                    ));
                }
                _ => {}
            }
        }
        if order.len() > 1 && order.first() == order.last() {
            order.pop();
        }
        let mut ring: Vec<String> = order
            .iter()
            .map(|&t| format!("`{}`", self.task_name(t)))
            .collect();
        if let Some(f) = ring.first().cloned() {
            ring.push(f);
        }
        // One label per form: a pattern's read evaluated for several tasks is one place in the
        // source, so its waits are listed together.
        labels.sort();
        labels.dedup();
        let mut merged: Vec<(Span, String)> = Vec::new();
        for (sp, text) in labels {
            match merged.last_mut() {
                Some((last, acc)) if *last == sp => {
                    acc.push_str("; ");
                    acc.push_str(&text);
                }
                _ => merged.push((sp, text)),
            }
        }
        let labels = merged;
        let mut d = Diagnostic::new(
            "deadlock",
            format!(
                "tasks wait for each other forever: {}",
                ring.join(" waits for ")
            ),
        );
        for (sp, text) in labels {
            d = d.with_label(sp, text);
        }
        let through_phase = cycle
            .waits
            .iter()
            .any(|&(n, _)| matches!(g[n].kind, SubtaskKind::Sync(_)));
        let d = d.with_note("a read waits until its message has arrived; a write never waits");
        if through_phase {
            d.with_note("a phase starts only when every task that synchronizes on it has reached it")
                .with_help("move the read after the `synchronize`, or the write before it, so that no task needs a message sent after the phase starts")
        } else {
            d.with_help("let one of these tasks write before it reads, so that the cycle of reads is broken")
        }
    }
}

/// Labels every span: the first with `first`, the others as further places of the same fault.
fn label_each(mut d: Diagnostic, spans: &[Span], first: String) -> Diagnostic {
    let mut first = Some(first);
    for &sp in spans {
        let text = first.take().unwrap_or_else(|| "…and here".to_string());
        d = d.with_label(sp, text);
    }
    d
}

fn no_task(task: TaskId, span: Span) -> Diagnostic {
    Diagnostic::new("internal", format!("task {task} does not exist"))
        .with_label(span, "this refers to it")
}

fn check_size(size: u64, span: Span) -> Result<(), Diagnostic> {
    if size == 0 {
        return Err(
            Diagnostic::new("type", "a message must be at least one word long")
                .with_label(span, "this message has 0 words")
                .with_help("give the message type a positive size, e.g. (defmessage m0 8)"),
        );
    }
    Ok(())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Spans in order of first appearance, each once (a form in a loop is one place in the source).
fn distinct(spans: impl Iterator<Item = Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for s in spans {
        if !out.contains(&s) {
            out.push(s);
            if out.len() == 8 {
                break;
            }
        }
    }
    out
}
