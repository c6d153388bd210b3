//! Placement cost functions (Minsky §4.2.1) and the placement configuration the annealer works on.
//!
//! * **coarse**: Σ over messages (and over each destination of a multicast) of size × hop distance
//!   between the two tasks' nodes — the thesis's Manhattan distance, weighted by message length.
//! * **fine**: the coarse cost times `1 + overload`, where `overload` estimates how far dimension-
//!   order routes overfill links: each message spreads its length evenly over its release–deadline
//!   window on every link of its route, and every (link, interval) cell whose utilization exceeds 1
//!   adds the excess × the interval's length, normalised by the traffic's time span. It is zero when
//!   no link is estimated to be overfull, so the fine cost equals the coarse cost then.
//!
//! Both are updated incrementally on a swap: only the messages of the two moved tasks are re-costed.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::anneal::{simanneal, Configuration, Progress, Schedule};
use super::slots::Slots;
use super::{wired_nodes, PlaceError, PlaceOptions};
use crate::topology::Network;
use crate::traffic::{MsgId, Placement, TaskId, Traffic};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostKind {
    #[default]
    Coarse,
    Fine,
}

/// Coarse placement cost of a placement: Σ size × hops over every (message, destination).
pub fn coarse_cost(traffic: &Traffic, network: &Network, placement: &Placement) -> u64 {
    let node = |t: TaskId| placement.node_of.get(t).copied().unwrap_or(usize::MAX);
    traffic
        .messages
        .iter()
        .flat_map(|m| m.dst.iter().map(move |&d| (m.src, d, m.size)))
        .map(|(s, d, size)| {
            let h = network.distance(node(s), node(d));
            if h == usize::MAX {
                0
            } else {
                size.saturating_mul(h as u64)
            }
        })
        .fold(0u64, |a, b| a.saturating_add(b))
}

/// Estimated per-(link, interval) utilization of the fine cost.
struct LoadGrid {
    /// Interval boundaries (sorted).
    cuts: Vec<u64>,
    /// `util[link * intervals + k]`.
    util: Vec<f64>,
    excess: f64,
    span: f64,
}

const MAX_GRID_CELLS: usize = 4 << 20;

impl LoadGrid {
    fn new(traffic: &Traffic, links: usize) -> LoadGrid {
        let mut cuts: Vec<u64> = traffic
            .messages
            .iter()
            .flat_map(|m| [m.release, window_end(m)])
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let max_intervals = (MAX_GRID_CELLS / links.max(1)).max(2);
        if cuts.len() > max_intervals {
            let step = cuts.len().div_ceil(max_intervals);
            let last = cuts.last().copied();
            cuts = cuts.into_iter().step_by(step).collect();
            if let Some(l) = last {
                if cuts.last() != Some(&l) {
                    cuts.push(l);
                }
            }
        }
        let intervals = cuts.len().saturating_sub(1).max(1);
        let span = match (cuts.first(), cuts.last()) {
            (Some(a), Some(b)) if b > a => (b - a) as f64,
            _ => 1.0,
        };
        LoadGrid {
            cuts,
            util: vec![0.0; links * intervals],
            excess: 0.0,
            span,
        }
    }

    fn intervals(&self) -> usize {
        self.cuts.len().saturating_sub(1).max(1)
    }

    /// Adds (sign = 1) or removes (sign = −1) a message's load on one link.
    fn apply(&mut self, link: usize, release: u64, end: u64, size: u64, sign: f64) {
        let n = self.intervals();
        let lo = self
            .cuts
            .partition_point(|&c| c <= release)
            .saturating_sub(1);
        let hi = self.cuts.partition_point(|&c| c < end).max(lo + 1).min(n);
        let window = (end.saturating_sub(release)).max(1) as f64;
        let rate = size as f64 / window * sign;
        for k in lo..hi {
            let len = (self.cuts.get(k + 1).copied().unwrap_or(end)
                - self.cuts.get(k).copied().unwrap_or(release)) as f64;
            let cell = &mut self.util[link * n + k];
            self.excess -= (*cell - 1.0).max(0.0) * len;
            *cell += rate;
            self.excess += (*cell - 1.0).max(0.0) * len;
        }
    }

    fn overload(&self) -> f64 {
        (self.excess / self.span).max(0.0)
    }
}

