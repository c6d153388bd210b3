//! Predictive multiplexed switching (Ding et al.): a passive crossbar whose configuration
//! register is loaded, slot by slot, from K slot tables; a central scheduler fills the tables from
//! the NICs' request vectors (reactive, "dynamic TDM"), a compiler may preload whole
//! configurations (proactive, "preload TDM"), and a predictor decides when an idle connection is
//! evicted (§3.2). On `crossbar:N` every node is one port of the paper's single N×N crossbar (§5).
//!
//! Units: one cycle is 10 ns, one word 8 bytes (the paper's flit, 10 ns at 6.4 Gb/s), so the
//! defaults are the paper's: a 100 ns slot carries 80 bytes = 10 words, the scheduler takes 80 ns
//! (8 cycles, §5), request and grant cables 80 ns each (8 cycles: first use of a connection costs
//! the 240 ns circuit set-up of §5), and the data pipe P/S + 2 cables + S/P is 100 ns (10 cycles).
//!
//! Time line: the TDM counter moves to the next non-empty slot table at every slot boundary
//! (skipping empty tables, so the effective degree shrinks, §4); during the slot every input whose
//! connection is granted sends up to a slot's worth of words from its virtual output queue. The
//! scheduler runs every scheduler latency on one slot (the SL counter, round robin) and applies
//! Tables 1 and 2 with a priority rotated from a seeded generator.
//!
//! **On any other network (meshes and tori of any size and dimension, rings, lines, hypercubes…)**
//! the fabric is the network's own switches, each a passive switch with the paper's K slot tables
//! (§4 allows "any direct topology"; the paper builds only the crossbar, so what follows are this
//! model's choices where it is silent):
//! - A connection u → v is a TDM *circuit* along its route (dimension order on grids, shorter way
//!   round each ring; breadth-first shortest path elsewhere — `compiled::patterns::route`, the
//!   route the compiled model's configurations assume). It holds one slot s on its injection port,
//!   on every link of the route and on its ejection port: the crossbar connection made multi-hop.
//!   No two circuits hold the same port or link in the same slot ([`PmsModel::check`]).
//! - One central scheduler serves the whole network, with the crossbar's latencies: the request
//!   cable, one SL clock per slot, the grant cable. The SL pass visits the requests in the same
//!   rotated order as the crossbar's array, with one busy bit per port and per link in slot s
//!   instead of the A/D ripples ([`logic::sl_pass_routed`]): a circuit is established only if its
//!   ports and every link of its route are free in slot s. The grant then configures the switches
//!   along the path, `hop-setup` cycles per link (default 1), so a circuit of h links is usable
//!   `sched + grant + h·hop-setup` cycles after its SL clock.
//! - Data: the switches are passive (no S/P conversion, their own delay neglected as in §5), so
//!   each link adds only its wire: `hop-wire` cycles per link (default 2, the 20 ns of a 10 ft
//!   cable) on top of the crossbar's pipe (P/S, the cables to and from the first and last switch,
//!   S/P). All switches change slot together at the slot clock; the slot's data front is taken to
//!   travel with its configuration along the path (each switch's slot is delayed by its wires, the
//!   guard band absorbing the skew), so a slot is a time window at the source, as in Yuan's
//!   optical TDM models.
//! - A lone message of L words on a circuit of h links, injected at 0 into an idle network, with
//!   slot length S = guard + W (W = `slot-words`): the scheduler sees the request at R = `request`,
//!   sets it up at the next SL clock t_s = ⌈R/σ⌉σ (σ = `sched`), the circuit is usable from
//!   t_s + σ + G + h·hop-setup (G = `grant`), the first slot boundary after that is T0, and it
//!   arrives at T0 + (⌈L/W⌉−1)·S + guard + (L − (⌈L/W⌉−1)·W) + pipe + h·hop-wire
//!   ([`lone_latency`]); with the defaults and L ≤ 10: 30 + L + 10 + 2h for h ≤ 6.
//! - Preload (proactive set-up): the program's (source, destination) pairs are routed and split
//!   into link-conflict-free configurations by the compiled model's connection scheduler
//!   (`compiled::sched`: a port or a link is used by one circuit per configuration) — the
//!   crossbar's optimal colouring when its configurations happen to be link-conflict free (as for
//!   nearest-neighbour circuits), else the best of the compiled schedulers when the working set
//!   fits into the preload slots, else greedy in first-use order, preloaded `preload` slots at a
//!   time, as on the crossbar.
//! - Eviction: the same time-out and counter predictors; an evicted circuit frees its ports and
//!   all its links in its slot.
//!
//! On a crossbar the routes are empty and the model is exactly the crossbar above.

pub mod logic;

use std::collections::{BTreeMap, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sim::models::compiled::patterns;
use crate::sim::models::compiled::sched::{self, Connection};
use crate::sim::options::{
    choice, choice_enum, int, int_depends, Choice, ModelError, ModelOptions, OptionSpec,
};

choice_enum! {
    /// The `predictor` option: which [`Predictor`] evicts idle connections.
    pub enum PredictorKind {
        Timeout = "timeout",
        None = "none",
        Counter = "counter",
    }
}
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};
use crate::topology::{Kind, LinkId, Network, NodeId};
use logic::SlotTable;

/// An invalid parameter, with a message for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pms model: {0}")]
pub struct PmsError(pub String);

