//! Running the task programs against message arrival times.
//!
//! Minsky Fig 4-3: a subtask starts when its predecessor in the chain is done and every message it
//! reads has arrived; a message is released when its sending subtask is done; its deadline is the
//! start of the reading subtask. The same rules serve three purposes here: the ideal timing
//! (arrival = release + size), the execution-driven exact scheduler (arrival = what the schedule
//! gives), and retiming after deadlines were relaxed (§4.2.4 "Propagation of results").

use std::collections::BTreeMap;

use super::ScheduleError;
use crate::traffic::{MsgId, Op, PhaseId, TaskId, Traffic};

/// Times that follow from running every program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// Per message: when its sender released it.
    pub release: Vec<u64>,
    /// Per message: when its earliest reader's subtask started (u64::MAX if never read).
    pub deadline: Vec<u64>,
    /// Per task: when its program ended.
    pub task_finish: Vec<u64>,
    /// Per phase: when it started (all its tasks synchronized), if it was reached.
    pub phase_start: Vec<Option<u64>>,
}

impl Timing {
    pub fn makespan(&self) -> u64 {
        self.task_finish.iter().copied().max().unwrap_or(0)
    }
}

/// True when every message is sent by exactly one `Send` of its source task and read by a `Recv`
/// of each destination: then the programs, not fixed windows, decide when messages are released.
/// A tasks file (Fig 5-5) carries only windows, so its traffic is not driven.
pub fn is_driven(traffic: &Traffic) -> bool {
    let n = traffic.messages.len();
    let mut sends = vec![0usize; n];
    let mut recvs = vec![0usize; n];
    for t in &traffic.tasks {
        for op in &t.ops {
            match *op {
                Op::Send(m) if m < n && traffic.messages[m].src == t.id => sends[m] += 1,
                Op::Recv(m) if m < n && traffic.messages[m].dst.contains(&t.id) => recvs[m] += 1,
                Op::Send(_) | Op::Recv(_) => return false,
                _ => {}
            }
        }
    }
    n > 0
        && traffic
            .messages
            .iter()
            .all(|m| sends[m.id] == 1 && recvs[m.id] == m.dst.len())
}

/// Steps every task's program as far as the known arrivals allow.
pub struct Executor<'a> {
    traffic: &'a Traffic,
    pc: Vec<usize>,
    clock: Vec<u64>,
    /// Per message: arrival time at each reading task.
    arrived: Vec<Vec<(TaskId, u64)>>,
    release: Vec<Option<u64>>,
    deadline: Vec<u64>,
    /// Per task: how many times it synchronized on each phase so far.
    sync_count: Vec<BTreeMap<PhaseId, usize>>,
    /// Per (phase, occurrence): tasks waiting and the latest clock among them.
    barriers: BTreeMap<(PhaseId, usize), (Vec<TaskId>, u64)>,
    /// Per (phase, occurrence): how many tasks take part.
    expected: BTreeMap<(PhaseId, usize), usize>,
    phase_start: Vec<Option<u64>>,
    ready: Vec<TaskId>,
    waiting_at_barrier: Vec<bool>,
}

impl<'a> Executor<'a> {
    pub fn new(traffic: &'a Traffic) -> Self {
        let mut expected: BTreeMap<(PhaseId, usize), usize> = BTreeMap::new();
        for t in &traffic.tasks {
            let mut seen: BTreeMap<PhaseId, usize> = BTreeMap::new();
            for op in &t.ops {
                if let Op::Sync(p) = *op {
                    let k = seen.entry(p).or_default();
                    *expected.entry((p, *k)).or_default() += 1;
                    *k += 1;
                }
            }
        }
        let n = traffic.tasks.len();
        let phases = traffic
            .phases
            .len()
            .max(expected.keys().map(|k| k.0 + 1).max().unwrap_or(0));
        Executor {
            traffic,
            pc: vec![0; n],
            clock: vec![0; n],
            arrived: vec![Vec::new(); traffic.messages.len()],
            release: vec![None; traffic.messages.len()],
            deadline: vec![u64::MAX; traffic.messages.len()],
            sync_count: vec![BTreeMap::new(); n],
            barriers: BTreeMap::new(),
            expected,
            phase_start: vec![None; phases],
            ready: (0..n).rev().collect(),
            waiting_at_barrier: vec![false; n],
        }
    }

    /// Runs every task that can make progress until all are blocked or done, and returns the
    /// messages sent meanwhile with their release times, in the order they were sent.
    pub fn run(&mut self) -> Vec<(MsgId, u64)> {
        let mut sent = Vec::new();
        while let Some(t) = self.ready.pop() {
            self.advance(t, &mut sent);
        }
        sent
    }

    /// Records that `msg` reached reading task `task` at cycle `at`.
    pub fn deliver(&mut self, msg: MsgId, task: TaskId, at: u64) {
        if let Some(a) = self.arrived.get_mut(msg) {
            a.push((task, at));
            self.ready.push(task);
        }
    }

    fn arrival(&self, msg: MsgId, task: TaskId) -> Option<u64> {
        self.arrived
            .get(msg)?
            .iter()
            .find(|(t, _)| *t == task)
            .map(|&(_, at)| at)
    }

