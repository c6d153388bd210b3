//! The subtask DAG (petgraph): intra-task and inter-task edges (Minsky §4.1.2).
//!
//! "For each message which is sent or received by a task in the task description, a *subtask* is
//! created in the auxiliary task flow graph." A subtask owns the compute that follows it in its
//! task's program ("evaluation of the compute form assigns a computation time to the subtask created
//! by read-stream"); compute that comes before a task's first read or write gets a `Start` subtask of
//! its own. Edges:
//! - *intra-task*: each subtask to the next one of the same task (the serial order of the program);
//! - *inter-task*: the writing subtask to every reading subtask of a message (one edge per reader of
//!   a multicast);
//! - *phase*: `synchronize` makes every participating task start the phase together, so each
//!   participant's previous subtask feeds a `Barrier` node that feeds each participant's `Sync`
//!   subtask (linear in the number of participants, not quadratic). The k-th `synchronize` on a
//!   phase in every task is the k-th barrier of that phase.
//!
//! The graph is built from the backend's `Traffic` alone (tasks' op lists and messages), so a tasks
//! file with programs gives the same graph as the script that wrote it. Node indices follow task
//! order, then program order, then barriers in order of first use: deterministic.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};
use ttdl_ir::traffic::{MsgId, Op, PhaseId, TaskId, Traffic};

/// What a subtask does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubtaskKind {
    /// Compute before the task's first read, write or synchronize.
    Start,
    /// Writes (or multicasts) a message.
    Send(MsgId),
    /// Reads a message.
    Recv(MsgId),
    /// Starts a phase, together with every task that synchronizes on it.
    Sync(PhaseId),
    /// The meeting point of the `instance`-th synchronization on `phase` (belongs to no task).
    Barrier { phase: PhaseId, instance: usize },
}

/// A node of the subtask graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subtask {
    /// The task it belongs to (`None` for a barrier).
    pub task: Option<TaskId>,
    /// Index in the task's `ops` of the op that created it (0 for `Start` and barriers).
    pub op: usize,
    pub kind: SubtaskKind,
    /// Cycles of compute attached to it (the compute ops that follow it).
    pub compute: u64,
}

/// Why one subtask waits for another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dependence {
    /// Program order within a task.
    Intra,
    /// A message from the writing subtask to a reading one.
    Message(MsgId),
    /// Arrival at, or departure from, a phase barrier.
    Phase(PhaseId),
}

/// The subtask graph of a whole program.
#[derive(Clone, Debug, Default)]
pub struct SubtaskGraph {
    pub graph: DiGraph<Subtask, Dependence>,
    /// The first and last subtask of every task (`None` for a task with an empty program).
    pub chains: Vec<Option<(NodeIndex, NodeIndex)>>,
    /// The writing subtask of every message.
    pub sender: Vec<Option<NodeIndex>>,
    /// The reading subtasks of every message, in the order of the message's `dst`.
    pub readers: Vec<Vec<NodeIndex>>,
    /// Every message's size in words (the weight of its inter-task edges).
    pub sizes: Vec<u64>,
}

/// The program cannot be made into a graph (only possible for hand-written or corrupt input).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DagError {
    #[error("task {task} refers to message {msg}, which does not exist")]
    NoSuchMessage { task: TaskId, msg: MsgId },
    #[error("message {msg} is sent by task {task}, but its source is task {src}")]
    WrongSender {
        msg: MsgId,
        task: TaskId,
        src: TaskId,
    },
    #[error("message {msg} is sent more than once")]
    SentTwice { msg: MsgId },
    #[error("task {task} receives message {msg}, which is not addressed to it")]
    WrongReader { msg: MsgId, task: TaskId },
    #[error("task {task} receives message {msg} more than once")]
    ReceivedTwice { msg: MsgId, task: TaskId },
    #[error("task {task} synchronizes on phase {phase}, which does not exist")]
    NoSuchPhase { task: TaskId, phase: PhaseId },
}

