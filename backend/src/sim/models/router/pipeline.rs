//! The routers' state and one cycle of every busy router: events in, sources inject, then per
//! router VC allocation and switch allocation (speculative bids included), then the winners move.
//!
//! Indexing: input VC `(node · np + port) · vcs + vc` with `np = ports + 1` (port `ports` is the
//! injection port); output VC likewise (port `ports` is the ejection port). A flit that left by
//! port `p` arrives at the neighbour's input port `p`. Within one router the VC allocator's
//! requesters and resources are `port · vcs + vc`, the switch allocator's the ports.

use std::collections::VecDeque;

use crate::topology::Network;

use crate::sim::energy::{Activity, Hardware};
use crate::sim::geometry::{Geometry, NONE};
use crate::sim::options::ModelError;
use crate::sim::{Delivery, NetworkModel, Packet};

use super::alloc::{bits, AllocKind, Allocator, Mask, Requests, MAX_PORTS, UNMATCHED};
use super::RouterConfig;

const IDLE: u8 = 0;
/// The head waits for (or is in) VC allocation.
const VA: u8 = 1;
/// The VC holds an output VC; its flits bid for the switch.
const ACTIVE: u8 = 2;

/// Speculative switch bids lose to non-speculative ones of the same input.
const SPEC_PENALTY: i64 = 1 << 62;

#[derive(Clone, Copy, Debug)]
struct InVc {
    state: u8,
    /// Output port of the head's route, and the VC range `lo..hi` it may take there.
    out_port: u8,
    lo: u8,
    hi: u8,
    class: u8,
    /// First cycle the head may ask for a VC (state VA) or the front flit for the switch (ACTIVE).
    ready: u64,
    /// The output VC held (global index) when ACTIVE.
    out: u32,
    /// Ring buffer of flits: start and length.
    start: u32,
    len: u32,
}

const IN_IDLE: InVc = InVc {
    state: IDLE,
    out_port: 0,
    lo: 0,
    hi: 0,
    class: 0,
    ready: 0,
    out: NONE,
    start: 0,
    len: 0,
};

/// What a router knows of a downstream VC (BookSim's `BufferState`).
#[derive(Clone, Copy, Debug)]
struct OutVc {
    /// The input VC holding it, or NONE.
    owner: u32,
    credits: u32,
    /// Free for allocation from this cycle (once `owner` is NONE).
    free_at: u64,
    tail_sent: bool,
}

#[derive(Clone, Copy, Debug)]
struct Pkt {
    id: u64,
    dst: u32,
    size: u32,
    created: u64,
    /// Cycle the head entered the injection channel.
    itime: u64,
    dim: u8,
    class: u8,
    hops: u32,
    /// Σ over flits of (ejection − injection), built up as flits enter and leave.
    flit_sum: i64,
}

#[derive(Clone, Debug, Default)]
struct Source {
    queue: VecDeque<u32>,
    /// Packet being injected, its next flit and VC.
    cur: Option<u32>,
    next: u32,
    vc: u32,
    last_vc: u32,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A flit reaches an input VC.
    Flit { ivc: u32, flit: u64 },
    /// A credit reaches a router's output VC.
    Credit { ovc: u32 },
    /// A credit reaches a source (`node · vcs + vc`).
    SourceCredit { slot: u32 },
    /// A packet's tail has been ejected.
    Deliver { pkt: u32 },
}

/// Packet statistics the model gathers itself (packets created in the window set by
/// [`Router::set_window`], all by default).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RouterStats {
    pub packets: u64,
    /// Creation to tail ejection (source queueing included).
    pub packet_latency: f64,
    /// Head injection to tail ejection.
    pub network_latency: f64,
    /// Mean over flits of injection to ejection.
    pub flit_latency: f64,
    pub hops: f64,
}

