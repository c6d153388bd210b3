//! Multi-hop TDM networks (Yuan Ch.4): the `multi-hop` model.
//!
//! A logical topology (torus, hypercube, allXY, all-to-all) is realized over the physical optical
//! torus by giving each logical connection a lightpath and a channel, checked conflict-free
//! ([`crate::sim::optical::rca::realize`]); the channels are the `d` slots of the frame. Every node runs an
//! electronic store-and-forward router (Yuan Fig 4.1, §2.3): one FIFO routing buffer, served in the
//! packet routing time γ (which includes the O/E/O conversion), then one FIFO path buffer per outgoing
//! lightpath, served once per frame in the lightpath's slot. A packet is routed along the logical
//! topology (all-to-all: direct; allXY: row, then column; hypercube: lowest differing bit first;
//! torus: x then y, the shorter way round), so it passes `h + 2` routers and `h + 1` lightpaths.
//!
//! Time: the model counts in slots (one slot = one optical packet, the unit of [`NetworkModel`]),
//! internally in quarter slots so that γ may be 0.25, 0.5, … (γ is rounded to a quarter slot).
//! A message of `size` packets is delivered when its last packet has left the destination's router.

use crate::sim::optical::OpticalError;
use ttdl_ir::limits::Limits;

use crate::sim::aapc::{link_head, Phase};
use crate::sim::drive::poisson::PoissonArrivals;
use crate::sim::event::EventQueue;
use crate::sim::optical::rca::{realize, Logical};
use crate::sim::optical::torus::Torus;
use crate::sim::options::{choice, int, real, ModelError, ModelOptions, OptionSpec};
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};
use crate::topology::NodeId;

/// Internal time steps per slot.
pub const TICKS_PER_SLOT: u64 = 4;

/// Parameters of a multi-hop network.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiHopConfig {
    pub torus: Torus,
    pub logical: Logical,
    /// Packet routing time in slots (Yuan's γ).
    pub gamma: f64,
}

/// Registry options.
pub const OPTIONS: &[OptionSpec] = &[
    choice(
        "logical",
        "torus",
        &["torus", "hypercube", "allxy", "all-to-all"],
        "the logical topology realized over the optical torus (Yuan §4.1)",
    ),
    real(
        "gamma",
        "1",
        "routing time at each intermediate router, in slots (Yuan's γ)",
    ),
    int("packet-words", "1", 1, 1 << 20, "words a slot carries"),
];

/// Builds the model for `simulate`/`compare` on a torus (or ring) network.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let torus = Torus::from_spec(&ctx.network.spec)?;
    let logical = Logical::parse(opts.choice("logical")?)?;
    let gamma = opts.real("gamma")?;
    let packet_words = opts.int("packet-words")?;
    let mut net = MultiHop::new(MultiHopConfig {
        torus,
        logical,
        gamma,
    })?;
    net.packet_words = packet_words;
    net.count_links(ctx.network);
    Ok(Box::new(net))
}

/// The multi-hop model (see the module docs).
pub struct MultiHop {
    cfg: MultiHopConfig,
    gamma_ticks: u64,
    /// Frame length: the number of channels the realization needed.
    d: u64,
    /// `neighbours[u]`: the logical neighbours of u with the channel of each lightpath.
    neighbours: Vec<Vec<(NodeId, usize)>>,
    /// Next free slot (absolute slot number) of each lightpath, by (node, neighbour index).
    path_free: Vec<Vec<u64>>,
    router_free: Vec<u64>,
    /// Events by time, then by the order they were made in.
    queue: EventQueue<(u64, Ev)>,
    seq: u64,
    /// Per message: packets still travelling, id, creation slot.
    msgs: Vec<Option<(u64, u64, u64)>>,
    free_msgs: Vec<usize>,
    ready_now: Vec<Delivery>,
    pub stats: MultiHopStats,
    /// Words of a program message carried by one optical packet (one slot).
    pub packet_words: u64,
    /// Physical links of each lightpath, parallel to `neighbours`.
    paths: Vec<Vec<Vec<usize>>>,
    /// Network link id of each internal link, and the slots each carried.
    link_ids: Vec<Option<usize>>,
    link_busy: Vec<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Packet of message `msg` reaches the routing buffer of `node`.
    AtRouter {
        msg: usize,
        node: NodeId,
        dst: NodeId,
        born: u64,
    },
    /// The router of `node` has routed it.
    Routed {
        msg: usize,
        node: NodeId,
        dst: NodeId,
        born: u64,
    },
}