impl SubtaskGraph {
    /// Builds the graph from the tasks' programs. Messages that no program sends or receives (a
    /// tasks file without programs) simply have no edges.
    pub fn build(traffic: &Traffic) -> Result<SubtaskGraph, DagError> {
        let nmsg = traffic.messages.len();
        // Sized once from the programs (one node per send, receive and synchronize, a start
        // node per task and the barriers; an edge per subtask, per reader and per barrier visit): a graph of
        // millions of subtasks grown by doubling would hold up to twice its size while copying.
        let (mut ops, mut syncs) = (0, 0);
        for op in traffic.tasks.iter().flat_map(|t| &t.ops) {
            match op {
                Op::Compute(_) => {}
                Op::Sync(_) => syncs += 1,
                _ => ops += 1,
            }
        }
        let readers_total: usize = traffic.messages.iter().map(|m| m.dst.len()).sum();
        let mut g = DiGraph::<Subtask, Dependence>::with_capacity(
            ops + 2 * syncs + traffic.tasks.len(),
            ops + readers_total + 3 * syncs,
        );
        let mut chains = Vec::with_capacity(traffic.tasks.len());
        let mut sender: Vec<Option<NodeIndex>> = vec![None; nmsg];
        let mut readers: Vec<Vec<Option<NodeIndex>>> = traffic
            .messages
            .iter()
            .map(|m| vec![None; m.dst.len()])
            .collect();
        // Barrier nodes and, per barrier, the subtasks that arrive at and leave it.
        let mut barriers: HashMap<(PhaseId, usize), NodeIndex> = HashMap::new();
        let mut phase_edges: Vec<(NodeIndex, NodeIndex, PhaseId)> = Vec::new();
        let mut pending_barrier: Vec<(TaskId, Option<NodeIndex>, NodeIndex, PhaseId, usize)> =
            Vec::new();

        for (t, task) in traffic.tasks.iter().enumerate() {
            let mut first: Option<NodeIndex> = None;
            let mut last: Option<NodeIndex> = None;
            let mut sync_seen: HashMap<PhaseId, usize> = HashMap::new();
            for (i, op) in task.ops.iter().enumerate() {
                let kind = match *op {
                    Op::Compute(c) => {
                        match last {
                            Some(n) => g[n].compute = g[n].compute.saturating_add(c),
                            None => {
                                let n = g.add_node(Subtask {
                                    task: Some(t),
                                    op: i,
                                    kind: SubtaskKind::Start,
                                    compute: c,
                                });
                                first = Some(n);
                                last = Some(n);
                            }
                        }
                        continue;
                    }
                    Op::Send(m) => {
                        let msg = traffic
                            .messages
                            .get(m)
                            .ok_or(DagError::NoSuchMessage { task: t, msg: m })?;
                        if msg.src != t {
                            return Err(DagError::WrongSender {
                                msg: m,
                                task: t,
                                src: msg.src,
                            });
                        }
                        if sender[m].is_some() {
                            return Err(DagError::SentTwice { msg: m });
                        }
                        SubtaskKind::Send(m)
                    }
                    Op::Recv(m) => {
                        let msg = traffic
                            .messages
                            .get(m)
                            .ok_or(DagError::NoSuchMessage { task: t, msg: m })?;
                        if !msg.dst.contains(&t) {
                            return Err(DagError::WrongReader { msg: m, task: t });
                        }
                        SubtaskKind::Recv(m)
                    }
                    Op::Sync(p) => {
                        if p >= traffic.phases.len().max(1) {
                            return Err(DagError::NoSuchPhase { task: t, phase: p });
                        }
                        SubtaskKind::Sync(p)
                    }
                };
                let n = g.add_node(Subtask {
                    task: Some(t),
                    op: i,
                    kind,
                    compute: 0,
                });
                match kind {
                    SubtaskKind::Send(m) => sender[m] = Some(n),
                    SubtaskKind::Recv(m) => {
                        let slots = &mut readers[m];
                        let dst = &traffic.messages[m].dst;
                        let slot = dst
                            .iter()
                            .enumerate()
                            .position(|(k, &d)| d == t && slots[k].is_none())
                            .ok_or(DagError::ReceivedTwice { msg: m, task: t })?;
                        slots[slot] = Some(n);
                    }
                    SubtaskKind::Sync(p) => {
                        let k = sync_seen.entry(p).or_insert(0);
                        pending_barrier.push((t, last, n, p, *k));
                        *k += 1;
                    }
                    _ => {}
                }
                if let Some(prev) = last {
                    // A sync waits for its predecessor through the barrier, not directly.
                    if !matches!(kind, SubtaskKind::Sync(_)) {
                        g.add_edge(prev, n, Dependence::Intra);
                    }
                }
                if first.is_none() {
                    first = Some(n);
                }
                last = Some(n);
            }
            chains.push(first.zip(last));
        }

        // Barriers, created in order of first use (task order, then program order).
        for &(_, prev, sync, p, k) in &pending_barrier {
            let b = *barriers.entry((p, k)).or_insert_with(|| {
                g.add_node(Subtask {
                    task: None,
                    op: 0,
                    kind: SubtaskKind::Barrier {
                        phase: p,
                        instance: k,
                    },
                    compute: 0,
                })
            });
            if let Some(prev) = prev {
                phase_edges.push((prev, b, p));
            }
            phase_edges.push((b, sync, p));
        }
        for (a, b, p) in phase_edges {
            g.add_edge(a, b, Dependence::Phase(p));
        }

        // Inter-task edges, in message order.
        for (m, slots) in readers.iter().enumerate() {
            if let Some(s) = sender[m] {
                for r in slots.iter().flatten() {
                    g.add_edge(s, *r, Dependence::Message(m));
                }
            }
        }

        Ok(SubtaskGraph {
            graph: g,
            chains,
            sender,
            readers: readers
                .into_iter()
                .map(|v| v.into_iter().flatten().collect())
                .collect(),
            sizes: traffic.messages.iter().map(|m| m.size).collect(),
        })
    }