/// The router network.
pub struct Router {
    cfg: RouterConfig,
    geo: Geometry,
    nodes: usize,
    ports: usize,
    np: usize,
    v: usize,
    cap: u32,
    wraps: bool,
    ivc: Vec<InVc>,
    buf: Vec<u64>,
    ovc: Vec<OutVc>,
    /// The sources' view of their injection VCs, by `node · vcs + vc`.
    inj: Vec<OutVc>,
    /// Upstream neighbour of input port `p` at node `m`, by `m · ports + p`.
    up: Vec<u32>,
    /// Node of each input VC, and port and VC of each router-local index `port · vcs + vc`
    /// (tables instead of divisions in the inner loops).
    node_of: Vec<u32>,
    port_vc: Vec<(u8, u8)>,
    pkts: Vec<Pkt>,
    free_pkts: Vec<u32>,
    src: Vec<Source>,
    src_active: Vec<u32>,
    src_in: Vec<bool>,
    /// Per router, its input VCs that are not idle.
    busy: Vec<Mask>,
    routers: Vec<u32>,
    router_in: Vec<bool>,
    wheel: Vec<Vec<Event>>,
    pending: usize,
    va: Allocator,
    sa: Allocator,
    va_req: Requests,
    sa_req: Requests,
    /// Per switch request `(input port · np + output port)`: the VC bidding and whether it bids
    /// speculatively.
    sa_label: Vec<(u8, bool)>,
    /// Per input port, the VC that goes first among equals (BookSim's `_sw_rr_offset`).
    sw_rr: Vec<u8>,
    link_busy: Vec<u64>,
    moves: u64,
    last_move: u64,
    router_cycles: u64,
    flits_injected: u64,
    flits_ejected: u64,
    /// Energy events: flits written into input buffers; flits through crossbars, and of them
    /// those entering or leaving by a port in the crossbar's lower half.
    buffer_writes: u64,
    crossbar: (u64, u64, u64),
    window: (u64, u64),
    sums: (u64, u64, u64, i64, u64, u64),
}

impl Router {
    pub fn new(net: &Network, cfg: RouterConfig) -> Result<Self, ModelError> {
        let geo = Geometry::routed(net)?;
        let wraps = geo.wrap.iter().any(|&w| w);
        if wraps && cfg.vcs < 2 {
            return Err(ModelError(
                "router on a torus or ring needs vcs ≥ 2 (two dateline classes avoid deadlock \
                 around the wrap-around links)"
                    .into(),
            ));
        }
        let ports = geo.ports;
        let np = ports + 1;
        if np * cfg.vcs > MAX_PORTS || cfg.vcs > 255 {
            return Err(ModelError(format!(
                "router: {np} ports × {} VCs is more than the {MAX_PORTS} VCs a router may have",
                cfg.vcs
            )));
        }
        if cfg.speculative && (cfg.vc_alloc_delay > 1 || cfg.sw_alloc_delay > 1) {
            return Err(ModelError(
                "router: speculative=1 needs one-cycle VC and switch allocation".into(),
            ));
        }
        let nodes = net.nodes();
        let v = cfg.vcs;
        let nvc = nodes * np * v;
        let cap = cfg.vc_buf;
        let mut up = vec![NONE; nodes * ports];
        for n in 0..nodes {
            for p in 0..ports {
                let m = geo.nbr[n * ports + p];
                if m != NONE {
                    up[m as usize * ports + p] = n as u32;
                }
            }
        }
        let out_idle = OutVc {
            owner: NONE,
            credits: cap,
            free_at: 0,
            tail_sent: false,
        };
        // Farthest event: a tail's ejection credit, sw + st + 2 + 2 + credit cycles ahead.
        let reach = cfg.sw_alloc_delay
            + cfg.st_delay
            + cfg.link_delay.max(3)
            + cfg.link_delay
            + cfg.credit_delay
            + 4;
        let wheel = (reach as usize + 1).next_power_of_two();
        let src = (0..nodes)
            .map(|_| Source {
                last_vc: (v - 1) as u32,
                ..Source::default()
            })
            .collect();
        Ok(Router {
            geo,
            nodes,
            ports,
            np,
            v,
            cap,
            wraps,
            ivc: vec![IN_IDLE; nvc],
            buf: vec![0; nvc * cap as usize],
            ovc: vec![out_idle; nvc],
            inj: vec![out_idle; nodes * v],
            up,
            node_of: (0..nvc).map(|i| (i / (np * v)) as u32).collect(),
            port_vc: (0..np * v)
                .map(|b| ((b / v) as u8, (b % v) as u8))
                .collect(),
            pkts: Vec::new(),
            free_pkts: Vec::new(),
            src,
            src_active: Vec::new(),
            src_in: vec![false; nodes],
            busy: vec![0; nodes],
            routers: Vec::new(),
            router_in: vec![false; nodes],
            wheel: vec![Vec::new(); wheel],
            pending: 0,
            va: Allocator::new(cfg.vc_alloc, cfg.iters, nodes, np * v, np * v),
            sa: Allocator::new(cfg.sw_alloc, cfg.iters, nodes, np, np),
            va_req: Requests::new(np * v, np * v),
            sa_req: Requests::new(np, np),
            sa_label: vec![(0, false); np * np],
            sw_rr: vec![0; nodes * np],
            link_busy: vec![0; net.links.len()],
            moves: 0,
            last_move: 0,
            router_cycles: 0,
            flits_injected: 0,
            flits_ejected: 0,
            buffer_writes: 0,
            crossbar: (0, 0, 0),
            window: (0, u64::MAX),
            sums: (0, 0, 0, 0, 0, 0),
            cfg,
        })
    }

