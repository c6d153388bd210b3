//! Time scheduling: every message (or fragment) gets the cycles at which it holds each link of its
//! route (Minsky §4.2.4).
//!
//! Two schedulers produce a [`Schedule`]: [`lp`], the thesis's linear-programming formulation
//! (maximal subsets, message interval allocation, interval scheduling with link-feasible sets), and
//! [`exact`], a cycle-level list scheduler that pipelines messages hop by hop (the refinement §4.2.4
//! "Refining the Approach" asks for). Neither is trusted: [`schedule`] runs the [`verify`] checker
//! on every answer before anyone sees it.

use std::fmt;
use ttdl_ir::limits::Limits;

use serde::{Deserialize, Serialize};

use crate::progress::Progress;
use crate::topology::{Network, NodeId};
use crate::traffic::{MsgId, Placement, Route, Routing, TaskId, Traffic};

pub mod bounds;
pub mod buffers;
mod choice;
mod clear;
pub mod exact;
pub mod feedback;
pub mod hold;
pub use hold::{Hold, Step};
pub mod from_run;
pub mod improve;
pub mod kernel;
pub mod lp;
#[cfg(feature = "highs")]
pub mod milp;
pub mod modulo;
mod occupancy;
mod slot_sat;
pub(crate) use occupancy::{FastMap, Groups, ResourceIndex};
pub mod periodic;
pub mod priority;
pub mod program;
mod torus_seed;
pub mod verify;
mod wave_search;

/// What a fragment holds: a network link or a processor port.
///
/// Nodes are numbered in 32 bits here (a network has far fewer than 2³² nodes, and
/// [`Problem::new`] refuses one that has more): a plan keeps one resource per hold and per route
/// step, a hundred million of each for a million messages, and 32-bit node numbers make a
/// resource 12 bytes rather than 24. [`Resource::link`], [`Resource::inject`] and
/// [`Resource::eject`] build one from node ids, [`Resource::node`] and [`Resource::ends`] read
/// them back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Resource {
    Link { from: Node32, to: Node32 },
    Inject(Node32),
    Eject(Node32),
}

/// A node id as a [`Resource`] keeps it.
pub type Node32 = u32;

impl Resource {
    /// The link `from -> to`.
    pub fn link(from: NodeId, to: NodeId) -> Resource {
        Resource::Link {
            from: from as Node32,
            to: to as Node32,
        }
    }

    /// Node `n`'s injection port.
    pub fn inject(n: NodeId) -> Resource {
        Resource::Inject(n as Node32)
    }

    /// Node `n`'s ejection port.
    pub fn eject(n: NodeId) -> Resource {
        Resource::Eject(n as Node32)
    }

    /// The node whose port it is, or the link's source.
    pub fn node(&self) -> NodeId {
        match *self {
            Resource::Link { from, .. } => from as NodeId,
            Resource::Inject(n) | Resource::Eject(n) => n as NodeId,
        }
    }

    /// A link's ends, as node ids.
    pub fn ends(&self) -> Option<(NodeId, NodeId)> {
        match *self {
            Resource::Link { from, to } => Some((from as NodeId, to as NodeId)),
            _ => None,
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Link { from, to } => write!(f, "{from}->{to}"),
            Resource::Inject(n) => write!(f, "inject@{n}"),
            Resource::Eject(n) => write!(f, "eject@{n}"),
        }
    }
}

/// The hardware parameters the schedule must respect (SPEC §2: one word per link per cycle each
/// way, one injection and one ejection port per node; models may change the counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hardware {
    /// Processor–network ports per node, each way (NuMesh: 1).
    pub ports: u32,
    /// Cycles a word needs to cross one switch before it may enter the next resource. 0 is the
    /// thesis's circuit model: a message holds every link of its route in the same cycles.
    pub hop_latency: u64,
    /// Set-up cycles every transfer pays before its words (Minsky §5.1.2: the NuMesh's Jacobi
    /// exchange takes 8 + 1 cycles per direction). The plan's traffic already counts them in each
    /// message's size (see `pipeline::timed`); here they make each message one transfer: a
    /// message split into fragments would pay them again, which no scheduler models.
    #[serde(default)]
    pub setup: u64,
    /// Words that may wait at one switch input (SPEC §2 "Switches have finite buffers", see
    /// [`buffers`]); `None` is the unbounded idealisation. A document written before the
    /// setting existed was planned unbounded, so a missing field reads as `None`.
    #[serde(default)]
    pub buffer: Option<u32>,
}

impl Hardware {
    /// The default input buffer: the wormhole model's (Chittor ch.5), so `compare` sets the plan
    /// and the dynamic models side by side with the same storage.
    pub const BUFFER: Option<u32> = Some(2);