/// When an established connection whose request has dropped is evicted (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predictor {
    /// Release as soon as the request drops (Table 1 alone).
    None,
    /// Keep an idle connection until it has not been used for this many cycles (the "simple
    /// time-out predictor" of the experiments; the paper does not give the time-out).
    Timeout(u64),
    /// Keep it until this many uses of *other* connections of the same input since its last use
    /// (the counter predictor of §3.2, described there but not evaluated). Read literally, an
    /// idle connection whose input sends nothing else never ages and can hold its output (and,
    /// off the crossbar, its links) for ever against another input's request; so every
    /// scheduler pass that leaves a request waiting also ages every idle connection by one.
    /// With no request waiting nothing ages, so, as the paper wants, no connection is evicted
    /// during a pure computation phase.
    Counter(u32),
}

/// Parameters (defaults from Ding et al. §4–§5; see the module doc for units).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmsParams {
    /// K: slot tables, the largest multiplexing degree (4 in Fig 4).
    pub slots: usize,
    /// Words per slot (80 bytes).
    pub slot_words: u64,
    /// Guard band in cycles at the start of each slot (not given for the simulations; 0).
    pub guard: u64,
    /// Scheduler (SL clock) latency in cycles.
    pub sched_latency: u64,
    /// Request cable latency, NIC → scheduler.
    pub request_latency: u64,
    /// Grant cable latency, scheduler → NIC.
    pub grant_latency: u64,
    /// Data pipe latency, NIC to NIC through the crossbar.
    pub pipe_latency: u64,
    /// Slot tables holding preloaded configurations (0 = reactive, K = all preloaded; in
    /// between is the hybrid of Fig 5).
    pub preload: usize,
    pub predictor: Predictor,
    /// Seed of the priority rotation.
    pub seed: u64,
    /// Off the crossbar: data cycles each switch-to-switch link adds (its wire).
    pub hop_wire: u64,
    /// Off the crossbar: set-up cycles each link of a circuit adds (the grant configuring the
    /// switches along the path).
    pub hop_setup: u64,
}

impl Default for PmsParams {
    fn default() -> Self {
        PmsParams {
            slots: 4,
            slot_words: 10,
            guard: 0,
            sched_latency: 8,
            request_latency: 8,
            grant_latency: 8,
            pipe_latency: 10,
            preload: 0,
            // Two frames of K = 4 slots (800 ns); the paper leaves the time-out open.
            predictor: Predictor::Timeout(80),
            seed: 1,
            hop_wire: 2,
            hop_setup: 1,
        }
    }
}

impl PmsParams {
    /// Sets one option by name (`slots=3`, `predictor=counter`, `threshold=8`, `timeout=200`, …).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), PmsError> {
        let num = || {
            value.parse::<u64>().map_err(|_| {
                PmsError(format!(
                    "`{key}` must be a non-negative integer, not `{value}`"
                ))
            })
        };
        match key {
            "slots" | "k" => self.slots = num()? as usize,
            "slot-words" => self.slot_words = num()?,
            "guard" => self.guard = num()?,
            "sched" => self.sched_latency = num()?,
            "request" => self.request_latency = num()?,
            "grant" => self.grant_latency = num()?,
            "pipe" => self.pipe_latency = num()?,
            "preload" => self.preload = num()? as usize,
            "seed" => self.seed = num()?,
            "hop-wire" => self.hop_wire = num()?,
            "hop-setup" => self.hop_setup = num()?,
            "timeout" => self.predictor = Predictor::Timeout(num()?),
            "threshold" => {
                self.predictor = Predictor::Counter(u32::try_from(num()?).map_err(|_| {
                    PmsError(format!("threshold {value} is too large"))
                })?)
            }
            "predictor" => {
                self.predictor = match value {
                    "none" => Predictor::None,
                    "timeout" => Predictor::Timeout(80),
                    "counter" => Predictor::Counter(8),
                    other => {
                        return Err(PmsError(format!(
                            "unknown predictor `{other}`: expected none, timeout or counter"
                        )))
                    }
                }
            }
            other => {
                return Err(PmsError(format!(
                    "unknown option `{other}`: expected slots, slot-words, guard, sched, request, grant, pipe, hop-wire, hop-setup, preload, predictor, timeout, threshold or seed"
                )))
            }
        }
        self.validate()
    }

    pub fn validate(&self) -> Result<(), PmsError> {
        if self.slots == 0 {
            return Err(PmsError("slots (K) must be at least 1".into()));
        }
        if self.slots > 1024 {
            return Err(PmsError("slots (K) above 1024".into()));
        }
        if self.slot_words == 0 {
            return Err(PmsError("a slot must carry at least one word".into()));
        }
        if self.sched_latency == 0 {
            return Err(PmsError(
                "the scheduler latency must be at least 1 cycle".into(),
            ));
        }
        if self.preload > self.slots {
            return Err(PmsError(format!(
                "preload ({}) cannot exceed the number of slots ({})",
                self.preload, self.slots
            )));
        }
        if self.predictor == Predictor::Counter(0) {
            return Err(PmsError("the counter threshold must be at least 1".into()));
        }
        Ok(())
    }
}

/// Arrival of a lone message of `words` words, injected at cycle 0 into an idle, reactive model,
/// on a circuit of `hops` links (0 on the crossbar): the formula of the module doc.
pub fn lone_latency(p: &PmsParams, words: u64, hops: u64) -> u64 {
    let w = p.slot_words.max(1);
    let sched = p.sched_latency.max(1);
    let slot = p.guard + w;
    let t_s = p.request_latency.div_ceil(sched) * sched;
    let ready = t_s + sched + p.grant_latency + hops * p.hop_setup;
    let t0 = ready.div_ceil(slot) * slot;
    let words = words.max(1);
    let full = words.div_ceil(w) - 1;
    t0 + full * slot + p.guard + (words - full * w) + p.pipe_latency + hops * p.hop_wire
}

