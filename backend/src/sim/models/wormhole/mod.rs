//! Flit-level wormhole routing (Chittor ch.5, with the virtual channels his §5.5 lists as missing).
//!
//! Each router has one input port per incoming link plus the injection port, each with `vc`
//! virtual channels of `buf` flits, and one output port per outgoing link plus the ejection port.
//! A packet's header, once it has spent `delay` cycles in a router, asks for a free virtual channel
//! on its output (routing: dimension order; `west-first` or `odd-even` adaptive on 2-D meshes;
//! e-cube on hypercubes; up*/down* tables on networks without a dimension order, such as anynet
//! files, deadlock-free with one virtual channel; on tori the virtual channels split into two dateline classes, Dally &
//! Seitz, so `vc ≥ 2` is required). The header reserves that channel, body flits follow, and the
//! tail releases each channel as it leaves it; a blocked header holds every channel its worm
//! occupies. Each input port sends and each output port accepts one flit per cycle; competing
//! requests are arbitrated oldest-first (Chittor's time-stamp priority, default), `fifo` (longest
//! waiting header, ties by port), `biased` (Chittor's 9/4 port priorities: injection 9, network 4,
//! lower wins, a loser's value drops by one, a winner's resets) or `rr` (Chittor's
//! message-source clock hand: the source after the last one served).
//!
//! The processor–router channel is two channels, one flit per cycle each way, unless `pr=shared`:
//! then sending and receiving share one flit per cycle per node, taking turns flit by flit when
//! both wait, as on the Symult 2010, whose time-multiplexed pr-channel Chittor §4.2.3 (Table 4.1)
//! finds serializes a node's traffic: an exchange with one neighbour costs about 2 message
//! times, with four about 8.
//!
//! Conventions (cycles; a flit is one word and crosses a link in one cycle): flow control uses
//! credits counted at the start of a cycle, so with `buf=1` a worm advances every other cycle
//! (Chittor §5.2's footnote) and with `buf ≥ 2` every cycle. A channel is owned by one packet from
//! header allocation until its tail leaves the buffer. An uncontended packet of `L` flits over `D`
//! hops, with router delay `r` in each of the `D+1` routers it passes (ejection included),
//! arrives after exactly `t_wh = a + C2·D + b(L−1)` cycles (Chittor eq 1.3) with
//! `a = 1 + r + overhead`, `C2 = 1 + r`, and `b = 1` (`b = 2` when `buf=1`). Packets of size 0
//! travel as one flit.

use std::collections::VecDeque;

use crate::topology::{Kind, Network};

use crate::sim::geometry::{Geometry, NONE};
use crate::sim::options::{
    choice, choice_enum, int, int_depends, Choice, ModelError, ModelOptions, OptionSpec,
};
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};

pub const OPTIONS: &[OptionSpec] = &[
    int_depends(
        "vc",
        "2 on tori, else 1",
        1,
        64,
        "virtual channels per input port (2 break the torus's cycles)",
    ),
    int("buf", "2", 1, 1 << 16, "flit buffers per virtual channel"),
    int(
        "delay",
        "0",
        0,
        1 << 16,
        "cycles a header spends in each router",
    ),
    int(
        "overhead",
        "0",
        0,
        1 << 32,
        "cycles added at the source before a packet enters the network",
    ),
    choice(
        "arb",
        "oldest",
        Arbitration::WORDS,
        "arbitration among requests for an output (Chittor §5.6.5)",
    ),
    choice(
        "pr",
        "separate",
        ProcessorChannel::WORDS,
        "processor–router channel: one flit per cycle each way, or one shared by sending and receiving (Chittor §4.2.3)",
    ),
    choice(
        "routing",
        "dor",
        Routing::WORDS,
        "dimension order, or turn-model adaptive routing on 2-D meshes",
    ),    crate::sim::packets::OPTION,
];

choice_enum! {
    /// Arbitration among requests for the same output (Chittor §5.6.5).
    pub enum Arbitration {
        Oldest = "oldest",
        Fifo = "fifo",
        Biased = "biased",
        RoundRobin = "rr",
    }
}

choice_enum! {
    /// How headers choose their output.
    pub enum Routing {
        DimensionOrder = "dor",
        WestFirst = "west-first",
        OddEven = "odd-even",
    }
}

choice_enum! {
    /// The processor–router channel (Chittor §4.2.3).
    pub enum ProcessorChannel {
        Separate = "separate",
        Shared = "shared",
    }
}