fn window_end(m: &crate::traffic::Message) -> u64 {
    m.deadline.max(m.release.saturating_add(m.size))
}

/// The placement being annealed.
struct PlaceState<'a> {
    traffic: &'a Traffic,
    net: &'a Network,
    slots: Slots,
    /// Aggregated communication partners per task: (other task, Σ sizes both ways).
    adj: Vec<Vec<(TaskId, f64)>>,
    /// Messages sent or received by each task (for the fine cost).
    msgs_of: Vec<Vec<MsgId>>,
    grid: Option<LoadGrid>,
    /// Hop distances between all node pairs, when the network is small enough (≤ 2,048 nodes):
    /// the annealer's inner loop is a handful of these lookups.
    hops: Option<Vec<u16>>,
    coarse: f64,
    pending: Option<(usize, usize, f64)>,
    best: (f64, Placement),
}

impl<'a> PlaceState<'a> {
    fn new(traffic: &'a Traffic, net: &'a Network, slots: Slots, kind: CostKind) -> Self {
        let tasks = traffic.tasks.len();
        let mut pairs: Vec<(TaskId, TaskId, u64)> = Vec::new();
        let mut msgs_of = vec![Vec::new(); tasks];
        for m in &traffic.messages {
            if m.src < tasks {
                msgs_of[m.src].push(m.id);
            }
            for &d in &m.dst {
                if d < tasks && m.src < tasks && d != m.src {
                    pairs.push((m.src.min(d), m.src.max(d), m.size));
                    msgs_of[d].push(m.id);
                }
            }
        }
        pairs.sort_unstable();
        let mut adj = vec![Vec::new(); tasks];
        let mut i = 0;
        while i < pairs.len() {
            let (a, b, _) = pairs[i];
            let mut w = 0u64;
            while i < pairs.len() && pairs[i].0 == a && pairs[i].1 == b {
                w = w.saturating_add(pairs[i].2);
                i += 1;
            }
            adj[a].push((b, w as f64));
            adj[b].push((a, w as f64));
        }
        for l in msgs_of.iter_mut() {
            l.sort_unstable();
            l.dedup();
        }
        let placement = slots.placement();
        let coarse = coarse_cost(traffic, net, &placement) as f64;
        let mut st = PlaceState {
            traffic,
            net,
            slots,
            adj,
            msgs_of,
            grid: None,
            hops: hop_table(net),
            coarse,
            pending: None,
            best: (f64::INFINITY, placement),
        };
        if kind == CostKind::Fine {
            let mut grid = LoadGrid::new(traffic, net.links.len());
            for m in 0..traffic.messages.len() {
                st.load_message(&mut grid, m, 1.0);
            }
            st.grid = Some(grid);
        }
        st.best.0 = st.cost();
        st
    }

    fn cost(&self) -> f64 {
        match &self.grid {
            Some(g) => self.coarse * (1.0 + g.overload()),
            None => self.coarse,
        }
    }

    fn load_message(&self, grid: &mut LoadGrid, m: MsgId, sign: f64) {
        let Some(msg) = self.traffic.messages.get(m) else {
            return;
        };
        let src = self.slots.node_of(msg.src);
        for &d in &msg.dst {
            let path = self.net.dor_path(src, self.slots.node_of(d));
            for w in path.windows(2) {
                if let Some(l) = self.net.link_between(w[0], w[1]) {
                    grid.apply(l, msg.release, window_end(msg), msg.size, sign);
                }
            }
        }
    }

    fn local(&self, t: Option<TaskId>) -> f64 {
        let Some(t) = t else { return 0.0 };
        let n = self.slots.node_of(t);
        let nodes = self.net.nodes();
        let mut sum = 0.0;
        for &(u, w) in &self.adj[t] {
            let v = self.slots.node_of(u);
            let d = match &self.hops {
                Some(h) => h[n * nodes + v] as usize,
                None => self.net.distance(n, v),
            };
            sum += w * d as f64;
        }
        sum
    }