    /// How the `buffer` setting writes `buffer`.
    pub fn buffer_name(buffer: Option<u32>) -> String {
        buffer.map_or_else(|| "unbounded".to_string(), |b| b.to_string())
    }
}

impl Default for Hardware {
    fn default() -> Self {
        Hardware {
            ports: 1,
            hop_latency: 0,
            setup: 0,
            buffer: Hardware::BUFFER,
        }
    }
}

impl Hardware {
    /// How many messages may hold `r` in one cycle.
    pub fn capacity(&self, r: Resource) -> u32 {
        match r {
            Resource::Link { .. } => 1,
            Resource::Inject(_) | Resource::Eject(_) => self.ports.max(1),
        }
    }
}

/// Which scheduler to run (`--schedule`).
pub use ttdl_ir::config::ScheduleMethod as Method;

/// A deadline the scheduler could not meet and moved (Minsky §4.2.4 "Propagation of results").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relaxation {
    pub msg: MsgId,
    /// The deadline the program's ideal timing asked for.
    pub deadline: u64,
    /// How far late work upstream had already pushed it (its release's delay): the deadline it
    /// would have had to meet is `deadline + upstream`.
    pub upstream: u64,
    /// The deadline the schedule meets instead (the message's arrival).
    pub new_deadline: u64,
    /// Resources on which the message waited, with the messages that held them meanwhile.
    pub blamed: Vec<Blame>,
    /// True when the message was late only because it was released late (a relaxed message
    /// upstream delayed its sender), not because of contention on its own route.
    pub knock_on: bool,
}

impl Relaxation {
    /// Why the message is late, for people and the JSON `cause`.
    pub fn cause(&self) -> String {
        if !self.blamed.is_empty() {
            let what: Vec<String> = self
                .blamed
                .iter()
                .map(|b| {
                    // Nobody held it: the message waited there for the hops after it (a clear
                    // path, or room in a switch buffer further on).
                    if b.holders.is_empty() && !b.more_holders {
                        return format!(
                            "waited {} on {} (no message held it: the hops after it were not free)",
                            b.waited, b.resource
                        );
                    }
                    let mut held: Vec<String> =
                        b.holders.iter().take(6).map(|h| h.to_string()).collect();
                    if b.more_holders || b.holders.len() > 6 {
                        held.push("…".to_string());
                    }
                    format!(
                        "waited {} on {} (held by {})",
                        b.waited,
                        b.resource,
                        held.join(",")
                    )
                })
                .collect();
            format!("waited itself: {}", what.join("; "))
        } else if self.upstream > 0 {
            format!(
                "shifted by a late message upstream: released {} cycles late, delivered within its shifted window",
                self.upstream
            )
        } else {
            "its window is shorter than its route allows".to_string()
        }
    }
}

/// One resource a late message waited for, and who held it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blame {
    pub resource: Resource,
    pub waited: u64,
    /// The messages that held it meanwhile — the last [`feedback::HOLDERS_KEPT`] of them.
    pub holders: Vec<MsgId>,
    /// True when more messages held it before those (a long backlog).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub more_holders: bool,
}

/// Sizes and times of the linear programs solved (for reports and benchmarks).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LpStats {
    pub subsets: usize,
    pub intervals: usize,
    pub programs: usize,
    pub variables: usize,
    pub constraints: usize,
    pub largest_variables: usize,
    pub solve_ms: f64,
    /// Words the allocation could fit in no interval of their window (they are sent late).
    pub late_words: u64,
    /// Fragments whose LP time slot had to be moved because rounding made them collide.
    pub repaired: usize,
}