    pub fn config(&self) -> &RouterConfig {
        &self.cfg
    }

    /// Router-cycles simulated so far (routers × cycles stepped).
    pub fn router_cycles(&self) -> u64 {
        self.router_cycles
    }

    /// Flits that entered injection channels and left ejection channels so far.
    pub fn flits(&self) -> (u64, u64) {
        (self.flits_injected, self.flits_ejected)
    }

    /// Gathers [`RouterStats`] only over packets created in `start..end`.
    pub fn set_window(&mut self, start: u64, end: u64) {
        self.window = (start, end);
    }

    pub fn stats(&self) -> RouterStats {
        let (n, plat, nlat, flat, flits, hops) = self.sums;
        let per = |x: f64, d: u64| if d == 0 { 0.0 } else { x / d as f64 };
        RouterStats {
            packets: n,
            packet_latency: per(plat as f64, n),
            network_latency: per(nlat as f64, n),
            flit_latency: per(flat as f64, flits),
            hops: per(hops as f64, n),
        }
    }

    #[inline]
    fn schedule(&mut self, at: u64, e: Event) {
        let mask = self.wheel.len() - 1;
        self.wheel[at as usize & mask].push(e);
        self.pending += 1;
    }

    #[inline]
    fn activate(&mut self, node: usize) {
        if !self.router_in[node] {
            self.router_in[node] = true;
            self.routers.push(node as u32);
        }
    }

    /// Routes the head now at the front of input VC `id` (at `node`): its output port and the
    /// VCs it may take there (a dateline class on tori; every VC into the ejection port).
    fn route(&mut self, id: usize, node: usize, now: u64) {
        let slot = (self.buf[id * self.cap as usize + self.ivc[id].start as usize] >> 32) as usize;
        let p = self.pkts[slot];
        let dst = p.dst as usize;
        let port = if dst == node {
            self.ports
        } else {
            self.geo.dor_port(node, dst).unwrap_or(self.ports)
        };
        let v = self.v;
        let (lo, hi, class) = if port == self.ports || !self.wraps {
            (0, v, 0)
        } else {
            let dim = (port / 2) as u8;
            let mut class = if dim != p.dim { 0 } else { p.class };
            if self.geo.crosses_dateline(node, port) {
                class = 1;
            }
            if class == 0 {
                (0, v / 2, 0)
            } else {
                (v / 2, v, 1)
            }
        };
        let delay = self.cfg.routing_delay;
        let vc = &mut self.ivc[id];
        vc.state = VA;
        vc.out_port = port as u8;
        vc.lo = lo as u8;
        vc.hi = hi as u8;
        vc.class = class;
        vc.ready = now + delay;
    }

