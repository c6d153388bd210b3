//! Compiled communication on an optical TDM network (Yuan ch.5): the connections a program uses
//! are known at compile time, so they are scheduled off line into configurations — sets of
//! link-, source- and destination-disjoint lightpaths sharing one TDM slot — and the network is
//! reconfigured only between communication phases. At run time no path is reserved: a packet
//! waits for its connection's slot and moves one word per frame (path multiplexing, Yuan §2.1).
//!
//! Phases follow the program's `synchronize` phases. With a phase capacity `d`, consecutive
//! program phases are merged while the union still fits in `d` configurations, walking backward
//! as Yuan's communication phase analysis does (Fig 5.15), and a pattern that alone needs more than
//! `d` is cut into several phases of at most `d` configurations. The network switches to the next
//! phase that has packets waiting once the current phase has nothing left to send, and is dark for
//! the reconfiguration cost meanwhile.
//!
//! Packets whose (source, destination) no phase planned for (e.g. synthetic traffic) are given
//! a connection at run time in an extra phase, first fit into its configurations in arrival
//! order: Yuan's greedy, which he notes is what a dynamic scheduler must do (§5.4).

pub mod patterns;
pub mod sched;

use std::collections::{BTreeMap, VecDeque};

use crate::sim::aapc::AapcPhases;
use crate::sim::options::{
    choice, choice_enum, int, text, Choice, ModelError, ModelOptions, OptionSpec,
};

choice_enum! {
    /// What the compiler plans without a program (synthetic traffic).
    pub enum Unplanned {
        /// All-to-all, as ordered AAPC phases (Yuan §5.3).
        Aapc = "aapc",
        /// Nothing: connections are set up in arrival order.
        Runtime = "runtime",
    }
}
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};
use crate::topology::{LinkId, Network, NodeId};
use crate::traffic::{MsgId, Placement, Route, Routing, TaskId, Traffic};
pub use sched::{Algorithm, Configurations, Connection};

/// An invalid parameter or an input the model cannot plan for, with a message for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("compiled model: {0}")]
pub struct CompiledError(pub String);

/// Parameters of the compiled-communication model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledParams {
    /// Connection scheduler. Yuan uses `combined` (Ch.6); the default `best` also tries the
    /// dynamic coloring and keeps the fewest configurations.
    pub algorithm: Algorithm,
    /// Phase capacity: the largest multiplexing degree a phase may use (Yuan Ch.6 uses 10 for
    /// the HPF programs); `None` gives every program phase the degree it needs.
    pub capacity: Option<usize>,
    /// Cycles the network is dark while it loads a phase's configurations, the first phase's
    /// included. The thesis gives no figure; 3 is inferred from Table 6.2 (GS: d = 2 × 64
    /// packets = 128 slots after one load, printed 131).
    pub reconfig: u64,
}

impl Default for CompiledParams {
    fn default() -> Self {
        CompiledParams {
            algorithm: Algorithm::Best,
            capacity: None,
            reconfig: 3,
        }
    }
}

impl CompiledParams {
    /// Sets one option by name, as given on the command line (`algorithm=coloring`,
    /// `capacity=10`, `reconfig=0`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), CompiledError> {
        let num = |what: &str| {
            value.parse::<u64>().map_err(|_| {
                CompiledError(format!(
                    "{what} must be a non-negative integer, not `{value}`"
                ))
            })
        };
        match key {
            "algorithm" | "scheduler" => {
                self.algorithm = value.parse()?;
            }
            "capacity" | "d" => {
                let c = num("capacity")?;
                if c == 0 {
                    return Err(CompiledError(
                        "capacity must be at least 1 configuration".into(),
                    ));
                }
                self.capacity = Some(c as usize);
            }
            "reconfig" => self.reconfig = num("reconfig")?,
            other => {
                return Err(CompiledError(format!(
                    "unknown option `{other}`: expected algorithm, capacity or reconfig"
                )))
            }
        }
        Ok(())
    }
}

