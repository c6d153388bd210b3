//! Running the task programs against message arrival times.
//!
//! Minsky Fig 4-3: a subtask starts when its predecessor in the chain is done and every message it
//! reads has arrived; a message is released when its sending subtask is done; its deadline is the
//! start of the reading subtask. The same rules serve three purposes here: the ideal timing
//! (arrival = release + size), the execution-driven exact scheduler (arrival = what the schedule
//! gives), and retiming after deadlines were relaxed (§4.2.4 "Propagation of results").

use std::collections::{BTreeMap, VecDeque};
use ttdl_ir::limits::Limits;

use super::{priority, ScheduleError};
use crate::topology::NodeId;
use crate::traffic::{Dests, MsgId, Op, PhaseId, TaskId, Traffic};

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
    (n > 0 || traffic.tasks.iter().any(|t| !t.ops.is_empty()))
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
    /// Arrival time at each reader, flat: message m's readers (in `dst` order) take slots
    /// `first[m]..first[m + 1]`; u64::MAX until it arrives. One allocation, not one per message.
    arrived: Vec<u64>,
    first: Vec<usize>,
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
    /// Per task blocked in a run of receives: the run's first op, how far its messages have
    /// all arrived and the latest arrival among them, so that each arrival is looked at once
    /// (a reader of k messages in one run would otherwise scan the run k times).
    scanned: Vec<(usize, usize, u64)>,
    /// Raises the start of a run of receives (given with each message's release) above the
    /// arrivals alone: the lower-bound timing counts the words the reader's ejection port must
    /// drain first.
    read_bound: Option<ReadBound<'a>>,
    /// Releases a message when its sending subtask ends — after the compute that follows the
    /// write (Minsky Fig 4-3, the language's timing) — rather than at the write itself.
    release_at_subtask_end: bool,
}

