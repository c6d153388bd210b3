//! Circuit switching (Chittor §1.3.1, eq 1.2): a header reserves the whole path hop by hop, then
//! the data streams across it as if over one link, and the path is torn down behind the tail.
//!
//! Conventions (in cycles; one word per cycle, `b = 1`): the sender waits the start-up overhead
//! `a` (option `overhead`, default 0), then the header takes `C1` cycles per hop to reserve a link
//! (option `setup`, default 2: one cycle out, one for the acknowledgement). The source's injection
//! port and the destination's ejection port are reserved too — one circuit each at a time, the
//! processor–network channel of SPEC §2 — at no extra cost. An uncontended packet of `L` words
//! over `D` hops therefore arrives after exactly `t_cs = a + C1·D + L` cycles.
//!
//! Contention: a header that finds a resource taken either holds what it has and waits for it
//! (`blocked=hold`; deadlock-free with dimension-order routing on meshes and hypercubes), or
//! releases its partial path and retries after a back-off (`blocked=retry`, the default on tori
//! and rings, whose wrap-around links close dependency cycles). Waiting headers are served oldest
//! first (`arb=oldest`, default) or in order of arrival (`arb=fifo`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::topology::{Kind, Network};

use super::geometry::Geometry;
use super::options::{ModelError, ModelOptions};
use super::registry::ModelContext;
use super::{Delivery, NetworkModel, Packet};

pub const OPTIONS: &str =
    "setup=2 (C1, cycles per hop) overhead=0 (a) arb=oldest|fifo blocked=hold|retry";

/// Builds the model from registry options.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let setup = opts.u64_in("setup", 2, 0, 1 << 20)?;
    let overhead = opts.u64_in("overhead", 0, 0, 1 << 32)?;
    let oldest = opts.choice("arb", "oldest", &["oldest", "fifo"])? == "oldest";
    let wraps = matches!(ctx.network.spec.kind, Kind::Torus | Kind::Ring);
    let retry = opts.choice(
        "blocked",
        if wraps { "retry" } else { "hold" },
        &["hold", "retry"],
    )? == "retry";
    Ok(Box::new(Circuit::new(
        ctx.network,
        setup,
        overhead,
        oldest,
        retry,
    )?))
}

const FREE: usize = usize::MAX;

struct Pkt {
    id: u64,
    created: u64,
    size: u64,
    /// Resources in acquisition order: injection port, links, ejection port.
    path: Vec<usize>,
    /// How many of `path` are held.
    held: usize,
    attempts: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The resource is released at this cycle.
    Free(usize),
    /// The header asks for its next resource.
    Probe(usize),
    /// The last word crosses during this cycle.
    Done(usize),
}

/// The circuit-switching model.
pub struct Circuit {
    geo: Geometry,
    nlinks: usize,
    nodes: usize,
    setup: u64,
    overhead: u64,
    oldest: bool,
    retry: bool,
    pkts: Vec<Option<Pkt>>,
    free_slots: Vec<usize>,
    owner: Vec<usize>,
    /// Per resource: waiting headers as (priority key, packet slot).
    waiters: Vec<Vec<((u64, u64), usize)>>,
    events: BinaryHeap<Reverse<(u64, Ev)>>,
    busy: Vec<u64>,
}

impl Circuit {
    pub fn new(
        net: &Network,
        setup: u64,
        overhead: u64,
        oldest: bool,
        retry: bool,
    ) -> Result<Self, ModelError> {
        let geo = Geometry::new(net)?;
        let nlinks = net.links.len();
        let nodes = net.nodes();
        let nres = nlinks + 2 * nodes;
        Ok(Circuit {
            geo,
            nlinks,
            nodes,
            setup,
            overhead,
            oldest,
            retry,
            pkts: Vec::new(),
            free_slots: Vec::new(),
            owner: vec![FREE; nres],
            waiters: vec![Vec::new(); nres],
            events: BinaryHeap::new(),
            busy: vec![0; nlinks],
        })
    }