/// A verified schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Which scheduler produced it (`lp` or `exact`).
    pub method: Method,
    pub hardware: Hardware,
    /// Every fragment on every resource, sorted by (msg, start, resource).
    pub holds: Vec<Hold>,
    /// Per message: the cycle its sender released it against this schedule (≥ the ideal release
    /// when an upstream message was late; for fixed windows, the release shifted past the
    /// previous phase).
    pub released: Vec<u64>,
    /// Per message: the cycle its first word left the source (first inject).
    pub sent: Vec<u64>,
    /// Per message: the cycle after its last word was ejected (at the last destination).
    pub arrival: Vec<u64>,
    /// Per message: the deadline the schedule meets: the ideal one moved by as much as the
    /// message's release was delayed upstream, or its arrival when it had to be relaxed.
    pub deadline: Vec<u64>,
    /// Per task: the cycle its program ends when it runs against this schedule.
    pub task_finish: Vec<u64>,
    /// Largest task finish or message arrival.
    pub makespan: u64,
    /// Deadlines that had to move, sorted by message.
    pub relaxed: Vec<Relaxation>,
    /// Present when the LP produced it.
    pub lp: Option<LpStats>,
    /// The routes the exact scheduler chose when it moved messages off the routing it was given
    /// ([`Problem::choose_routes`]): the plan's routing from then on, which the verifier, the
    /// switch programs and the replay use. `None` when every message kept its route. Not
    /// written: a plan keeps its routing beside its schedule.
    #[serde(skip)]
    pub routes: Option<Routing>,
    /// A makespan no schedule on these routes beats, proven by the time-indexed MILP
    /// ([`milp`], `best` and `milp` on small programs with HiGHS); `None` when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimum_bound: Option<u64>,
    /// The words waiting at switch inputs, as the verifier measured them on these holds
    /// ([`buffers::usage_of`]); empty until verified, and to be emptied by whoever changes the
    /// holds of a verified schedule.
    #[serde(skip)]
    pub buffers: buffers::Measured,
}

/// What is known of how far a schedule is from the best makespan on its routes (SPEC §4
/// `optimal`, `optimality_gap`): its makespan meets the lower bound ([`lower_bound`]) or the
/// MILP's bound ([`Schedule::optimum_bound`]), or the MILP's bound says how far it may be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Optimality {
    /// The best bound known.
    pub bound: u64,
    pub makespan: u64,
}

impl Optimality {
    /// `None` when nothing is known: the makespan is above the lower bound and no MILP ran.
    pub fn of(s: &Schedule, lower_bound: u64) -> Option<Optimality> {
        let bound = s.optimum_bound.unwrap_or(0).max(lower_bound);
        (s.optimum_bound.is_some() || s.makespan <= bound).then_some(Optimality {
            bound,
            makespan: s.makespan,
        })
    }

    pub fn optimal(&self) -> bool {
        self.makespan <= self.bound
    }

    /// How far the makespan may be above the optimum, as a fraction of the bound.
    pub fn gap(&self) -> f64 {
        if self.optimal() {
            0.0
        } else if self.bound == 0 {
            f64::INFINITY
        } else {
            (self.makespan - self.bound) as f64 / self.bound as f64
        }
    }

    /// `optimal`, or `within 4.3% of optimal` (rounded up, never understating the gap).
    pub fn describe(&self) -> String {
        if self.optimal() {
            "optimal".into()
        } else {
            format!(
                "within {:.1}% of optimal",
                (self.gap() * 1000.0).ceil() / 10.0
            )
        }
    }
}

impl Schedule {
    pub fn deadlines_met(&self) -> bool {
        self.relaxed.is_empty()
    }

    /// Holds of one message, in schedule order.
    pub fn holds_of(&self, msg: MsgId) -> impl Iterator<Item = &Hold> {
        self.holds.iter().filter(move |h| h.msg() == msg)
    }
}

/// Why no schedule could be given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The input is inconsistent (a route that does not fit the network, a message nobody sends).
    #[error("{0}")]
    Input(String),
    /// The task programs wait on each other forever.
    #[error("the task programs cannot finish: {0}")]
    Deadlock(String),
    /// A scheduler produced something the verifier rejects: a bug, never printed as a schedule.
    #[error("internal error: the {method} scheduler produced an invalid schedule: {why}")]
    Invalid { method: &'static str, why: String },
    /// The LP solver failed.
    #[error("the linear program could not be solved: {0}")]
    Lp(String),
    /// The program is beyond what the chosen scheduler can take in reasonable time.
    #[error("{0}")]
    TooLarge(String),
    /// The front end asked to stop (Ctrl-C) before the schedule was done.
    #[error("interrupted")]
    Interrupted,
}

