//! The IR every stage shares: tasks with their programs, and messages with size, release, deadline
//! and phase. The language produces it (or the tasks file, Minsky Fig 5-5, is read into it); every
//! later stage only reads it.

use crate::limits::Limits;
use serde::{Deserialize, Serialize};

use crate::topology::NetworkSpec;

pub type TaskId = usize;
pub type MsgId = usize;
pub type PhaseId = usize;

/// A message's readers: one for a unicast, kept inline (with a second) so that the millions of
/// messages of a long program cost no allocation each; a multicast's longer list goes to the heap.
pub type Dests = smallvec::SmallVec<[TaskId; 2]>;

/// A message type's name, shared by every message of that type rather than copied into each.
pub type Label = std::sync::Arc<str>;

/// Hands out one shared [`Label`] per distinct name.
#[derive(Clone, Debug, Default)]
pub struct Labels(std::collections::HashMap<String, Label>);

impl Labels {
    pub fn intern(&mut self, name: impl AsRef<str>) -> Label {
        let name = name.as_ref();
        if let Some(l) = self.0.get(name) {
            return l.clone();
        }
        let l: Label = name.into();
        self.0.insert(name.to_string(), l.clone());
        l
    }
}

/// A whole program's communication, ready for the backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// Indexed by `TaskId`.
    pub tasks: Vec<Task>,
    /// Indexed by `MsgId`, in the order the matching write/read pairs were completed.
    pub messages: Vec<Message>,
    /// Indexed by `PhaseId`. Phase 0 is the implicit phase every task starts in.
    pub phases: Vec<Phase>,
    /// Length of the critical path in the ideal, contention-free timing (Minsky Fig 4-3): the
    /// largest message arrival or task completion time.
    pub critical_path: u64,
    /// Steady-state period lower bound, when the program repeats (`iterate`).
    pub period: Option<Period>,
    /// The logical network the tasks were created from (`network-tasks`), if any.
    pub logical: Option<NetworkSpec>,
    /// What the script asked the backend to do (`target`); command-line flags override it.
    pub target: Option<Target>,
    /// A folded program (a long `iterate` recorded once with its count): the outermost
    /// iterations run this many times; the records hold the first few, the last of them
    /// standing for every later one (see [`crate::iterations::Shape`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u64>,
}

/// A program whose broadcasts are sent as one unicast per reader (see [`Traffic::with_unicasts`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Unicasts {
    pub traffic: Traffic,
    /// For each message of the original program, the message each of its readers (in the order
    /// of its `dst`) receives in `traffic`.
    pub ids: Vec<Vec<MsgId>>,
}

impl Traffic {
    /// The same program with every broadcast sent as one unicast per reader, in the order of its
    /// readers — what a network without multicast does (SPEC §5) — so that the plan can be put
    /// beside the dynamic models like for like. The sender sends the copies one after another
    /// where it sent the broadcast; each reader receives its own copy. `None` when nothing
    /// multicasts. Release and deadline stay the broadcast's (the ideal timing of the thesis
    /// sends every copy at once); the planner times the copies from the task programs.
    pub fn with_unicasts(&self) -> Option<Unicasts> {
        if !self.messages.iter().any(Message::is_multicast) {
            return None;
        }
        let mut messages = Vec::with_capacity(self.messages.len());
        let mut ids = Vec::with_capacity(self.messages.len());
        for m in &self.messages {
            let first = messages.len();
            ids.push((first..first + m.dst.len().max(1)).collect::<Vec<_>>());
            if m.dst.is_empty() {
                messages.push(Message {
                    id: first,
                    ..m.clone()
                });
            }
            for (k, &d) in m.dst.iter().enumerate() {
                messages.push(Message {
                    id: first + k,
                    dst: smallvec::smallvec![d],
                    ..m.clone()
                });
            }
        }
        let tasks = self
            .tasks
            .iter()
            .map(|t| {
                let mut ops = Vec::with_capacity(t.ops.len());
                // Where each old op now starts, for the iteration marks.
                let mut start = Vec::with_capacity(t.ops.len() + 1);
                for op in &t.ops {
                    start.push(ops.len());
                    match *op {
                        Op::Send(m) => ops.extend(ids[m].iter().map(|&c| Op::Send(c))),
                        Op::Recv(m) => {
                            let k = self.messages[m]
                                .dst
                                .iter()
                                .position(|&d| d == t.id)
                                .unwrap_or(0);
                            ops.push(Op::Recv(ids[m][k.min(ids[m].len() - 1)]));
                        }
                        other => ops.push(other),
                    }
                }
                start.push(ops.len());
                Task {
                    ops,
                    iterations: t
                        .iterations
                        .iter()
                        .map(|mark| IterationMark {
                            op: start[mark.op.min(start.len() - 1)],
                            iteration: mark.iteration,
                        })
                        .collect(),
                    ..t.clone()
                }
            })
            .collect();
        Some(Unicasts {
            traffic: Traffic {
                tasks,
                messages,
                phases: self.phases.clone(),
                critical_path: self.critical_path,
                period: self.period.clone(),
                logical: self.logical.clone(),
                target: self.target.clone(),
                repeat: self.repeat,
            },
            ids,
        })
    }
}