    /// Every edge as (from, to, why), sorted: for output that must not depend on insertion order.
    pub fn edge_list(&self) -> Vec<(usize, usize, Dependence)> {
        let mut e: Vec<(usize, usize, Dependence)> = self
            .graph
            .raw_edges()
            .iter()
            .map(|e| (e.source().index(), e.target().index(), e.weight))
            .collect();
        e.sort_by_key(|&(a, b, d)| {
            let k = match d {
                Dependence::Intra => (0, 0),
                Dependence::Message(m) => (1, m),
                Dependence::Phase(p) => (2, p),
            };
            (a, b, k)
        });
        e
    }

    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// A short name for a subtask, for DOT output and messages: `t3.2 recv M5`.
    pub fn describe(&self, traffic: &Traffic, n: NodeIndex) -> String {
        let Some(s) = self.graph.node_weight(n) else {
            return "?".into();
        };
        let task = |t: TaskId| {
            traffic
                .tasks
                .get(t)
                .map(|t| t.name.clone())
                .unwrap_or_else(|| format!("task {t}"))
        };
        let phase = |p: PhaseId| {
            traffic
                .phases
                .get(p)
                .map(|p| p.name.clone())
                .unwrap_or_else(|| p.to_string())
        };
        match (s.task, s.kind) {
            (_, SubtaskKind::Barrier { phase: p, instance }) => {
                format!("phase {} #{}", phase(p), instance)
            }
            (Some(t), SubtaskKind::Start) => format!("{} start", task(t)),
            (Some(t), SubtaskKind::Send(m)) => format!("{} send M{m}", task(t)),
            (Some(t), SubtaskKind::Recv(m)) => format!("{} recv M{m}", task(t)),
            (Some(t), SubtaskKind::Sync(p)) => format!("{} sync {}", task(t), phase(p)),
            (None, _) => "?".into(),
        }
    }
}