/// The resources a message holds, parents before children: inject at the source node, the links
/// of its path (or tree), eject at every destination node. A message between two tasks of one node
/// still passes the switch (DownFifo → UpFifo), as on the NuMesh.
pub fn steps_of(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    msg: MsgId,
) -> Result<Vec<Step>, ScheduleError> {
    let m = traffic
        .messages
        .get(msg)
        .ok_or_else(|| ScheduleError::Input(format!("message {msg} does not exist")))?;
    let node = |t: TaskId| -> Result<NodeId, ScheduleError> {
        placement.node_of.get(t).copied().ok_or_else(|| {
            ScheduleError::Input(format!("task {t} (of message {msg}) has no placement"))
        })
    };
    let src = node(m.src)?;
    let mut dsts: Vec<NodeId> = m.dst.iter().map(|&t| node(t)).collect::<Result<_, _>>()?;
    dsts.sort_unstable();
    dsts.dedup();
    if dsts.is_empty() {
        return Err(ScheduleError::Input(format!(
            "message {msg} has no destination"
        )));
    }
    let route = routing
        .routes
        .get(msg)
        .ok_or_else(|| ScheduleError::Input(format!("message {msg} has no route")))?;
    let check_link = |a: NodeId, b: NodeId| -> Result<(), ScheduleError> {
        network.link_between(a, b).map(|_| ()).ok_or_else(|| {
            ScheduleError::Input(format!(
                "the route of message {msg} uses {a}->{b}, which is not a link of {}",
                network.spec
            ))
        })
    };
    // Sized once (an injection, a step per link, an ejection per destination): grown by
    // doubling, the steps of a million routes were moved a dozen times each.
    let links = match route {
        Route::Path(nodes) => nodes.len().saturating_sub(1),
        Route::Tree(edges) => edges.len(),
    };
    let mut steps = Vec::with_capacity(1 + links + dsts.len());
    steps.push(Step::new(Resource::inject(src), None));
    match route {
        Route::Path(nodes) => {
            if nodes.first() != Some(&src) || nodes.last() != dsts.last() || dsts.len() != 1 {
                return Err(ScheduleError::Input(format!(
                    "the route of message {msg} does not lead from node {src} to node {:?}",
                    dsts
                )));
            }
            for w in nodes.windows(2) {
                check_link(w[0], w[1])?;
                steps.push(Step::new(Resource::link(w[0], w[1]), Some(steps.len() - 1)));
            }
            steps.push(Step::new(Resource::eject(dsts[0]), Some(steps.len() - 1)));
        }
        Route::Tree(edges) => {
            // Breadth-first from the root so parents come first; `into[n]` is the step entering n.
            let mut into: std::collections::BTreeMap<NodeId, usize> = Default::default();
            into.insert(src, 0);
            let mut pending: Vec<(NodeId, NodeId)> = edges.clone();
            while !pending.is_empty() {
                let before = pending.len();
                let mut rest = Vec::new();
                for (a, b) in pending {
                    match into.get(&a).copied() {
                        Some(p) if !into.contains_key(&b) => {
                            check_link(a, b)?;
                            steps.push(Step::new(Resource::link(a, b), Some(p)));
                            into.insert(b, steps.len() - 1);
                        }
                        Some(_) => {
                            return Err(ScheduleError::Input(format!(
                                "the multicast tree of message {msg} reaches node {b} twice"
                            )))
                        }
                        None => rest.push((a, b)),
                    }
                }
                if rest.len() == before {
                    return Err(ScheduleError::Input(format!(
                        "the multicast tree of message {msg} is not connected to its source node {src}"
                    )));
                }
                pending = rest;
            }
            for d in &dsts {
                let p = into.get(d).copied().ok_or_else(|| {
                    ScheduleError::Input(format!(
                        "the multicast tree of message {msg} does not reach node {d}"
                    ))
                })?;
                steps.push(Step::new(Resource::eject(*d), Some(p)));
            }
        }
    }
    // A large program keeps millions of these, so it keeps only what it uses (a tree that
    // failed to reach a destination never gets here).
    steps.shrink_to_fit();
    Ok(steps)
}

/// Everything a scheduler needs, gathered once.
pub struct Problem<'a> {
    pub traffic: &'a Traffic,
    pub network: &'a Network,
    pub placement: &'a Placement,
    pub routing: &'a Routing,
    pub hardware: Hardware,
    /// `steps[msg]`.
    pub steps: Vec<Vec<Step>>,
    /// May the exact scheduler move a message that would wait onto another of its minimal
    /// routes ([`choice`])? Off unless the caller adopts [`Schedule::routes`].
    pub choose_routes: bool,
}