/// Options for the model registry (defaults as [`PmsParams::default`]).
pub const OPTIONS: &[OptionSpec] = &[
    int(
        "slots",
        "4",
        1,
        1024,
        "slot tables (the TDM frame's length), K in Ding et al.",
    ),
    int(
        "slot-words",
        "10",
        1,
        1 << 32,
        "words a connection sends per slot",
    ),
    int(
        "guard",
        "0",
        0,
        1 << 32,
        "idle cycles between slots while the crossbar reconfigures",
    ),
    int(
        "sched",
        "8",
        1,
        1 << 32,
        "cycles the scheduler takes per slot table (scheduler latency)",
    ),
    int(
        "request",
        "8",
        0,
        1 << 32,
        "cycles for a request vector to reach the scheduler",
    ),
    int(
        "grant",
        "8",
        0,
        1 << 32,
        "cycles for a grant to reach the NIC",
    ),
    int("pipe", "10", 0, 1 << 32, "cycles through the data pipeline"),
    int(
        "hop-wire",
        "2",
        0,
        1 << 32,
        "off the crossbar: data cycles per switch-to-switch link of a circuit",
    ),
    int(
        "hop-setup",
        "1",
        0,
        1 << 32,
        "off the crossbar: set-up cycles per link of a circuit (the grant reaching its switches)",
    ),
    int(
        "preload",
        "0",
        0,
        1024,
        "slot tables preloaded from the program's pairs (proactive set-up; at most slots)",
    ),
    choice(
        "predictor",
        "timeout",
        PredictorKind::WORDS,
        "when an idle connection is evicted",
    ),
    int(
        "timeout",
        "80",
        0,
        u64::MAX,
        "idle cycles before eviction (predictor=timeout)",
    ),
    int(
        "threshold",
        "8",
        1,
        u32::MAX as u64,
        "idle slots before eviction (predictor=counter)",
    ),
    int_depends(
        "seed",
        "the run's seed",
        0,
        u64::MAX,
        "seed of the scheduler's rotating priority",
    ),
];

/// Builds the model for `simulate`/`compare`: on `crossbar:N` one crossbar port per node, on any
/// other network TDM circuits over its links (module doc). With `preload=P > 0` and a program,
/// the program's (source, destination) pairs are split into configurations (partial permutations
/// on the crossbar, link-conflict-free circuits elsewhere) and preloaded P slot tables at a time
/// (proactive set-up); without a program there is nothing to preload and the slots are scheduled
/// reactively.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let slots = opts.int("slots")? as usize;
    let preload = opts.int("preload")? as usize;
    if preload > slots {
        return Err(ModelError(format!(
            "option `preload={preload}`: must be between 0 and {slots} (the slots)"
        )));
    }
    let threshold = opts.int("threshold")? as u32;
    let timeout = opts.int("timeout")?;
    let predictor = match opts.chosen("predictor")? {
        PredictorKind::None => Predictor::None,
        PredictorKind::Counter => Predictor::Counter(threshold),
        PredictorKind::Timeout => Predictor::Timeout(timeout),
    };
    let params = PmsParams {
        slots,
        slot_words: opts.int("slot-words")?,
        guard: opts.int("guard")?,
        sched_latency: opts.int("sched")?,
        request_latency: opts.int("request")?,
        grant_latency: opts.int("grant")?,
        pipe_latency: opts.int("pipe")?,
        preload,
        predictor,
        seed: opts.int_or("seed", ctx.seed)?,
        hop_wire: opts.int("hop-wire")?,
        hop_setup: opts.int("hop-setup")?,
    };
    let configs = match (ctx.traffic, ctx.placement, preload) {
        (Some(t), Some(p), 1..) => {
            let mut pairs = Vec::new();
            for m in &t.messages {
                let Some(&src) = p.node_of.get(m.src) else {
                    continue;
                };
                pairs.extend(
                    m.dst
                        .iter()
                        .filter_map(|&d| p.node_of.get(d))
                        .map(|&dst| (src, dst)),
                );
            }
            network_configurations(ctx.network, &pairs, preload)
                .map_err(|e| ModelError(e.to_string()))?
        }
        _ => Vec::new(),
    };
    let model = if configs.is_empty() {
        // Nothing to preload: every slot is scheduled on demand.
        PmsModel::on_network(
            ctx.network,
            PmsParams {
                preload: 0,
                ..params
            },
            Vec::new(),
        )
    } else {
        PmsModel::on_network(ctx.network, params, configs)
    };
    Ok(Box::new(model.map_err(|e| ModelError(e.to_string()))?))
}

/// The pairs that need a connection, each once, in first-use order (a node to itself needs none).
fn distinct_pairs(pairs: &[(NodeId, NodeId)]) -> Vec<(NodeId, NodeId)> {
    let mut seen = std::collections::BTreeSet::new();
    pairs
        .iter()
        .copied()
        .filter(|&(u, v)| u != v && seen.insert((u, v)))
        .collect()
}

/// Splits (input, output) pairs into crossbar configurations (partial permutations) for
/// preloading into `slots` slot tables. When the whole working set fits, the fewest
/// configurations (Yuan's colorings) are loaded once and never swapped; otherwise Yuan's greedy
/// (Fig 5.11) over the pairs in first-use order, so that the configurations, and the preload
/// groups cut from them, follow the order the program needs them (an all-to-all by offsets
/// becomes one shift per configuration).
pub fn crossbar_configurations(
    pairs: &[(NodeId, NodeId)],
    slots: usize,
) -> Vec<Vec<(NodeId, NodeId)>> {
    let uniq = distinct_pairs(pairs);
    let conns: Vec<Connection> = uniq
        .iter()
        .map(|&(src, dst)| Connection {
            src,
            dst,
            links: Vec::new(),
        })
        .collect();
    let optimal = bipartite_edge_coloring(&uniq);
    if optimal.len() <= slots {
        return optimal;
    }
    let order: Vec<usize> = (0..conns.len()).collect();
    sched::greedy(&conns, &order)
        .configs
        .into_iter()
        .map(|cfg| {
            let mut c: Vec<(NodeId, NodeId)> = cfg.into_iter().map(|i| uniq[i]).collect();
            c.sort_unstable();
            c
        })
        .collect()
}