/// Wormhole parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WormholeConfig {
    pub vcs: usize,
    pub buf: u32,
    pub delay: u64,
    pub overhead: u64,
    pub arb: Arbitration,
    pub routing: Routing,
    /// Sending and receiving share one flit per cycle per node (`pr=shared`).
    pub shared_pr: bool,
}

impl Default for WormholeConfig {
    fn default() -> Self {
        WormholeConfig {
            vcs: 1,
            buf: 2,
            delay: 0,
            overhead: 0,
            arb: Arbitration::Oldest,
            routing: Routing::DimensionOrder,
            shared_pr: false,
        }
    }
}

/// Builds the model from registry options.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let wraps = matches!(ctx.network.spec.kind, Kind::Torus | Kind::Ring);
    let cfg = WormholeConfig {
        vcs: opts.int_or("vc", if wraps { 2 } else { 1 })? as usize,
        buf: opts.int("buf")? as u32,
        delay: opts.int("delay")?,
        overhead: opts.int("overhead")?,
        arb: opts.chosen("arb")?,
        routing: opts.chosen("routing")?,
        shared_pr: opts.chosen::<ProcessorChannel>("pr")? == ProcessorChannel::Shared,
    };
    let model = Box::new(Wormhole::new(ctx.network, cfg)?);
    Ok(crate::sim::packets::limit(model, opts.int("packet")?))
}

#[derive(Clone, Copy, Debug)]
struct Vc {
    owner: u32,
    received: u32,
    sent: u32,
    /// Cycle from which the header may ask for an output.
    ready: u64,
    /// Cycle the header arrived (for `fifo`).
    since: u64,
    /// Downstream channel: an input VC id, or `eject_base + lane`.
    out: u32,
    out_port: u32,
}

const IDLE: Vc = Vc {
    owner: NONE,
    received: 0,
    sent: 0,
    ready: 0,
    since: 0,
    out: NONE,
    out_port: NONE,
};

#[derive(Clone, Copy, Debug)]
struct Pkt {
    id: u64,
    src: u32,
    dst: u32,
    size: u32,
    created: u64,
    ready: u64,
    dim: u8,
    class: u8,
}

/// The wormhole model.
pub struct Wormhole {
    cfg: WormholeConfig,
    geo: Geometry,
    nodes: usize,
    ports: usize,
    /// Input ports per node: the link ports then injection.
    nin: usize,
    vcs: Vec<Vc>,
    eject: Vec<Vc>,
    eject_base: u32,
    pkts: Vec<Pkt>,
    free_pkts: Vec<u32>,
    queues: Vec<VecDeque<u32>>,
    queued: usize,
    active: Vec<u32>,
    in_active: Vec<bool>,
    /// Biased priority per input port (`node · nin + port`).
    bias: Vec<u32>,
    /// Source clock hand per output port (`node · (ports+1) + port`).
    hand: Vec<u32>,
    busy: Vec<u64>,
    last_move: u64,
    // Scratch buffers reused every cycle.
    reqs: Vec<(u64, u64, u32, u32)>,
    moves: Vec<(u32, u32)>,
    used_in: Vec<u64>,
    used_out: Vec<u64>,
    /// Per node, the cycle its shared processor–router channel last carried a flit (`pr=shared`).
    used_pr: Vec<u64>,
    /// Per node, (cycle, kinds wanting the shared channel that cycle: 1 send, 2 receive) and the
    /// kind that last had it: when both want it, they alternate flit by flit.
    pr_want: Vec<(u64, u8)>,
    pr_last: Vec<u8>,
    /// Outputs granted in this cycle's VC allocation (for biased priority).
    va_out: Vec<u64>,
    stamp: u64,
    router_cycles: u64,
}

