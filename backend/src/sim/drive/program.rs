//! The execution-driven core: every task runs its program from the IR against a network model.
//!
//! A task is a chain of ops (Minsky Fig 4-3): `Compute(c)` takes `c` cycles; `Send` is
//! non-blocking and takes no time — the packet is handed to the model at that cycle and the
//! network's injection port serializes it; `Recv` blocks until the message has fully arrived;
//! `Sync(p)` is a barrier across every task whose program synchronizes on `p` (the k-th `Sync(p)`
//! of each task joins the k-th barrier of `p`, so phases inside `iterate` work).
//!
//! Multicasts are split into one unicast packet per destination task. A message between two tasks
//! on the same node never enters the network: it is copied through memory at one word per cycle,
//! so it arrives `size` cycles after the send — the ideal timing of SPEC §2. The scheduled replay
//! is the exception ([`NetworkModel::carries_local`]): its plan passes such a message through the
//! node's switch, and the core takes the arrival the plan gives.
//!
//! Time advances event by event: the core runs every task due at cycle `t`, steps the model if it
//! has work at `t`, then jumps to the earliest of the next task wake-up and the model's
//! [`NetworkModel::next_event`], so cycle-level models are stepped only while they hold packets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::topology::{Network, NodeId};
use crate::traffic::{MsgId, Op, Placement, TaskId, Traffic};

use crate::sim::event::{next_cycle, EventQueue};
use crate::sim::options::ModelError;
use crate::sim::stats::LatencySummary;
use crate::sim::{Delivery, NetworkModel, Packet};

/// Limits of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Stop, reporting [`SimError::Unfinished`], when the program has not finished by this cycle.
    pub max_cycles: u64,
    /// Stop as deadlocked or livelocked when the model holds packets but delivers none for this
    /// many cycles (`None`: derived from the program, see [`SimOptions::for_program`]).
    pub watchdog: Option<u64>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            max_cycles: 1 << 32,
            watchdog: None,
        }
    }
}

/// The smallest default cycle cap: short programs still get room for slow models.
pub const MIN_CYCLE_CAP: u64 = 1_000_000;

impl SimOptions {
    /// Limits that scale with the program: the cap is 64 × its *serial time* (every task's
    /// compute and every message crossing its route, one after another with a few cycles of
    /// set-up per hop — what a network that carried one message at a time would need),
    /// at least [`MIN_CYCLE_CAP`]; the watchdog is twice the words the program moves plus 64
    /// cycles per packet, at least 65,536 — longer than any packet can legitimately wait for
    /// the others to pass.
    pub fn for_program(traffic: &Traffic, network: &Network, placement: &Placement) -> Self {
        let node = |t: TaskId| placement.node_of.get(t).copied().unwrap_or(0);
        let compute: u64 = traffic
            .tasks
            .iter()
            .flat_map(|t| &t.ops)
            .map(|op| match *op {
                Op::Compute(c) => c,
                _ => 0,
            })
            .fold(0u64, u64::saturating_add);
        let (mut serial, mut words, mut packets) = (compute, 0u64, 0u64);
        for m in &traffic.messages {
            let size = m.size.max(1);
            for &d in &m.dst {
                let hops = network.distance(node(m.src), node(d)).min(1 << 20) as u64 + 1;
                serial = serial.saturating_add(size.saturating_add(4 * hops));
                words = words.saturating_add(size);
                packets += 1;
            }
        }
        SimOptions {
            max_cycles: serial.saturating_mul(64).max(MIN_CYCLE_CAP),
            watchdog: Some(
                words
                    .saturating_mul(2)
                    .saturating_add(packets.saturating_mul(64))
                    .max(1 << 16),
            ),
        }
    }
}

/// Why a run stopped before every task finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stall {
    /// Nothing moves: packets wait on each other.
    Deadlock,
    /// The model keeps acting (headers set up and tear down, flits move) but delivers nothing.
    Livelock,
    /// Packets were still being delivered when the cycle cap was reached.
    CycleCap,
}