impl<'a> Problem<'a> {
    pub fn new(
        traffic: &'a Traffic,
        network: &'a Network,
        placement: &'a Placement,
        routing: &'a Routing,
        hardware: Hardware,
    ) -> Result<Self, ScheduleError> {
        traffic
            .check_limits()
            .map_err(|e| ScheduleError::Input(e.to_string()))?;
        if hardware.ports > Limits::PORTS
            || hardware.hop_latency > Limits::HOP_LATENCY
            || hardware.setup > Limits::HOP_LATENCY
        {
            return Err(ScheduleError::Input(format!(
                "{} ports per node, {} cycles per switch and {} set-up cycles: at most {3} ports \
                 and {4} cycles are supported",
                hardware.ports,
                hardware.hop_latency,
                hardware.setup,
                Limits::PORTS,
                Limits::HOP_LATENCY
            )));
        }
        if placement.node_of.len() < traffic.tasks.len() {
            return Err(ScheduleError::Input(format!(
                "{} tasks but only {} placed",
                traffic.tasks.len(),
                placement.node_of.len()
            )));
        }
        if network.nodes() > Node32::MAX as usize {
            return Err(ScheduleError::Input(format!(
                "{} has {} nodes: at most 2^32 - 1 can be scheduled",
                network.spec,
                network.nodes()
            )));
        }
        if let Some(&n) = placement.node_of.iter().find(|&&n| n >= network.nodes()) {
            return Err(ScheduleError::Input(format!(
                "a task is placed on node {n}, but {} has {} nodes",
                network.spec,
                network.nodes()
            )));
        }
        let steps = (0..traffic.messages.len())
            .map(|m| steps_of(traffic, network, placement, routing, m))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Problem {
            traffic,
            network,
            placement,
            routing,
            hardware,
            steps,
            choose_routes: false,
        })
    }

    /// The same problem on other routes (those a schedule chose, [`Schedule::routes`]).
    pub fn rerouted<'b>(&self, routing: &'b Routing) -> Result<Problem<'b>, ScheduleError>
    where
        'a: 'b,
    {
        Problem::new(
            self.traffic,
            self.network,
            self.placement,
            routing,
            self.hardware,
        )
    }
}

/// Checks `s` against `problem`, or against the routes `s` chose when it chose some, and keeps
/// the words its switch inputs hold as measured ([`Schedule::buffers`]).
fn verify_on(problem: &Problem, s: &mut Schedule) -> Result<(), ScheduleError> {
    let invalid = |why: String| ScheduleError::Invalid {
        method: s.method.name(),
        why,
    };
    let usage = match &s.routes {
        Some(r) => {
            let p = problem.rerouted(r).map_err(|e| invalid(e.to_string()))?;
            verify::verify_measuring(&p, s)
        }
        None => verify::verify_measuring(problem, s),
    }
    .map_err(|why| invalid(why.to_string()))?;
    s.buffers = buffers::Measured(Some(usage));
    Ok(())
}

/// Schedules, checks and (when deadlines cannot all be met) relaxes: the one entry point.
///
/// Every answer goes through [`verify::verify`]; a scheduler bug surfaces as
/// [`ScheduleError::Invalid`], never as a printed schedule.
pub fn schedule(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    method: Method,
    hardware: Hardware,
) -> Result<Schedule, ScheduleError> {
    schedule_with_progress(
        traffic,
        network,
        placement,
        routing,
        method,
        hardware,
        lp::LpSolverKind::default(),
        &Progress::none(),
    )
}

/// [`schedule`] with the LP solver `lp_solver` (for `lp` and `best`), reporting to `progress`
/// and stopping with [`ScheduleError::Interrupted`] when it is cancelled.
#[allow(clippy::too_many_arguments)]
pub fn schedule_with_progress(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    method: Method,
    hardware: Hardware,
    lp_solver: lp::LpSolverKind,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    schedule_with_effort(
        traffic,
        network,
        placement,
        routing,
        method,
        hardware,
        lp_solver,
        &improve::Improve::default(),
        progress,
    )
}

/// [`schedule_with_progress`] with the exact scheduler's answer improved as `effort` says
/// ([`improve`]).
#[allow(clippy::too_many_arguments)]
pub fn schedule_with_effort(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    method: Method,
    hardware: Hardware,
    lp_solver: lp::LpSolverKind,
    effort: &improve::Improve,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let problem = Problem::new(traffic, network, placement, routing, hardware)?;
    schedule_problem(&problem, method, lp_solver, effort, progress)
}

/// [`schedule_with_progress`] letting the exact scheduler move messages that would wait onto
/// other minimal routes ([`Problem::choose_routes`]): the caller must adopt
/// [`Schedule::routes`] as the plan's routing when it is set.
#[allow(clippy::too_many_arguments)]
pub fn schedule_choosing_routes(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    method: Method,
    hardware: Hardware,
    lp_solver: lp::LpSolverKind,
    effort: &improve::Improve,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let mut problem = Problem::new(traffic, network, placement, routing, hardware)?;
    problem.choose_routes = true;
    schedule_problem(&problem, method, lp_solver, effort, progress)
}

