//! Distributed path reservation on an optical TDM torus (Yuan Ch.3): the `path-reservation` model.
//!
//! The data network is a torus with multiplexing degree `d` under *path multiplexing*: a connection
//! holds the same channel (time slot) on every link of its XY path, including the source's
//! transmitter (injection link) and the destination's receiver (ejection link) (Yuan §2.1, Ch.3 intro).
//! A connection on channel `c` sends one packet per frame, in the slots `t ≡ c (mod d)`.
//!
//! Connections are set up by control packets on a shadow network of the same shape (Yuan Fig 3.1).
//! Every control packet is an event: it is processed by the control router of the node it reaches
//! (a FIFO server with service time `ctrl_proc` slots, so control traffic can congest) and then takes
//! `ctrl_prop` slots to the next node. Each node keeps, per link it drives and per channel, the state
//! AVAIL, LOCK or BUSY and the owning connection.
//!
//! - **Forward** (§3.1, Fig 3.2): `RES{cset}` goes source→destination, intersecting `cset` with the
//!   available channels of each link and locking what is left; the destination picks one channel and
//!   returns `ACK`, which marks it BUSY and unlocks the rest; the source sends when the ACK arrives.
//!   On an empty intersection `FAIL/NACK` returns to the source, unlocking on the way.
//! - **Backward** (§3.2, Fig 3.3): `PROB{init}` goes source→destination collecting the available
//!   channels without locking; the destination sends `RES{cset}` (a window of `s` of them) back,
//!   locking; the source picks a channel, sends `ACK` forward and starts sending at once. A failing RES
//!   sends `NACK` to the source and `FAIL` to the destination (to unlock); a failing PROB sends `NACK`.
//! - **Dropping vs holding**: with `hold > 0` a blocked RES waits at the node, rechecking every slot,
//!   for up to `hold` slots before failing (dropping is `hold = 0`). PROB never holds.
//! - **Initial channel set**: forward, a cyclic window of `s` channels from a random start (§3.3);
//!   backward, a cyclic window of `s` of the probed channels from a random start (all if fewer).
//! - A failed attempt is retried after a random delay uniform in `[0, MRT−1]`, with a new window.
//! - After the last packet the source sends `REL`, which frees the channel hop by hop.
//!
//! Latency is Yuan's: from the message being ready to its first packet being sent. Deliveries are
//! reported when the last packet arrives.

use crate::sim::optical::OpticalError;
use std::collections::VecDeque;
use ttdl_ir::limits::Limits;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sim::aapc::link_head;
use crate::sim::drive::poisson::PoissonArrivals;
use crate::sim::event::EventQueue;
use crate::sim::optical::torus::Torus;
use crate::sim::options::{
    choice, choice_enum, int, int_depends, Choice, ModelError, ModelOptions, OptionSpec,
};
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};
use crate::topology::NodeId;

choice_enum! {
    /// Reservation direction (Yuan §3.1 vs §3.2).
    #[derive(Hash)]
    pub enum Direction {
        Backward = "backward",
        Forward = "forward",
    }
}

/// Protocol and system parameters (Yuan §3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct ReservationConfig {
    pub torus: Torus,
    /// Multiplexing degree (1..=64).
    pub d: usize,
    pub direction: Direction,
    /// Holding time in slots; 0 is dropping.
    pub hold: u64,
    /// Initial channel-set size (1 = conservative, d = aggressive).
    pub s: usize,
    /// Maximum retransmit time: retries wait uniform in [0, MRT−1] slots.
    pub mrt: u64,
    /// Control packet processing time per node (slots).
    pub ctrl_proc: u64,
    /// Control packet propagation time per hop (slots).
    pub ctrl_prop: u64,
    /// At most this many messages of one source in reservation or transmission at once (a node has
    /// `d` transmitter channels, so more could never be used); the rest wait in its queue.
    pub max_outstanding: usize,
    /// Words of a program message carried by one optical packet (one slot); a message of `size`
    /// words is `⌈size / packet_words⌉` packets.
    pub packet_words: u64,
    pub seed: u64,
}