impl Stall {
    pub fn name(self) -> &'static str {
        match self {
            Stall::Deadlock => "deadlock",
            Stall::Livelock => "livelock",
            Stall::CycleCap => "cycle cap reached while still delivering",
        }
    }
}

/// A run that could not complete, or a model that could not run the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The model or the program is unusable (bad option, wrong network, malformed traffic).
    Model(ModelError),
    /// The program did not finish: stopped at `cycles`.
    Unfinished {
        cycles: u64,
        stall: Stall,
        detail: String,
    },
}

impl From<ModelError> for SimError {
    fn from(e: ModelError) -> Self {
        SimError::Model(e)
    }
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Model(e) => write!(f, "{e}"),
            SimError::Unfinished {
                cycles,
                stall,
                detail,
            } => {
                write!(f, "did not finish after {cycles} cycles ({})", stall.name())?;
                if !detail.is_empty() {
                    write!(f, ": {detail}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for SimError {}

/// When a task finished its program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskResult {
    pub task: TaskId,
    pub name: String,
    pub node: NodeId,
    pub finish: u64,
}

/// A message's timing: sent at `sent`, fully delivered to its last destination at `delivered`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageResult {
    pub msg: MsgId,
    pub src: TaskId,
    pub dst: Vec<TaskId>,
    pub size: u64,
    pub sent: u64,
    pub delivered: u64,
    /// `delivered − sent`.
    pub latency: u64,
    /// Every destination shares the sender's node (delivered through memory).
    pub local: bool,
}

/// Words a directed link carried, and that as a fraction of the completion time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkUse {
    pub from: NodeId,
    pub to: NodeId,
    pub busy: u64,
    pub utilization: f64,
}

/// Everything one run of a program on one model measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub model: String,
    /// Cycle at which the last task finished.
    pub completion: u64,
    pub tasks: Vec<TaskResult>,
    pub messages: Vec<MessageResult>,
    /// Latency over all messages (send to full delivery at the last destination).
    pub latency: LatencySummary,
    /// Words delivered (each destination of a multicast counted).
    pub words: u64,
    /// Words delivered per cycle of the completion time.
    pub throughput: f64,
    /// Per directed link, when the model tracks it (sorted by link id).
    pub links: Vec<LinkUse>,
    pub peak_utilization: f64,
    /// Packets the model sent: one per message copy handed to it, or more with `packet=N`.
    #[serde(default)]
    pub packets: u64,
    /// Energy of the run (SPEC §5), static costs over the completion time.
    #[serde(default)]
    pub energy: crate::sim::energy::Energy,
    /// The most words waiting at one switch input in one cycle, for a model that measures it
    /// (the scheduled replay: SPEC §2 `buffered_max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered_max: Option<u64>,
}

/// Where tasks run until a placer is asked: a task's mapped coordinates if a canned mapping gave
/// them and they name a node, otherwise task `i` on node `i mod N`.
pub fn default_placement(traffic: &Traffic, network: &Network) -> Placement {
    let n = network.nodes().max(1);
    let node_of = traffic
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.mapped
                .as_deref()
                .and_then(|c| network.node_at(c))
                .unwrap_or(i % n)
        })
        .collect();
    Placement { node_of }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    Busy,
    Done(u64),
}

/// Runs `traffic` placed by `placement` on `model` and measures it.
pub fn simulate(
    traffic: &Traffic,
    placement: &Placement,
    network: &Network,
    model: &mut dyn NetworkModel,
    opts: &SimOptions,
) -> Result<SimReport, SimError> {
    simulate_with_progress(
        traffic,
        placement,
        network,
        model,
        opts,
        &crate::progress::Progress::none(),
    )
}