/// Configurations for preloading on `net`: [`crossbar_configurations`] on a crossbar; elsewhere
/// the pairs are routed and split into link-conflict-free configurations by the compiled model's
/// scheduler (`compiled::sched`, Yuan §5.4). The crossbar's optimal configurations are taken
/// when they fit into `slots` and none of them has two circuits on one link; else greedy in
/// first-use order when it fits; otherwise, for a working set small enough to colour quickly, the fewest
/// configurations of all the compiled schedulers if those fit; otherwise greedy in first-use
/// order, so that the preload groups follow the order the program needs them.
pub fn network_configurations(
    net: &Network,
    pairs: &[(NodeId, NodeId)],
    slots: usize,
) -> Result<Vec<Vec<(NodeId, NodeId)>>, PmsError> {
    if net.spec.kind == Kind::Crossbar {
        return Ok(crossbar_configurations(pairs, slots));
    }
    let uniq = distinct_pairs(pairs);
    let conns = patterns::connections(net, &uniq).map_err(PmsError)?;
    // The crossbar's optimal configurations serve as they are when no two of their circuits
    // share a link (nearest-neighbour circuits of one link each, for instance).
    let optimal = bipartite_edge_coloring(&uniq);
    if optimal.len() <= slots {
        let index: BTreeMap<(NodeId, NodeId), usize> =
            uniq.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let link_free = optimal.iter().all(|cfg| {
            let mut used = std::collections::BTreeSet::new();
            cfg.iter()
                .flat_map(|p| &conns[index[p]].links)
                .all(|&l| used.insert(l))
        });
        if link_free {
            return Ok(optimal);
        }
    }
    let order: Vec<usize> = (0..conns.len()).collect();
    let mut best = sched::greedy(&conns, &order);
    if best.degree() > slots && conns.len() <= 2048 {
        if let Ok(c) = sched::schedule(&conns, sched::Algorithm::Best, None) {
            if c.degree() <= slots {
                best = c;
            }
        }
    }
    Ok(best
        .configs
        .into_iter()
        .map(|cfg| {
            let mut c: Vec<(NodeId, NodeId)> = cfg.into_iter().map(|i| uniq[i]).collect();
            c.sort_unstable();
            c
        })
        .collect())
}

/// Optimal crossbar configurations: a proper edge colouring of the bipartite (input, output)
/// graph with as many colours as the largest port degree (König's theorem), by alternating-path
/// recolouring. `pairs` must be distinct.
pub fn bipartite_edge_coloring(pairs: &[(NodeId, NodeId)]) -> Vec<Vec<(NodeId, NodeId)>> {
    let n = pairs.iter().map(|&(u, v)| u.max(v) + 1).max().unwrap_or(0);
    let mut deg_in = vec![0usize; n];
    let mut deg_out = vec![0usize; n];
    for &(u, v) in pairs {
        deg_in[u] += 1;
        deg_out[v] += 1;
    }
    let colours = deg_in.iter().chain(&deg_out).copied().max().unwrap_or(0);
    // at_in[u][c] = output joined to input u by colour c; at_out[v][c] = the input.
    let mut at_in = vec![vec![None::<usize>; colours]; n];
    let mut at_out = vec![vec![None::<usize>; colours]; n];
    for &(u, v) in pairs {
        let Some(a) = (0..colours).find(|&c| at_in[u][c].is_none()) else {
            continue;
        };
        let Some(b) = (0..colours).find(|&c| at_out[v][c].is_none()) else {
            continue;
        };
        if at_out[v][a].is_some() {
            // Swap colours a and b along the alternating path from v (output side, colour a
            // first); it cannot reach u, so afterwards a is free at both ends.
            let mut path = Vec::new(); // (input, output, colour)
                                       // Outputs are left by colour a, inputs by colour b.
            let mut out = v;
            while let Some(inp) = at_out[out][a] {
                path.push((inp, out, a));
                match at_in[inp][b] {
                    Some(next) => {
                        path.push((inp, next, b));
                        out = next;
                    }
                    None => break,
                }
            }
            for &(i, o, c) in &path {
                at_in[i][c] = None;
                at_out[o][c] = None;
            }
            for &(i, o, c) in &path {
                let swapped = if c == a { b } else { a };
                at_in[i][swapped] = Some(o);
                at_out[o][swapped] = Some(i);
            }
        }
        at_in[u][a] = Some(v);
        at_out[v][a] = Some(u);
    }
    let mut configs = vec![Vec::new(); colours];
    for (u, row) in at_in.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            if let Some(v) = *v {
                configs[c].push((u, v));
            }
        }
    }
    configs.retain(|c| !c.is_empty());
    configs
}

/// An established connection.
#[derive(Clone, Copy, Debug)]
struct Established {
    slot: usize,
    /// First cycle the NIC holds the grant.
    usable_from: u64,
    last_used: u64,
    counter: u32,
    preloaded: bool,
}

/// A NIC's virtual output queue for one destination.
#[derive(Clone, Debug, Default)]
struct Voq {
    packets: VecDeque<(u64, u64)>, // (id, words left)
    /// Cycle from which the scheduler sees the request.
    raised: u64,
    /// Cycle from which the scheduler sees it dropped.
    dropped: Option<u64>,
}