fn schedule_problem(
    problem: &Problem,
    method: Method,
    lp_solver: lp::LpSolverKind,
    effort: &improve::Improve,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let hardware = problem.hardware;
    let exact =
        || -> Result<Schedule, ScheduleError> { improve::schedule(problem, effort, progress) };
    let solver = || lp::solver(lp_solver).map_err(ScheduleError::Input);
    let checked = |mut s: Schedule| -> Result<Schedule, ScheduleError> {
        progress.stage("verify", 1);
        if progress.is_cancelled() {
            return Err(ScheduleError::Interrupted);
        }
        verify_on(problem, &mut s)?;
        Ok(s)
    };
    match method {
        Method::Exact => checked(exact()?),
        Method::Milp => {
            let e = checked(exact()?)?;
            with_milp(problem, e, &milp_budget(effort, true), progress)
        }
        // The LP splits messages over intervals; a per-transfer set-up would be paid again for
        // every fragment, which its formulation does not count.
        Method::Lp if hardware.setup > 0 => Err(ScheduleError::Input(
            "the LP scheduler splits messages into fragments, each of which would pay the set-up \
             again: with --setup, use --schedule exact or best"
                .into(),
        )),
        Method::Best if hardware.setup > 0 => {
            let e = checked(exact()?)?;
            with_milp(problem, e, &milp_budget(effort, false), progress)
        }
        Method::Lp => {
            progress.stage("schedule (lp)", 1);
            checked(lp::schedule(problem, solver()?)?)
        }
        Method::Best => {
            let e = checked(exact()?)?;
            let phases = periodic::bounds(problem);
            // A schedule that meets every bound and deadline cannot be beaten: the LP is not run.
            let optimal = e.relaxed.is_empty()
                && e.makespan <= lower_bound(problem).0
                && periodic::analyze_with(problem, &e, &phases)
                    .is_none_or(|p| p.achieved <= p.lower_bound);
            // The LP (Minsky's method) does not beat the exact scheduler where it was measured:
            // on 100 random programs of 10–60 messages (`bench_milp`) it was equal on 11 and
            // longer on 89; on the 20 examples equal on 13, longer on 5 (an all-to-all: 210
            // cycles against 15), and past two minutes on 2. On large programs it costs seconds
            // and loses by far (an 8×8 all-to-all: 11 s, 2,770 cycles against 181). So `best`
            // runs it only when asked to work thoroughly, for the rare program where it helps.
            let lp_pays = matches!(
                effort.effort,
                improve::Effort::Thorough | improve::Effort::Seconds(_)
            );
            if optimal {
                return Ok(e);
            }
            if !lp_pays {
                return with_milp(problem, e, &milp_budget(effort, false), progress);
            }
            // An LP that fails to solve is not fatal when the exact answer exists.
            progress.stage("schedule (lp)", 1);
            let solver = solver()?;
            match lp::schedule(problem, solver).and_then(checked) {
                Ok(l) => {
                    let (pe, pl) = (
                        periodic::analyze_with(problem, &e, &phases),
                        periodic::analyze_with(problem, &l, &phases),
                    );
                    // Periods are compared only when both runs reached a steady state over
                    // enough iterations for it to be one.
                    let steady = [&pe, &pl].iter().all(|p| {
                        p.as_ref()
                            .is_none_or(|p| p.steady() && p.iterations >= PERIOD_JUDGED_FROM)
                    });
                    let chosen = if key(&l, &pl, steady) < key(&e, &pe, steady) {
                        l
                    } else {
                        e
                    };
                    with_milp(problem, chosen, &milp_budget(effort, false), progress)
                }
                Err(ScheduleError::Interrupted) => Err(ScheduleError::Interrupted),
                Err(_) => with_milp(problem, e, &milp_budget(effort, false), progress),
            }
        }
    }
}

/// How long the MILP may search: `None` when it does not run. `best` at the default effort
/// gives it a node limit (the same plan on every machine) with a time limit only as a safety
/// net; thorough effort or `milp` a minute; `--effort SECONDS` that many seconds.
#[cfg(feature = "highs")]
fn milp_budget(effort: &improve::Improve, asked: bool) -> Option<milp::Options> {
    let base = milp::Options::default();
    match effort.effort {
        improve::Effort::Quick if !asked => None,
        improve::Effort::Seconds(0) if !asked => None,
        improve::Effort::Seconds(s) if s > 0 => Some(milp::Options {
            time_limit: s as f64,
            node_limit: None,
            ..base
        }),
        improve::Effort::Thorough | improve::Effort::Seconds(_) | improve::Effort::Quick => {
            Some(milp::Options {
                time_limit: 60.0,
                node_limit: None,
                ..base
            })
        }
        improve::Effort::Default if asked => Some(milp::Options {
            time_limit: 60.0,
            node_limit: None,
            ..base
        }),
        improve::Effort::Default => Some(base),
    }
}