/// Options for the model registry.
pub const OPTIONS: &[OptionSpec] = &[
    choice(
        "algorithm",
        "best",
        &[
            "best",
            "combined",
            "greedy",
            "greedy-random",
            "coloring",
            "aapc",
            "coloring-dynamic",
            "coloring-static",
        ],
        "how connections are split into configurations (Yuan §5.4): greedy in source order or in a seeded random order (--seed), coloring re-sorting once per round, after every pick (coloring-dynamic) or never (coloring-static), ordered AAPC, combined (the better of the static coloring and AAPC); best keeps the fewest",
    ),
    text(
        "capacity",
        "none",
        "configurations a switch can hold at once (none: unlimited)",
    ),
    int(
        "reconfig",
        "3",
        0,
        1 << 32,
        "cycles to load the next configuration",
    ),
    choice(
        "unplanned",
        "aapc",
        Unplanned::WORDS,
        "without a program: plan all-to-all, or set connections up at run time",
    ),
];

/// Builds the model for `simulate`/`compare`. With a program, its messages are the connections,
/// routed dimension-ordered with odd–even ties (Yuan Ch.6). Without one (synthetic traffic) the
/// compiler knows nothing, and plans what Yuan's compiler falls back to for an unknown pattern,
/// all-to-all (ordered AAPC, Yuan §5.3), or with `unplanned=runtime` nothing, so connections are
/// set up in arrival order.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let algorithm = match opts
        .choice("algorithm")?
        .parse()
        .map_err(|e: CompiledError| ModelError(e.0))?
    {
        Algorithm::GreedyRandom { .. } => Algorithm::GreedyRandom { seed: ctx.seed },
        a => a,
    };
    let mut params = CompiledParams {
        algorithm,
        reconfig: opts.int("reconfig")?,
        ..CompiledParams::default()
    };
    let cap = opts.text("capacity")?;
    if cap != "none" {
        params
            .set("capacity", cap)
            .map_err(|e| ModelError(e.to_string()))?;
    }
    let unplanned: Unplanned = opts.chosen("unplanned")?;
    let net = ctx.network;
    let model = match (ctx.traffic, ctx.placement) {
        (Some(t), Some(p)) => CompiledModel::for_traffic(net, t, p, None, params),
        _ if unplanned == Unplanned::Aapc && AapcPhases::for_network(net).is_some() => {
            let pairs = patterns::all_to_all(net.nodes());
            let conns = patterns::connections(net, &pairs).map_err(ModelError)?;
            let plan = CompiledPlan::from_phases(
                net,
                vec![("all-to-all".to_string(), conns)],
                &CompiledParams {
                    algorithm: Algorithm::OrderedAapc,
                    ..params.clone()
                },
            )?;
            Ok(CompiledModel::new(net, plan, params))
        }
        _ => Ok(CompiledModel::new(net, CompiledPlan::default(), params)),
    };
    Ok(Box::new(model.map_err(|e| ModelError(e.to_string()))?))
}

impl From<CompiledError> for ModelError {
    fn from(e: CompiledError) -> Self {
        ModelError(e.to_string())
    }
}

/// One phase of the plan: its connections and their configurations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedPhase {
    /// The program phases it covers, for people (`0`, `1+2`, `3 (part 2/3)`).
    pub name: String,
    pub conns: Vec<Connection>,
    pub configs: Configurations,
}

impl PlannedPhase {
    pub fn degree(&self) -> usize {
        self.configs.degree()
    }
}

/// The compile-time plan: phases in program order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledPlan {
    pub phases: Vec<PlannedPhase>,
    /// The program phase of every message (by message id), when planned from a program: lets
    /// the model put a packet in its own phase when a pair recurs in several phases.
    pub message_phase: Vec<usize>,
    /// For each plan phase, the program phases it covers.
    pub covers: Vec<Vec<usize>>,
}

impl CompiledPlan {
    /// Plans a program: every message becomes a connection (one per destination of a multicast)
    /// along its route, grouped by the message's phase. Messages between tasks on one node need
    /// no connection.
    pub fn from_traffic(
        net: &Network,
        traffic: &Traffic,
        placement: &Placement,
        routing: Option<&Routing>,
        params: &CompiledParams,
    ) -> Result<CompiledPlan, CompiledError> {
        let node = |t: usize| {
            placement
                .node_of
                .get(t)
                .copied()
                .ok_or_else(|| CompiledError(format!("task {t} has no node in the placement")))
        };
        let mut by_phase: BTreeMap<usize, Vec<Connection>> = BTreeMap::new();
        for m in &traffic.messages {
            let src = node(m.src)?;
            for &t in &m.dst {
                let dst = node(t)?;
                if src == dst {
                    continue;
                }
                let links = match routing.and_then(|r| r.routes.get(m.id)) {
                    Some(route) => route_links(net, route, src, dst).map_err(|e| {
                        CompiledError(format!("message {} ({} → {}): {e}", m.id, m.src, t))
                    })?,
                    None => patterns::route(net, src, dst).map_err(CompiledError)?,
                };
                let list = by_phase.entry(m.phase).or_default();
                if !list.iter().any(|c| c.src == src && c.dst == dst) {
                    list.push(Connection { src, dst, links });
                }
            }
        }
        let program: Vec<(String, Vec<Connection>)> = by_phase
            .into_iter()
            .map(|(p, conns)| (p.to_string(), conns))
            .collect();
        let mut plan = CompiledPlan::from_phases(net, program, params)?;
        plan.message_phase = traffic.messages.iter().map(|m| m.phase).collect();
        Ok(plan)
    }