/// [`simulate`], counting delivered copies of messages on `progress` (one stage, "simulate").
pub fn simulate_with_progress(
    traffic: &Traffic,
    placement: &Placement,
    network: &Network,
    model: &mut dyn NetworkModel,
    opts: &SimOptions,
    progress: &crate::progress::Progress,
) -> Result<SimReport, SimError> {
    let copies: usize = traffic.messages.iter().map(|m| m.dst.len()).sum();
    progress.stage("simulate", copies as u64);
    check_traffic(traffic)?;
    let mut core = Core::new(traffic, placement, network, model, opts, progress);
    let mut t: u64 = 0;
    loop {
        // 1. Run every task due now, to a fixpoint (a barrier may release others at `t`).
        core.run_tasks(t)?;
        // 2. Step the network through cycle `t` if it has work now.
        core.step_network(t)?;
        // 3. Jump to the next thing that happens.
        let next_task = core.wake.next_time().map(|a| a.max(t + 1));
        let Some(next) = next_cycle(next_task, core.model.next_event(t + 1)) else {
            break;
        };
        if next > opts.max_cycles {
            return Err(SimError::Unfinished {
                cycles: opts.max_cycles,
                stall: Stall::CycleCap,
                detail: "raise it with --max-cycles".into(),
            });
        }
        t = next.max(t + 1);
    }
    core.check_finished(t)?;
    core.report()
}

/// Refuses a program whose messages are malformed or which is beyond the limits of a run.
fn check_traffic(traffic: &Traffic) -> Result<(), SimError> {
    let ntasks = traffic.tasks.len();
    for (i, m) in traffic.messages.iter().enumerate() {
        if m.id != i || m.src >= ntasks || m.dst.iter().any(|&d| d >= ntasks) || m.dst.is_empty() {
            return Err(ModelError(format!(
                "message {i} is malformed (bad id, source or destination)"
            ))
            .into());
        }
    }
    traffic
        .check_limits()
        .map_err(|e| ModelError(e.to_string()))?;
    Ok(())
}

/// The barriers of `Sync(p)`: the k-th `Sync(p)` of every task that has one joins barrier
/// `(p, k)`.
struct Barriers {
    /// How many tasks reach each barrier.
    size: BTreeMap<(usize, usize), usize>,
    /// The tasks already at each barrier.
    waiting: BTreeMap<(usize, usize), Vec<TaskId>>,
    /// Per task: how many `Sync(p)` it has passed, per phase `p`.
    passed: Vec<BTreeMap<usize, usize>>,
}

impl Barriers {
    fn new(traffic: &Traffic) -> Barriers {
        let mut size: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for t in &traffic.tasks {
            let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
            for op in &t.ops {
                if let Op::Sync(p) = *op {
                    let k = seen.entry(p).or_insert(0);
                    *size.entry((p, *k)).or_insert(0) += 1;
                    *k += 1;
                }
            }
        }
        Barriers {
            size,
            waiting: BTreeMap::new(),
            passed: vec![BTreeMap::new(); traffic.tasks.len()],
        }
    }

    /// `task` reaches its next `Sync(p)`: `None` while others are still to come, else the
    /// tasks it releases, in id order (itself included).
    fn arrive(&mut self, task: TaskId, p: usize) -> Option<Vec<TaskId>> {
        let k = self.passed[task].entry(p).or_insert(0);
        let key = (p, *k);
        *k += 1;
        let w = self.waiting.entry(key).or_default();
        w.push(task);
        if w.len() < self.size.get(&key).copied().unwrap_or(1) {
            return None;
        }
        let mut all = self.waiting.remove(&key).unwrap_or_default();
        all.sort_unstable();
        Some(all)
    }
}

/// The deadlock and livelock watchdog: since when the model has held packets without
/// delivering one, and how much it had done (its progress counter) halfway through that stretch.
struct Watchdog {
    limit: Option<u64>,
    quiet_since: u64,
    halfway: Option<u64>,
    /// Model steps so far (its own stall check runs every 4096).
    steps: u64,
}

impl Watchdog {
    /// The model delivered something, or is idle (an idle model is not stuck: the watchdog
    /// counts from its next packet).
    fn reset(&mut self, t: u64) {
        self.quiet_since = t;
        self.halfway = None;
    }