/// Without HiGHS the MILP never runs; `milp` says why.
#[cfg(not(feature = "highs"))]
fn milp_budget(_effort: &improve::Improve, asked: bool) -> Option<bool> {
    asked.then_some(true)
}

/// Runs the MILP on `s` (a verified schedule) within `budget`: keeps its plan when it is
/// better by `best`'s measure, and records the bound it proved. A MILP that cannot run or
/// fails leaves `s` as it was.
#[cfg(feature = "highs")]
fn with_milp(
    problem: &Problem,
    s: Schedule,
    budget: &Option<milp::Options>,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let Some(options) = budget else {
        return Ok(s);
    };
    if progress.is_cancelled() {
        return Err(ScheduleError::Interrupted);
    }
    progress.stage("schedule (milp)", 1);
    let proof = match milp::solve(problem, &s, options) {
        Ok(Some(p)) => p,
        Ok(None) | Err(_) => return Ok(s),
    };
    let mut out = match proof.plan {
        Some(mut p) if (p.makespan, p.relaxed.len()) < (s.makespan, s.relaxed.len()) => {
            p.method = Method::Milp;
            p
        }
        _ => s,
    };
    out.optimum_bound = Some(proof.bound);
    Ok(out)
}

#[cfg(not(feature = "highs"))]
fn with_milp(
    _problem: &Problem,
    s: Schedule,
    asked: &Option<bool>,
    _progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    match asked {
        Some(_) => Err(ScheduleError::Input(
            "the MILP scheduler needs HiGHS, which is not in this build of ttdl: rebuild with \
             `--features highs` (needs cmake), or use --schedule exact or best"
                .into(),
        )),
        None => Ok(s),
    }
}

/// The fewest iterations over which `best` ranks schedules by their period: over fewer, the
/// "period" is mostly the run's transient (a 3-frame run whose LP schedule is one cycle per
/// frame faster but 37 cycles longer and relaxes 44 deadlines is not the better plan).
pub const PERIOD_JUDGED_FROM: u64 = 8;

/// How `best` ranks schedules by the real objective: a repeating program by its steady-state
/// period (throughput is what a periodic real-time program needs, Minsky §5.2), then the
/// makespan; a program that does not repeat, or runs too few iterations for either schedule to
/// reach a steady state (or fewer than [`PERIOD_JUDGED_FROM`]), by its makespan. Ties go to
/// fewer relaxed deadlines.
fn key(s: &Schedule, period: &Option<periodic::PeriodReport>, steady: bool) -> (u64, u64, usize) {
    let p = match period {
        Some(p) if steady => p.achieved,
        _ => 0,
    };
    (p, s.makespan, s.relaxed.len())
}

