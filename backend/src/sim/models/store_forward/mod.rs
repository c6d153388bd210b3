//! Store-and-forward packet switching (Chittor §1.3.1, eq 1.1): a packet crosses one link at a
//! time, wholly; each node relays it only after its last word has arrived.
//!
//! Conventions (in cycles; one word crosses a link per cycle, `b = 1`): every hop costs the relay
//! overhead `a` (option `a`, default 0 — the node's software handling, which does not occupy the
//! link) and then `L` cycles on the link, so an uncontended packet of `L` words over `D` hops
//! arrives after exactly `t_st = D·(a + L)` cycles. Routing is dimension order (a shortest path
//! on topologies without dimensions); each link serves
//! one packet at a time, the others queue at the node (unbounded buffers) and are served by
//! arrival order (`arb=fifo`, default) or oldest packet first (`arb=oldest`). A packet of size 0
//! is carried as one word.
//!
//! The node interface is every model's (SPEC §2): one injection and one ejection port per node,
//! one word per cycle each. The first hop streams the packet from the sender's memory through
//! its injection port onto the first link, so it needs both for the same `L` cycles; the last
//! hop likewise needs the receiver's ejection port. A node therefore puts one packet at a time
//! on the network (not one per outgoing link) and drains one at a time, and the uncontended
//! time stays `D·(a + L)`.

use crate::topology::LinkId;

use crate::sim::event::EventQueue;
use crate::sim::options::{choice, choice_enum, int, Choice, ModelError, ModelOptions, OptionSpec};

choice_enum! {
    /// Which waiting packet gets a free link.
    pub enum Arbitration {
        Fifo = "fifo",
        Oldest = "oldest",
    }
}
use crate::sim::paths::Paths;
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};

pub const OPTIONS: &[OptionSpec] = &[
    int(
        "a",
        "0",
        0,
        1 << 32,
        "relay cycles per hop (Chittor eq 1.1's a)",
    ),
    choice(
        "arb",
        "fifo",
        Arbitration::WORDS,
        "which waiting packet gets a free link",
    ),
    crate::sim::packets::OPTION,
];

/// Builds the model from registry options.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let a = opts.int("a")?;
    let oldest = opts.chosen::<Arbitration>("arb")? == Arbitration::Oldest;
    let model = Box::new(StoreForward::new(ctx.network, a, oldest)?);
    Ok(crate::sim::packets::limit(model, opts.int("packet")?))
}

struct Pkt {
    id: u64,
    created: u64,
    size: u64,
    path: Vec<LinkId>,
    hop: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The link becomes free at this cycle.
    Free(LinkId),
    /// The node's injection port becomes free.
    InjectFree(usize),
    /// The node's ejection port becomes free.
    EjectFree(usize),
    /// The packet asks for its next link.
    Request(usize),
    /// The packet's last word crosses its current link during this cycle.
    Arrive(usize),
}

/// The store-and-forward model.
pub struct StoreForward {
    paths: Paths,
    a: u64,
    oldest: bool,
    pkts: Vec<Option<Pkt>>,
    free_slots: Vec<usize>,
    busy_until: Vec<u64>,
    /// Per link: waiting packets as (priority key, packet slot).
    queue: Vec<Vec<((u64, u64), usize)>>,
    /// Per node: when its injection / ejection port is free again.
    inject_free: Vec<u64>,
    eject_free: Vec<u64>,
    /// Per node: the links that leave it / enter it (re-examined when a port frees).
    out_links: Vec<Vec<LinkId>>,
    in_links: Vec<Vec<LinkId>>,
    /// Per link: its source and destination node.
    ends: Vec<(usize, usize)>,
    events: EventQueue<Ev>,
    busy: Vec<u64>,
    touched: Vec<LinkId>,
    /// The largest packet handed over, in words (the buffer each input needs).
    largest: u64,
}

impl StoreForward {
    pub fn new(net: &crate::topology::Network, a: u64, oldest: bool) -> Result<Self, ModelError> {
        let paths = Paths::new(net);
        let nl = net.links.len();
        let n = net.nodes();
        let mut out_links = vec![Vec::new(); n];
        let mut in_links = vec![Vec::new(); n];
        for (id, l) in net.links.iter().enumerate() {
            out_links[l.from].push(id);
            in_links[l.to].push(id);
        }
        Ok(StoreForward {
            inject_free: vec![0; n],
            eject_free: vec![0; n],
            out_links,
            in_links,
            ends: net.links.iter().map(|l| (l.from, l.to)).collect(),
            paths,
            a,
            oldest,
            pkts: Vec::new(),
            free_slots: Vec::new(),
            busy_until: vec![0; nl],
            queue: vec![Vec::new(); nl],
            events: EventQueue::new(),
            busy: vec![0; nl],
            touched: Vec::new(),
            largest: 0,
        })
    }
}