    /// After a step at `t` that delivered nothing new: an error once the model has been quiet
    /// for longer than the limit (livelock if it moved meanwhile, deadlock if not), or when the
    /// model itself finds it is stalled.
    fn check(&mut self, t: u64, model: &dyn NetworkModel) -> Result<(), SimError> {
        self.steps += 1;
        if self.steps.is_multiple_of(4096) {
            if let Some(why) = model.stalled(t) {
                return Err(SimError::Unfinished {
                    cycles: t,
                    stall: Stall::Deadlock,
                    detail: why,
                });
            }
        }
        let Some(w) = self.limit else {
            return Ok(());
        };
        let quiet = t - self.quiet_since;
        if quiet > w / 2 && self.halfway.is_none() {
            self.halfway = Some(model.progress());
        }
        if quiet > w {
            let moved = self.halfway.is_some_and(|h| model.progress() > h);
            return Err(SimError::Unfinished {
                cycles: t,
                stall: if moved {
                    Stall::Livelock
                } else {
                    Stall::Deadlock
                },
                detail: format!("no message delivered for {quiet} cycles"),
            });
        }
        Ok(())
    }
}

/// The state of a run: the tasks' program counters and wake-ups, the messages' sends and
/// arrivals, and the packets handed to the model.
struct Core<'a> {
    traffic: &'a Traffic,
    placement: &'a Placement,
    network: &'a Network,
    model: &'a mut dyn NetworkModel,
    progress: &'a crate::progress::Progress,
    pc: Vec<usize>,
    state: Vec<State>,
    wake: EventQueue<TaskId>,
    barriers: Barriers,
    /// Per message and destination: when it has fully arrived.
    arrival: Vec<Vec<Option<u64>>>,
    /// Per message and destination: the task blocked receiving it.
    waiting: Vec<Vec<Option<TaskId>>>,
    sent: Vec<Option<u64>>,
    /// Per packet id: its message and destination index.
    packets: Vec<(MsgId, usize)>,
    /// Words handed to the model (each over an injection and an ejection channel).
    net_words: u64,
    net_packets: u64,
    /// Their words × hops over shortest paths, for a model that does not count its links.
    min_word_hops: u64,
    delivered: Vec<Delivery>,
    watchdog: Watchdog,
}