/// A makespan no schedule can beat, and what sets it (SPEC §4 `lower_bound`, `lower_bound_by`):
/// see [`bounds::makespan`].
pub fn lower_bound(problem: &Problem) -> (u64, String) {
    match bounds::makespan(problem) {
        Ok(b) => (b.value, b.by),
        Err(_) => (
            problem.traffic.critical_path,
            format!("critical path ({} cycles)", problem.traffic.critical_path),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{Message, Op, Task};

    /// A large plan keeps one resource per hold and per route step (a hundred million of each
    /// for a million messages): their sizes are what its memory is made of.
    #[test]
    fn plan_rows_stay_small() {
        assert_eq!(std::mem::size_of::<Resource>(), 12);
        assert_eq!(std::mem::size_of::<Step>(), 12);
        assert_eq!(std::mem::size_of::<Hold>(), 20);
        assert_eq!(Resource::link(3, 4).node(), 3);
        assert_eq!(Resource::inject(5).node(), 5);
        assert_eq!(Resource::eject(6), Resource::Eject(6));
        assert_eq!(Resource::link(3, 4).ends(), Some((3, 4)));
        assert_eq!(Resource::eject(6).ends(), None);
        assert_eq!(Step::new(Resource::inject(0), None).parent(), None);
        assert_eq!(Step::new(Resource::eject(0), Some(7)).parent(), Some(7));
    }

    /// A late message's cause names who held what it waited on, or says that nobody did (it
    /// waited for the hops after it), rather than an empty list.
    #[test]
    fn causes_name_the_holders_or_say_there_were_none() {
        let late = |holders: Vec<MsgId>| Relaxation {
            msg: 3,
            deadline: 10,
            upstream: 0,
            new_deadline: 20,
            blamed: vec![Blame {
                resource: Resource::inject(4),
                waited: 8,
                holders,
                more_holders: false,
            }],
            knock_on: false,
        };
        assert_eq!(
            late(vec![1, 2]).cause(),
            "waited itself: waited 8 on inject@4 (held by 1,2)"
        );
        assert_eq!(
            late(vec![]).cause(),
            "waited itself: waited 8 on inject@4 (no message held it: the hops after it were not free)"
        );
    }

    /// The words waiting at switch inputs, kept as the verifier measured them, are what a
    /// fresh measure of the holds gives, with buffers bounded or not; and they are not part of
    /// what a schedule is equal to.
    #[test]
    fn verified_buffers_are_the_holds_usage() {
        let task = |id, ops| Task {
            id,
            name: format!("t{id}"),
            ops,
            ..Task::default()
        };
        let message = |id, src, size| Message {
            id,
            src,
            dst: vec![2].into(),
            size,
            deadline: 100,
            ..Message::default()
        };
        let traffic = Traffic {
            tasks: vec![
                task(0, vec![Op::Send(0)]),
                task(1, vec![Op::Send(1)]),
                task(2, vec![Op::Recv(0), Op::Recv(1)]),
            ],
            messages: vec![message(0, 0, 6), message(1, 1, 5)],
            ..Traffic::default()
        };
        let network = Network::build(&"mesh:3x1".parse().unwrap()).unwrap();
        let placement = Placement {
            node_of: vec![0, 1, 2],
        };
        let routing = Routing {
            routes: vec![
                crate::traffic::Route::Path(vec![0, 1, 2]),
                crate::traffic::Route::Path(vec![1, 2]),
            ],
        };
        for buffer in [None, Some(2), Some(0)] {
            let hw = Hardware {
                buffer,
                ..Hardware::default()
            };
            let s = schedule(&traffic, &network, &placement, &routing, Method::Exact, hw).unwrap();
            let problem = Problem::new(&traffic, &network, &placement, &routing, hw).unwrap();
            let fresh = buffers::usage(&problem, &s.holds);
            assert_eq!(s.buffers.0.as_ref(), Some(&fresh), "{buffer:?}");
            // Unbounded, the second message waits at switch 1 behind the first.
            assert_eq!(fresh.max, if buffer.is_none() { 5 } else { 0 });
            assert_eq!(buffers::usage_of(&problem, &s), fresh);
            let unmeasured = Schedule {
                buffers: Default::default(),
                ..s.clone()
            };
            assert_eq!(unmeasured, s);
            assert_eq!(buffers::usage_of(&problem, &unmeasured), fresh);
        }
    }

    /// A message of 2⁴⁰ words is refused up front, not scheduled word by word until memory runs
    /// out; the dynamic models refuse it too.
    #[test]
    fn enormous_messages_are_an_input_error() {
        let task = |id, op| Task {
            id,
            name: format!("t{id}"),
            ops: vec![op],
            ..Task::default()
        };
        let traffic = Traffic {
            tasks: vec![task(0, Op::Send(0)), task(1, Op::Recv(0))],
            messages: vec![Message {
                id: 0,
                src: 0,
                dst: vec![1].into(),
                size: 1 << 40,
                deadline: 1 << 40,
                ..Message::default()
            }],
            ..Traffic::default()
        };
        assert!(traffic.total_words() > Limits::WORDS);
        let mut small = traffic.clone();
        small.messages[0].size = 4;
        small.messages[0].deadline = 100;
        let network = Network::build(&"mesh:2x1".parse().unwrap()).unwrap();
        let placement = Placement {
            node_of: vec![0, 1],
        };
        let routing = Routing {
            routes: vec![crate::traffic::Route::Path(vec![0, 1])],
        };
        let hw = Hardware::default();
        for hw in [
            Hardware {
                ports: u32::MAX,
                ..hw
            },
            Hardware {
                hop_latency: u64::MAX,
                ..hw
            },
        ] {
            let e = schedule(&small, &network, &placement, &routing, Method::Exact, hw);
            assert!(matches!(e, Err(ScheduleError::Input(_))), "{e:?}");
        }
        assert!(schedule(&small, &network, &placement, &routing, Method::Exact, hw).is_ok());
        let e = schedule(&traffic, &network, &placement, &routing, Method::Best, hw).unwrap_err();
        assert!(
            matches!(&e, ScheduleError::Input(m) if m.contains("words")),
            "{e}"
        );
        let ctx =
            crate::sim::registry::ModelContext::new(&network).with_program(&traffic, &placement);
        let mut model = crate::sim::registry::build("wormhole", &ctx).unwrap();
        let opts = crate::sim::drive::program::SimOptions::default();
        assert!(crate::sim::drive::program::simulate(
            &traffic,
            &placement,
            &network,
            model.as_mut(),
            &opts
        )
        .is_err());
    }
}
