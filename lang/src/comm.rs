//! Streams and task programs (Minsky §4.1.2). The evaluator calls these hooks as it evaluates the
//! communication forms, always *in the context of* a task; matching of writes and reads by
//! (writer, reader) in FIFO order happens here, with the thesis's pending-read and pending-write
//! queues. `finish` checks what is left unmatched, builds the subtask DAG, times it and returns the
//! backend's `Traffic`.
//!
//! INTERFACE STUB: signatures are the contract with the evaluator; bodies are to be written.

use ttdl_backend::topology::NetworkSpec;
use ttdl_backend::traffic::{TaskId, Target, Traffic};

use crate::diagnostic::Diagnostic;
use crate::span::Span;

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

/// Everything the communication forms have built so far. Cheap enough to clone for REPL snapshots.
#[derive(Clone, Debug, Default)]
pub struct Comm {
    limits: CommLimits,
    names: Vec<String>,
}

impl Comm {
    pub fn new(limits: CommLimits) -> Self {
        Comm {
            limits,
            names: Vec::new(),
        }
    }

    pub fn limits(&self) -> CommLimits {
        self.limits
    }

    /// A fresh task (`deftask`), even if the name was used before.
    pub fn fresh_task(&mut self, name: &str, span: Span) -> Result<TaskId, Diagnostic> {
        let _ = span;
        self.names.push(name.to_string());
        Ok(self.names.len() - 1)
    }

    /// `(task NAME)`: the task with that name, created on first use.
    pub fn task_named(&mut self, name: &str, span: Span) -> Result<TaskId, Diagnostic> {
        match self.names.iter().position(|n| n == name) {
            Some(t) => Ok(t),
            None => self.fresh_task(name, span),
        }
    }

    /// `(task 3)`: the task with that integer id, created on first use.
    pub fn task_numbered(&mut self, id: i64, span: Span) -> Result<TaskId, Diagnostic> {
        let _ = (id, span);
        Err(Diagnostic::new("todo", "not yet"))
    }

    pub fn task_count(&self) -> usize {
        self.names.len()
    }

    pub fn task_name(&self, task: TaskId) -> &str {
        self.names.get(task).map(String::as_str).unwrap_or("?")
    }

    /// Logical coordinates of a task made by `network-tasks`.
    pub fn set_coords(&mut self, task: TaskId, coords: Vec<i64>) {
        let _ = (task, coords);
    }

    pub fn coords(&self, task: TaskId) -> Option<&[i64]> {
        let _ = task;
        None
    }

    /// Physical coordinates chosen by a canned mapping.
    pub fn set_mapped(&mut self, task: TaskId, coords: Vec<i64>) {
        let _ = (task, coords);
    }

    pub fn compute(&mut self, task: TaskId, cycles: u64, span: Span) -> Result<(), Diagnostic> {
        let _ = (task, cycles, span);
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
        let _ = (task, peer, size, label, span);
        Ok(())
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
        let _ = (task, peer, size, label, span);
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
        let _ = (task, peers, size, label, span);
        Ok(())
    }

    /// `(synchronize PHASE)` by `task`; integer phases are passed as their decimal text.
    pub fn synchronize(&mut self, task: TaskId, phase: &str, span: Span) -> Result<(), Diagnostic> {
        let _ = (task, phase, span);
        Ok(())
    }

    /// `task` enters an `(iterate … N)` form.
    pub fn iterate_begin(&mut self, task: TaskId, count: u64, span: Span) {
        let _ = (task, count, span);
    }

    /// `task` starts iteration `index` (0-based) of its innermost `iterate`.
    pub fn iterate_next(&mut self, task: TaskId, index: u64) {
        let _ = (task, index);
    }

    /// `task` leaves its innermost `iterate`.
    pub fn iterate_end(&mut self, task: TaskId) {
        let _ = task;
    }

    pub fn set_target(&mut self, target: Target) {
        let _ = target;
    }

    pub fn set_logical(&mut self, spec: NetworkSpec) {
        let _ = spec;
    }

    /// End of evaluation: every write and read must be matched, sizes must agree, and no set of
    /// tasks may wait on each other forever. Builds the DAG, assigns release and deadline times
    /// (Minsky Fig 4-3) and the period bound.
    pub fn finish(&self) -> Result<Traffic, Vec<Diagnostic>> {
        Err(vec![Diagnostic::new("todo", "stream matching is not built yet")])
    }
}