impl StoreForward {
    /// The waiting packet with the best key, among the touched free links, whose ports are free:
    /// (link, index in its queue).
    fn best_grant(&self, now: u64) -> Option<(LinkId, usize)> {
        let mut best: Option<((u64, u64), LinkId, usize)> = None;
        for &l in &self.touched {
            if self.busy_until[l] > now {
                continue;
            }
            let (from, to) = self.ends[l];
            for (j, &(key, s)) in self.queue[l].iter().enumerate() {
                let Some(p) = self.pkts[s].as_ref() else {
                    continue;
                };
                if p.hop == 0 && self.inject_free[from] > now {
                    continue;
                }
                if p.hop + 1 == p.path.len() && self.eject_free[to] > now {
                    continue;
                }
                if best.is_none_or(|b| key < b.0) {
                    best = Some((key, l, j));
                }
            }
        }
        best.map(|(_, l, j)| (l, j))
    }
}

impl NetworkModel for StoreForward {
    fn name(&self) -> String {
        let mut s = "store-forward".to_string();
        if self.a != 0 {
            s.push_str(&format!(" a={}", self.a));
        }
        if self.oldest {
            s.push_str(" arb=oldest");
        }
        s
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        self.largest = self.largest.max(packet.size.min(1 << 40));
        let path = self.paths.path(packet.src, packet.dst).unwrap_or_default();
        let pkt = Pkt {
            id: packet.id,
            created: packet.created,
            size: packet.size.clamp(1, 1 << 40),
            path,
            hop: 0,
        };
        let slot =
            crate::sim::slots::reuse_or_push(&mut self.pkts, &mut self.free_slots, Some(pkt));
        self.events.push(now + self.a, Ev::Request(slot));
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        // Events a grant schedules for this same cycle are handled before returning.
        loop {
            self.touched.clear();
            while let Some((_, ev)) = self.events.pop_due(now) {
                match ev {
                    Ev::Free(l) => self.touched.push(l),
                    Ev::InjectFree(n) => self.touched.extend_from_slice(&self.out_links[n]),
                    Ev::EjectFree(n) => self.touched.extend_from_slice(&self.in_links[n]),
                    Ev::Request(s) => {
                        let Some(p) = self.pkts[s].as_ref() else {
                            continue;
                        };
                        let Some(&l) = p.path.get(p.hop) else {
                            // Same node (never sent by the core): deliver at once.
                            delivered.push(Delivery {
                                packet: p.id,
                                at: now + 1,
                            });
                            self.pkts[s] = None;
                            self.free_slots.push(s);
                            continue;
                        };
                        let key = if self.oldest {
                            (p.created, p.id)
                        } else {
                            (now, p.id)
                        };
                        self.queue[l].push((key, s));
                        self.touched.push(l);
                    }
                    Ev::Arrive(s) => {
                        let Some(p) = self.pkts[s].as_mut() else {
                            continue;
                        };
                        p.hop += 1;
                        if p.hop >= p.path.len() {
                            delivered.push(Delivery {
                                packet: p.id,
                                at: now + 1,
                            });
                            self.pkts[s] = None;
                            self.free_slots.push(s);
                        } else {
                            self.events.push(now + 1 + self.a, Ev::Request(s));
                        }
                    }
                }
            }
            self.touched.sort_unstable();
            self.touched.dedup();
            // Grant in priority order across the touched links: a port shared by several
            // links goes to the best packet that can use it, not to the lowest link id.
            while let Some((l, j)) = self.best_grant(now) {
                let (_, s) = self.queue[l].swap_remove(j);
                let Some(p) = self.pkts[s].as_ref() else {
                    continue;
                };
                let size = p.size;
                let (first, last) = (p.hop == 0, p.hop + 1 == p.path.len());
                let (from, to) = self.ends[l];
                if first {
                    self.inject_free[from] = now + size;
                    self.events.push(now + size, Ev::InjectFree(from));
                }
                if last {
                    self.eject_free[to] = now + size;
                    self.events.push(now + size, Ev::EjectFree(to));
                }
                self.busy_until[l] = now + size;
                self.busy[l] += size;
                self.events.push(now + size - 1, Ev::Arrive(s));
                self.events.push(now + size, Ev::Free(l));
            }
            if self.events.next_time().is_none_or(|at| at > now) {
                break;
            }
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        self.events.next_time().map(|at| at.max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.busy.clone()
    }

    fn hardware(&self, network: &crate::topology::Network) -> crate::sim::energy::Hardware {
        // Each input stores a whole packet: buffers as large as the largest packet carried.
        crate::sim::energy::Hardware::of_network(network, self.largest.max(1))
    }
}