    /// Plans named phases of connections given directly.
    pub fn from_phases(
        net: &Network,
        program: Vec<(String, Vec<Connection>)>,
        params: &CompiledParams,
    ) -> Result<CompiledPlan, CompiledError> {
        for (_, conns) in &program {
            for c in conns {
                check_connection(net, c)?;
            }
        }
        let aapc = needs_aapc(params.algorithm)
            .then(|| AapcPhases::for_network(net))
            .flatten();
        let run = |conns: &[Connection]| sched::schedule(conns, params.algorithm, aapc.as_ref());
        let program: Vec<(String, Vec<Connection>)> =
            program.into_iter().filter(|(_, c)| !c.is_empty()).collect();
        let mut phases = Vec::new();
        let mut covers = Vec::new();
        match params.capacity {
            None => {
                for (name, conns) in program {
                    let configs = run(&conns)?;
                    covers.push(phase_ids(&name));
                    phases.push(PlannedPhase {
                        name,
                        conns,
                        configs,
                    });
                }
            }
            Some(cap) => {
                // Yuan Fig 5.15 on a straight-line program: walk backward, accumulating
                // patterns while the union fits in `cap` configurations.
                let mut groups: Vec<(Vec<String>, Vec<Connection>, Configurations)> = Vec::new();
                let mut current: Option<(Vec<String>, Vec<Connection>, Configurations)> = None;
                for (name, conns) in program.into_iter().rev() {
                    if let Some((names, acc, cfg)) = current.take() {
                        let mut union = conns.clone();
                        for c in &acc {
                            if !union.iter().any(|u| u.src == c.src && u.dst == c.dst) {
                                union.push(c.clone());
                            }
                        }
                        let merged = run(&union)?;
                        if merged.degree() <= cap {
                            let mut names = names;
                            names.insert(0, name);
                            current = Some((names, union, merged));
                            continue;
                        }
                        groups.push((names, acc, cfg));
                    }
                    let cfg = run(&conns)?;
                    current = Some((vec![name], conns, cfg));
                }
                groups.extend(current);
                groups.reverse();
                for (names, conns, configs) in groups {
                    let ids: Vec<usize> = names.iter().flat_map(|n| phase_ids(n)).collect();
                    for part in split(names.join("+"), conns, configs, cap) {
                        covers.push(ids.clone());
                        phases.push(part);
                    }
                }
            }
        }
        Ok(CompiledPlan {
            phases,
            message_phase: Vec::new(),
            covers,
        })
    }

    /// The largest multiplexing degree over the phases.
    pub fn degree(&self) -> usize {
        self.phases.iter().map(|p| p.degree()).max().unwrap_or(0)
    }
}

/// Program phase ids named by a phase name (program phases are named by their id).
fn phase_ids(name: &str) -> Vec<usize> {
    name.parse::<usize>().into_iter().collect()
}

fn needs_aapc(a: Algorithm) -> bool {
    matches!(
        a,
        Algorithm::OrderedAapc | Algorithm::Combined | Algorithm::Best
    )
}

/// Cuts a phase needing more than `cap` configurations into consecutive phases of at most `cap`.
fn split(
    name: String,
    conns: Vec<Connection>,
    configs: Configurations,
    cap: usize,
) -> Vec<PlannedPhase> {
    if configs.degree() <= cap {
        return vec![PlannedPhase {
            name,
            conns,
            configs,
        }];
    }
    let parts = configs.degree().div_ceil(cap);
    configs
        .configs
        .chunks(cap)
        .enumerate()
        .map(|(i, chunk)| {
            let mut part_conns = Vec::new();
            let mut part_cfgs = Vec::new();
            for cfg in chunk {
                let mut ids = Vec::new();
                for &c in cfg {
                    ids.push(part_conns.len());
                    part_conns.push(conns[c].clone());
                }
                part_cfgs.push(ids);
            }
            PlannedPhase {
                name: format!("{name} (part {}/{parts})", i + 1),
                conns: part_conns,
                configs: Configurations { configs: part_cfgs },
            }
        })
        .collect()
}