    fn advance(&mut self, t: TaskId, sent: &mut Vec<(MsgId, u64)>) {
        let ops = &self.traffic.tasks[t].ops;
        if self.waiting_at_barrier[t] {
            return;
        }
        while let Some(op) = ops.get(self.pc[t]) {
            match *op {
                Op::Compute(c) => {
                    self.clock[t] = self.clock[t].saturating_add(c);
                    self.pc[t] += 1;
                }
                Op::Send(m) => {
                    if let Some(r) = self.release.get_mut(m) {
                        *r = Some(self.clock[t]);
                    }
                    sent.push((m, self.clock[t]));
                    self.pc[t] += 1;
                }
                Op::Recv(_) => {
                    // A subtask's reads are the run of consecutive receives: it starts when all
                    // have arrived, and that start is every one of their deadlines.
                    let mut end = self.pc[t];
                    let mut start = self.clock[t];
                    while let Some(Op::Recv(m)) = ops.get(end) {
                        match self.arrival(*m, t) {
                            Some(a) => start = start.max(a),
                            None => return,
                        }
                        end += 1;
                    }
                    for op in &ops[self.pc[t]..end] {
                        if let Op::Recv(m) = *op {
                            self.deadline[m] = self.deadline[m].min(start);
                        }
                    }
                    self.clock[t] = start;
                    self.pc[t] = end;
                }
                Op::Sync(p) => {
                    let k = *self.sync_count[t].get(&p).unwrap_or(&0);
                    let expected = self.expected.get(&(p, k)).copied().unwrap_or(1);
                    let entry = self.barriers.entry((p, k)).or_insert((Vec::new(), 0));
                    entry.0.push(t);
                    entry.1 = entry.1.max(self.clock[t]);
                    if entry.0.len() < expected {
                        self.waiting_at_barrier[t] = true;
                        return;
                    }
                    let (tasks, at) = entry.clone();
                    if k == 0 {
                        if let Some(s) = self.phase_start.get_mut(p) {
                            *s = Some(at);
                        }
                    }
                    for &u in &tasks {
                        self.clock[u] = at;
                        self.pc[u] += 1;
                        *self.sync_count[u].entry(p).or_default() += 1;
                        self.waiting_at_barrier[u] = false;
                        if u != t {
                            self.ready.push(u);
                        }
                    }
                }
            }
        }
    }

    /// The final times, or the tasks that never finished.
    pub fn finish(self) -> Result<Timing, ScheduleError> {
        let stuck: Vec<String> = (0..self.traffic.tasks.len())
            .filter(|&t| self.pc[t] < self.traffic.tasks[t].ops.len())
            .map(|t| {
                let task = &self.traffic.tasks[t];
                let what = match task.ops[self.pc[t]] {
                    Op::Recv(m) => format!("waits for message {m}"),
                    Op::Sync(p) => format!("waits at phase {p}"),
                    _ => "is blocked".into(),
                };
                format!("task {} ({}) {what}", t, task.name)
            })
            .collect();
        if !stuck.is_empty() {
            return Err(ScheduleError::Deadlock(stuck.join("; ")));
        }
        Ok(Timing {
            release: self
                .release
                .iter()
                .zip(&self.traffic.messages)
                .map(|(r, m)| r.unwrap_or(m.release))
                .collect(),
            deadline: self.deadline,
            task_finish: self.clock,
            phase_start: self.phase_start,
        })
    }
}

/// Runs the programs with every message taking `latency(msg, release)` cycles to each reader.
pub fn run_with(
    traffic: &Traffic,
    mut arrival_at: impl FnMut(MsgId, TaskId, u64) -> u64,
) -> Result<Timing, ScheduleError> {
    let mut ex = Executor::new(traffic);
    loop {
        let sent = ex.run();
        if sent.is_empty() {
            break;
        }
        for (m, at) in sent {
            let Some(msg) = traffic.messages.get(m) else {
                return Err(ScheduleError::Input(format!(
                    "a task sends message {m}, which does not exist"
                )));
            };
            for &d in &msg.dst {
                let a = arrival_at(m, d, at);
                ex.deliver(m, d, a);
            }
        }
    }
    ex.finish()
}

/// The ideal, contention-free timing (SPEC §2): a message arrives `size` cycles after release.
pub fn ideal_timing(traffic: &Traffic) -> Result<Timing, ScheduleError> {
    run_with(traffic, |m, _, at| at + traffic.messages[m].size)
}

/// Fills in release, deadline, phase starts and critical path from the programs' ideal timing:
/// what the language's timing pass produces, for traffic built by hand.
pub fn apply_ideal_timing(traffic: &mut Traffic) -> Result<(), ScheduleError> {
    let timing = ideal_timing(traffic)?;
    let mut critical = timing.makespan();
    for (m, msg) in traffic.messages.iter_mut().enumerate() {
        msg.release = timing.release[m];
        let arrival = msg.release + msg.size;
        msg.deadline = if timing.deadline[m] == u64::MAX {
            arrival
        } else {
            timing.deadline[m]
        };
        critical = critical.max(arrival);
    }
    for (p, phase) in traffic.phases.iter_mut().enumerate() {
        if let Some(Some(s)) = timing.phase_start.get(p) {
            phase.start = *s;
        }
    }
    traffic.critical_path = critical;
    Ok(())
}