impl Wormhole {
    pub fn new(net: &Network, cfg: WormholeConfig) -> Result<Self, ModelError> {
        let geo = Geometry::routed(net)?;
        if geo.wrap.iter().any(|&w| w) && cfg.vcs < 2 {
            return Err(ModelError(
                "wormhole on a torus or ring needs vc ≥ 2 (two dateline classes avoid deadlock \
                 around the wrap-around links)"
                    .into(),
            ));
        }
        if cfg.routing != Routing::DimensionOrder
            && (net.spec.kind != Kind::Mesh || geo.ndim() != 2)
        {
            return Err(ModelError(
                "west-first and odd-even routing are defined on 2-D meshes only".into(),
            ));
        }
        let nodes = net.nodes();
        let ports = geo.ports;
        let nin = ports + 1;
        let nvc = nodes * nin * cfg.vcs;
        let mut bias = vec![4u32; nodes * nin];
        for n in 0..nodes {
            bias[n * nin + ports] = 9;
        }
        Ok(Wormhole {
            cfg,
            nodes,
            ports,
            nin,
            vcs: vec![IDLE; nvc],
            eject: vec![IDLE; nodes * cfg.vcs],
            eject_base: nvc as u32,
            pkts: Vec::new(),
            free_pkts: Vec::new(),
            queues: vec![VecDeque::new(); nodes],
            queued: 0,
            active: Vec::new(),
            in_active: vec![false; nvc],
            bias,
            hand: vec![0; nodes * (ports + 1)],
            busy: vec![0; net.links.len()],
            last_move: 0,
            reqs: Vec::new(),
            moves: Vec::new(),
            used_in: vec![0; nodes * nin],
            used_out: vec![0; nodes * (ports + 1)],
            used_pr: vec![0; nodes],
            pr_want: vec![(0, 0); nodes],
            pr_last: vec![0; nodes],
            va_out: vec![0; nodes * (ports + 1)],
            stamp: 0,
            router_cycles: 0,
            geo,
        })
    }

    /// Router-cycles simulated so far (routers × cycles stepped), for throughput benchmarks.
    pub fn router_cycles(&self) -> u64 {
        self.router_cycles
    }

    #[inline]
    fn node_of_vc(&self, v: u32) -> usize {
        v as usize / (self.nin * self.cfg.vcs)
    }

    #[inline]
    fn port_of_vc(&self, v: u32) -> usize {
        (v as usize / self.cfg.vcs) % self.nin
    }

    /// Candidate output ports for a header at `cur` (the ejection port `ports` at the
    /// destination), best first.
    fn route(&self, p: &Pkt, cur: usize, out: &mut [u32; 2]) -> usize {
        let dst = p.dst as usize;
        if cur == dst {
            out[0] = self.ports as u32;
            return 1;
        }
        let g = &self.geo;
        match self.cfg.routing {
            Routing::DimensionOrder => {
                out[0] = g.dor_port(cur, dst).map_or(NONE, |x| x as u32);
                1
            }
            Routing::WestFirst => {
                let dx = g.coord(dst, 0) - g.coord(cur, 0);
                let xp = g.port_in_dim(cur, dst, 0);
                let yp = g.port_in_dim(cur, dst, 1);
                let mut k = 0;
                if dx < 0 {
                    out[0] = xp.map_or(NONE, |x| x as u32);
                    return 1;
                }
                for p in [xp, yp].into_iter().flatten() {
                    out[k] = p as u32;
                    k += 1;
                }
                k
            }
            Routing::OddEven => {
                // Chiu's odd-even turn model: no east→north/south turn in even columns, no
                // north/south→west turn in odd columns.
                let (cx, dx0) = (g.coord(cur, 0), g.coord(dst, 0));
                let sx = g.coord(p.src as usize, 0);
                let e0 = dx0 - cx;
                let xp = g.port_in_dim(cur, dst, 0);
                let yp = g.port_in_dim(cur, dst, 1);
                let mut k = 0;
                let mut push = |o: Option<usize>, out: &mut [u32; 2]| {
                    if let Some(o) = o {
                        if k < 2 {
                            out[k] = o as u32;
                            k += 1;
                        }
                    }
                };
                if e0 == 0 {
                    push(yp, out);
                } else if e0 > 0 {
                    if yp.is_none() {
                        push(xp, out);
                    } else {
                        if dx0 % 2 == 1 || e0 != 1 {
                            push(xp, out);
                        }
                        if cx % 2 == 1 || cx == sx {
                            push(yp, out);
                        }
                    }
                } else {
                    push(xp, out);
                    if cx % 2 == 0 {
                        push(yp, out);
                    }
                }
                k
            }
        }
    }

    /// The VC range a packet may use on `port` leaving `cur`, and its class after the hop.
    #[inline]
    fn vc_range(&self, p: &Pkt, cur: usize, port: usize) -> (usize, usize, u8) {
        let v = self.cfg.vcs;
        if port == self.ports || !self.geo.wrap.iter().any(|&w| w) {
            return (0, v, 0);
        }
        let dim = (port / 2) as u8;
        let mut class = if dim != p.dim { 0 } else { p.class };
        if self.geo.crosses_dateline(cur, port) {
            class = 1;
        }
        let half = v / 2;
        if class == 0 {
            (0, half, 0)
        } else {
            (half, v, 1)
        }
    }