fn check_connection(net: &Network, c: &Connection) -> Result<(), CompiledError> {
    let mut at = c.src;
    for &l in &c.links {
        let link = net
            .links
            .get(l)
            .ok_or_else(|| CompiledError(format!("link {l} does not exist in {}", net.spec)))?;
        if link.from != at {
            return Err(CompiledError(format!(
                "the route of {} → {} is not a path: link {l} leaves node {}, not node {at}",
                c.src, c.dst, link.from
            )));
        }
        at = link.to;
    }
    if at != c.dst || c.src == c.dst {
        return Err(CompiledError(format!(
            "the route of {} → {} ends at node {at}",
            c.src, c.dst
        )));
    }
    Ok(())
}

/// The links of a routed message from `src` to `dst` (for a tree, the branch to `dst`).
fn route_links(
    net: &Network,
    route: &Route,
    src: NodeId,
    dst: NodeId,
) -> Result<Vec<LinkId>, String> {
    let nodes: Vec<NodeId> = match route {
        Route::Path(nodes) => nodes.clone(),
        Route::Tree(edges) => {
            let mut path = vec![dst];
            let mut at = dst;
            while at != src {
                let &(from, _) = edges
                    .iter()
                    .find(|&&(_, to)| to == at)
                    .ok_or_else(|| format!("the multicast tree does not reach node {dst}"))?;
                path.push(from);
                at = from;
                if path.len() > edges.len() + 1 {
                    return Err("the multicast tree has a cycle".into());
                }
            }
            path.reverse();
            path
        }
    };
    if nodes.first() != Some(&src) || nodes.last() != Some(&dst) {
        return Err(format!(
            "the route does not run from node {src} to node {dst}"
        ));
    }
    nodes
        .windows(2)
        .map(|w| {
            net.link_between(w[0], w[1])
                .ok_or_else(|| format!("nodes {} and {} are not adjacent", w[0], w[1]))
        })
        .collect()
}

/// A packet waiting on, or moving over, its connection.
#[derive(Clone, Debug)]
struct InFlight {
    id: u64,
    remaining: u64,
}

/// Run-time state of one phase.
#[derive(Clone, Debug, Default)]
struct PhaseState {
    conns: Vec<Connection>,
    /// Connection indices per configuration (= per slot of the frame).
    configs: Vec<Vec<usize>>,
    /// Resources each configuration holds, for run-time first fit (only the extra phase).
    used: Vec<std::collections::BTreeSet<(u8, usize)>>,
    queues: Vec<VecDeque<InFlight>>,
    /// Configuration of each connection.
    config_of: Vec<usize>,
    /// Per configuration: connections with a non-empty queue.
    busy: Vec<usize>,
    /// Packets queued in this phase.
    waiting: usize,
}

impl PhaseState {
    fn new(conns: Vec<Connection>, configs: Vec<Vec<usize>>) -> PhaseState {
        let mut config_of = vec![0; conns.len()];
        for (k, cfg) in configs.iter().enumerate() {
            for &c in cfg {
                config_of[c] = k;
            }
        }
        PhaseState {
            queues: vec![VecDeque::new(); conns.len()],
            busy: vec![0; configs.len()],
            conns,
            configs,
            used: Vec::new(),
            config_of,
            waiting: 0,
        }
    }

    fn degree(&self) -> usize {
        self.configs.len().max(1)
    }

    fn push(&mut self, c: usize, p: InFlight) {
        if self.queues[c].is_empty() {
            self.busy[self.config_of[c]] += 1;
        }
        self.queues[c].push_back(p);
        self.waiting += 1;
    }

    /// First-fit insertion of a connection discovered at run time (the extra phase only).
    fn insert(&mut self, conn: Connection) -> usize {
        let res: Vec<(u8, usize)> = conn
            .links
            .iter()
            .map(|&l| (0u8, l))
            .chain([(1, conn.src), (2, conn.dst)])
            .collect();
        let k = match self
            .used
            .iter()
            .position(|u| res.iter().all(|r| !u.contains(r)))
        {
            Some(k) => k,
            None => {
                self.used.push(Default::default());
                self.configs.push(Vec::new());
                self.busy.push(0);
                self.used.len() - 1
            }
        };
        self.used[k].extend(res);
        let c = self.conns.len();
        self.conns.push(conn);
        self.configs[k].push(c);
        self.config_of.push(k);
        self.queues.push(VecDeque::new());
        c
    }
}