    fn handle(&mut self, now: u64, e: Event, delivered: &mut Vec<Delivery>) {
        match e {
            Event::Flit { ivc, flit } => {
                let id = ivc as usize;
                let cap = self.cap;
                let vc = &mut self.ivc[id];
                assert!(vc.len < cap, "router: input VC {id} overflows its buffer");
                let mut pos = vc.start + vc.len;
                if pos >= cap {
                    pos -= cap;
                }
                vc.len += 1;
                self.buf[id * cap as usize + pos as usize] = flit;
                self.buffer_writes += 1;
                if vc.state == IDLE {
                    debug_assert_eq!(flit as u32, 0, "a flit into an idle VC must be a head");
                    let node = self.node_of[id] as usize;
                    self.route(id, node, now);
                    self.busy[node] |= 1 << (id - node * self.np * self.v);
                    self.activate(node);
                }
            }
            Event::Credit { ovc } => {
                let wait = self.cfg.wait_for_tail_credit;
                let cap = self.cap;
                let o = &mut self.ovc[ovc as usize];
                o.credits += 1;
                assert!(
                    o.credits <= cap,
                    "router: output VC {ovc} has too many credits"
                );
                if wait && o.tail_sent && o.credits == cap {
                    o.owner = NONE;
                    o.tail_sent = false;
                    o.free_at = now;
                }
            }
            Event::SourceCredit { slot } => {
                let wait = self.cfg.wait_for_tail_credit;
                let cap = self.cap;
                let o = &mut self.inj[slot as usize];
                o.credits += 1;
                assert!(
                    o.credits <= cap,
                    "router: injection VC has too many credits"
                );
                if wait && o.tail_sent && o.credits == cap {
                    o.owner = NONE;
                    o.tail_sent = false;
                    o.free_at = now;
                }
                let node = slot as usize / self.v;
                if self.src[node].cur.is_some() && !self.src_in[node] {
                    self.src_in[node] = true;
                    self.src_active.push(node as u32);
                }
            }
            Event::Deliver { pkt } => {
                let p = self.pkts[pkt as usize];
                let at = now + 1;
                delivered.push(Delivery { packet: p.id, at });
                if p.created >= self.window.0 && p.created < self.window.1 {
                    let s = &mut self.sums;
                    s.0 += 1;
                    s.1 += at - p.created;
                    s.2 += at - p.itime;
                    s.3 += p.flit_sum;
                    s.4 += p.size as u64;
                    s.5 += p.hops as u64;
                }
                self.free_pkts.push(pkt);
            }
        }
    }

    /// The source at `node` sends at most one flit into its injection channel.
    fn inject_from(&mut self, node: usize, now: u64) -> bool {
        let v = self.v;
        let s = &mut self.src[node];
        if s.cur.is_none() {
            match s.queue.pop_front() {
                Some(p) => {
                    s.cur = Some(p);
                    s.next = 0;
                }
                None => return false,
            }
        }
        let Some(slot) = s.cur else { return false };
        if s.next == 0 {
            // A head takes the first free VC with room after the one last used.
            let mut pick = None;
            for i in 1..=v {
                let c = (s.last_vc as usize + i) % v;
                let o = &self.inj[node * v + c];
                if o.owner == NONE && o.free_at <= now && o.credits > 0 {
                    pick = Some(c);
                    break;
                }
            }
            let Some(c) = pick else { return true };
            s.vc = c as u32;
            s.last_vc = c as u32;
            let o = &mut self.inj[node * v + c];
            o.owner = node as u32;
            o.tail_sent = false;
            self.pkts[slot as usize].itime = now;
        } else if self.inj[node * v + s.vc as usize].credits == 0 {
            return true;
        }
        let (c, idx) = (s.vc as usize, s.next);
        let size = self.pkts[slot as usize].size;
        let tail = idx + 1 == size;
        s.next += 1;
        if tail {
            s.cur = None;
        }
        let wait = self.cfg.wait_for_tail_credit;
        let o = &mut self.inj[node * v + c];
        o.credits -= 1;
        if tail {
            o.tail_sent = true;
            if !wait {
                o.owner = NONE;
                o.free_at = now + 1;
            }
        }
        self.pkts[slot as usize].flit_sum -= now as i64;
        self.flits_injected += 1;
        let ivc = ((node * self.np + self.ports) * v + c) as u32;
        self.schedule(
            now + 2,
            Event::Flit {
                ivc,
                flit: (slot as u64) << 32 | idx as u64,
            },
        );
        !self.src[node].queue.is_empty() || self.src[node].cur.is_some()
    }

    /// Packet priority for the allocators: age for `oldest`, else none.
    #[inline]
    fn priority(&self, kind: AllocKind, id: usize) -> i64 {
        if kind != AllocKind::Oldest {
            return 0;
        }
        let vc = &self.ivc[id];
        let slot = (self.buf[id * self.cap as usize + vc.start as usize] >> 32) as usize;
        -(self.pkts[slot].created as i64)
    }