impl ReservationConfig {
    /// Yuan's defaults (§3.3): backward dropping, control processing 1 + propagation 1 per hop
    /// (the "2 time units" of Ch.3, split as in Ch.6), MRT 5 (60 for forward aggressive).
    pub fn new(torus: Torus, d: usize, direction: Direction, s: usize) -> ReservationConfig {
        let mrt = if direction == Direction::Forward && s >= d && d > 1 {
            60
        } else {
            5
        };
        ReservationConfig {
            torus,
            d,
            direction,
            hold: 0,
            s,
            mrt,
            ctrl_proc: 1,
            ctrl_prop: 1,
            max_outstanding: d,
            packet_words: 1,
            seed: 1,
        }
    }

    /// Yuan's protocol name: F/B, H/D, then the s used (C = 1, A = d, otherwise the number).
    pub fn label(&self) -> String {
        let dir = match self.direction {
            Direction::Forward => 'F',
            Direction::Backward => 'B',
        };
        let hold = if self.hold == 0 { 'D' } else { 'H' };
        let s = if self.s <= 1 {
            "C".to_string()
        } else if self.s >= self.d {
            "A".to_string()
        } else {
            format!("s={}", self.s)
        };
        format!("{dir}{hold}{s}")
    }

    pub fn validate(&self) -> Result<(), OpticalError> {
        if self.d == 0 || self.d > 64 {
            return Err(OpticalError::Parameter(format!(
                "multiplexing degree d must be 1..=64 (got {})",
                self.d
            )));
        }
        if self.s == 0 || self.s > self.d {
            return Err(OpticalError::Parameter(format!(
                "initial channel-set size s must be 1..=d (got s={}, d={})",
                self.s, self.d
            )));
        }
        if self.mrt == 0 {
            return Err(OpticalError::Parameter("MRT must be at least 1".into()));
        }
        if self.ctrl_proc + self.ctrl_prop == 0 {
            return Err(OpticalError::Parameter(
                "control packets need a positive processing or propagation time".into(),
            ));
        }
        if self.packet_words == 0 {
            return Err(OpticalError::Parameter(
                "packet-words must be at least 1".into(),
            ));
        }
        if self.max_outstanding == 0 {
            return Err(OpticalError::Parameter(
                "max_outstanding must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// Registry options.
pub const OPTIONS: &[OptionSpec] = &[
    int(
        "d",
        "4",
        1,
        64,
        "multiplexing degree: time slots per link (Yuan's d)",
    ),
    choice(
        "dir",
        "backward",
        Direction::WORDS,
        "reservation protocol (Yuan §3.2–3.3)",
    ),
    int(
        "s",
        "1",
        1,
        64,
        "channels a reservation asks for at once (at most d)",
    ),
    int(
        "hold",
        "0",
        0,
        1 << 20,
        "cycles a blocked reservation holds what it has (0: drop)",
    ),
    int_depends(
        "mrt",
        "5; 60 for forward with s=d",
        1,
        1 << 20,
        "maximum retransmission time: a dropped request waits up to this long",
    ),
    int(
        "proc",
        "1",
        0,
        1 << 20,
        "cycles a control packet spends in each node",
    ),
    int(
        "prop",
        "1",
        0,
        1 << 20,
        "cycles a control packet spends on each link",
    ),
    int_depends(
        "outstanding",
        "d",
        1,
        1 << 20,
        "connections a node may have in set-up or use at once",
    ),
    int("packet-words", "1", 1, 1 << 20, "words a slot carries"),
    int_depends(
        "seed",
        "the run's seed",
        0,
        u64::MAX,
        "seed of the retransmission back-off",
    ),
];

/// Builds the model for `simulate`/`compare` on a torus (or ring) network.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let torus = Torus::from_spec(&ctx.network.spec)?;
    let d = opts.int("d")? as usize;
    let direction = opts.chosen("dir")?;
    let s = opts.int("s")? as usize;
    let mut cfg = ReservationConfig::new(torus, d, direction, s.min(d));
    cfg.hold = opts.int("hold")?;
    cfg.mrt = opts.int_or("mrt", cfg.mrt)?;
    cfg.ctrl_proc = opts.int("proc")?;
    cfg.ctrl_prop = opts.int("prop")?;
    cfg.max_outstanding = opts.int_or("outstanding", d as u64)? as usize;
    cfg.packet_words = opts.int("packet-words")?;
    cfg.seed = opts.int_or("seed", ctx.seed)?;
    let net = PathReservation::new(cfg)?;
    Ok(Box::new(net.with_network_links(ctx.network)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ctrl {
    Prob,
    Res,
    Ack,
    Nack,
    Fail,
    Rel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A new reservation attempt of a request.
    Start { req: usize },
    /// A control packet reaches the node at path position `pos`.
    Arrive { req: usize, kind: Ctrl, pos: usize },
    /// The node has processed it.
    Process { req: usize, kind: Ctrl, pos: usize },
    /// A held RES rechecks its links.
    HoldCheck { req: usize, pos: usize },
    /// The last packet has arrived.
    DataDone { req: usize },
}

struct Request {
    packet: u64,
    src: NodeId,
    size: u64,
    ready: u64,
    /// Nodes of the XY path, source first.
    nodes: Vec<NodeId>,
    /// Links each path position drives (see [`PathReservation::handled`]).
    handled: Vec<Vec<usize>>,
    cset: u64,
    chosen: usize,
    hold_until: Option<u64>,
    attempts: u64,
}

/// Counters of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReservationStats {
    pub delivered: u64,
    /// Messages whose first packet went out, and the sum of their latencies (ready → first packet).
    pub started: u64,
    pub latency_sum: u64,
    pub attempts: u64,
    pub control_packets: u64,
}

/// The path-reservation model (see the module docs).
pub struct PathReservation {
    cfg: ReservationConfig,
    rng: ChaCha8Rng,
    /// Events by time, then by the order they were made in.
    queue: EventQueue<(u64, Ev)>,
    seq: u64,
    reqs: Vec<Option<Request>>,
    free_reqs: Vec<usize>,
    /// Per link (network links, then injection, then ejection): channels LOCKed / BUSY.
    locked: Vec<u64>,
    busy: Vec<u64>,
    /// Owner request of each (link, channel).
    owner: Vec<usize>,
    /// When each node's control router is next free.
    ctrl_free: Vec<u64>,
    waiting: Vec<VecDeque<usize>>,
    outstanding: Vec<usize>,
    ready_now: Vec<Delivery>,
    pub stats: ReservationStats,
    /// Network link id of each internal link (`4·node + dir`), for [`NetworkModel::link_busy`].
    link_ids: Vec<Option<usize>>,
    link_busy: Vec<u64>,
    /// Only messages whose first packet leaves at or after this time count in `stats.started`.
    pub measure_from: u64,
}

impl PathReservation {
    pub fn new(cfg: ReservationConfig) -> Result<PathReservation, OpticalError> {
        cfg.validate()?;
        let n = cfg.torus.nodes();
        let links = 6 * n;
        Ok(PathReservation {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            queue: EventQueue::new(),
            seq: 0,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            locked: vec![0; links],
            busy: vec![0; links],
            owner: vec![usize::MAX; links * cfg.d],
            ctrl_free: vec![0; n],
            waiting: vec![VecDeque::new(); n],
            outstanding: vec![0; n],
            ready_now: Vec::new(),
            stats: ReservationStats::default(),
            link_ids: Vec::new(),
            link_busy: Vec::new(),
            measure_from: 0,
            cfg,
        })
    }

    /// Counts link use by the link ids of `network` (the same torus, numbered as `topology::grid`).
    pub fn with_network_links(mut self, network: &crate::topology::Network) -> PathReservation {
        let t = self.cfg.torus;
        self.link_ids = (0..t.link_slots())
            .map(|l| network.link_between(l / 4, link_head(&t, l)))
            .collect();
        self.link_busy = vec![0; network.links.len()];
        self
    }

    pub fn config(&self) -> &ReservationConfig {
        &self.cfg
    }

    fn all(&self) -> u64 {
        if self.cfg.d >= 64 {
            u64::MAX
        } else {
            (1u64 << self.cfg.d) - 1
        }
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(at, (self.seq, ev));
    }

    /// Links driven at each path position: the source drives its transmitter and first link, an
    /// intermediate node its outgoing link, the destination its receiver.
    fn handled(&self, nodes: &[NodeId], links: &[usize]) -> Vec<Vec<usize>> {
        let n = self.cfg.torus.nodes();
        let k = links.len();
        (0..=k)
            .map(|i| {
                let mut h = Vec::new();
                if i == 0 {
                    h.push(4 * n + nodes[0]);
                }
                if i < k {
                    h.push(links[i]);
                }
                if i == k {
                    h.push(5 * n + nodes[k]);
                }
                h
            })
            .collect()
    }

    fn avail(&self, links: &[usize]) -> u64 {
        links
            .iter()
            .fold(self.all(), |m, &l| m & !(self.locked[l] | self.busy[l]))
    }

    fn lock(&mut self, req: usize, links: &[usize], set: u64) {
        let d = self.cfg.d;
        for &l in links {
            self.locked[l] |= set;
            for c in bits(set) {
                self.owner[l * d + c] = req;
            }
        }
    }

    /// Unlocks this request's locked channels on `links`, except `keep` which becomes BUSY.
    fn settle(&mut self, req: usize, links: &[usize], keep: Option<usize>) {
        let d = self.cfg.d;
        for &l in links {
            for c in bits(self.locked[l]) {
                if self.owner[l * d + c] == req {
                    self.locked[l] &= !(1u64 << c);
                    if keep == Some(c) {
                        self.busy[l] |= 1u64 << c;
                    } else {
                        self.owner[l * d + c] = usize::MAX;
                    }
                }
            }
        }
    }

    fn release(&mut self, req: usize, links: &[usize]) {
        let d = self.cfg.d;
        for &l in links {
            for c in bits(self.busy[l]) {
                if self.owner[l * d + c] == req {
                    self.busy[l] &= !(1u64 << c);
                    self.owner[l * d + c] = usize::MAX;
                }
            }
        }
    }

    fn send(&mut self, now: u64, req: usize, kind: Ctrl, pos: usize) {
        self.stats.control_packets += 1;
        self.push(now + self.cfg.ctrl_prop, Ev::Arrive { req, kind, pos });
    }

    fn retry(&mut self, now: u64, req: usize) {
        let wait = self.rng.random_range(0..self.cfg.mrt);
        self.push(now + wait, Ev::Start { req });
    }

    /// A cyclic window of `s` channels of `from` (all of it if smaller), from a random start.
    fn window(&mut self, from: u64) -> u64 {
        let chans: Vec<usize> = bits(from).collect();
        let s = self.cfg.s;
        if chans.len() <= s {
            return from;
        }
        let start = self.rng.random_range(0..chans.len());
        (0..s).fold(0, |m, i| m | 1u64 << chans[(start + i) % chans.len()])
    }

    fn pick(&mut self, set: u64) -> usize {
        let chans: Vec<usize> = bits(set).collect();
        chans[self.rng.random_range(0..chans.len())]
    }

    fn req(&self, req: usize) -> Option<&Request> {
        self.reqs.get(req).and_then(Option::as_ref)
    }

    fn handled_at(&self, req: usize, pos: usize) -> Vec<usize> {
        self.req(req)
            .and_then(|r| r.handled.get(pos).cloned())
            .unwrap_or_default()
    }

    fn last_pos(&self, req: usize) -> usize {
        self.req(req).map_or(0, |r| r.nodes.len() - 1)
    }

    fn admit(&mut self, now: u64, src: NodeId) {
        while self.outstanding[src] < self.cfg.max_outstanding {
            let Some(req) = self.waiting[src].pop_front() else {
                break;
            };
            self.outstanding[src] += 1;
            self.push(now, Ev::Start { req });
        }
    }

    fn handle(&mut self, now: u64, ev: Ev) {
        match ev {
            Ev::Start { req } => {
                let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) else {
                    return;
                };
                r.attempts += 1;
                r.hold_until = None;
                self.stats.attempts += 1;
                match self.cfg.direction {
                    Direction::Forward => {
                        let d = self.cfg.d;
                        let m = self.rng.random_range(0..d);
                        let set = (0..self.cfg.s).fold(0u64, |acc, i| acc | 1u64 << ((m + i) % d));
                        if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                            r.cset = set;
                        }
                        self.arrive(now, req, Ctrl::Res, 0);
                    }
                    Direction::Backward => {
                        let all = self.all();
                        if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                            r.cset = all;
                        }
                        self.arrive(now, req, Ctrl::Prob, 0);
                    }
                }
            }
            Ev::Arrive { req, kind, pos } => self.arrive(now, req, kind, pos),
            Ev::Process { req, kind, pos } => self.process(now, req, kind, pos),
            Ev::HoldCheck { req, pos } => self.res(now, req, pos, true),
            Ev::DataDone { req } => {
                let Some(r) = self.req(req) else { return };
                self.ready_now.push(Delivery {
                    packet: r.packet,
                    at: now,
                });
                self.stats.delivered += 1;
                self.arrive(now, req, Ctrl::Rel, 0);
            }
        }
    }

    /// A control packet reaches a node: it queues for the node's control router.
    fn arrive(&mut self, now: u64, req: usize, kind: Ctrl, pos: usize) {
        let Some(node) = self.req(req).and_then(|r| r.nodes.get(pos).copied()) else {
            return;
        };
        let start = now.max(self.ctrl_free[node]);
        let done = start + self.cfg.ctrl_proc;
        self.ctrl_free[node] = done;
        self.push(done, Ev::Process { req, kind, pos });
    }

    fn process(&mut self, now: u64, req: usize, kind: Ctrl, pos: usize) {
        let k = self.last_pos(req);
        let fwd = self.cfg.direction == Direction::Forward;
        match kind {
            Ctrl::Prob => {
                let links = self.handled_at(req, pos);
                let init = self.req(req).map_or(0, |r| r.cset) & self.avail(&links);
                if init == 0 {
                    self.fail_to_source(now, req, pos);
                } else if pos == k {
                    let set = self.window(init);
                    if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                        r.cset = set;
                    }
                    self.res(now, req, pos, false);
                } else {
                    if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                        r.cset = init;
                    }
                    self.send(now, req, Ctrl::Prob, pos + 1);
                }
            }
            Ctrl::Res => self.res(now, req, pos, false),
            Ctrl::Ack => {
                let links = self.handled_at(req, pos);
                let c = self.req(req).map_or(0, |r| r.chosen);
                self.settle(req, &links, Some(c));
                if fwd {
                    if pos == 0 {
                        self.start_data(now, req);
                    } else {
                        self.send(now, req, Ctrl::Ack, pos - 1);
                    }
                } else if pos < k {
                    self.send(now, req, Ctrl::Ack, pos + 1);
                }
            }
            Ctrl::Nack => {
                let links = self.handled_at(req, pos);
                self.settle(req, &links, None);
                if pos == 0 {
                    self.retry(now, req);
                } else {
                    self.send(now, req, Ctrl::Nack, pos - 1);
                }
            }
            Ctrl::Fail => {
                let links = self.handled_at(req, pos);
                self.settle(req, &links, None);
                if pos < k {
                    self.send(now, req, Ctrl::Fail, pos + 1);
                }
            }
            Ctrl::Rel => {
                let links = self.handled_at(req, pos);
                self.release(req, &links);
                if pos < k {
                    self.send(now, req, Ctrl::Rel, pos + 1);
                } else {
                    self.finish(now, req);
                }
            }
        }
    }

    /// The request failed at `pos`: tell the source (which retries), unlocking on the way.
    fn fail_to_source(&mut self, now: u64, req: usize, pos: usize) {
        if pos == 0 {
            self.retry(now, req);
        } else {
            self.send(now, req, Ctrl::Nack, pos - 1);
        }
    }

    /// RES processing at `pos` (forward: moving to the destination; backward: to the source).
    fn res(&mut self, now: u64, req: usize, pos: usize, recheck: bool) {
        let links = self.handled_at(req, pos);
        let Some(r) = self.req(req) else { return };
        let (cset, hold_until) = (r.cset, r.hold_until);
        let k = r.nodes.len() - 1;
        let got = cset & self.avail(&links);
        if got == 0 {
            let deadline = match hold_until {
                Some(t) if recheck => t,
                _ => now + self.cfg.hold,
            };
            if now < deadline {
                if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                    r.hold_until = Some(deadline);
                }
                self.push(now + 1, Ev::HoldCheck { req, pos });
                return;
            }
            if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                r.hold_until = None;
            }
            match self.cfg.direction {
                Direction::Forward => self.fail_to_source(now, req, pos),
                Direction::Backward => {
                    if pos < k {
                        self.send(now, req, Ctrl::Fail, pos + 1);
                    }
                    self.fail_to_source(now, req, pos);
                }
            }
            return;
        }
        self.lock(req, &links, got);
        if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
            r.cset = got;
            r.hold_until = None;
        }
        match self.cfg.direction {
            Direction::Forward if pos < k => self.send(now, req, Ctrl::Res, pos + 1),
            Direction::Forward => {
                // The destination picks a channel; its ACK is processed here, then travels back.
                let c = self.pick(got);
                if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                    r.chosen = c;
                }
                self.settle(req, &links, Some(c));
                self.send(now, req, Ctrl::Ack, pos - 1);
            }
            Direction::Backward if pos > 0 => self.send(now, req, Ctrl::Res, pos - 1),
            Direction::Backward => {
                let c = self.pick(got);
                if let Some(r) = self.reqs.get_mut(req).and_then(Option::as_mut) {
                    r.chosen = c;
                }
                self.settle(req, &links, Some(c));
                self.send(now, req, Ctrl::Ack, 1);
                self.start_data(now, req);
            }
        }
    }

    /// The source sends its packets in the slots of its channel, one per frame.
    fn start_data(&mut self, now: u64, req: usize) {
        let d = self.cfg.d as u64;
        let Some(r) = self.req(req) else { return };
        let c = r.chosen as u64;
        let first = now + (c + d - now % d) % d;
        let last = first + (r.size.max(1) - 1) * d;
        let ready = r.ready;
        let packets = r.size.max(1);
        let used: Vec<usize> = r.handled.iter().flatten().copied().collect();
        for l in used {
            if let Some(Some(id)) = self.link_ids.get(l) {
                if let Some(b) = self.link_busy.get_mut(*id) {
                    *b += packets;
                }
            }
        }
        if first >= self.measure_from {
            self.stats.started += 1;
            self.stats.latency_sum += first - ready;
        }
        self.push(last + 1, Ev::DataDone { req });
    }

    fn finish(&mut self, now: u64, req: usize) {
        let Some(r) = self.reqs.get_mut(req).and_then(Option::take) else {
            return;
        };
        self.free_reqs.push(req);
        self.outstanding[r.src] = self.outstanding[r.src].saturating_sub(1);
        self.admit(now, r.src);
    }

    /// True when no channel of any link is locked or busy (e.g. once every request has finished).
    pub fn all_channels_free(&self) -> bool {
        self.locked.iter().chain(&self.busy).all(|&m| m == 0)
    }

    /// Requests not yet finished.
    pub fn in_flight(&self) -> usize {
        self.reqs.iter().filter(|r| r.is_some()).count()
    }
}

fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(b)
        }
    })
}

impl NetworkModel for PathReservation {
    fn name(&self) -> String {
        format!("path-reservation d={} {}", self.cfg.d, self.cfg.label())
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        let t = self.cfg.torus;
        if packet.src == packet.dst || packet.src >= t.nodes() || packet.dst >= t.nodes() {
            // Nothing to reserve (or nowhere to go): hand it straight back.
            self.ready_now.push(Delivery {
                packet: packet.id,
                at: now,
            });
            return;
        }
        let links = t.xy_route(packet.src, packet.dst);
        let mut nodes = vec![packet.src];
        nodes.extend(links.iter().map(|&l| link_head(&t, l)));
        let handled = self.handled(&nodes, &links);
        let r = Request {
            packet: packet.id,
            src: packet.src,
            size: packet.size.div_ceil(self.cfg.packet_words).max(1),
            ready: now,
            nodes,
            handled,
            cset: 0,
            chosen: 0,
            hold_until: None,
            attempts: 0,
        };
        let id = crate::sim::slots::reuse_or_push(&mut self.reqs, &mut self.free_reqs, Some(r));
        self.waiting[packet.src].push_back(id);
        self.admit(now, packet.src);
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        while let Some((t, (_, ev))) = self.queue.pop_due(now) {
            self.handle(t, ev);
        }
        delivered.append(&mut self.ready_now);
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        if !self.ready_now.is_empty() {
            return Some(now);
        }
        self.queue.next_time().map(|t| t.max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.link_busy.clone()
    }
}

/// Result of a run under Poisson traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadResult {
    /// Offered load (messages per node per slot).
    pub rate: f64,
    /// Delivered messages per node per slot in the measurement window.
    pub throughput: f64,
    /// Mean latency (ready → first packet sent) of messages started in the window, in slots.
    pub latency: f64,
    /// Reservation attempts per started message.
    pub attempts_per_message: f64,
}