/// The compiled-communication model (`NetworkModel`).
#[derive(Clone, Debug)]
pub struct CompiledModel {
    net: Network,
    params: CompiledParams,
    planned_degree: usize,
    planned_phases: usize,
    phases: Vec<PhaseState>,
    /// (src, dst) → every (phase, connection) that serves it, in phase order.
    lookup: BTreeMap<(NodeId, NodeId), Vec<(usize, usize)>>,
    /// Index of the run-time phase for unplanned connections, once created.
    extra: Option<usize>,
    /// Program phase of each message, and the plan phases covering each program phase.
    message_phase: Vec<usize>,
    covers: Vec<Vec<usize>>,
    /// Message of the packet being injected (set by `inject_for`).
    injecting: Option<MsgId>,
    active: usize,
    /// Whether the active phase's configurations are loaded: none is before the first packet,
    /// so the first phase pays its reconfiguration like every later one.
    loaded: bool,
    /// Cycle at which the active phase's frame starts (after its reconfiguration).
    start: u64,
    /// Same-node packets: (delivery cycle, id).
    local: Vec<(u64, u64)>,
    link_busy: Vec<u64>,
    /// Reconfigurations performed so far.
    pub reconfigurations: u64,
    /// Connections set up at run time because no phase planned them.
    pub unplanned: u64,
}

impl CompiledModel {
    /// A model executing `plan` on `net`.
    pub fn new(net: &Network, plan: CompiledPlan, params: CompiledParams) -> CompiledModel {
        let planned_degree = plan.degree();
        let planned_phases = plan.phases.len();
        let message_phase = plan.message_phase.clone();
        let covers = plan.covers.clone();
        let mut lookup: BTreeMap<(NodeId, NodeId), Vec<(usize, usize)>> = BTreeMap::new();
        let mut phases = Vec::new();
        for (p, ph) in plan.phases.into_iter().enumerate() {
            for (c, conn) in ph.conns.iter().enumerate() {
                lookup.entry((conn.src, conn.dst)).or_default().push((p, c));
            }
            phases.push(PhaseState::new(ph.conns, ph.configs.configs));
        }
        CompiledModel {
            link_busy: vec![0; net.links.len()],
            net: net.clone(),
            params,
            planned_degree,
            planned_phases,
            phases,
            lookup,
            extra: None,
            message_phase,
            covers,
            injecting: None,
            active: 0,
            loaded: false,
            start: 0,
            local: Vec::new(),
            reconfigurations: 0,
            unplanned: 0,
        }
    }

    /// Plans and builds the model for a program in one go.
    pub fn for_traffic(
        net: &Network,
        traffic: &Traffic,
        placement: &Placement,
        routing: Option<&Routing>,
        params: CompiledParams,
    ) -> Result<CompiledModel, CompiledError> {
        let plan = CompiledPlan::from_traffic(net, traffic, placement, routing, &params)?;
        Ok(CompiledModel::new(net, plan, params))
    }

    /// Multiplexing degree of every phase, as it stands now (the run-time phase last).
    pub fn degrees(&self) -> Vec<usize> {
        self.phases.iter().map(|p| p.configs.len()).collect()
    }

    /// The phase and connection that will carry a packet from `src` to `dst`.
    fn place(&mut self, src: NodeId, dst: NodeId) -> Option<(usize, usize)> {
        let n = self.phases.len();
        if let Some(cands) = self.lookup.get(&(src, dst)) {
            // The plan phase of the message's own program phase when known; otherwise the active
            // phase if it serves the pair, else the next one in program order.
            let own = self
                .injecting
                .and_then(|m| self.message_phase.get(m))
                .and_then(|&pp| {
                    cands
                        .iter()
                        .copied()
                        .find(|&(p, _)| self.covers.get(p).is_some_and(|c| c.contains(&pp)))
                });
            return own.or_else(|| {
                cands
                    .iter()
                    .copied()
                    .min_by_key(|&(p, _)| (p + n - self.active) % n)
            });
        }
        let links = patterns::route(&self.net, src, dst).ok()?;
        let x = match self.extra {
            Some(x) => x,
            None => {
                self.phases.push(PhaseState::default());
                self.extra = Some(self.phases.len() - 1);
                self.phases.len() - 1
            }
        };
        self.unplanned += 1;
        let c = self.phases[x].insert(Connection { src, dst, links });
        self.lookup.insert((src, dst), vec![(x, c)]);
        Some((x, c))
    }