    /// Downstream channel id for lane `v` of output `port` at node `cur`, or NONE.
    #[inline]
    fn downstream(&self, cur: usize, port: usize, v: usize) -> u32 {
        if port == self.ports {
            return self.eject_base + (cur * self.cfg.vcs + v) as u32;
        }
        let n = self.geo.nbr[cur * self.ports + port];
        if n == NONE {
            return NONE;
        }
        ((n as usize * self.nin + port) * self.cfg.vcs + v) as u32
    }

    #[inline]
    fn chan(&self, id: u32) -> &Vc {
        if id >= self.eject_base {
            &self.eject[(id - self.eject_base) as usize]
        } else {
            &self.vcs[id as usize]
        }
    }

    #[inline]
    fn key(&self, vc: u32, v: &Vc, out_index: usize) -> (u64, u64) {
        let p = &self.pkts[v.owner as usize];
        match self.cfg.arb {
            Arbitration::Oldest => (p.created, p.id),
            Arbitration::Fifo => (v.since, vc as u64),
            Arbitration::Biased => {
                let node = self.node_of_vc(vc);
                let port = self.port_of_vc(vc);
                (self.bias[node * self.nin + port] as u64, vc as u64)
            }
            Arbitration::RoundRobin => {
                let n = self.nodes as u64;
                let hand = self.hand[out_index] as u64;
                ((p.src as u64 + n - hand - 1) % n, p.id)
            }
        }
    }

    fn inject_queued(&mut self, now: u64) {
        if self.queued == 0 {
            return;
        }
        let v = self.cfg.vcs;
        for n in 0..self.nodes {
            while let Some(&pi) = self.queues[n].front() {
                if self.pkts[pi as usize].ready > now {
                    break;
                }
                let base = (n * self.nin + self.ports) * v;
                let Some(lane) = (base..base + v).find(|&i| self.vcs[i].owner == NONE) else {
                    break;
                };
                self.queues[n].pop_front();
                self.queued -= 1;
                let size = self.pkts[pi as usize].size;
                self.vcs[lane] = Vc {
                    owner: pi,
                    received: size,
                    sent: 0,
                    ready: now + self.cfg.delay,
                    since: now,
                    out: NONE,
                    out_port: NONE,
                };
                if !self.in_active[lane] {
                    self.in_active[lane] = true;
                    self.active.push(lane as u32);
                }
            }
        }
    }

    fn allocate_vcs(&mut self, now: u64) {
        self.reqs.clear();
        for i in 0..self.active.len() {
            let id = self.active[i];
            let v = self.vcs[id as usize];
            if v.out != NONE || v.sent != 0 || v.received == 0 || v.ready > now {
                continue;
            }
            let cur = self.node_of_vc(id);
            let p = self.pkts[v.owner as usize];
            let mut cand = [NONE; 2];
            let k = self.route(&p, cur, &mut cand);
            let mut port = cand[0];
            if k > 1 {
                // Adaptive: the first candidate with a free channel.
                for &c in &cand[..k] {
                    let (lo, hi, _) = self.vc_range(&p, cur, c as usize);
                    if (lo..hi).any(|l| {
                        let d = self.downstream(cur, c as usize, l);
                        d != NONE && self.chan(d).owner == NONE
                    }) {
                        port = c;
                        break;
                    }
                }
            }
            if port == NONE {
                continue;
            }
            let out_index = cur * (self.ports + 1) + port as usize;
            let (a, b) = self.key(id, &v, out_index);
            self.reqs.push((a, b, id, port));
        }
        self.reqs.sort_unstable();
        for r in 0..self.reqs.len() {
            let (_, _, id, port) = self.reqs[r];
            let cur = self.node_of_vc(id);
            let owner = self.vcs[id as usize].owner;
            let p = self.pkts[owner as usize];
            let (lo, hi, class) = self.vc_range(&p, cur, port as usize);
            let mut granted = NONE;
            for l in lo..hi {
                let d = self.downstream(cur, port as usize, l);
                if d != NONE && self.chan(d).owner == NONE {
                    granted = d;
                    break;
                }
            }
            if granted == NONE {
                continue;
            }
            if self.cfg.arb == Arbitration::Biased {
                // Chittor's biased priority: the winner resets to its base; the losers of this
                // output drop by one (below).
                let inp = cur * self.nin + self.port_of_vc(id);
                self.bias[inp] = if inp % self.nin == self.ports { 9 } else { 4 };
                self.va_out[cur * (self.ports + 1) + port as usize] = self.stamp + 1;
            }
            if granted >= self.eject_base {
                let e = &mut self.eject[(granted - self.eject_base) as usize];
                e.owner = owner;
                e.received = 0;
            } else {
                let d = &mut self.vcs[granted as usize];
                d.owner = owner;
                d.received = 0;
                d.sent = 0;
            }
            let v = &mut self.vcs[id as usize];
            v.out = granted;
            v.out_port = port;
            if port as usize != self.ports {
                let pk = &mut self.pkts[owner as usize];
                pk.dim = (port / 2) as u8;
                pk.class = class;
            }
        }
        if self.cfg.arb == Arbitration::Biased {
            for r in 0..self.reqs.len() {
                let (_, _, id, port) = self.reqs[r];
                let cur = self.node_of_vc(id);
                let won = self.vcs[id as usize].out != NONE;
                if !won && self.va_out[cur * (self.ports + 1) + port as usize] == self.stamp + 1 {
                    let inp = cur * self.nin + self.port_of_vc(id);
                    self.bias[inp] = self.bias[inp].saturating_sub(1);
                }
            }
        }
    }