impl Voq {
    fn requested(&self, t: u64) -> bool {
        t >= self.raised && self.dropped.is_none_or(|d| t < d)
    }
}

/// The switches between the NICs when the network is not a single crossbar: every switch holds
/// the K slot tables, kept here as the circuit owning each directed link in each slot.
#[derive(Clone, Debug)]
struct Fabric {
    net: Network,
    /// Route of every pair seen so far (injected or preloaded).
    routes: BTreeMap<(NodeId, NodeId), Vec<LinkId>>,
    /// `owner[s][l]`: the circuit holding link l in slot s.
    owner: Vec<Vec<Option<(NodeId, NodeId)>>>,
}

impl Fabric {
    /// Routes (u, v) if not yet routed; false if it cannot be.
    fn ensure_route(&mut self, u: NodeId, v: NodeId) -> bool {
        if self.routes.contains_key(&(u, v)) {
            return true;
        }
        match patterns::route(&self.net, u, v) {
            Ok(r) => {
                self.routes.insert((u, v), r);
                true
            }
            Err(_) => false,
        }
    }

    fn hops(&self, u: NodeId, v: NodeId) -> u64 {
        self.routes.get(&(u, v)).map_or(0, |r| r.len() as u64)
    }

    fn release(&mut self, s: usize, u: NodeId, v: NodeId) {
        if let Some(r) = self.routes.get(&(u, v)) {
            for &l in r {
                if self.owner[s][l] == Some((u, v)) {
                    self.owner[s][l] = None;
                }
            }
        }
    }

    fn take(&mut self, s: usize, u: NodeId, v: NodeId) {
        if let Some(r) = self.routes.get(&(u, v)) {
            for &l in r {
                self.owner[s][l] = Some((u, v));
            }
        }
    }
}

/// The PMS switch (`NetworkModel`): the crossbar, or circuits over a network's switches.
#[derive(Clone, Debug)]
pub struct PmsModel {
    params: PmsParams,
    n: usize,
    /// `None` on the crossbar.
    fabric: Option<Fabric>,
    tables: Vec<SlotTable>,
    conns: BTreeMap<(NodeId, NodeId), Established>,
    voqs: BTreeMap<(NodeId, NodeId), Voq>,
    /// Preloaded configurations, in groups of `preload` slots.
    groups: Vec<Vec<Vec<(NodeId, NodeId)>>>,
    /// The preload groups holding each pair.
    group_of: BTreeMap<(NodeId, NodeId), Vec<usize>>,
    group: usize,
    /// Slot the fabric is in (the TDM counter).
    current: Option<usize>,
    sl_counter: usize,
    rng: ChaCha8Rng,
    outbox: Vec<(u64, u64)>,
    /// Connections established by the scheduler (compulsory and capacity misses).
    pub setups: u64,
    /// Slots in which at least one connection carried data.
    pub busy_slots: u64,
    /// Slots the fabric ran (non-empty tables).
    pub slots_run: u64,
    /// Packets between nodes the network does not connect (never delivered).
    pub unroutable: u64,
}

impl PmsModel {
    /// A reactive crossbar with `ports` ports (no preloaded configurations).
    pub fn new(ports: usize, params: PmsParams) -> Result<PmsModel, PmsError> {
        PmsModel::with_preload(ports, params, Vec::new())
    }

    /// A crossbar with `configs` (partial permutations) to preload, `params.preload` slot tables
    /// at a time (the compiler's working set, §3.1 and extension 5).
    pub fn with_preload(
        ports: usize,
        params: PmsParams,
        configs: Vec<Vec<(NodeId, NodeId)>>,
    ) -> Result<PmsModel, PmsError> {
        PmsModel::build(ports, None, params, configs)
    }

    /// The model on `net`: the crossbar of [`PmsModel::with_preload`] when `net` is a crossbar,
    /// otherwise TDM circuits over its links (module doc); `configs` must then be free of port
    /// and link conflicts (as [`network_configurations`] makes them).
    pub fn on_network(
        net: &Network,
        params: PmsParams,
        configs: Vec<Vec<(NodeId, NodeId)>>,
    ) -> Result<PmsModel, PmsError> {
        if net.spec.kind == Kind::Crossbar {
            return PmsModel::with_preload(net.nodes(), params, configs);
        }
        let mut fabric = Fabric {
            net: net.clone(),
            routes: BTreeMap::new(),
            owner: vec![vec![None; net.links.len()]; params.slots],
        };
        for (k, cfg) in configs.iter().enumerate() {
            let mut used = vec![false; net.links.len()];
            for &(u, v) in cfg {
                if u >= net.nodes() || v >= net.nodes() {
                    continue; // reported by the port check below
                }
                if !fabric.ensure_route(u, v) {
                    return Err(PmsError(format!(
                        "preloaded connection {u} → {v} has no route in {}",
                        net.spec
                    )));
                }
                for &l in &fabric.routes[&(u, v)] {
                    if std::mem::replace(&mut used[l], true) {
                        return Err(PmsError(format!(
                            "preloaded configuration {k}: {u} → {v} shares link {} → {} with another connection",
                            net.links[l].from, net.links[l].to
                        )));
                    }
                }
            }
        }
        PmsModel::build(net.nodes(), Some(fabric), params, configs)
    }

