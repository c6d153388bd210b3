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
//! waits up to `patience` cycles, then releases its partial path and retries after a back-off
//! (`blocked=retry`), or takes the resource from a *younger* header that is still setting up its
//! path — which releases its partial path and retries — and waits for older headers and for
//! circuits that stream (`blocked=preempt`, the default on tori and rings, whose wrap-around links
//! close dependency cycles, and on topologies without dimensions, where routes are shortest paths
//! found by search). With `preempt` a header only ever waits for an older packet or a streaming
//! circuit, so the oldest packet always gets through: neither deadlock nor livelock (plain
//! `retry` livelocks on all-to-all traffic over 7×7 and larger tori, every header timing out on
//! another's partial path). Waiting headers are served oldest first (`arb=oldest`, default) or in
//! order of arrival (`arb=fifo`); age is (creation cycle, packet id).

use crate::topology::{Kind, Network};

use crate::sim::event::EventQueue;
use crate::sim::options::{
    choice, choice_depends, choice_enum, int, Choice, ModelError, ModelOptions, OptionSpec,
};

choice_enum! {
    /// Which waiting header gets a freed link.
    pub enum Arbitration {
        Oldest = "oldest",
        Fifo = "fifo",
    }
}
use crate::sim::paths::Paths;
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};

pub const OPTIONS: &[OptionSpec] = &[
    int("setup", "2", 0, 1 << 20, "cycles the header spends per hop reserving the path (Chittor's C1)"),
    int("overhead", "0", 0, 1 << 32, "cycles added at the source per message (Chittor's a)"),
    choice("arb", "oldest", Arbitration::WORDS, "which waiting header gets a freed link"),
    choice_depends("blocked", "preempt on tori and rings, else hold", Blocked::WORDS, "what a blocked header does: keep its partial path, release it and retry, or take the link from a younger circuit"),
    int("patience", "32", 0, 1 << 32, "cycles a blocked header waits before it retries (blocked=retry)"),
    crate::sim::packets::OPTION,
];

/// Builds the model from registry options.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let setup = opts.int("setup")?;
    let overhead = opts.int("overhead")?;
    let oldest = opts.chosen::<Arbitration>("arb")? == Arbitration::Oldest;
    // Hold-and-wait is deadlock-free only along dimension order on meshes and hypercubes.
    let wraps = matches!(ctx.network.spec.kind, Kind::Torus | Kind::Ring)
        || !Paths::new(ctx.network).is_dimension_order();
    let blocked = opts.chosen_or(
        "blocked",
        if wraps {
            Blocked::Preempt
        } else {
            Blocked::Hold
        },
    )?;
    let patience = opts.int("patience")?;
    let mut c = Circuit::new(ctx.network, setup, overhead, oldest, blocked)?;
    c.patience = patience;
    Ok(crate::sim::packets::limit(Box::new(c), opts.int("packet")?))
}

const FREE: usize = usize::MAX;

choice_enum! {
    /// What a header does when the next resource of its path is taken.
    pub enum Blocked {
        /// Keep the partial path and wait.
        Hold = "hold",
        /// Wait up to `patience` cycles, then release the partial path and retry after a
        /// back-off.
        Retry = "retry",
        /// Take the resource from a younger header still setting up; wait for older ones.
        Preempt = "preempt",
    }
}

struct Pkt {
    id: u64,
    created: u64,
    size: u64,
    /// Resources in acquisition order: injection port, links, ejection port.
    path: Vec<usize>,
    /// How many of `path` are held.
    held: usize,
    attempts: u64,
    /// Changes whenever the header restarts, so a probe scheduled before is ignored.
    generation: u64,
    /// Since when the header has waited for its next resource.
    wait_since: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The resource is released at this cycle.
    Free(usize),
    /// The header (of this generation) asks for its next resource.
    Probe(usize, u64),
    /// The last word crosses during this cycle.
    Done(usize),
    /// A waiting header's patience may have run out (retry mode).
    Timeout(usize),
}