    /// One cycle of router `node`: VC allocation, switch allocation, moves.
    fn cycle(&mut self, node: usize, now: u64) {
        let (v, np) = (self.v, self.np);
        let base = node * np * v;
        let busy = self.busy[node];
        self.va_req.clear();
        self.sa_req.clear();
        let mut asked: Mask = 0;
        for b in bits(busy) {
            let id = base + b;
            let vc = self.ivc[id];
            if vc.state == VA {
                if vc.ready > now {
                    continue;
                }
                asked |= 1 << b;
                let q = vc.out_port as usize;
                let obase = (node * np + q) * v;
                let pri = self.priority(self.cfg.vc_alloc, id);
                let mut any = false;
                let mut credit = false;
                for w in vc.lo as usize..vc.hi as usize {
                    let o = &self.ovc[obase + w];
                    if o.owner == NONE && o.free_at <= now {
                        self.va_req.add(b, q * v + w, 0, pri);
                        any = true;
                        credit |= o.credits > 0;
                    }
                }
                if self.cfg.speculative && any && credit {
                    let pri = self.priority(self.cfg.sw_alloc, id) - SPEC_PENALTY;
                    let (i, w) = self.port_vc[b];
                    self.bid(node, i as usize, q, w as usize, pri, true);
                }
            } else if vc.state == ACTIVE && vc.len > 0 && vc.ready <= now {
                if self.ovc[vc.out as usize].credits == 0 {
                    continue;
                }
                let q = vc.out_port as usize;
                let pri = self.priority(self.cfg.sw_alloc, id);
                let (i, w) = self.port_vc[b];
                self.bid(node, i as usize, q, w as usize, pri, false);
            }
        }
        if asked != 0 {
            self.va.allocate(node, &mut self.va_req);
            let delay = self.cfg.vc_alloc_delay;
            for b in bits(asked) {
                let id = base + b;
                let m = self.va_req.match_in[b];
                let vc = &mut self.ivc[id];
                vc.ready = now + delay;
                if m == UNMATCHED {
                    continue;
                }
                let o = (node * np) * v + m as usize;
                vc.state = ACTIVE;
                vc.out = o as u32;
                let (port, class) = (vc.out_port as usize, vc.class);
                let out = &mut self.ovc[o];
                debug_assert!(out.owner == NONE);
                out.owner = id as u32;
                out.tail_sent = false;
                if port != self.ports {
                    let slot =
                        (self.buf[id * self.cap as usize + vc_start(&self.ivc[id])] >> 32) as usize;
                    let p = &mut self.pkts[slot];
                    p.dim = (port / 2) as u8;
                    p.class = class;
                }
            }
        }
        if self.sa_req.is_empty() {
            return;
        }
        self.sa.allocate(node, &mut self.sa_req);
        for i in bits(self.sa_req.inputs) {
            let q = self.sa_req.match_in[i];
            if q == UNMATCHED {
                continue;
            }
            let (w, spec) = self.sa_label[i * np + q as usize];
            self.sw_rr[node * np + i] = ((w as usize + 1) % v) as u8;
            let id = base + i * v + w as usize;
            if spec {
                // A speculative grant counts only if the VC allocation just succeeded and the
                // VC won has room.
                let b = i * v + w as usize;
                if asked >> b & 1 == 0 || self.va_req.match_in[b] == UNMATCHED {
                    continue;
                }
                if self.ovc[self.ivc[id].out as usize].credits == 0 {
                    continue;
                }
            }
            self.advance(node, id, now);
        }
    }

    /// Puts in input port `i`'s switch bid for output `q` from its VC `w`, unless a VC of the
    /// same input already bids for `q` with precedence (higher priority, or equal and nearer the
    /// input's round-robin offset).
    #[inline]
    fn bid(&mut self, node: usize, i: usize, q: usize, w: usize, pri: i64, spec: bool) {
        let np = self.np;
        if self.sa_req.has(i, q) {
            let (old, _) = self.sa_label[i * np + q];
            let old_pri = self.sa_req.priority(i, q);
            let off = self.sw_rr[node * np + i] as usize;
            let v = self.v;
            let dist = |x: usize| (x + v - off) % v;
            if !(pri > old_pri || (pri == old_pri && dist(w) < dist(old as usize))) {
                return;
            }
        }
        self.sa_req.add(i, q, pri, pri);
        self.sa_label[i * np + q] = (w as u8, spec);
    }