/// Counters of a run (packet delays in slots).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MultiHopStats {
    pub packets: u64,
    pub delay_sum_ticks: u64,
    pub hops: u64,
    /// Only packets generated at or after this slot count.
    pub measure_from: u64,
}

impl MultiHop {
    pub fn new(cfg: MultiHopConfig) -> Result<MultiHop, OpticalError> {
        if !(cfg.gamma >= 0.0 && cfg.gamma <= 1e6) {
            return Err(OpticalError::Network(format!(
                "routing time γ must be between 0 and 10^6 slots (got {})",
                cfg.gamma
            )));
        }
        let phases = realize(&cfg.torus, cfg.logical)?;
        Ok(Self::from_phases(cfg, &phases))
    }

    /// A network over an already realized (and checked) set of channels.
    pub fn from_phases(cfg: MultiHopConfig, phases: &[Phase]) -> MultiHop {
        let n = cfg.torus.nodes();
        let mut lightpaths: Vec<Vec<(NodeId, usize, Vec<usize>)>> = vec![Vec::new(); n];
        for (slot, p) in phases.iter().enumerate() {
            for c in p {
                if let Some(v) = lightpaths.get_mut(c.src) {
                    v.push((c.dst, slot, c.links.clone()));
                }
            }
        }
        for v in &mut lightpaths {
            v.sort();
        }
        let neighbours: Vec<Vec<(NodeId, usize)>> = lightpaths
            .iter()
            .map(|v| v.iter().map(|(d, c, _)| (*d, *c)).collect())
            .collect();
        let paths = lightpaths
            .into_iter()
            .map(|v| v.into_iter().map(|(_, _, l)| l).collect())
            .collect();
        let path_free = neighbours.iter().map(|v| vec![0; v.len()]).collect();
        MultiHop {
            gamma_ticks: (cfg.gamma * TICKS_PER_SLOT as f64).round() as u64,
            d: phases.len().max(1) as u64,
            neighbours,
            path_free,
            router_free: vec![0; n],
            queue: EventQueue::new(),
            seq: 0,
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            ready_now: Vec::new(),
            stats: MultiHopStats::default(),
            packet_words: 1,
            paths,
            link_ids: Vec::new(),
            link_busy: Vec::new(),
            cfg,
        }
    }

    /// Counts link use by the link ids of `network` (the same torus, numbered as `topology::grid`).
    pub fn count_links(&mut self, network: &crate::topology::Network) {
        let t = self.cfg.torus;
        self.link_ids = (0..t.link_slots())
            .map(|l| network.link_between(l / 4, link_head(&t, l)))
            .collect();
        self.link_busy = vec![0; network.links.len()];
    }

    /// Multiplexing degree of the realization.
    pub fn degree(&self) -> usize {
        self.d as usize
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(at, (self.seq, ev));
    }

    /// The next logical node on the way from `u` to `dst`.
    pub fn next_hop(&self, u: NodeId, dst: NodeId) -> NodeId {
        let t = self.cfg.torus;
        let (ux, uy) = t.xy(u);
        let (dx, dy) = t.xy(dst);
        match self.cfg.logical {
            Logical::AllToAll => dst,
            Logical::AllXY => {
                if ux != dx {
                    t.node(dx, uy)
                } else {
                    dst
                }
            }
            Logical::Hypercube => {
                let diff = u ^ dst;
                u ^ (1 << diff.trailing_zeros())
            }
            Logical::Torus => {
                let step = |k: usize, a: usize, b: usize| {
                    let (way, _) =
                        Torus::shortest_way(k, a, b, crate::sim::optical::torus::Way::Plus);
                    match way {
                        crate::sim::optical::torus::Way::Plus => (a + 1) % k,
                        crate::sim::optical::torus::Way::Minus => (a + k - 1) % k,
                    }
                };
                if ux != dx {
                    t.node(step(t.nx, ux, dx), uy)
                } else {
                    t.node(ux, step(t.ny, uy, dy))
                }
            }
        }
    }