impl<'a> Core<'a> {
    fn new(
        traffic: &'a Traffic,
        placement: &'a Placement,
        network: &'a Network,
        model: &'a mut dyn NetworkModel,
        opts: &SimOptions,
        progress: &'a crate::progress::Progress,
    ) -> Core<'a> {
        let ntasks = traffic.tasks.len();
        let arrival: Vec<Vec<Option<u64>>> = traffic
            .messages
            .iter()
            .map(|m| vec![None; m.dst.len()])
            .collect();
        let waiting = arrival.iter().map(|v| vec![None; v.len()]).collect();
        Core {
            traffic,
            placement,
            network,
            model,
            progress,
            pc: vec![0; ntasks],
            state: vec![State::Ready; ntasks],
            wake: (0..ntasks).map(|t| (0, t)).collect(),
            barriers: Barriers::new(traffic),
            arrival,
            waiting,
            sent: vec![None; traffic.messages.len()],
            packets: Vec::new(),
            net_words: 0,
            net_packets: 0,
            min_word_hops: 0,
            delivered: Vec::new(),
            watchdog: Watchdog {
                limit: opts.watchdog,
                quiet_since: 0,
                halfway: None,
                steps: 0,
            },
        }
    }

    fn node_of(&self, t: TaskId) -> Result<NodeId, ModelError> {
        self.placement
            .node_of
            .get(t)
            .copied()
            .filter(|&n| n < self.network.nodes())
            .ok_or_else(|| ModelError(format!("task {t} has no node in the placement")))
    }

    /// Message `m`'s copy `k` has fully arrived at `at`: wake its receiver if it waits.
    fn arrived(&mut self, m: MsgId, k: usize, at: u64) {
        self.arrival[m][k] = Some(at);
        if let Some(w) = self.waiting[m][k].take() {
            self.state[w] = State::Ready;
            self.wake.push(at, w);
        }
    }

    /// Runs every task due at `t` until it blocks, waits or ends.
    fn run_tasks(&mut self, t: u64) -> Result<(), SimError> {
        while let Some((_, task)) = self.wake.pop_due(t) {
            if self.state[task] != State::Ready {
                continue;
            }
            while self.run_op(task, t)? {}
        }
        Ok(())
    }

    /// Runs `task`'s next op at `t`; whether it goes on to the one after at once.
    fn run_op(&mut self, task: TaskId, t: u64) -> Result<bool, SimError> {
        let Some(op) = self.traffic.tasks[task].ops.get(self.pc[task]).copied() else {
            self.state[task] = State::Done(t);
            return Ok(false);
        };
        match op {
            Op::Compute(c) => {
                self.pc[task] += 1;
                if c > 0 {
                    self.wake.push(t.saturating_add(c), task);
                    return Ok(false);
                }
                Ok(true)
            }
            Op::Send(m) => {
                self.send(task, m, t)?;
                self.pc[task] += 1;
                Ok(true)
            }
            Op::Recv(m) => self.recv(task, m, t),
            Op::Sync(p) => {
                self.pc[task] += 1;
                let Some(all) = self.barriers.arrive(task, p) else {
                    self.state[task] = State::Busy;
                    return Ok(false);
                };
                for other in all {
                    if other != task {
                        self.state[other] = State::Ready;
                        self.wake.push(t, other);
                    }
                }
                Ok(true)
            }
        }
    }

    /// `task` sends message `m` at `t`: one packet per destination task on another node (or
    /// on its own, for a model that carries local messages); a local copy arrives `size`
    /// cycles later through memory.
    fn send(&mut self, task: TaskId, m: MsgId, t: u64) -> Result<(), SimError> {
        let traffic = self.traffic;
        let msg = traffic
            .messages
            .get(m)
            .ok_or_else(|| ModelError(format!("task {task} sends unknown message {m}")))?;
        if msg.src != task {
            return Err(ModelError(format!(
                "task {task} sends message {m}, whose sender is task {}",
                msg.src
            ))
            .into());
        }
        self.sent[m] = Some(t);
        let src = self.node_of(task)?;
        for (k, &d) in msg.dst.iter().enumerate() {
            let dst = self.node_of(d)?;
            if dst == src && !self.model.carries_local() {
                self.arrived(m, k, t.saturating_add(msg.size));
            } else {
                let id = self.packets.len() as u64;
                self.packets.push((m, k));
                let p = Packet {
                    id,
                    src,
                    dst,
                    size: msg.size,
                    created: t,
                };
                self.net_words += msg.size;
                self.net_packets += 1;
                self.min_word_hops += msg.size * self.network.distance(src, dst) as u64;
                self.model.inject_for(t, p, m, d);
            }
        }
        Ok(())
    }

    /// `task` receives message `m` at `t`: on if it has arrived, else it sleeps until it does.
    fn recv(&mut self, task: TaskId, m: MsgId, t: u64) -> Result<bool, SimError> {
        let k = self
            .traffic
            .messages
            .get(m)
            .and_then(|msg| msg.dst.iter().position(|&d| d == task))
            .ok_or_else(|| {
                ModelError(format!(
                    "task {task} receives message {m}, which is not addressed to it"
                ))
            })?;
        match self.arrival[m][k] {
            Some(a) if a <= t => {
                self.pc[task] += 1;
                Ok(true)
            }
            Some(a) => {
                self.wake.push(a, task);
                Ok(false)
            }
            None => {
                self.waiting[m][k] = Some(task);
                self.state[task] = State::Busy;
                Ok(false)
            }
        }
    }

    /// Steps the model through cycle `t` if it has work then, and takes its deliveries.
    fn step_network(&mut self, t: u64) -> Result<(), SimError> {
        let has_work = self.model.next_event(t).is_some_and(|e| e <= t);
        if !has_work {
            self.watchdog.reset(t);
            return Ok(());
        }
        let mut delivered = std::mem::take(&mut self.delivered);
        delivered.clear();
        self.model.step(t, &mut delivered);
        if !delivered.is_empty() {
            self.watchdog.reset(t);
        }
        for d in &delivered {
            let Some(&(m, k)) = self.packets.get(d.packet as usize) else {
                return Err(ModelError(format!(
                    "model `{}` delivered unknown packet {}",
                    self.model.name(),
                    d.packet
                ))
                .into());
            };
            self.arrived(m, k, d.at.max(t + 1));
            self.progress.advance(1);
        }
        self.delivered = delivered;
        self.watchdog.check(t, &*self.model)
    }

    /// Every task must have finished by `t`; otherwise some wait forever.
    fn check_finished(&self, t: u64) -> Result<(), SimError> {
        let tasks = &self.traffic.tasks;
        let mut stuck = Vec::new();
        for (task, s) in self.state.iter().enumerate() {
            if !matches!(s, State::Done(_)) {
                let pc = self.pc[task];
                let what = match tasks[task].ops.get(pc.saturating_sub(1)) {
                    Some(Op::Sync(p)) => format!("at barrier of phase {p}"),
                    _ => match tasks[task].ops.get(pc) {
                        Some(Op::Recv(m)) => format!("waiting for message {m}"),
                        _ => "blocked".to_string(),
                    },
                };
                stuck.push(format!("{} ({what})", tasks[task].name));
            }
        }
        if stuck.is_empty() {
            return Ok(());
        }
        Err(SimError::Unfinished {
            cycles: t,
            stall: Stall::Deadlock,
            detail: format!("{} never complete", stuck.join(", ")),
        })
    }

    /// The report of a finished run.
    fn report(self) -> Result<SimReport, SimError> {
        let tasks = self.task_results()?;
        let completion = tasks.iter().map(|t| t.finish).max().unwrap_or(0);
        let messages = self.message_results()?;
        let words = self
            .traffic
            .messages
            .iter()
            .map(|m| m.size * m.dst.len() as u64)
            .sum::<u64>();
        let latency = LatencySummary::of(&messages.iter().map(|m| m.latency).collect::<Vec<_>>());
        let links = self.link_uses(completion);
        let peak_utilization = links.iter().map(|l| l.utilization).fold(0.0, f64::max);
        let model = &*self.model;
        Ok(SimReport {
            model: model.name(),
            completion,
            tasks,
            messages,
            latency,
            words,
            throughput: if completion > 0 {
                words as f64 / completion as f64
            } else {
                0.0
            },
            links,
            peak_utilization,
            packets: model.packets().unwrap_or(self.net_packets),
            energy: crate::sim::energy::of_run(
                model,
                self.network,
                (self.net_words, self.min_word_hops),
                completion,
            ),
            buffered_max: model.buffered_max(),
        })
    }

    fn task_results(&self) -> Result<Vec<TaskResult>, SimError> {
        let mut tasks = Vec::with_capacity(self.traffic.tasks.len());
        for (i, task) in self.traffic.tasks.iter().enumerate() {
            let finish = match self.state[i] {
                State::Done(f) => f,
                _ => 0,
            };
            tasks.push(TaskResult {
                task: i,
                name: task.name.clone(),
                node: self.node_of(i)?,
                finish,
            });
        }
        Ok(tasks)
    }

    fn message_results(&self) -> Result<Vec<MessageResult>, SimError> {
        let mut messages = Vec::with_capacity(self.traffic.messages.len());
        for (i, m) in self.traffic.messages.iter().enumerate() {
            let s = self.sent[i].unwrap_or(0);
            let d = self.arrival[i]
                .iter()
                .map(|a| a.unwrap_or(s))
                .max()
                .unwrap_or(s);
            let src = self.node_of(m.src)?;
            let local = m.dst.iter().all(|&d| self.node_of(d).ok() == Some(src));
            messages.push(MessageResult {
                msg: i,
                src: m.src,
                dst: m.dst.to_vec(),
                size: m.size,
                sent: s,
                delivered: d,
                latency: d.saturating_sub(s),
                local,
            });
        }
        Ok(messages)
    }

    /// Each link's busy cycles and utilization over `completion` cycles.
    fn link_uses(&self, completion: u64) -> Vec<LinkUse> {
        self.model
            .link_busy()
            .iter()
            .zip(&self.network.links)
            .map(|(&b, l)| LinkUse {
                from: l.from,
                to: l.to,
                busy: b,
                utilization: if completion > 0 {
                    b as f64 / completion as f64
                } else {
                    0.0
                },
            })
            .collect()
    }
}