    fn build(
        ports: usize,
        fabric: Option<Fabric>,
        params: PmsParams,
        configs: Vec<Vec<(NodeId, NodeId)>>,
    ) -> Result<PmsModel, PmsError> {
        params.validate()?;
        if ports == 0 {
            return Err(PmsError("the crossbar needs at least one port".into()));
        }
        for cfg in &configs {
            let mut ins = vec![false; ports];
            let mut outs = vec![false; ports];
            for &(u, v) in cfg {
                if u >= ports || v >= ports {
                    return Err(PmsError(format!(
                        "preloaded connection {u} → {v} names a port outside 0..{ports}"
                    )));
                }
                if std::mem::replace(&mut ins[u], true) || std::mem::replace(&mut outs[v], true) {
                    return Err(PmsError(format!(
                        "a preloaded configuration uses input {u} or output {v} twice"
                    )));
                }
            }
        }
        if !configs.is_empty() && params.preload == 0 {
            return Err(PmsError(
                "configurations to preload need at least one preload slot (preload=…)".into(),
            ));
        }
        let groups: Vec<Vec<Vec<(NodeId, NodeId)>>> = configs
            .chunks(params.preload.max(1))
            .map(|c| c.to_vec())
            .collect();
        let mut group_of: BTreeMap<(NodeId, NodeId), Vec<usize>> = BTreeMap::new();
        for (g, group) in groups.iter().enumerate() {
            for &p in group.iter().flatten() {
                group_of.entry(p).or_default().push(g);
            }
        }
        let mut model = PmsModel {
            group_of,
            rng: ChaCha8Rng::seed_from_u64(params.seed),
            tables: vec![SlotTable::new(ports); params.slots],
            n: ports,
            fabric,
            unroutable: 0,
            params,
            conns: BTreeMap::new(),
            voqs: BTreeMap::new(),
            groups,
            group: 0,
            current: None,
            sl_counter: 0,
            outbox: Vec::new(),
            setups: 0,
            busy_slots: 0,
            slots_run: 0,
        };
        model.load_group(0, 0);
        Ok(model)
    }

    fn slot_len(&self) -> u64 {
        self.params.guard + self.params.slot_words
    }

    /// Loads preload group `g` into the preload slot tables, usable from `at`.
    fn load_group(&mut self, g: usize, at: u64) {
        let Some(group) = self.groups.get(g).cloned() else {
            return;
        };
        for s in 0..self.params.preload {
            let old: Vec<(NodeId, NodeId)> = self.tables[s]
                .out_of
                .iter()
                .enumerate()
                .filter_map(|(u, v)| v.map(|v| (u, v)))
                .collect();
            for (u, v) in old {
                self.tables[s].clear(u, v);
                self.conns.remove(&(u, v));
                if let Some(f) = &mut self.fabric {
                    f.release(s, u, v);
                }
            }
        }
        for (s, cfg) in group.into_iter().enumerate() {
            for (u, v) in cfg {
                if self.conns.contains_key(&(u, v)) {
                    continue; // already realized in a dynamic slot
                }
                self.tables[s].set(u, v);
                if let Some(f) = &mut self.fabric {
                    f.take(s, u, v);
                }
                self.conns.insert(
                    (u, v),
                    Established {
                        slot: s,
                        usable_from: at,
                        last_used: at,
                        counter: 0,
                        preloaded: true,
                    },
                );
            }
        }
        self.group = g;
    }

    /// Whether the predictor keeps (u, v) although its request has dropped.
    fn keep(&self, e: &Established, t: u64) -> bool {
        e.preloaded
            || match self.params.predictor {
                Predictor::None => false,
                Predictor::Timeout(limit) => t < e.last_used.max(e.usable_from) + limit,
                Predictor::Counter(th) => e.counter < th,
            }
    }

    /// The preload group to switch to: when no visible request is for the loaded group but one
    /// is for another group, the first such group after the current one.
    fn wanted_group(&self, t: u64) -> Option<usize> {
        if self.groups.len() < 2 {
            return None;
        }
        let n = self.groups.len();
        let mut best: Option<usize> = None; // offset of the nearest wanted group
        for (k, q) in &self.voqs {
            if q.packets.is_empty() || !q.requested(t) {
                continue;
            }
            for &g in self.group_of.get(k).map(Vec::as_slice).unwrap_or(&[]) {
                if g == self.group {
                    return None;
                }
                let off = (g + n - self.group) % n;
                best = Some(best.map_or(off, |b: usize| b.min(off)));
            }
        }
        best.map(|off| (self.group + off) % n)
    }