    fn handle(&mut self, now: u64, ev: Ev) {
        match ev {
            Ev::AtRouter {
                msg,
                node,
                dst,
                born,
            } => {
                let start = now.max(self.router_free[node]);
                let done = start + self.gamma_ticks;
                self.router_free[node] = done;
                self.push(
                    done,
                    Ev::Routed {
                        msg,
                        node,
                        dst,
                        born,
                    },
                );
            }
            Ev::Routed {
                msg,
                node,
                dst,
                born,
            } => {
                if node == dst {
                    if born >= self.stats.measure_from * TICKS_PER_SLOT {
                        self.stats.packets += 1;
                        self.stats.delay_sum_ticks += now - born;
                    }
                    self.packet_done(msg, now);
                    return;
                }
                let next = self.next_hop(node, dst);
                let Some(i) = self.neighbours[node].iter().position(|&(v, _)| v == next) else {
                    // Not a logical neighbour: cannot happen for a checked realization.
                    self.packet_done(msg, now);
                    return;
                };
                let c = self.neighbours[node][i].1 as u64;
                let d = self.d;
                let earliest = now.div_ceil(TICKS_PER_SLOT).max(self.path_free[node][i]);
                let slot = earliest + (c + d - earliest % d) % d;
                self.path_free[node][i] = slot + 1;
                self.stats.hops += 1;
                if let Some(links) = self.paths.get(node).and_then(|p| p.get(i)) {
                    for &l in links {
                        if let Some(Some(id)) = self.link_ids.get(l) {
                            if let Some(b) = self.link_busy.get_mut(*id) {
                                *b += 1;
                            }
                        }
                    }
                }
                self.push(
                    (slot + 1) * TICKS_PER_SLOT,
                    Ev::AtRouter {
                        msg,
                        node: next,
                        dst,
                        born,
                    },
                );
            }
        }
    }

    fn packet_done(&mut self, msg: usize, now: u64) {
        let Some(entry) = self.msgs.get_mut(msg) else {
            return;
        };
        let Some((left, id, _)) = entry.as_mut() else {
            return;
        };
        *left = left.saturating_sub(1);
        if *left == 0 {
            let id = *id;
            *entry = None;
            self.free_msgs.push(msg);
            self.ready_now.push(Delivery {
                packet: id,
                at: now.div_ceil(TICKS_PER_SLOT),
            });
        }
    }

    /// Mean packet delay (slots) of the packets counted so far.
    pub fn mean_delay(&self) -> f64 {
        if self.stats.packets == 0 {
            f64::NAN
        } else {
            self.stats.delay_sum_ticks as f64 / self.stats.packets as f64 / TICKS_PER_SLOT as f64
        }
    }
}