    fn allocate_switch(&mut self, now: u64) {
        let _ = now;
        self.reqs.clear();
        let buf = self.cfg.buf;
        for i in 0..self.active.len() {
            let id = self.active[i];
            let v = self.vcs[id as usize];
            if v.out == NONE || v.received <= v.sent {
                continue;
            }
            if v.out < self.eject_base {
                let d = &self.vcs[v.out as usize];
                if d.received - d.sent >= buf {
                    continue;
                }
            }
            let cur = self.node_of_vc(id);
            let out_index = cur * (self.ports + 1) + v.out_port as usize;
            let (a, b) = self.key(id, &v, out_index);
            self.reqs.push((a, b, id, v.out_port));
        }
        self.reqs.sort_unstable();
        self.stamp += 1;
        let stamp = self.stamp;
        self.moves.clear();
        if self.cfg.shared_pr {
            for r in 0..self.reqs.len() {
                let (_, _, id, port) = self.reqs[r];
                let (kind, cur) = (self.pr_kind(id, port), self.node_of_vc(id));
                if kind != 0 {
                    let w = &mut self.pr_want[cur];
                    if w.0 != stamp {
                        *w = (stamp, 0);
                    }
                    w.1 |= kind;
                }
            }
        }
        for r in 0..self.reqs.len() {
            let (_, _, id, port) = self.reqs[r];
            let cur = self.node_of_vc(id);
            let inp = cur * self.nin + self.port_of_vc(id);
            let outp = cur * (self.ports + 1) + port as usize;
            // A flit from the injection port or into the ejection port crosses the node's
            // processor–router channel; shared, it carries one of them per cycle, and when both
            // wait, the one that did not have it last.
            let kind = if self.cfg.shared_pr {
                self.pr_kind(id, port)
            } else {
                0
            };
            let pr = kind != 0;
            let yields = pr && self.pr_want[cur] == (stamp, 3) && self.pr_last[cur] == kind;
            if self.used_in[inp] == stamp
                || self.used_out[outp] == stamp
                || (pr && self.used_pr[cur] == stamp)
                || yields
            {
                if self.cfg.arb == Arbitration::Biased && self.used_in[inp] != stamp {
                    self.bias[inp] = self.bias[inp].saturating_sub(1);
                }
                continue;
            }
            self.used_in[inp] = stamp;
            self.used_out[outp] = stamp;
            if pr {
                self.used_pr[cur] = stamp;
                self.pr_last[cur] = kind;
            }
            self.moves.push((id, self.vcs[id as usize].out));
            match self.cfg.arb {
                Arbitration::Biased => {
                    self.bias[inp] = if inp % self.nin == self.ports { 9 } else { 4 };
                }
                Arbitration::RoundRobin => {
                    let owner = self.vcs[id as usize].owner;
                    self.hand[outp] = self.pkts[owner as usize].src;
                }
                _ => {}
            }
        }
    }

    /// Which way a move from channel `id` to output `port` crosses its node's processor–router
    /// channel: 1 sending (from the injection port), 2 receiving (into the ejection port), 0 not
    /// at all. A packet to its own node does both; it counts as sending.
    #[inline]
    fn pr_kind(&self, id: u32, port: u32) -> u8 {
        if self.port_of_vc(id) == self.ports {
            1
        } else if port as usize == self.ports {
            2
        } else {
            0
        }
    }