    /// One SL clock: schedule slot `s` (Tables 1 and 2).
    fn schedule(&mut self, t: u64) {
        if let Some(g) = self.wanted_group(t) {
            self.load_group(g, t + self.params.grant_latency);
        }
        let k = self.params.slots;
        let dynamic = self.params.preload < k;
        let s = if dynamic {
            self.params.preload + self.sl_counter % (k - self.params.preload)
        } else {
            self.sl_counter % k
        };
        self.sl_counter = self.sl_counter.wrapping_add(1);
        // Table 1 over the pairs that can have L = 1: those realized in slot s and those requested.
        let mut cells = Vec::new();
        for (u, v) in self.tables[s].out_of.iter().enumerate() {
            let Some(v) = *v else { continue };
            let requested = self.voqs.get(&(u, v)).is_some_and(|q| q.requested(t));
            let keep = self.conns.get(&(u, v)).is_some_and(|e| self.keep(e, t));
            if logic::prescheduling(requested || keep, true, true) {
                cells.push((u, v));
            }
        }
        for (&(u, v), q) in &self.voqs {
            let requested = !q.packets.is_empty() && q.requested(t);
            let b_star = self.conns.contains_key(&(u, v));
            if logic::prescheduling(requested, b_star, false) {
                cells.push((u, v));
            }
        }
        if cells.is_empty() {
            return;
        }
        // Queues that are empty and seen so by the scheduler carry no state worth keeping.
        self.voqs
            .retain(|_, q| !q.packets.is_empty() || q.dropped.is_none_or(|d| d > t));
        let a0 = self.rng.random_range(0..self.n);
        let b0 = self.rng.random_range(0..self.n);
        let toggled = match &mut self.fabric {
            None => logic::sl_pass(&mut self.tables[s], &cells, a0, b0),
            Some(f) => {
                let routes = &f.routes;
                logic::sl_pass_routed(
                    &mut self.tables[s],
                    &mut f.owner[s],
                    &|u, v| routes.get(&(u, v)).cloned(),
                    &cells,
                    a0,
                    b0,
                )
            }
        };
        let wanted: Vec<(NodeId, NodeId)> = cells
            .iter()
            .copied()
            .filter(|k| !self.conns.contains_key(k))
            .collect();
        for (u, v, established) in toggled {
            if established {
                self.setups += 1;
                let from = t
                    + self.params.sched_latency
                    + self.params.grant_latency
                    + self.params.hop_setup * self.hops(u, v);
                self.conns.insert(
                    (u, v),
                    Established {
                        slot: s,
                        usable_from: from,
                        last_used: from,
                        counter: 0,
                        preloaded: false,
                    },
                );
            } else {
                self.conns.remove(&(u, v));
            }
        }
        // A request still waiting ages every idle connection (see `Predictor::Counter`).
        if matches!(self.params.predictor, Predictor::Counter(_))
            && wanted.iter().any(|k| !self.conns.contains_key(k))
        {
            let voqs = &self.voqs;
            for (k, e) in self.conns.iter_mut() {
                let busy = voqs
                    .get(k)
                    .is_some_and(|q| !q.packets.is_empty() && q.requested(t));
                if !e.preloaded && !busy {
                    e.counter = e.counter.saturating_add(1);
                }
            }
        }
    }

    /// A slot boundary: advance the TDM counter past empty tables and move data.
    fn run_slot(&mut self, t: u64) {
        let k = self.params.slots;
        let start = self.current.map_or(0, |c| c + 1);
        let Some(s) = (0..k)
            .map(|o| (start + o) % k)
            .find(|&s| !self.tables[s].is_empty())
        else {
            self.current = None;
            return;
        };
        self.current = Some(s);
        self.slots_run += 1;
        let first = t + self.params.guard;
        let mut any = false;
        let mut used_inputs = Vec::new();
        for u in 0..self.n {
            let Some(v) = self.tables[s].out_of[u] else {
                continue;
            };
            let Some(e) = self.conns.get(&(u, v)).copied() else {
                continue;
            };
            if e.usable_from > t {
                continue;
            }
            let pipe = self.params.pipe_latency + self.params.hop_wire * self.hops(u, v);
            let Some(q) = self.voqs.get_mut(&(u, v)) else {
                continue;
            };
            if q.packets.is_empty() {
                continue;
            }
            let mut budget = self.params.slot_words;
            let mut sent = 0u64;
            while budget > 0 {
                let Some(head) = q.packets.front_mut() else {
                    break;
                };
                let w = head.1.min(budget);
                head.1 -= w;
                budget -= w;
                sent += w;
                if head.1 == 0 {
                    let id = head.0;
                    q.packets.pop_front();
                    // Last word leaves in cycle first + sent − 1, arrives through the pipe.
                    self.outbox.push((first + sent + pipe, id));
                }
            }
            if q.packets.is_empty() {
                q.dropped = Some(first + sent + self.params.request_latency);
            }
            any = true;
            used_inputs.push((u, v));
        }
        for (u, v) in used_inputs {
            if let Some(e) = self.conns.get_mut(&(u, v)) {
                e.last_used = t;
                e.counter = 0;
            }
            // The counter predictor: every other connection of input u ages by one use.
            for (&(uu, vv), e) in self.conns.range_mut((u, 0)..(u + 1, 0)) {
                if uu == u && vv != v {
                    e.counter = e.counter.saturating_add(1);
                }
            }
        }
        if any {
            self.busy_slots += 1;
        }
    }

    /// Checks the invariants the hardware guarantees: every slot table is a partial permutation
    /// and every established connection sits in exactly the table it was given; off the crossbar
    /// also that no two circuits hold one link in one slot.
    pub fn check(&self) -> Result<(), PmsError> {
        for (s, t) in self.tables.iter().enumerate() {
            for (u, v) in t.out_of.iter().enumerate() {
                if let Some(v) = *v {
                    if t.in_of.get(v).copied().flatten() != Some(u) {
                        return Err(PmsError(format!(
                            "slot {s}: input {u} → output {v} is not mirrored"
                        )));
                    }
                    match self.conns.get(&(u, v)) {
                        Some(e) if e.slot == s => {}
                        _ => return Err(PmsError(format!("slot {s}: {u} → {v} has no record"))),
                    }
                }
            }
            let ins = t.out_of.iter().flatten().count();
            let outs = t.in_of.iter().flatten().count();
            if ins != outs {
                return Err(PmsError(format!(
                    "slot {s}: {ins} inputs but {outs} outputs connected"
                )));
            }
        }
        for (&(u, v), e) in &self.conns {
            if !self.tables.get(e.slot).is_some_and(|t| t.has(u, v)) {
                return Err(PmsError(format!(
                    "{u} → {v} is recorded in slot {} but not there",
                    e.slot
                )));
            }
        }
        self.check_links()
    }

    /// Links of the circuit u → v (0 on the crossbar).
    fn hops(&self, u: NodeId, v: NodeId) -> u64 {
        self.fabric.as_ref().map_or(0, |f| f.hops(u, v))
    }