impl NetworkModel for MultiHop {
    fn name(&self) -> String {
        format!(
            "multi-hop {} d={} γ={}",
            self.cfg.logical.name(),
            self.d,
            self.cfg.gamma
        )
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        let n = self.cfg.torus.nodes();
        if packet.src == packet.dst || packet.src >= n || packet.dst >= n {
            self.ready_now.push(Delivery {
                packet: packet.id,
                at: now,
            });
            return;
        }
        let size = packet.size.div_ceil(self.packet_words.max(1)).max(1);
        let entry = Some((size, packet.id, now));
        let msg = crate::sim::slots::reuse_or_push(&mut self.msgs, &mut self.free_msgs, entry);
        let born = now * TICKS_PER_SLOT;
        for _ in 0..size {
            self.push(
                born,
                Ev::AtRouter {
                    msg,
                    node: packet.src,
                    dst: packet.dst,
                    born,
                },
            );
        }
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        let horizon = (now + 1) * TICKS_PER_SLOT;
        while let Some((t, (_, ev))) = self.queue.pop_due(horizon - 1) {
            self.handle(t, ev);
        }
        delivered.append(&mut self.ready_now);
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        if !self.ready_now.is_empty() {
            return Some(now);
        }
        self.queue
            .next_time()
            .map(|t| (t / TICKS_PER_SLOT).max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.link_busy.clone()
    }
}

/// Result of a multi-hop run under Poisson traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiHopResult {
    /// Offered load λ, packets per node per slot.
    pub lambda: f64,
    /// Delivered packets per node per slot.
    pub throughput: f64,
    /// Mean packet delay (generation → routed at the destination), slots.
    pub delay: f64,
    /// Mean logical hops (lightpaths) per packet.
    pub paths_per_packet: f64,
}

/// Poisson arrivals of single packets at λ per node per slot, destinations uniform over the other
/// nodes (Yuan §4.3's verification setup).
pub fn poisson_run(
    net: &mut MultiHop,
    lambda: f64,
    warmup: u64,
    measure: u64,
    seed: u64,
) -> Result<MultiHopResult, OpticalError> {
    let nodes = net.cfg.torus.nodes();
    let mut arrivals =
        PoissonArrivals::new(nodes, lambda, seed).map_err(|e| OpticalError::Parameter(e.0))?;
    // The run visits every node every slot and injects about λ·nodes packets a slot: refuse
    // runs that cannot finish rather than loop for days.
    let end = warmup
        .checked_add(measure)
        .filter(|&e| e as f64 * nodes as f64 <= Limits::SIM_NODE_SLOTS)
        .ok_or_else(|| {
            OpticalError::Parameter(format!(
                "{} slots on {nodes} nodes is more than a run can simulate \
                 ({1:.0e} node-slots); simulate fewer slots",
                warmup.saturating_add(measure),
                Limits::SIM_NODE_SLOTS
            ))
        })?;
    let packets = lambda * nodes as f64 * end as f64;
    if packets > Limits::SIM_PACKETS {
        return Err(OpticalError::Parameter(format!(
            "λ = {lambda} would inject about {packets:.3e} packets, more than a run can \
             simulate ({0:.0e}); lower λ or simulate fewer slots",
            Limits::SIM_PACKETS
        )));
    }
    net.stats.measure_from = warmup;
    let mut delivered = Vec::new();
    let mut got = 0u64;
    let hops_before = net.stats.hops;
    for now in 0..end {
        arrivals.due(now, 1, |p| net.inject(now, p));
        net.step(now, &mut delivered);
        got += delivered.iter().filter(|d| d.at >= warmup).count() as u64;
        delivered.clear();
    }
    let id = arrivals.count();
    Ok(MultiHopResult {
        lambda,
        throughput: got as f64 / (measure.max(1) * nodes as u64) as f64,
        delay: net.mean_delay(),
        paths_per_packet: (net.stats.hops - hops_before) as f64 / id.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::optical::torus::Torus;

    /// Slot counts and rates a user can type that would overflow or never finish are refused.
    #[test]
    fn impossible_poisson_runs_are_refused() {
        let mut net = MultiHop::new(MultiHopConfig {
            torus: Torus::new(4, 4),
            logical: Logical::Torus,
            gamma: 1.0,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        for (lambda, warmup, measure) in [
            (0.01, u64::MAX / 5, u64::MAX),
            (0.01, 0, 1 << 40),
            (1e300, 10, 100),
            (f64::INFINITY, 10, 100),
        ] {
            assert!(poisson_run(&mut net, lambda, warmup, measure, 1).is_err());
        }
        assert!(poisson_run(&mut net, 0.01, 10, 100, 1).is_ok());
    }
}