/// A program beyond one of the fixed [`Limits`]: too many words, or a time past
/// [`Limits::TIME`]. The message names the limit and what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LimitError(pub String);

impl Traffic {
    /// Words sent in all, every destination of a multicast counted (saturating).
    pub fn total_words(&self) -> u64 {
        self.messages.iter().fold(0u64, |acc, m| {
            acc.saturating_add(m.size.saturating_mul(m.dst.len().max(1) as u64))
        })
    }

    /// An error when the program sends more than [`Limits::WORDS`].
    pub fn check_words(&self) -> Result<(), LimitError> {
        let words = self.total_words();
        if words > Limits::WORDS {
            return Err(LimitError(format!(
                "the program sends {words} words, more than the {0} that can be \
                 scheduled or simulated word by word; make the messages smaller",
                Limits::WORDS
            )));
        }
        Ok(())
    }

    /// [`Traffic::check_words`], and every release, deadline and compute time below
    /// [`Limits::TIME`], so that cycle arithmetic in the schedulers and models cannot overflow (a
    /// Traffic document written by hand may hold anything).
    pub fn check_limits(&self) -> Result<(), LimitError> {
        self.check_words()?;
        for m in &self.messages {
            if m.release > Limits::TIME || m.deadline > Limits::TIME {
                return Err(LimitError(format!(
                    "message {} has release {} and deadline {}; times are limited to {3} cycles",
                    m.id,
                    m.release,
                    m.deadline,
                    Limits::TIME
                )));
            }
        }
        for t in &self.tasks {
            let compute = t.ops.iter().fold(0u64, |acc, op| match op {
                Op::Compute(c) => acc.saturating_add(*c),
                _ => acc,
            });
            if compute > Limits::TIME {
                return Err(LimitError(format!(
                    "task `{}` computes for {compute} cycles; times are limited to {1} cycles",
                    t.name,
                    Limits::TIME
                )));
            }
        }
        Ok(())
    }
}

/// A task: a sequential program of compute, non-blocking send and blocking receive.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: TaskId,
    pub name: String,
    /// Logical coordinates (x first), for tasks made by `network-tasks`.
    pub coords: Option<Vec<i64>>,
    /// Physical coordinates chosen by a canned mapping (`define-mapping` + `target :mapping`).
    pub mapped: Option<Vec<i64>>,
    /// A task the placer must not move (tasks file "wired-down").
    pub wired: bool,
    /// The task's program in order.
    pub ops: Vec<Op>,
    /// Where the outermost `iterate`'s iterations begin and end in `ops`, in op order: from
    /// `op` on, the program is in `iteration` (`None`: outside any `iterate`). Empty when the
    /// program does not repeat or its iterations are unknown (a tasks file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iterations: Vec<IterationMark>,
}

/// A change of iteration in a task's program (see [`Task::iterations`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IterationMark {
    pub op: usize,
    pub iteration: Option<u64>,
}

impl Task {
    /// The iteration of every op (`None` outside any `iterate`, or when unknown).
    pub fn op_iterations(&self) -> Vec<Option<u64>> {
        let mut out = vec![None; self.ops.len()];
        let mut marks = self.iterations.iter().peekable();
        let mut cur = None;
        for (i, slot) in out.iter_mut().enumerate() {
            while let Some(m) = marks.next_if(|m| m.op <= i) {
                cur = m.iteration;
            }
            *slot = cur;
        }
        out
    }
}