    /// Input VC `id` (at `node`) sends its front flit through the switch.
    fn advance(&mut self, node: usize, id: usize, now: u64) {
        let cfg = self.cfg;
        let (v, np, cap) = (self.v, self.np, self.cap);
        let left = now + cfg.sw_alloc_delay - 1;
        let vc = &mut self.ivc[id];
        let flit = self.buf[id * cap as usize + vc.start as usize];
        vc.start = if vc.start + 1 == cap { 0 } else { vc.start + 1 };
        vc.len -= 1;
        let o = vc.out as usize;
        let q = vc.out_port as usize;
        let slot = (flit >> 32) as usize;
        let idx = flit as u32;
        let size = self.pkts[slot].size;
        let tail = idx + 1 == size;
        let out = &mut self.ovc[o];
        debug_assert!(out.credits > 0 && out.owner == id as u32);
        out.credits -= 1;
        if tail {
            out.tail_sent = true;
            if !cfg.wait_for_tail_credit {
                out.owner = NONE;
                out.free_at = left + 1;
            }
        }
        self.moves += 1;
        self.last_move = now;
        // The credit for the slot just freed goes back upstream.
        let b = id - node * np * v;
        let (p, w) = self.port_vc[b];
        let (p, w) = (p as usize, w as usize);
        if p == self.ports {
            self.schedule(
                left + 2,
                Event::SourceCredit {
                    slot: (node * v + w) as u32,
                },
            );
        } else {
            let u = self.up[node * self.ports + p] as usize;
            self.schedule(
                left + cfg.link_delay + 1 + cfg.credit_delay,
                Event::Credit {
                    ovc: ((u * np + p) * v + w) as u32,
                },
            );
        }
        // The flit crosses the switch and its output channel. The crossbar's inputs are laid out
        // as BookSim2's mesh router's: per dimension the input from the + neighbour, then from
        // the − one (a flit that left by port `p` arrives by our port `p`, its `p ^ 1`), the
        // injection port last; outputs in port order.
        let pos_in = if p == self.ports { p } else { p ^ 1 };
        let x = &mut self.crossbar;
        x.0 += 1;
        x.1 += u64::from(2 * pos_in < np);
        x.2 += u64::from(2 * q < np);
        if q == self.ports {
            let at = left + cfg.st_delay + 2;
            self.flits_ejected += 1;
            self.pkts[slot].flit_sum += at as i64;
            self.schedule(at + 2 + cfg.credit_delay, Event::Credit { ovc: o as u32 });
            if tail {
                self.schedule(at - 1, Event::Deliver { pkt: slot as u32 });
            }
        } else {
            let l = self.geo.link[node * self.ports + q];
            if l != NONE {
                self.link_busy[l as usize] += 1;
            }
            if idx == 0 {
                self.pkts[slot].hops += 1;
            }
            let next = self.geo.nbr[node * self.ports + q] as usize;
            self.schedule(
                left + cfg.st_delay + cfg.link_delay + 1,
                Event::Flit {
                    ivc: (next * np * v + (o - node * np * v)) as u32,
                    flit,
                },
            );
        }
        // What the VC does next.
        let vc = &mut self.ivc[id];
        if !tail {
            vc.ready = left + 1;
        } else if vc.len > 0 {
            self.route(id, node, left + 1);
        } else {
            *vc = InVc {
                start: vc.start,
                ..IN_IDLE
            };
            self.busy[node] &= !(1 << b);
        }
    }

    /// Checks credit conservation: for every output VC, its credits, the flits in the buffer it
    /// feeds, and the flits and credits in flight between them add up to the buffer size; no
    /// buffer holds more than its size. For tests; costs a pass over everything.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (v, np, cap) = (self.v, self.np, self.cap as usize);
        let mut flits_to = vec![0usize; self.ivc.len()];
        let mut credits_to = vec![0usize; self.ovc.len()];
        let mut src_credits = vec![0usize; self.inj.len()];
        for e in self.wheel.iter().flatten() {
            match *e {
                Event::Flit { ivc, .. } => flits_to[ivc as usize] += 1,
                Event::Credit { ovc } => credits_to[ovc as usize] += 1,
                Event::SourceCredit { slot } => src_credits[slot as usize] += 1,
                Event::Deliver { .. } => {}
            }
        }
        for n in 0..self.nodes {
            for q in 0..np {
                for w in 0..v {
                    let o = (n * np + q) * v + w;
                    let held = if q == self.ports {
                        0
                    } else {
                        let m = self.geo.nbr[n * self.ports + q];
                        if m == NONE {
                            continue;
                        }
                        let d = (m as usize * np + q) * v + w;
                        self.ivc[d].len as usize + flits_to[d]
                    };
                    let total = self.ovc[o].credits as usize + held + credits_to[o];
                    if total != cap {
                        return Err(format!(
                            "output VC {o} (node {n}, port {q}, vc {w}): {} credits + {held} \
                             flits held + {} credits in flight ≠ {cap}",
                            self.ovc[o].credits, credits_to[o]
                        ));
                    }
                }
            }
            for w in 0..v {
                let s = n * v + w;
                let d = (n * np + self.ports) * v + w;
                let total = self.inj[s].credits as usize
                    + self.ivc[d].len as usize
                    + flits_to[d]
                    + src_credits[s];
                if total != cap {
                    return Err(format!(
                        "injection VC {w} of node {n}: credits and flits add up to {total} ≠ {cap}"
                    ));
                }
            }
        }
        if let Some((i, _)) = self
            .ivc
            .iter()
            .enumerate()
            .find(|(_, x)| x.len as usize > cap)
        {
            return Err(format!("input VC {i} holds more than {cap} flits"));
        }
        Ok(())
    }
}