    fn touched(&self, a: Option<TaskId>, b: Option<TaskId>) -> Vec<MsgId> {
        let mut v: Vec<MsgId> = a
            .into_iter()
            .chain(b)
            .flat_map(|t| self.msgs_of[t].iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Swaps two slots, keeping the coarse cost and the grid current.
    fn do_swap(&mut self, a: usize, b: usize) -> f64 {
        let (ta, tb) = (self.slots.content(a), self.slots.content(b));
        let before = self.local(ta) + self.local(tb);
        let touched = if self.grid.is_some() {
            self.touched(ta, tb)
        } else {
            Vec::new()
        };
        let mut grid = self.grid.take();
        if let Some(g) = grid.as_mut() {
            for &m in &touched {
                self.load_message(g, m, -1.0);
            }
        }
        self.slots.swap(a, b);
        if let Some(g) = grid.as_mut() {
            for &m in &touched {
                self.load_message(g, m, 1.0);
            }
        }
        self.grid = grid;
        let after = self.local(ta) + self.local(tb);
        let dc = after - before;
        self.coarse += dc;
        dc
    }
}

impl Configuration for PlaceState<'_> {
    fn propose(&mut self, rng: &mut ChaCha8Rng) -> Option<f64> {
        let (a, b) = self.slots.pick_pair(rng)?;
        let old = self.cost();
        self.do_swap(a, b);
        let new = self.cost();
        self.pending = Some((a, b, old));
        Some(new - old)
    }

    fn accept(&mut self) {
        self.pending = None;
    }

    fn reset(&mut self) {
        if let Some((a, b, _)) = self.pending.take() {
            self.do_swap(a, b);
        }
    }

    fn deciding_cost(&self) -> f64 {
        self.cost()
    }

    fn checkpoint(&mut self) {
        let c = self.cost();
        if c < self.best.0 {
            self.best = (c, self.slots.placement());
        }
    }
}

fn hop_table(net: &Network) -> Option<Vec<u16>> {
    let n = net.nodes();
    if n > 2048 {
        return None;
    }
    let mut t = vec![0u16; n * n];
    for b in 0..n {
        let to = net.distances_to(b);
        for a in 0..n {
            t[a * n + b] = to.from(a).min(u16::MAX as usize) as u16;
        }
    }
    Some(t)
}

/// Simulated-annealing placement (Minsky Fig 4-5).
pub fn anneal(
    traffic: &Traffic,
    network: &Network,
    options: &PlaceOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Placement, PlaceError> {
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let wired = wired_nodes(traffic, network)?;
    let tasks = traffic.tasks.len();
    let slots = match &options.initial {
        Some(p) => {
            Slots::from_placement(p, network.nodes(), &wired).ok_or(PlaceError::BadInitial {
                given: p.node_of.len(),
                tasks,
            })?
        }
        None => Slots::random(tasks, network.nodes(), &wired, &mut rng),
    };
    let mut state = PlaceState::new(traffic, network, slots, options.cost);
    let mut schedule = match &options.schedule {
        Some(s) => s.clone(),
        None => default_schedule(&mut state, &mut rng, tasks),
    };
    match options.min_acceptable_cost {
        Some(c) => schedule.min_acceptable_cost = c,
        None if options.schedule.is_none() => schedule.bail_out_t = f64::INFINITY,
        None => {}
    }
    simanneal(&mut state, &schedule, &mut rng, progress);
    state.checkpoint();
    Ok(state.best.1)
}

/// Starting temperature: twice the mean cost increase of a sample of random swaps, so most uphill
/// moves are accepted at first; cooled by 5 % per temperature down to 1/500 of that mean (about 135
/// temperatures), with 10 iterations per task at first, growing by half an iteration per task at
/// each temperature (Fig 4-5's `n_iter_step`). The thesis steps the temperature down linearly;
/// geometric cooling spends more of the same budget near freezing, which is where a torus-on-mesh
/// layout is decided (a linear schedule stalled 15 % above the folding mapping's cost).
fn default_schedule(state: &mut PlaceState, rng: &mut ChaCha8Rng, tasks: usize) -> Schedule {
    let mut ups = Vec::new();
    for _ in 0..200 {
        if let Some(d) = state.propose(rng) {
            if d > 0.0 {
                ups.push(d);
            }
            state.reset();
        }
    }
    let mean = if ups.is_empty() {
        1.0
    } else {
        ups.iter().sum::<f64>() / ups.len() as f64
    };
    let t = tasks.max(2) as u64;
    Schedule::geometric(2.0 * mean, mean / 500.0, 0.95, 10 * t, t / 2)
}