/// One step of a task's program. `Send` and `Recv` name the matched message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Compute for this many cycles.
    Compute(u64),
    /// Send (or multicast) a message; the sender does not wait.
    Send(MsgId),
    /// Receive a message; the task waits until it has fully arrived.
    Recv(MsgId),
    /// Start a communication phase: every task that synchronizes on it starts it together.
    Sync(PhaseId),
}

/// A matched message: one write and its read(s).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: MsgId,
    pub src: TaskId,
    /// One task for a unicast; several for a multicast (`broadcast`).
    pub dst: Dests,
    /// Length in words (one word crosses one link per cycle).
    pub size: u64,
    /// Earliest cycle the first word may leave (absolute, ideal timing).
    pub release: u64,
    /// Cycle by which the last word should have arrived: the start of the reading subtask.
    pub deadline: u64,
    pub phase: PhaseId,
    /// Which iteration of the outermost `iterate` produced it (0 when the program does not repeat).
    pub iteration: u64,
    /// The message type's name (`defmessage`), if it had one.
    pub label: Option<Label>,
}

impl Message {
    pub fn is_multicast(&self) -> bool {
        self.dst.len() > 1
    }
}

/// A communication phase (`synchronize`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub id: PhaseId,
    pub name: String,
    /// Ideal start time: when the last task reached the synchronization point.
    pub start: u64,
}

/// The steady-state period lower bound and what sets it (SPEC §2).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Period {
    /// Number of iterations the program ran.
    pub iterations: u64,
    /// The bound, in cycles per iteration.
    pub lower_bound: u64,
    /// What sets it, for people: e.g. `compute of task t3 (12 cycles)`.
    pub bound_by: String,
}

/// What `(target …)` asked for. Every field is optional: the network, the canned mapping, and
/// any other setting of the table ([`crate::settings::SETTINGS`]) the script chose.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub network: Option<NetworkSpec>,
    pub mapping: Option<String>,
    #[serde(flatten)]
    pub settings: crate::settings::Settings,
}

/// Where each task runs: `node_of[task]`. Several tasks may share a node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub node_of: Vec<crate::topology::NodeId>,
}

/// A message's path through the network.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Route {
    /// Node ids from the source task's node to the destination task's node (one node when both
    /// tasks share a node).
    Path(Vec<crate::topology::NodeId>),
    /// A multicast tree, as directed `[from, to]` edges, rooted at the source's node.
    Tree(Vec<(crate::topology::NodeId, crate::topology::NodeId)>),
}

impl Route {
    /// The links the route holds on `net`, in path order (each tree edge once).
    pub fn links(&self, net: &crate::topology::Network) -> Vec<crate::topology::LinkId> {
        match self {
            Route::Path(p) => p
                .windows(2)
                .filter_map(|w| net.link_between(w[0], w[1]))
                .collect(),
            Route::Tree(edges) => {
                let mut ls: Vec<_> = edges
                    .iter()
                    .filter_map(|&(a, b)| net.link_between(a, b))
                    .collect();
                ls.sort_unstable();
                ls.dedup();
                ls
            }
        }
    }

    /// The number of links the route holds.
    pub fn hops(&self) -> usize {
        match self {
            Route::Path(p) => p.len().saturating_sub(1),
            Route::Tree(e) => e.len(),
        }
    }
}

/// One route per message, indexed by `MsgId`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Routing {
    pub routes: Vec<Route>,
}

/// Builds a [`Traffic`] by hand, for tests and embedders that have no script: tasks, their
/// programs (compute, send, receive) and messages with ids in order.
///
/// ```
/// use ttdl_ir::traffic::Traffic;
/// let mut b = Traffic::builder();
/// let (a, c) = (b.task("a"), b.task("c"));
/// b.compute(a, 5);
/// let m = b.send(a, c, 8); // a writes 8 words to c, which reads them
/// let t = b.build();
/// assert_eq!((t.tasks.len(), t.messages[m].size), (2, 8));
/// ```
#[derive(Clone, Debug, Default)]
pub struct TrafficBuilder {
    traffic: Traffic,
}

impl Traffic {
    pub fn builder() -> TrafficBuilder {
        TrafficBuilder::default()
    }
}