/// See [`Executor::with_read_bound`]: (task, messages read with their releases, start) → start.
pub type ReadBound<'a> = Box<dyn FnMut(TaskId, &[(MsgId, u64)], u64) -> u64 + 'a>;

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
        let mut first = Vec::with_capacity(traffic.messages.len() + 1);
        first.push(0usize);
        for m in &traffic.messages {
            first.push(first.last().copied().unwrap_or(0) + m.dst.len());
        }
        let phases = traffic
            .phases
            .len()
            .max(expected.keys().map(|k| k.0 + 1).max().unwrap_or(0));
        Executor {
            traffic,
            pc: vec![0; n],
            clock: vec![0; n],
            arrived: vec![u64::MAX; first.last().copied().unwrap_or(0)],
            first,
            release: vec![None; traffic.messages.len()],
            deadline: vec![u64::MAX; traffic.messages.len()],
            sync_count: vec![BTreeMap::new(); n],
            barriers: BTreeMap::new(),
            expected,
            phase_start: vec![None; phases],
            ready: (0..n).rev().collect(),
            waiting_at_barrier: vec![false; n],
            scanned: vec![(usize::MAX, 0, 0); n],
            read_bound: None,
            release_at_subtask_end: false,
        }
    }

    /// An executor whose runs of receives start no earlier than `bound` says.
    pub fn with_read_bound(traffic: &'a Traffic, bound: ReadBound<'a>) -> Self {
        let mut ex = Executor::new(traffic);
        ex.read_bound = Some(bound);
        ex
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
        if let Some(slot) = self.slot(msg, task) {
            // The first arrival counts, as the reader's run of receives would see it.
            if self.arrived[slot] == u64::MAX {
                self.arrived[slot] = at;
            }
            self.ready.push(task);
        }
    }

    fn slot(&self, msg: MsgId, task: TaskId) -> Option<usize> {
        let dst = &self.traffic.messages.get(msg)?.dst;
        dst.iter()
            .position(|&d| d == task)
            .map(|j| self.first[msg] + j)
    }

    fn arrival(&self, msg: MsgId, task: TaskId) -> Option<u64> {
        self.slot(msg, task)
            .map(|s| self.arrived[s])
            .filter(|&a| a != u64::MAX)
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
                    let mut at = self.clock[t];
                    if self.release_at_subtask_end {
                        for op in &ops[self.pc[t] + 1..] {
                            match *op {
                                Op::Compute(c) => at = at.saturating_add(c),
                                _ => break,
                            }
                        }
                    }
                    if let Some(r) = self.release.get_mut(m) {
                        *r = Some(at);
                    }
                    sent.push((m, at));
                    self.pc[t] += 1;
                }
                Op::Recv(_) => {
                    // A subtask's reads are the run of consecutive receives: it starts when all
                    // have arrived, and that start is every one of their deadlines.
                    let (mut end, mut start) = match self.scanned[t] {
                        (pc, end, start) if pc == self.pc[t] => (end, start),
                        _ => (self.pc[t], self.clock[t]),
                    };
                    while let Some(Op::Recv(m)) = ops.get(end) {
                        match self.arrival(*m, t) {
                            Some(a) => start = start.max(a),
                            None => {
                                self.scanned[t] = (self.pc[t], end, start);
                                return;
                            }
                        }
                        end += 1;
                    }
                    if let Some(bound) = self.read_bound.as_mut() {
                        let read: Vec<(MsgId, u64)> = ops[self.pc[t]..end]
                            .iter()
                            .filter_map(|op| match *op {
                                Op::Recv(m) => Some((m, self.release[m].unwrap_or(0))),
                                _ => None,
                            })
                            .collect();
                        start = start.max(bound(t, &read, start));
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
    arrival_at: impl FnMut(MsgId, TaskId, u64) -> u64,
) -> Result<Timing, ScheduleError> {
    drive(Executor::new(traffic), traffic, arrival_at)
}

/// Runs `ex` to the end, each message reaching each reader when `arrival_at` says. Messages sent
/// in one round are handed over in release order.
pub fn drive(
    mut ex: Executor<'_>,
    traffic: &Traffic,
    mut arrival_at: impl FnMut(MsgId, TaskId, u64) -> u64,
) -> Result<Timing, ScheduleError> {
    loop {
        let mut sent = ex.run();
        if sent.is_empty() {
            break;
        }
        sent.sort_by_key(|&(m, at)| (at, m));
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

/// The ideal, contention-free timing (SPEC §2), as the language times a program: a message is
/// released when its sending subtask (with the compute after the write) ends, and arrives `size`
/// cycles later.
pub fn ideal_timing(traffic: &Traffic) -> Result<Timing, ScheduleError> {
    let mut ex = Executor::new(traffic);
    ex.release_at_subtask_end = true;
    drive(ex, traffic, |m, _, at| at + traffic.messages[m].size)
}

/// Fills in release, deadline, phase starts and critical path from the programs' ideal timing:
/// what the language's timing pass produces, for traffic built by hand.
pub fn apply_ideal_timing(traffic: &mut Traffic) -> Result<(), ScheduleError> {
    let timing = ideal_timing(traffic)?;
    let arrival: Vec<u64> = timing
        .release
        .iter()
        .zip(&traffic.messages)
        .map(|(r, m)| r + m.size)
        .collect();
    apply(traffic, &timing, &arrival);
    Ok(())
}

/// Port-aware ideal timing (SPEC §2, the default): no link contention, but each node's
/// injection ports send its messages one after another, `size` cycles each, and its ejection
/// ports drain arriving messages likewise. A message between two tasks of one node goes
/// through memory (`size` cycles after its send), as in every hardware model. The ports are
/// given out greedily, earliest free gap first, so the times are those of one valid port
/// schedule: deadlines a contention-free network can meet.
pub fn port_timing(
    traffic: &Traffic,
    node_of: &[NodeId],
    ports: u32,
) -> Result<(Timing, Vec<u64>), ScheduleError> {
    port_schedule(traffic, node_of, ports).map(|(t, a, _)| (t, a))
}

/// A node's messages waiting for its injection port, by (size, destination nodes).
type Queues = BTreeMap<QueueKey, Queue>;
type QueueKey = (u64, Dests);

/// One queue of a node's waiting messages: those not yet released at the cycle the port was
/// last looked at, in release order, and the released ones, longest chain to the end first
/// (SPEC §2: released writes may leave in any order; [`priority::critical_to_end`] keeps the
/// messages of one stream in order).
#[derive(Default)]
struct Queue {
    waiting: VecDeque<(u64, MsgId)>,
    /// (longest chain first, release, message).
    released: std::collections::BTreeSet<(std::cmp::Reverse<u64>, u64, MsgId)>,
}

impl Queue {
    /// Moves the messages released by cycle `t` to the released set.
    fn release_until(&mut self, t: u64, prio: &[u64]) {
        while let Some(&(at, m)) = self.waiting.front() {
            if at > t {
                break;
            }
            self.waiting.pop_front();
            let p = prio.get(m).copied().unwrap_or(0);
            self.released.insert((std::cmp::Reverse(p), at, m));
        }
    }

    /// The message this queue would send next at `t` (after [`Queue::release_until`]).
    fn front(&self) -> Option<(std::cmp::Reverse<u64>, u64, MsgId)> {
        self.released.first().copied()
    }

    /// A cycle no later than the next at which this queue has a message to send: the release
    /// of its next released message (already due), else of its first waiting one.
    fn earliest(&self) -> Option<u64> {
        let r = self.released.first().map(|e| e.1);
        let w = self.waiting.front().map(|f| f.0);
        match (r, w) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn pop(&mut self) -> Option<MsgId> {
        self.released.pop_first().map(|e| e.2)
    }
}

/// [`port_timing`], also giving the cycle each message starts to leave its node (the order the
/// exact scheduler may follow).
///
/// A node's released messages leave in one of two orders, and the timing that ends sooner is
/// kept (SPEC §2: released writes may leave in any order, a stream's in its own): release
/// order, or longest chain to the end first ([`priority::critical_to_end`]). Neither greedy
/// order is best on every program — the chain order sends a farm's slowest job first, release
/// order keeps a pipeline's frames flowing — so both are timed; on a tie, release order.
pub fn port_schedule(
    traffic: &Traffic,
    node_of: &[NodeId],
    ports: u32,
) -> Result<(Timing, Vec<u64>, Vec<u64>), ScheduleError> {
    let in_order = port_schedule_by(traffic, node_of, ports, None)?;
    let prio = priority::critical_to_end(traffic);
    let by_chain = port_schedule_by(traffic, node_of, ports, Some(&prio))?;
    let end = |t: &(Timing, Vec<u64>, Vec<u64>)| {
        t.1.iter().copied().max().unwrap_or(0).max(t.0.makespan())
    };
    Ok(if end(&by_chain) < end(&in_order) {
        by_chain
    } else {
        in_order
    })
}

/// [`port_schedule`] with the released messages of a node sent by `prio` (largest first), or
/// in release order when `prio` is `None`.
fn port_schedule_by(
    traffic: &Traffic,
    node_of: &[NodeId],
    ports: u32,
    prio: Option<&[u64]>,
) -> Result<(Timing, Vec<u64>, Vec<u64>), ScheduleError> {
    let prio = prio.unwrap_or(&[]);
    let node = |t: TaskId| -> Result<NodeId, ScheduleError> {
        node_of
            .get(t)
            .copied()
            .ok_or_else(|| ScheduleError::Input(format!("task {t} has no node")))
    };
    let nodes = node_of.iter().copied().max().map_or(0, |n| n + 1);
    let mut inject = vec![Lanes::new(ports); nodes];
    let mut eject = vec![Lanes::new(ports); nodes];
    let mut arrival = vec![0u64; traffic.messages.len()];
    let mut injected = vec![u64::MAX; traffic.messages.len()];
    let mut ex = Executor::new(traffic);
    loop {
        let sent = ex.run();
        if sent.is_empty() {
            break;
        }
        // Dispatch by node, in time order: when a node's injection port comes free, it sends
        // the released message whose destination can take it earliest (a greedy matching of
        // injection to ejection ports, as a Latin-square exchange would be scheduled). A node's
        // waiting messages are queued by what decides that choice — size and destination
        // nodes — so a choice costs the number of distinct queues, not of waiting messages (a
        // writer far ahead of its reader may have hundreds of thousands waiting).
        let mut pending: BTreeMap<NodeId, Queues> = BTreeMap::new();
        let mut sent = sent;
        sent.sort_unstable_by_key(|&(m, at)| (at, m));
        for &(m, at) in &sent {
            let Some(msg) = traffic.messages.get(m) else {
                return Err(ScheduleError::Input(format!(
                    "a task sends message {m}, which does not exist"
                )));
            };
            let src = node(msg.src)?;
            let mut remote = Dests::new();
            for &d in &msg.dst {
                let dn = node(d)?;
                if dn == src || msg.size == 0 {
                    injected[m] = at;
                    let a = at + msg.size;
                    arrival[m] = arrival[m].max(a);
                    ex.deliver(m, d, a);
                } else if !remote.contains(&dn) {
                    remote.push(dn);
                }
            }
            if !remote.is_empty() {
                remote.sort_unstable();
                pending
                    .entry(src)
                    .or_default()
                    .entry((msg.size, remote))
                    .or_default()
                    .waiting
                    .push_back((at, m));
            }
        }
        let earliest = |queues: &Queues| queues.values().filter_map(Queue::earliest).min();
        let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, NodeId)>> =
            Default::default();
        for (&u, queues) in &pending {
            if let Some(r) = earliest(queues) {
                heap.push(std::cmp::Reverse((r, u)));
            }
        }
        while let Some(std::cmp::Reverse((t, u))) = heap.pop() {
            let Some(queues) = pending.get_mut(&u) else {
                continue;
            };
            let t = t.max(inject[u].free_at(t, 1));
            // The released message whose destinations can all take it soonest; among equals,
            // the one with the longest chain after it, then the earliest released.
            let mut best: Option<(u64, Pick, &QueueKey)> = None;
            for q in queues.values_mut() {
                q.release_until(t, prio);
            }
            for (key, q) in queues.iter() {
                let Some(front) = q.front() else { continue };
                let when = key
                    .1
                    .iter()
                    .map(|&dn| eject[dn].free_at(t, key.0))
                    .max()
                    .unwrap_or(t);
                if best.is_none_or(|(w, f, _)| (when, front) < (w, f)) {
                    best = Some((when, front, key));
                }
            }
            let Some((_, _, key)) = best else {
                if let Some(r) = earliest(queues) {
                    heap.push(std::cmp::Reverse((r, u)));
                }
                continue;
            };
            let key = key.clone();
            let Some(m) = queues.get_mut(&key).and_then(Queue::pop) else {
                continue;
            };
            let size = key.0;
            let start = inject[u].take(t, size);
            injected[m] = start;
            for &d in &traffic.messages[m].dst {
                let dn = node(d)?;
                if dn != u {
                    let a = eject[dn].take(start, size) + size;
                    arrival[m] = arrival[m].max(a);
                    ex.deliver(m, d, a);
                }
            }
            if let Some(r) = earliest(queues) {
                heap.push(std::cmp::Reverse((r.max(start + size.min(1)), u)));
            }
        }
    }
    let timing = ex.finish()?;
    for (m, r) in timing.release.iter().enumerate() {
        arrival[m] = arrival[m].max(r + traffic.messages[m].size);
        if injected[m] == u64::MAX {
            injected[m] = *r;
        }
    }
    Ok((timing, arrival, injected))
}

/// [`port_timing`] written into `traffic` (release, deadline, phase starts, critical path).
pub fn apply_port_timing(
    traffic: &mut Traffic,
    node_of: &[NodeId],
    ports: u32,
) -> Result<(), ScheduleError> {
    let (timing, arrival) = port_timing(traffic, node_of, ports)?;
    apply(traffic, &timing, &arrival);
    Ok(())
}

/// Busy intervals of a node's ports, one ordered map (start → end) per port.
#[derive(Clone, Debug)]
struct Lanes(Vec<BTreeMap<u64, u64>>);

impl Lanes {
    fn new(ports: u32) -> Self {
        Lanes(vec![
            BTreeMap::new();
            ports.clamp(1, Limits::PORTS) as usize
        ])
    }

    /// The earliest cycle at or after `from` at which some port has `len` free cycles.
    fn free_at(&self, from: u64, len: u64) -> u64 {
        self.earliest(from, len).0
    }

    /// Books `len` cycles on the port with the earliest free gap at or after `from`; returns
    /// the gap's start.
    fn take(&mut self, from: u64, len: u64) -> u64 {
        let (start, i) = self.earliest(from, len);
        if len > 0 {
            // Touching intervals merge, so a port kept busy is one entry, not one per message.
            let lane = &mut self.0[i];
            let mut end = start + len;
            if let Some(&next_end) = lane.get(&end) {
                lane.remove(&end);
                end = next_end;
            }
            match lane.range_mut(..start).next_back() {
                Some((_, prev_end)) if *prev_end == start => *prev_end = end,
                _ => {
                    lane.insert(start, end);
                }
            }
        }
        start
    }

    fn earliest(&self, from: u64, len: u64) -> (u64, usize) {
        let mut best: Option<(u64, usize)> = None;
        for (i, lane) in self.0.iter().enumerate() {
            let mut start = from;
            // Most requests come after everything booked so far.
            if lane.last_key_value().is_none_or(|(_, &end)| end <= from) {
                if best.is_none_or(|(s, _)| start < s) {
                    best = Some((start, i));
                }
                continue;
            }
            if let Some((_, &end)) = lane.range(..=start).next_back() {
                start = start.max(end);
            }
            for (&a, &b) in lane.range(start..) {
                if a >= start + len {
                    break;
                }
                start = start.max(b);
            }
            if best.is_none_or(|(s, _)| start < s) {
                best = Some((start, i));
            }
        }
        best.unwrap_or((from, 0))
    }
}

fn apply(traffic: &mut Traffic, timing: &Timing, arrivals: &[u64]) {
    let mut critical = timing.makespan();
    for (m, msg) in traffic.messages.iter_mut().enumerate() {
        msg.release = timing.release[m];
        let arrival = arrivals[m];
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
}

/// How the port timing ranks a released message among equals: the longest chain after it, then
/// the earliest released, then its id.
type Pick = (std::cmp::Reverse<u64>, u64, MsgId);