    /// Grants free resources in `work` to their best waiters, following each winner's header
    /// through zero-delay steps in the same cycle.
    fn arbitrate(&mut self, now: u64, mut work: Vec<usize>) {
        work.sort_unstable();
        work.dedup();
        work.reverse();
        while let Some(r) = work.pop() {
            if self.owner[r] != FREE || self.waiters[r].is_empty() {
                continue;
            }
            let q = &mut self.waiters[r];
            let best = (0..q.len()).min_by_key(|&j| q[j].0).unwrap_or(0);
            let (_, s) = q.swap_remove(best);
            self.owner[r] = s;
            let Some(p) = self.pkts[s].as_mut() else {
                continue;
            };
            p.held += 1;
            if p.held == p.path.len() {
                // Path complete: stream the data.
                let size = p.size;
                for &res in &p.path {
                    if res < self.nlinks {
                        self.busy[res] += size;
                    }
                }
                self.events.push(Reverse((now + size - 1, Ev::Done(s))));
            } else {
                let next = p.path[p.held];
                let delay = if next < self.nlinks { self.setup } else { 0 };
                if delay == 0 {
                    let key = self.key(s, now);
                    self.waiters[next].push((key, s));
                    work.push(next);
                } else {
                    self.events.push(Reverse((now + delay, Ev::Probe(s))));
                }
            }
        }
    }

    fn key(&self, s: usize, now: u64) -> (u64, u64) {
        let p = self.pkts[s].as_ref();
        let id = p.map_or(0, |p| p.id);
        if self.oldest {
            (p.map_or(0, |p| p.created), id)
        } else {
            (now, id)
        }
    }
}

impl NetworkModel for Circuit {
    fn name(&self) -> String {
        let mut s = "circuit".to_string();
        if self.setup != 2 {
            s.push_str(&format!(" setup={}", self.setup));
        }
        if self.overhead != 0 {
            s.push_str(&format!(" overhead={}", self.overhead));
        }
        if !self.oldest {
            s.push_str(" arb=fifo");
        }
        s
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        let links = self.geo.path(packet.src, packet.dst).unwrap_or_default();
        let mut path = Vec::with_capacity(links.len() + 2);
        path.push(self.nlinks + packet.src.min(self.nodes.saturating_sub(1)));
        path.extend(links);
        path.push(self.nlinks + self.nodes + packet.dst.min(self.nodes.saturating_sub(1)));
        let pkt = Pkt {
            id: packet.id,
            created: packet.created,
            size: packet.size.clamp(1, 1 << 40),
            path,
            held: 0,
            attempts: 0,
        };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.pkts[s] = Some(pkt);
                s
            }
            None => {
                self.pkts.push(Some(pkt));
                self.pkts.len() - 1
            }
        };
        self.events
            .push(Reverse((now + self.overhead, Ev::Probe(slot))));
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        // Events a grant schedules for this same cycle are handled before returning.
        loop {
            let mut work = Vec::new();
            while let Some(&Reverse((at, ev))) = self.events.peek() {
                if at > now {
                    break;
                }
                self.events.pop();
                match ev {
                    Ev::Free(r) => {
                        self.owner[r] = FREE;
                        work.push(r);
                    }
                    Ev::Probe(s) => {
                        let Some(p) = self.pkts[s].as_ref() else {
                            continue;
                        };
                        let Some(&r) = p.path.get(p.held) else {
                            continue;
                        };
                        let key = self.key(s, now);
                        self.waiters[r].push((key, s));
                        work.push(r);
                    }
                    Ev::Done(s) => {
                        let Some(p) = self.pkts[s].take() else {
                            continue;
                        };
                        delivered.push(Delivery {
                            packet: p.id,
                            at: now + 1,
                        });
                        for &r in &p.path {
                            self.events.push(Reverse((now + 1, Ev::Free(r))));
                        }
                        self.free_slots.push(s);
                    }
                }
            }
            self.arbitrate(now, work);
            if self.retry {
                // Headers still waiting on a taken resource give up their partial path.
                let mut giving_up = Vec::new();
                for r in 0..self.waiters.len() {
                    if self.owner[r] != FREE && !self.waiters[r].is_empty() {
                        giving_up.extend(self.waiters[r].drain(..).map(|(_, s)| s));
                    }
                }
                giving_up.sort_unstable();
                for s in giving_up {
                    let Some(p) = self.pkts[s].as_mut() else {
                        continue;
                    };
                    for &r in &p.path[..p.held] {
                        self.events.push(Reverse((now + 1, Ev::Free(r))));
                    }
                    p.held = 0;
                    p.attempts += 1;
                    let backoff =
                        self.setup.max(1) * (p.path.len() as u64) * p.attempts.min(8) + p.id % 7;
                    self.events.push(Reverse((now + 1 + backoff, Ev::Probe(s))));
                }
            }
            if self.events.peek().is_none_or(|e| e.0 .0 > now) {
                break;
            }
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        self.events.peek().map(|Reverse((at, _))| (*at).max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.busy.clone()
    }

    fn stalled(&self, _now: u64) -> Option<String> {
        if self.events.is_empty() && self.pkts.iter().any(|p| p.is_some()) {
            Some("circuits wait on each other (a cycle of held paths)".into())
        } else {
            None
        }
    }
}