impl TrafficBuilder {
    /// A new task named `name`; returns its id.
    pub fn task(&mut self, name: impl Into<String>) -> TaskId {
        let id = self.traffic.tasks.len();
        self.traffic.tasks.push(Task {
            id,
            name: name.into(),
            ..Task::default()
        });
        id
    }

    /// `n` more tasks named `t0`, `t1`, … by id; returns the first id.
    pub fn tasks(&mut self, n: usize) -> TaskId {
        let first = self.traffic.tasks.len();
        for i in 0..n {
            self.task(format!("t{}", first + i));
        }
        first
    }

    /// Task `t` computes for `cycles`.
    pub fn compute(&mut self, t: TaskId, cycles: u64) -> &mut Self {
        self.traffic.tasks[t].ops.push(Op::Compute(cycles));
        self
    }

    /// A message of `size` words from `src` to `dst`, sent and received in the tasks' programs
    /// (after what they do so far); returns its id.
    pub fn send(&mut self, src: TaskId, dst: TaskId, size: u64) -> MsgId {
        let id = self.message(src, dst, size, 0, 0);
        self.traffic.tasks[src].ops.push(Op::Send(id));
        self.traffic.tasks[dst].ops.push(Op::Recv(id));
        id
    }

    /// A message with a release–deadline window and no program (as a tasks file gives it).
    pub fn message(
        &mut self,
        src: TaskId,
        dst: TaskId,
        size: u64,
        release: u64,
        deadline: u64,
    ) -> MsgId {
        let id = self.traffic.messages.len();
        self.traffic.messages.push(Message {
            id,
            src,
            dst: smallvec::smallvec![dst],
            size,
            release,
            deadline,
            ..Message::default()
        });
        id
    }

    pub fn build(&self) -> Traffic {
        self.traffic.clone()
    }
}

#[cfg(test)]
mod unicast_tests {
    use super::*;

    /// A broadcast to three readers inside an iteration becomes three unicasts sent in a row;
    /// each reader receives its own copy, and the iteration marks still bound the same ops.
    #[test]
    fn a_broadcast_becomes_one_unicast_per_reader() {
        let mut t = Traffic::default();
        for (id, name) in ["p", "a", "b", "c"].iter().enumerate() {
            t.tasks.push(Task {
                id,
                name: name.to_string(),
                ..Task::default()
            });
        }
        t.messages.push(Message {
            id: 0,
            src: 0,
            dst: smallvec::smallvec![1, 2, 3],
            size: 4,
            ..Message::default()
        });
        t.messages.push(Message {
            id: 1,
            src: 1,
            dst: smallvec::smallvec![0],
            size: 1,
            ..Message::default()
        });
        t.tasks[0].ops = vec![Op::Compute(2), Op::Send(0), Op::Recv(1)];
        t.tasks[0].iterations = vec![
            IterationMark {
                op: 1,
                iteration: Some(0),
            },
            IterationMark {
                op: 3,
                iteration: None,
            },
        ];
        t.tasks[1].ops = vec![Op::Recv(0), Op::Send(1)];
        t.tasks[2].ops = vec![Op::Recv(0)];
        t.tasks[3].ops = vec![Op::Recv(0)];
        assert!(Traffic::default().with_unicasts().is_none());
        let u = t.with_unicasts().expect("the program multicasts");
        assert_eq!(u.ids, vec![vec![0, 1, 2], vec![3]]);
        assert_eq!(u.traffic.messages.len(), 4);
        assert!(u.traffic.messages.iter().all(|m| m.dst.len() == 1));
        assert!(u
            .traffic
            .messages
            .iter()
            .enumerate()
            .all(|(i, m)| m.id == i));
        assert_eq!(
            u.traffic.tasks[0].ops,
            vec![
                Op::Compute(2),
                Op::Send(0),
                Op::Send(1),
                Op::Send(2),
                Op::Recv(3)
            ]
        );
        assert_eq!(u.traffic.tasks[0].iterations[0].op, 1);
        assert_eq!(u.traffic.tasks[0].iterations[1].op, 5);
        assert_eq!(u.traffic.tasks[2].ops, vec![Op::Recv(1)]);
        assert_eq!(u.traffic.tasks[3].ops, vec![Op::Recv(2)]);
        assert_eq!(u.traffic.total_words(), t.total_words());
    }
}