/// The circuit-switching model.
pub struct Circuit {
    paths: Paths,
    nlinks: usize,
    nodes: usize,
    setup: u64,
    overhead: u64,
    oldest: bool,
    blocked: Blocked,
    generations: u64,
    /// Resources granted so far (the watchdog's progress counter).
    grants: u64,
    /// Cycles a blocked header waits before giving up its partial path (retry mode).
    pub patience: u64,
    pkts: Vec<Option<Pkt>>,
    free_slots: Vec<usize>,
    owner: Vec<usize>,
    /// Per resource: waiting headers as (priority key, packet slot).
    waiters: Vec<Vec<((u64, u64), usize)>>,
    events: EventQueue<Ev>,
    busy: Vec<u64>,
}

impl Circuit {
    pub fn new(
        net: &Network,
        setup: u64,
        overhead: u64,
        oldest: bool,
        blocked: Blocked,
    ) -> Result<Self, ModelError> {
        let paths = Paths::new(net);
        let nlinks = net.links.len();
        let nodes = net.nodes();
        let nres = nlinks + 2 * nodes;
        Ok(Circuit {
            paths,
            nlinks,
            nodes,
            setup,
            overhead,
            oldest,
            blocked,
            generations: 0,
            grants: 0,
            patience: 32,
            pkts: Vec::new(),
            free_slots: Vec::new(),
            owner: vec![FREE; nres],
            waiters: vec![Vec::new(); nres],
            events: EventQueue::new(),
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
            if self.waiters[r].is_empty() {
                continue;
            }
            if self.owner[r] != FREE
                && (self.blocked != Blocked::Preempt || !self.preempt(now, r, &mut work))
            {
                continue;
            }
            let q = &mut self.waiters[r];
            let best = (0..q.len()).min_by_key(|&j| q[j].0).unwrap_or(0);
            let (_, s) = q.swap_remove(best);
            self.owner[r] = s;
            self.grants += 1;
            let Some(p) = self.pkts[s].as_mut() else {
                continue;
            };
            p.wait_since = None;
            p.held += 1;
            if p.held == p.path.len() {
                // Path complete: stream the data.
                let size = p.size;
                for &res in &p.path {
                    if res < self.nlinks {
                        self.busy[res] += size;
                    }
                }
                self.events.push(now + size - 1, Ev::Done(s));
            } else {
                let next = p.path[p.held];
                let delay = if next < self.nlinks { self.setup } else { 0 };
                if delay == 0 {
                    let key = self.key(s, now);
                    self.wait(s, next, key, now);
                    work.push(next);
                } else {
                    let g = p.generation;
                    self.events.push(now + delay, Ev::Probe(s, g));
                }
            }
        }
    }

    /// Age of a packet: older packets have smaller keys.
    fn age(&self, s: usize) -> (u64, u64) {
        self.pkts[s]
            .as_ref()
            .map_or((u64::MAX, u64::MAX), |p| (p.created, p.id))
    }

    /// If the oldest header waiting for `r` is older than `r`'s owner and the owner is still
    /// setting up its path, the owner releases its partial path (freeing `r` now) and retries.
    fn preempt(&mut self, now: u64, r: usize, work: &mut Vec<usize>) -> bool {
        let o = self.owner[r];
        let Some(owner) = self.pkts[o].as_ref() else {
            return false;
        };
        if owner.held == owner.path.len() {
            return false; // streaming: it will finish and free `r`
        }
        let oldest_waiter = self.waiters[r].iter().map(|&(_, s)| self.age(s)).min();
        if oldest_waiter.is_none_or(|a| a >= self.age(o)) {
            return false;
        }
        self.restart(now, o, 0, work);
        true
    }

    /// Header `s` releases every resource it holds at once, leaves the queue it waits in, and
    /// probes again after `backoff` cycles.
    fn restart(&mut self, now: u64, s: usize, backoff: u64, work: &mut Vec<usize>) {
        self.generations += 1;
        let generation = self.generations;
        let Some(p) = self.pkts[s].as_mut() else {
            return;
        };
        let held: Vec<usize> = p.path[..p.held].to_vec();
        let pending = p.path.get(p.held).copied();
        p.held = 0;
        p.wait_since = None;
        p.attempts += 1;
        p.generation = generation;
        for r in held {
            self.owner[r] = FREE;
            work.push(r);
        }
        if let Some(r) = pending {
            self.waiters[r].retain(|&(_, w)| w != s);
        }
        let at = now + 1 + backoff;
        self.events.push(at, Ev::Probe(s, generation));
    }

    /// Queues header `s` for resource `r`; in retry mode, wakes it when its patience runs out.
    fn wait(&mut self, s: usize, r: usize, key: (u64, u64), now: u64) {
        self.waiters[r].push((key, s));
        if let Some(p) = self.pkts[s].as_mut() {
            p.wait_since = Some(now);
        }
        if self.blocked == Blocked::Retry {
            self.events.push(now + self.patience.max(1), Ev::Timeout(s));
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
        match self.blocked {
            Blocked::Retry => s.push_str(&format!(" retry patience={}", self.patience)),
            Blocked::Preempt => s.push_str(" preempt"),
            Blocked::Hold => {}
        }
        s
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        let links = self.paths.path(packet.src, packet.dst).unwrap_or_default();
        self.generations += 1;
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
            generation: self.generations,
            wait_since: None,
        };
        let slot =
            crate::sim::slots::reuse_or_push(&mut self.pkts, &mut self.free_slots, Some(pkt));
        let g = self.pkts[slot].as_ref().map_or(0, |p| p.generation);
        self.events.push(now + self.overhead, Ev::Probe(slot, g));
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        // Events a grant schedules for this same cycle are handled before returning.
        loop {
            let mut work = Vec::new();
            while let Some((_, ev)) = self.events.pop_due(now) {
                match ev {
                    Ev::Free(r) => {
                        self.owner[r] = FREE;
                        work.push(r);
                    }
                    Ev::Probe(s, g) => {
                        let Some(p) = self.pkts[s].as_ref().filter(|p| p.generation == g) else {
                            continue;
                        };
                        let Some(&r) = p.path.get(p.held) else {
                            continue;
                        };
                        let key = self.key(s, now);
                        self.wait(s, r, key, now);
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
                            self.events.push(now + 1, Ev::Free(r));
                        }
                        self.free_slots.push(s);
                    }
                    Ev::Timeout(_) => {}
                }
            }
            self.arbitrate(now, work);
            if self.blocked == Blocked::Retry {
                // Headers still waiting on a taken resource give up their partial path.
                // Headers that have waited `patience` cycles on a taken resource give up.
                let mut giving_up = Vec::new();
                for r in 0..self.waiters.len() {
                    if self.owner[r] == FREE || self.waiters[r].is_empty() {
                        continue;
                    }
                    let pkts = &self.pkts;
                    let patience = self.patience;
                    self.waiters[r].retain(|&(_, s)| {
                        let since = pkts[s].as_ref().and_then(|p| p.wait_since);
                        let tired = since.is_none_or(|x| now >= x + patience);
                        if tired {
                            giving_up.push(s);
                        }
                        !tired
                    });
                }
                giving_up.sort_unstable();
                for s in giving_up {
                    let Some(p) = self.pkts[s].as_mut() else {
                        continue;
                    };
                    for &r in &p.path[..p.held] {
                        self.events.push(now + 1, Ev::Free(r));
                    }
                    p.held = 0;
                    p.wait_since = None;
                    p.attempts += 1;
                    let backoff =
                        self.setup.max(1) * (p.path.len() as u64) * p.attempts.min(8) + p.id % 7;
                    let g = p.generation;
                    self.events.push(now + 1 + backoff, Ev::Probe(s, g));
                }
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

    fn progress(&self) -> u64 {
        self.grants
    }

    fn stalled(&self, _now: u64) -> Option<String> {
        if self.events.is_empty() && self.pkts.iter().any(|p| p.is_some()) {
            Some("circuits wait on each other (a cycle of held paths)".into())
        } else {
            None
        }
    }
}