#[inline]
fn vc_start(vc: &InVc) -> usize {
    vc.start as usize
}

impl NetworkModel for Router {
    fn name(&self) -> String {
        self.cfg.name()
    }

    fn inject(&mut self, _now: u64, packet: Packet) {
        let last = self.nodes.saturating_sub(1);
        let src = packet.src.min(last);
        let pkt = Pkt {
            id: packet.id,
            dst: packet.dst.min(last) as u32,
            size: packet.size.clamp(1, u32::MAX as u64) as u32,
            created: packet.created,
            itime: 0,
            dim: u8::MAX,
            class: 0,
            hops: 0,
            flit_sum: 0,
        };
        let slot = crate::sim::slots::reuse_or_push(&mut self.pkts, &mut self.free_pkts, pkt);
        self.src[src].queue.push_back(slot);
        if !self.src_in[src] {
            self.src_in[src] = true;
            self.src_active.push(src as u32);
        }
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        self.router_cycles += self.nodes as u64;
        // 1. Flits, credits and deliveries due now.
        let mask = self.wheel.len() - 1;
        let mut due = std::mem::take(&mut self.wheel[now as usize & mask]);
        self.pending -= due.len();
        for e in due.drain(..) {
            self.handle(now, e, delivered);
        }
        self.wheel[now as usize & mask] = due;
        // 2. Sources.
        let mut i = 0;
        while i < self.src_active.len() {
            let n = self.src_active[i] as usize;
            if self.inject_from(n, now) {
                i += 1;
            } else {
                self.src_in[n] = false;
                self.src_active.swap_remove(i);
            }
        }
        // 3. Routers with busy VCs.
        let mut i = 0;
        while i < self.routers.len() {
            let n = self.routers[i] as usize;
            if self.busy[n] == 0 {
                self.router_in[n] = false;
                self.routers.swap_remove(i);
                continue;
            }
            self.cycle(n, now);
            i += 1;
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        if !self.routers.is_empty() || self.pending > 0 || !self.src_active.is_empty() {
            Some(now)
        } else {
            None
        }
    }

    fn link_busy(&self) -> Vec<u64> {
        self.link_busy.clone()
    }

    fn hardware(&self, network: &Network) -> Hardware {
        let ports = self.np as u64;
        Hardware {
            inputs: ports,
            outputs: ports,
            link_cycles: self.cfg.link_delay,
            ..Hardware::of_network(network, self.v as u64 * u64::from(self.cap))
        }
    }

    fn activity(&self) -> Option<Activity> {
        let (crossbar, near_in, near_out) = self.crossbar;
        Some(Activity {
            buffer_writes: self.buffer_writes,
            buffer_reads: crossbar,
            crossbar,
            crossbar_near_in: near_in,
            crossbar_near_out: near_out,
            allocations: crossbar,
            link_flits: self.link_busy.iter().sum(),
            port_flits: self.flits_injected + self.flits_ejected,
            switch_steps: 0,
        })
    }

    fn progress(&self) -> u64 {
        self.moves
    }

    fn stalled(&self, now: u64) -> Option<String> {
        if now > self.last_move + 100_000 && (!self.routers.is_empty() || self.pending > 0) {
            Some(format!(
                "no flit has crossed a switch since cycle {}: packets hold VCs in a cycle \
                 (deadlock)",
                self.last_move
            ))
        } else {
            None
        }
    }
}