/// Drives a path-reservation network with Poisson arrivals of `rate` messages per node per slot,
/// `msg_size` packets each, destinations uniform over the other nodes (Yuan §3.3); measures
/// `measure` slots after `warmup`. A rate far above saturation measures the maximum throughput.
pub fn poisson_run(
    cfg: &ReservationConfig,
    rate: f64,
    msg_size: u64,
    warmup: u64,
    measure: u64,
) -> Result<LoadResult, OpticalError> {
    let mut net = PathReservation::new(cfg.clone())?;
    let nodes = cfg.torus.nodes();
    let mut arrivals = PoissonArrivals::new(nodes, rate, cfg.seed ^ 0x9e37_79b9_7f4a_7c15)
        .map_err(|e| OpticalError::Parameter(e.0))?;
    let end = warmup.checked_add(measure).ok_or_else(|| {
        OpticalError::Parameter(format!(
            "warm-up {warmup} plus measurement {measure} slots is too long"
        ))
    })?;
    let packets = rate * nodes as f64 * end as f64;
    if packets > Limits::SIM_PACKETS {
        return Err(OpticalError::Parameter(format!(
            "rate {rate} would inject about {packets:.3e} messages, more than a run can simulate \
             ({:.0e}); lower the rate or simulate fewer slots",
            Limits::SIM_PACKETS
        )));
    }
    net.measure_from = warmup;
    let mut delivered = Vec::new();
    let mut counted = 0u64;
    let mut started_before = 0u64;
    let mut latency_before = 0u64;
    let mut now = 0u64;
    while now < end {
        arrivals.due(now, msg_size, |p| net.inject(now, p));
        net.step(now, &mut delivered);
        counted += delivered
            .iter()
            .filter(|d| d.at >= warmup && d.at < end)
            .count() as u64;
        delivered.clear();
        if now + 1 == warmup {
            started_before = net.stats.started;
            latency_before = net.stats.latency_sum;
        }
        let arrival = arrivals.next_time().unwrap_or(end);
        now = net
            .next_event(now + 1)
            .unwrap_or(end)
            .min(arrival)
            .max(now + 1);
    }
    let started = net.stats.started.saturating_sub(started_before);
    let latency_sum = net.stats.latency_sum.saturating_sub(latency_before);
    Ok(LoadResult {
        rate,
        throughput: counted as f64 / (measure.max(1) as f64 * nodes as f64),
        latency: if started == 0 {
            f64::NAN
        } else {
            latency_sum as f64 / started as f64
        },
        attempts_per_message: if net.stats.started == 0 {
            f64::NAN
        } else {
            net.stats.attempts as f64 / net.stats.started as f64
        },
    })
}

/// Maximum throughput (Yuan's "throughput at saturation"): the peak delivered rate over offered
/// loads rising in steps of `step` messages/node/slot, stopping once the network is clearly past
/// saturation (delivers less than 90% of the offered load twice in a row). Beyond saturation the
/// retries of a reservation protocol congest the control network and throughput falls, so the
/// peak, not the overloaded value, is the protocol's capacity.
pub fn max_throughput(
    cfg: &ReservationConfig,
    msg_size: u64,
    step: f64,
    warmup: u64,
    measure: u64,
) -> Result<LoadResult, OpticalError> {
    if step <= 0.0 {
        return Err(OpticalError::Parameter(
            "the load step must be positive".into(),
        ));
    }
    let mut best: Option<LoadResult> = None;
    let mut past = 0;
    let mut rate = step;
    while past < 2 && rate < 1.0 {
        let r = poisson_run(cfg, rate, msg_size, warmup, measure)?;
        if r.throughput < 0.9 * rate {
            past += 1;
        }
        if best.as_ref().is_none_or(|b| r.throughput > b.throughput) {
            best = Some(r);
        }
        rate += step;
    }
    best.ok_or_else(|| OpticalError::Parameter("no load was simulated".into()))
}