    /// The next phase after the active one (cyclically) with packets waiting.
    fn next_waiting(&self) -> Option<usize> {
        let n = self.phases.len();
        (1..n)
            .map(|o| (self.active + o) % n)
            .find(|&p| self.phases[p].waiting > 0)
    }

    /// Cycles from `now` until the active phase serves a configuration with packets waiting.
    fn next_slot(&self, now: u64) -> Option<u64> {
        let ph = self.phases.get(self.active)?;
        if ph.waiting == 0 {
            return None;
        }
        let at = now.max(self.start);
        let d = ph.degree() as u64;
        let slot = (at - self.start) % d;
        (0..d)
            .find(|&o| {
                ph.busy
                    .get(((slot + o) % d) as usize)
                    .is_some_and(|&b| b > 0)
            })
            .map(|o| at + o)
    }
}

impl NetworkModel for CompiledModel {
    fn name(&self) -> String {
        let cap = match self.params.capacity {
            Some(c) => format!(" capacity={c}"),
            None => String::new(),
        };
        format!(
            "compiled {} d={} phases={}{cap}",
            self.params.algorithm, self.planned_degree, self.planned_phases
        )
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        if packet.src == packet.dst || packet.size == 0 {
            // Never enters the network: copied through the node in `size` cycles.
            self.local.push((now + packet.size, packet.id));
            return;
        }
        match self.place(packet.src, packet.dst) {
            Some((p, c)) => self.phases[p].push(
                c,
                InFlight {
                    id: packet.id,
                    remaining: packet.size,
                },
            ),
            // Unroutable (a node outside the network): delivered never would hang the run;
            // deliver as a local copy so the fault shows as zero network use instead.
            None => self.local.push((now + packet.size, packet.id)),
        }
    }

    fn inject_for(&mut self, now: u64, packet: Packet, msg: MsgId, _dst_task: TaskId) {
        self.injecting = Some(msg);
        self.inject(now, packet);
        self.injecting = None;
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        if !self.local.is_empty() {
            self.local.sort_unstable();
            let due = self.local.partition_point(|&(at, _)| at <= now + 1);
            for (at, id) in self.local.drain(..due) {
                delivered.push(Delivery { packet: id, at });
            }
        }
        if now < self.start {
            return; // reconfiguring
        }
        let active_waiting = self.phases.get(self.active).is_some_and(|p| p.waiting > 0);
        if !active_waiting || !self.loaded {
            let next = if active_waiting {
                self.active
            } else {
                let Some(next) = self.next_waiting() else {
                    return;
                };
                next
            };
            self.active = next;
            self.loaded = true;
            self.start = now + self.params.reconfig;
            self.reconfigurations += 1;
            if self.params.reconfig > 0 {
                return;
            }
        }
        let ph = &mut self.phases[self.active];
        let d = ph.degree() as u64;
        let k = ((now - self.start) % d) as usize;
        let Some(cfg) = ph.configs.get(k) else {
            return;
        };
        if ph.busy.get(k).is_none_or(|&b| b == 0) {
            return;
        }
        for &c in cfg {
            let Some(head) = ph.queues[c].front_mut() else {
                continue;
            };
            head.remaining -= 1;
            for &l in &ph.conns[c].links {
                self.link_busy[l] += 1;
            }
            if head.remaining == 0 {
                let id = head.id;
                ph.queues[c].pop_front();
                ph.waiting -= 1;
                if ph.queues[c].is_empty() {
                    ph.busy[k] -= 1;
                }
                delivered.push(Delivery {
                    packet: id,
                    at: now + 1,
                });
            }
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        let local = self
            .local
            .iter()
            .map(|&(at, _)| at.saturating_sub(1).max(now))
            .min();
        let waiting = self.phases.get(self.active).is_some_and(|p| p.waiting > 0);
        let net = if now < self.start {
            Some(self.start)
        } else if !self.loaded && waiting {
            Some(now)
        } else if let Some(t) = self.next_slot(now) {
            Some(t)
        } else if self.next_waiting().is_some() {
            Some(now)
        } else {
            None
        };
        match (local, net) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn link_busy(&self) -> Vec<u64> {
        self.link_busy.clone()
    }
}