    fn apply_moves(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        if !self.moves.is_empty() {
            self.last_move = now;
        }
        for m in 0..self.moves.len() {
            let (u, d) = self.moves[m];
            let cur = self.node_of_vc(u);
            let (owner, size, port) = {
                let v = &mut self.vcs[u as usize];
                v.sent += 1;
                let owner = v.owner;
                (owner, self.pkts[owner as usize].size, v.out_port)
            };
            if self.vcs[u as usize].sent >= size {
                self.vcs[u as usize] = IDLE;
            }
            if d >= self.eject_base {
                let e = &mut self.eject[(d - self.eject_base) as usize];
                e.received += 1;
                if e.received >= size {
                    *e = IDLE;
                    delivered.push(Delivery {
                        packet: self.pkts[owner as usize].id,
                        at: now + 1,
                    });
                    self.free_pkts.push(owner);
                }
            } else {
                let l = self.geo.link[cur * self.ports + port as usize];
                if l != NONE {
                    self.busy[l as usize] += 1;
                }
                let dv = &mut self.vcs[d as usize];
                dv.received += 1;
                if dv.received == 1 {
                    dv.ready = now + 1 + self.cfg.delay;
                    dv.since = now + 1;
                }
                if !self.in_active[d as usize] {
                    self.in_active[d as usize] = true;
                    self.active.push(d);
                }
            }
        }
    }
}

impl NetworkModel for Wormhole {
    fn name(&self) -> String {
        let c = &self.cfg;
        let mut s = format!("wormhole vc={} buf={}", c.vcs, c.buf);
        if c.delay != 0 {
            s.push_str(&format!(" delay={}", c.delay));
        }
        if c.overhead != 0 {
            s.push_str(&format!(" overhead={}", c.overhead));
        }
        match c.arb {
            Arbitration::Oldest => {}
            Arbitration::Fifo => s.push_str(" arb=fifo"),
            Arbitration::Biased => s.push_str(" arb=biased"),
            Arbitration::RoundRobin => s.push_str(" arb=rr"),
        }
        if c.shared_pr {
            s.push_str(" pr=shared");
        }
        match c.routing {
            Routing::DimensionOrder => {}
            Routing::WestFirst => s.push_str(" routing=west-first"),
            Routing::OddEven => s.push_str(" routing=odd-even"),
        }
        s
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        let src = packet.src.min(self.nodes.saturating_sub(1));
        let pkt = Pkt {
            id: packet.id,
            src: src as u32,
            dst: packet.dst.min(self.nodes.saturating_sub(1)) as u32,
            size: packet.size.clamp(1, u32::MAX as u64) as u32,
            created: packet.created,
            ready: now + self.cfg.overhead,
            dim: u8::MAX,
            class: 0,
        };
        let slot = crate::sim::slots::reuse_or_push(&mut self.pkts, &mut self.free_pkts, pkt);
        self.queues[src].push_back(slot);
        self.queued += 1;
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        self.router_cycles += self.nodes as u64;
        self.inject_queued(now);
        // Drop channels that went idle since the last cycle.
        let vcs = &self.vcs;
        let in_active = &mut self.in_active;
        self.active.retain(|&id| {
            let keep = vcs[id as usize].owner != NONE;
            if !keep {
                in_active[id as usize] = false;
            }
            keep
        });
        if self.active.is_empty() {
            self.last_move = now;
            return;
        }
        self.allocate_vcs(now);
        self.allocate_switch(now);
        self.apply_moves(now, delivered);
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        if self
            .active
            .iter()
            .any(|&id| self.vcs[id as usize].owner != NONE)
        {
            return Some(now);
        }
        if self.queued == 0 {
            return None;
        }
        self.queues
            .iter()
            .filter_map(|q| q.front().map(|&p| self.pkts[p as usize].ready))
            .min()
            .map(|r| r.max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.busy.clone()
    }

    fn hardware(&self, network: &Network) -> crate::sim::energy::Hardware {
        // Input buffers of `vcs × buf` flits per port.
        let flits = self.cfg.vcs as u64 * u64::from(self.cfg.buf);
        crate::sim::energy::Hardware::of_network(network, flits)
    }

    fn stalled(&self, now: u64) -> Option<String> {
        if now > self.last_move + 100_000 && !self.active.is_empty() {
            Some(format!(
                "no flit has moved since cycle {}: worms hold channels in a cycle (deadlock)",
                self.last_move
            ))
        } else {
            None
        }
    }
}