    /// Off the crossbar: every established circuit holds every link of its route in its slot,
    /// and no link is held by two circuits in one slot (recounted from the connections, not read
    /// from the owner table).
    fn check_links(&self) -> Result<(), PmsError> {
        let Some(f) = &self.fabric else {
            return Ok(());
        };
        let mut held: Vec<Vec<Option<(NodeId, NodeId)>>> =
            vec![vec![None; f.net.links.len()]; self.params.slots];
        for (&(u, v), e) in &self.conns {
            let route = f
                .routes
                .get(&(u, v))
                .ok_or_else(|| PmsError(format!("{u} → {v} is established without a route")))?;
            for &l in route {
                if let Some((a, b)) = held[e.slot][l].replace((u, v)) {
                    return Err(PmsError(format!(
                        "slot {}: link {} → {} is held by {a} → {b} and {u} → {v}",
                        e.slot, f.net.links[l].from, f.net.links[l].to
                    )));
                }
            }
        }
        if held != f.owner {
            return Err(PmsError(
                "the link owner tables disagree with the established circuits".into(),
            ));
        }
        Ok(())
    }

    /// Links of the network, per slot, with the circuit holding each (test hook; empty on the
    /// crossbar).
    pub fn link_owners(&self) -> Vec<Vec<Option<(NodeId, NodeId)>>> {
        self.fabric
            .as_ref()
            .map_or_else(Vec::new, |f| f.owner.clone())
    }

    /// Slot tables currently holding at least one connection (the effective degree).
    pub fn effective_degree(&self) -> usize {
        self.tables.iter().filter(|t| !t.is_empty()).count()
    }

    /// Earliest cycle at which an idle, non-preloaded connection may be released.
    fn next_eviction(&self) -> Option<u64> {
        self.conns
            .iter()
            .filter(|(_, e)| !e.preloaded)
            .filter_map(|(k, e)| {
                let dropped = self.voqs.get(k).and_then(|q| q.dropped).unwrap_or(0);
                match self.params.predictor {
                    Predictor::None => Some(dropped),
                    Predictor::Timeout(l) => Some(dropped.max(e.last_used.max(e.usable_from) + l)),
                    Predictor::Counter(th) => (e.counter >= th).then_some(dropped),
                }
            })
            .min()
    }

    fn has_work(&self) -> bool {
        self.voqs.values().any(|q| !q.packets.is_empty()) || self.next_eviction().is_some()
    }
}

impl NetworkModel for PmsModel {
    fn name(&self) -> String {
        let mode = match self.params.preload {
            0 => "dynamic".to_string(),
            p if p == self.params.slots => "preload".to_string(),
            p => format!("hybrid preload={p}"),
        };
        let pred = match self.params.predictor {
            Predictor::None => "none".to_string(),
            Predictor::Timeout(t) => format!("timeout={t}"),
            Predictor::Counter(c) => format!("counter={c}"),
        };
        format!("pms K={} {mode} predictor={pred}", self.params.slots)
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        if packet.src == packet.dst || packet.src >= self.n || packet.dst >= self.n {
            // Stays in the node (or names no port): delivered through the NIC alone.
            self.outbox.push((now + packet.size, packet.id));
            return;
        }
        if let Some(f) = &mut self.fabric {
            if !f.ensure_route(packet.src, packet.dst) {
                self.unroutable += 1;
                return;
            }
        }
        let rl = self.params.request_latency;
        let q = self.voqs.entry((packet.src, packet.dst)).or_default();
        if q.packets.is_empty() {
            // A request still seen (dropping not yet visible) or still on its way stays as it
            // is; otherwise the NIC raises a new one, seen after the request cable.
            let seen = q.raised <= now && q.dropped.is_some_and(|d| now < d);
            let on_its_way = q.raised > now;
            if !seen && !on_its_way {
                q.raised = now + rl;
            }
        }
        q.dropped = None;
        q.packets.push_back((packet.id, packet.size.max(1)));
    }

    // `u64::is_multiple_of` is newer than the workspace's minimum Rust version.
    #[allow(clippy::manual_is_multiple_of)]
    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        if now % self.params.sched_latency == 0 && self.has_work() {
            self.schedule(now);
        }
        if now % self.slot_len() == 0 {
            self.run_slot(now);
        }
        if !self.outbox.is_empty() {
            self.outbox.sort_unstable();
            let due = self.outbox.partition_point(|&(at, _)| at <= now + 1);
            for (at, id) in self.outbox.drain(..due) {
                delivered.push(Delivery { packet: id, at });
            }
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        let out = self
            .outbox
            .iter()
            .map(|&(at, _)| at.saturating_sub(1).max(now))
            .min();
        let next_multiple = |m: u64| now.div_ceil(m) * m;
        let queued = self.voqs.values().any(|q| !q.packets.is_empty());
        let work = if queued {
            Some(next_multiple(self.params.sched_latency).min(next_multiple(self.slot_len())))
        } else {
            // Nothing to send: the only thing left is evicting idle connections, from the
            // moment the predictor lets go of the first one.
            self.next_eviction().map(|t| {
                next_multiple(self.params.sched_latency)
                    .max(t.div_ceil(self.params.sched_latency) * self.params.sched_latency)
            })
        };
        match (out, work) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::registry::{build, ModelContext};
    use crate::topology::Network;

    /// `threshold` is listed among the options: with the default predictor it is range-checked,
    /// not called unknown.
    #[test]
    fn predictor_settings_are_options_whatever_the_predictor() {
        let net = Network::build(&"crossbar:4".parse().unwrap()).unwrap();
        let ctx = ModelContext::new(&net);
        assert!(build("pms threshold=4", &ctx).is_ok());
        assert!(build("pms predictor=counter timeout=10", &ctx).is_ok());
        let e = build("pms threshold=0", &ctx)
            .err()
            .map(|e| e.0)
            .unwrap_or_default();
        assert!(e.contains("must be between 1"), "{e}");
    }
}
