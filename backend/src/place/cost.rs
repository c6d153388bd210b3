//! Placement cost functions (Minsky §4.2.1) and the placement configuration the annealer works on.
//!
//! * **coarse**: Σ over messages (and over each destination of a multicast) of size × hop distance
//!   between the two tasks' nodes — the thesis's Manhattan distance, weighted by message length.
//! * **fine** (Minsky §4.2.1: "a finer cost function … takes into account the time at which
//!   messages are sent"): the coarse cost plus the words that overflow links and ports. Each
//!   message spreads its length evenly over its release–deadline window on every link of its
//!   dimension-order route, on its source node's injection ports and on each destination node's
//!   ejection ports (capacity: the node's port count); every (resource, interval) cell whose
//!   utilization exceeds 1 adds the excess × the interval's length — words that cannot pass inside
//!   their windows. It is zero when nothing is estimated to be overfull, so the fine cost equals
//!   the coarse cost then. Two placements of equal word-hops differ here when one makes messages
//!   share a link while their windows overlap, which the schedule would have to serialize past
//!   their deadlines. The thesis multiplies distance by utilization; a product lets a small
//!   overload outweigh any number of word-hops, and the annealer then trades a good layout for it
//!   (on a 32×32 Jacobi torus, 39 % more word-hops than the folding mapping), so the two are added,
//!   both in words.
//!
//! Both are updated incrementally on a swap: only the messages of the two moved tasks are re-costed.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::anneal::{simanneal, Configuration, Progress, Schedule};
use super::metric::Metric;
use super::slots::Slots;
use super::{wired_nodes, PlaceError, PlaceOptions};
use rand::Rng;

use crate::topology::{Kind, Network, NodeId};
use crate::traffic::{MsgId, Placement, Route, TaskId, Traffic};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostKind {
    Coarse,
    #[default]
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

/// Estimated per-(resource, interval) utilization of the fine cost.
struct LoadGrid {
    /// Interval lengths.
    lens: Vec<f64>,
    /// Per message: its first and past-the-last interval, and its words per cycle.
    span: Vec<(u32, u32, f64)>,
    /// `util[row * intervals + k]`.
    util: Vec<f64>,
    excess: f64,
    /// Cells updated so far.
    touches: u64,
    /// Cells the first load of every message updated: what one full re-costing costs (the
    /// measure of the fine cost's work, see `FINE_BUDGET`).
    load_cells: u64,
}

const MAX_GRID_CELLS: usize = 4 << 20;

/// Largest network whose node-pair routes the fine cost keeps.
const ROUTE_TABLE_NODES: usize = 1024;

impl LoadGrid {
    fn new(traffic: &Traffic, rows: usize) -> LoadGrid {
        let mut cuts: Vec<u64> = traffic
            .messages
            .iter()
            .flat_map(|m| [m.release, window_end(m)])
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let max_intervals = (MAX_GRID_CELLS / rows.max(1)).max(2);
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
        let n = cuts.len().saturating_sub(1).max(1);
        let lens = (0..n)
            .map(|k| match (cuts.get(k), cuts.get(k + 1)) {
                (Some(a), Some(b)) => (b - a) as f64,
                _ => 1.0,
            })
            .collect();
        let span = traffic
            .messages
            .iter()
            .map(|m| {
                let (release, end) = (m.release, window_end(m));
                let lo = cuts.partition_point(|&c| c <= release).saturating_sub(1);
                let hi = cuts.partition_point(|&c| c < end).max(lo + 1).min(n);
                let window = end.saturating_sub(release).max(1) as f64;
                (lo as u32, hi as u32, m.size as f64 / window)
            })
            .collect();
        LoadGrid {
            lens,
            span,
            util: vec![0.0; rows * n],
            excess: 0.0,
            touches: 0,
            load_cells: 0,
        }
    }

    /// Adds (sign = 1) or removes (sign = −1) message `m`'s load on resource `row`, whose
    /// capacity is `1 / scale` words per cycle.
    fn apply(&mut self, row: usize, m: MsgId, scale: f64, sign: f64) {
        let n = self.lens.len();
        let (lo, hi, rate) = self.span[m];
        let rate = rate * scale * sign;
        let base = row * n;
        self.touches += u64::from(hi - lo);
        for k in lo as usize..hi as usize {
            let len = self.lens[k];
            let cell = &mut self.util[base + k];
            let before = (*cell - 1.0).max(0.0);
            *cell += rate;
            self.excess += ((*cell - 1.0).max(0.0) - before) * len;
        }
    }

    /// Words that overflow their resource inside their windows (Σ excess utilization × cycles).
    fn overload(&self) -> f64 {
        self.excess.max(0.0)
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
    /// Task t's partners are `adj[adj_start[t]..adj_start[t + 1]]` (one flat array).
    adj: Vec<(u32, f64)>,
    adj_start: Vec<u32>,
    /// Messages sent or received by each task (for the fine cost).
    msgs_of: Vec<Vec<MsgId>>,
    /// Fine cost: rows `0..links` are links, then each node's injection and its ejection ports.
    grid: Option<LoadGrid>,
    ports: f64,
    /// Dimension-order routes between node pairs, as links, filled as the fine cost asks for
    /// them (networks of at most `ROUTE_TABLE_NODES` nodes).
    routes: std::cell::RefCell<Vec<Option<Box<[u32]>>>>,
    /// Hop distances: the annealer's inner loop is a handful of these.
    metric: Metric<'a>,
    coarse: f64,
    pending: Option<(usize, usize, f64)>,
    best: (f64, Placement),
    /// Range limit of moves, once a schedule is known (see `Window`).
    window: Option<Window>,
}

/// Range-limited moves, the standard refinement of annealing placement in VLSI layout
/// (TimberWolf's range limiter; Lam and Delosme's adaptive schedule): a task's swap partner is
/// drawn from a window around its node. The window starts as the whole network and, after each
/// temperature, is scaled by `1 − TARGET_ACCEPTANCE + acceptance ratio`, so it shrinks as the
/// temperature falls and keeps about 44 % of moves accepted; it never gets below `MIN_RADIUS`
/// hops. At low temperature almost every long-range swap is rejected anyway; drawing partners
/// nearby makes those iterations count. On meshes and tori the window is a box of half-width r;
/// elsewhere the partner is the end of a random walk of at most r links.
///
/// On the 32×32 Jacobi torus placed on a 32×32 mesh this brought annealing from 43 % above the
/// folding mapping's cost to within 10 % (see `examples/bench_place.rs`).
#[derive(Clone, Debug)]
struct Window {
    r_max: usize,
    /// The radius as a real number (it is scaled by factors near 1).
    radius: f64,
    /// Moves proposed and accepted at the current temperature.
    tried: u64,
    taken: u64,
}

/// Acceptance ratio the window size aims at (Lam and Delosme's 0.44).
const TARGET_ACCEPTANCE: f64 = 0.44;

/// Smallest window radius.
const MIN_RADIUS: usize = 2;

impl Window {
    fn new(net: &Network) -> Window {
        let dims = &net.spec.dims;
        let r_max = match net.spec.kind {
            Kind::Mesh | Kind::Line => dims.iter().map(|d| d.saturating_sub(1)).max(),
            Kind::Torus | Kind::Ring => dims.iter().map(|d| d / 2).max(),
            _ => {
                let to = net.distances_to(0);
                (0..net.nodes())
                    .map(|v| to.from(v))
                    .filter(|&d| d != usize::MAX)
                    .max()
            }
        }
        .unwrap_or(1)
        .max(1);
        Window {
            r_max,
            radius: r_max as f64,
            tried: 0,
            taken: 0,
        }
    }

    /// The radius moves are drawn within, or `None` for the whole network.
    fn radius(&self) -> Option<usize> {
        let r = self.radius.round() as usize;
        (r < self.r_max).then_some(r.max(1))
    }

    /// Rescales the window by the acceptance ratio of the temperature just finished.
    fn next_temperature(&mut self) {
        if self.tried > 0 {
            let ratio = self.taken as f64 / self.tried as f64;
            let low = (MIN_RADIUS as f64).min(self.r_max as f64);
            self.radius =
                (self.radius * (1.0 - TARGET_ACCEPTANCE + ratio)).clamp(low, self.r_max as f64);
        }
        self.tried = 0;
        self.taken = 0;
    }
}

/// A node within `r` of `n` (see `Window`), or `None` when the draw falls off a mesh.
fn near_node(net: &Network, n: NodeId, r: usize, rng: &mut ChaCha8Rng) -> Option<NodeId> {
    let wrap = match net.spec.kind {
        Kind::Mesh | Kind::Line => false,
        Kind::Torus | Kind::Ring => true,
        _ => {
            let mut cur = n;
            for _ in 0..rng.random_range(1..=r.max(1)) {
                let out = net.out.get(cur)?;
                if out.is_empty() {
                    return None;
                }
                cur = net.links[out[rng.random_range(0..out.len())]].to;
            }
            return Some(cur);
        }
    };
    let coords = net.coords.get(n)?;
    let r = r as i64;
    let (mut node, mut stride) = (0usize, 1usize);
    for (&c, &d) in coords.iter().zip(&net.spec.dims) {
        let d64 = d as i64;
        let mut x = c + rng.random_range(-r..=r);
        if wrap {
            x = x.rem_euclid(d64);
        } else if x < 0 || x >= d64 {
            return None;
        }
        node += x as usize * stride;
        stride *= d;
    }
    Some(node)
}

impl<'a> PlaceState<'a> {
    fn new(
        traffic: &'a Traffic,
        net: &'a Network,
        slots: Slots,
        kind: CostKind,
        ports: u32,
    ) -> Self {
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
            adj[a].push((b as u32, w as f64));
            adj[b].push((a as u32, w as f64));
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
            adj_start: std::iter::once(0)
                .chain(adj.iter().scan(0u32, |n, a| {
                    *n += a.len() as u32;
                    Some(*n)
                }))
                .collect(),
            adj: adj.concat(),
            msgs_of,
            grid: None,
            ports: ports.max(1) as f64,
            routes: Default::default(),
            metric: Metric::new(net),
            coarse,
            pending: None,
            best: (f64::INFINITY, placement),
            window: None,
        };
        if kind == CostKind::Fine {
            st.start_fine();
        }
        st.best.0 = st.cost();
        st
    }

    /// Builds the fine cost's load grid for the current placement.
    fn start_fine(&mut self) {
        let mut grid = LoadGrid::new(self.traffic, self.net.links.len() + 2 * self.net.nodes());
        for m in 0..self.traffic.messages.len() {
            self.load_message(&mut grid, m, 1.0);
        }
        grid.load_cells = grid.touches;
        self.grid = Some(grid);
    }

    /// The fine cost's overload term (0 without the grid).
    fn overload(&self) -> f64 {
        self.grid.as_ref().map_or(0.0, LoadGrid::overload)
    }

    fn cost(&self) -> f64 {
        self.coarse + self.overload()
    }

    fn load_message(&self, grid: &mut LoadGrid, m: MsgId, sign: f64) {
        let Some(msg) = self.traffic.messages.get(m) else {
            return;
        };
        let tasks = self.traffic.tasks.len();
        if msg.src >= tasks {
            return;
        }
        let (links, nodes) = (self.net.links.len(), self.net.nodes());
        let port = 1.0 / self.ports;
        let src = self.slots.node_of(msg.src);
        // A multicast leaves its source once (Minsky §4.2.4: one stream, forked in the network).
        if msg
            .dst
            .iter()
            .any(|&d| d < tasks && self.slots.node_of(d) != src)
        {
            grid.apply(links + src, m, port, sign);
        }
        for &d in msg.dst.iter().filter(|&&d| d < tasks) {
            let dst = self.slots.node_of(d);
            if dst == src {
                continue;
            }
            grid.apply(links + nodes + dst, m, port, sign);
            self.for_route(src, dst, |l| grid.apply(l, m, 1.0, sign));
        }
    }

    /// Calls `f` on each link of the dimension-order route from `src` to `dst`, kept in `routes`
    /// on networks of at most `ROUTE_TABLE_NODES` nodes.
    fn for_route(&self, src: NodeId, dst: NodeId, mut f: impl FnMut(usize)) {
        let nodes = self.net.nodes();
        let links = || -> Box<[u32]> {
            let path = Route::Path(self.net.dor_path(src, dst));
            path.links(self.net).into_iter().map(|l| l as u32).collect()
        };
        if nodes > ROUTE_TABLE_NODES {
            links().iter().for_each(|&l| f(l as usize));
            return;
        }
        let mut routes = self.routes.borrow_mut();
        if routes.is_empty() {
            routes.resize(nodes * nodes, None);
        }
        let route = routes[src * nodes + dst].get_or_insert_with(links);
        route.iter().for_each(|&l| f(l as usize));
    }

    fn local(&self, t: Option<TaskId>) -> f64 {
        let Some(t) = t else { return 0.0 };
        let n = self.slots.node_of(t);
        let mut sum = 0.0;
        let (lo, hi) = (self.adj_start[t] as usize, self.adj_start[t + 1] as usize);
        for &(u, w) in &self.adj[lo..hi] {
            sum += w * self.metric.hops(n, self.slots.node_of(u as usize)) as f64;
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
        let net = self.net;
        let (a, b) = match self.window.as_ref().and_then(Window::radius) {
            Some(r) => self
                .slots
                .pick_near(rng, |n, rng| near_node(net, n, r, rng))?,
            None => self.slots.pick_pair(rng)?,
        };
        let old = self.cost();
        self.do_swap(a, b);
        let new = self.cost();
        self.pending = Some((a, b, old));
        if let Some(w) = self.window.as_mut() {
            w.tried += 1;
        }
        Some(new - old)
    }

    fn accept(&mut self) {
        self.pending = None;
        if let Some(w) = self.window.as_mut() {
            w.taken += 1;
        }
    }

    fn reset(&mut self) {
        if let Some((a, b, _)) = self.pending.take() {
            self.do_swap(a, b);
        }
    }

    fn deciding_cost(&self) -> f64 {
        self.cost()
    }

    fn temperature(&mut self, _t: f64, _start_t: f64, _final_t: f64) {
        if let Some(w) = self.window.as_mut() {
            w.next_temperature();
        }
    }

    fn checkpoint(&mut self) {
        let c = self.cost();
        if c < self.best.0 {
            self.best = (c, self.slots.placement());
        }
    }
}

/// Simulated-annealing placement (Minsky Fig 4-5).
pub fn anneal(
    traffic: &Traffic,
    network: &Network,
    options: &PlaceOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Placement, PlaceError> {
    let wired = wired_nodes(traffic, network)?;
    let tasks = traffic.tasks.len();
    // Large programs with nothing pinned and no schedule or start of the caller's: multilevel.
    if tasks > super::multilevel::MIN_TASKS
        && options.schedule.is_none()
        && options.initial.is_none()
        && options.min_acceptable_cost.is_none()
        && wired.iter().all(Option::is_none)
    {
        if let Some(p) = super::multilevel::place(traffic, network, options.seed, progress) {
            return Ok(p);
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let slots = match &options.initial {
        Some(p) => Slots::from_placement(p, network.spec.terminals(), &wired).ok_or(
            PlaceError::BadInitial {
                given: p.node_of.len(),
                tasks,
            },
        )?,
        // Slots are the processors' nodes (all but an anynet network's routers, numbered last).
        None => Slots::random(tasks, network.spec.terminals(), &wired, &mut rng),
    };
    // Minsky §4.2.1 runs placement in a coarse phase on word-hops and optionally a fine phase
    // whose cost also counts link and port overload. Started from a coarse optimum and kept cool,
    // a fine phase could not leave it (4×4 Jacobi: 7 of 8 seeds stayed at 58–66 cycles); annealed
    // with the fine cost from the start, all 12 seeds tried reach the 42-cycle critical path.
    let kind = match options.cost {
        CostKind::Fine if tasks <= FINE_MAX_TASKS => CostKind::Fine,
        _ => CostKind::Coarse,
    };
    let mut state = PlaceState::new(traffic, network, slots, kind, options.ports);
    let mut schedule = match &options.schedule {
        Some(s) => s.clone(),
        None => default_schedule(&mut state, &mut rng, tasks),
    };
    // A problem with fewer placements than the anneal would try is searched whole: every
    // arrangement of the movable slots, one swap apart (a 5-task pipeline on a 2×3 mesh: 720
    // placements, against about 12,700 moves of the default anneal).
    let defaults = options.schedule.is_none()
        && options.initial.is_none()
        && options.min_acceptable_cost.is_none();
    let whole = arrangements(state.slots.movable().len()).filter(|&n| n <= schedule.iterations());
    if defaults {
        let moves = whole.map_or(2 * schedule.iterations(), |n| n);
        if state.grid.is_some() && state.fine_work(moves) > FINE_BUDGET {
            // The fine cost re-costs every message of a moved task; with many messages per task
            // that is the whole cost of planning many times over. Word-hops cost a task's
            // partners, not its messages, and the candidates are judged by their schedules.
            state.grid = None;
            state.best.0 = state.cost();
            schedule = default_schedule(&mut state, &mut rng, tasks);
        }
    }
    if let (true, Some(n)) = (defaults, whole) {
        state.search_all(n, progress);
        return Ok(state.best.1);
    }
    match options.min_acceptable_cost {
        Some(c) => schedule.min_acceptable_cost = c,
        None if options.schedule.is_none() => schedule.bail_out_t = f64::INFINITY,
        None => {}
    }
    state.window = Some(Window::new(network));
    simanneal(&mut state, &schedule, &mut rng, progress);
    state.checkpoint();
    Ok(state.best.1)
}

/// A short anneal that refines a placement already close to good (see `multilevel`): moves start
/// within `radius` hops, and the temperature starts at `heat` × the mean cost increase of such
/// moves.
pub(super) struct Refine {
    pub radius: usize,
    pub heat: f64,
    /// Iterations per task at the first temperature, and added per task at each one after.
    pub first: u64,
    pub step: u64,
    /// The temperature ends at the mean uphill move's cost divided by this.
    pub cold: f64,
}

/// Anneals `slots` on the coarse cost: from the default schedule, or as a refinement.
pub(super) fn anneal_coarse(
    traffic: &Traffic,
    network: &Network,
    slots: Slots,
    refine: Option<&Refine>,
    rng: &mut ChaCha8Rng,
    progress: &mut dyn FnMut(Progress),
) -> Placement {
    let tasks = traffic.tasks.len();
    let mut state = PlaceState::new(traffic, network, slots, CostKind::Coarse, 1);
    let mut schedule = match refine {
        None => {
            let s = default_schedule(&mut state, rng, tasks);
            state.window = Some(Window::new(network));
            s
        }
        Some(r) => {
            let mut w = Window::new(network);
            w.radius = (r.radius as f64).min(w.r_max as f64);
            state.window = Some(w);
            let mean = mean_uphill(&mut state, rng);
            let t = tasks.max(2) as u64;
            Schedule::geometric(r.heat * mean, mean / r.cold, 0.93, r.first * t, r.step * t)
        }
    };
    schedule.bail_out_t = f64::INFINITY;
    simanneal(&mut state, &schedule, rng, progress);
    state.checkpoint();
    state.best.1
}

/// `n!`, or `None` above 10! (more arrangements than any default anneal tries moves).
fn arrangements(n: usize) -> Option<u64> {
    (n <= 10).then(|| (1..=n as u64).product())
}

/// Cells of the fine cost's load grid the default placement may update (a few seconds): past
/// it the anneal uses the coarse cost. A move re-costs every message of the two tasks it moves,
/// and a rejected move does so twice, so an anneal of `m` moves updates about
/// `4 m × cells × min(1, 4 / tasks)` cells, `cells` being what loading every message once
/// updated. The examples place as before; a 5-task pipeline of 1,600 messages annealed fine for
/// 15 s (it is now searched whole), and the paced all-to-all of an 8×8 mesh (16,128 messages in
/// its four evaluated iterations) for minutes, where the coarse anneal takes about 2 s.
const FINE_BUDGET: u64 = 300_000_000;

impl PlaceState<'_> {
    /// Cells a search of `swaps` swaps updates under the fine cost (see `FINE_BUDGET`).
    fn fine_work(&self, swaps: u64) -> u64 {
        let Some(grid) = &self.grid else { return 0 };
        let tasks = self.traffic.tasks.len().max(1) as f64;
        let share = (4.0 / tasks).min(1.0);
        (2.0 * swaps as f64 * grid.load_cells as f64 * share).min(u64::MAX as f64) as u64
    }

    /// Visits all `count` arrangements of the movable slots' contents (Heap's algorithm: each
    /// one swap from the last) and keeps the cheapest, the first found on a tie: the optimum of
    /// the cost, where the anneal only approaches it.
    fn search_all(&mut self, count: u64, progress: &mut dyn FnMut(Progress)) {
        let slots: Vec<usize> = self.slots.movable().to_vec();
        let n = slots.len();
        let mut c = vec![0usize; n];
        let mut seen = 1u64;
        let mut i = 1;
        while i < n {
            if c[i] < i {
                let j = if i % 2 == 0 { 0 } else { c[i] };
                let (a, b) = (slots[j], slots[i]);
                if self.slots.same_node(a, b) {
                    // The same placement: only the slots' bookkeeping moves.
                    self.slots.swap(a, b);
                } else {
                    self.do_swap(a, b);
                    let cost = self.cost();
                    // Incremental sums drift by rounding: a tie stays with the first found.
                    if cost < self.best.0 - 1e-9 * self.best.0.abs().max(1.0) {
                        self.best = (cost, self.slots.placement());
                    }
                }
                seen += 1;
                if seen.is_multiple_of(1024) || seen == count {
                    progress(Progress {
                        iterations: seen,
                        total: count,
                        temperature: 0.0,
                        deciding_cost: self.best.0,
                    });
                }
                c[i] += 1;
                i = 1;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
    }
}

/// Up to this many tasks the anneal uses the fine cost. Its update re-routes every message of
/// the two swapped tasks; on larger programs that costs more than the layout gains (a 32×32
/// Jacobi: 3 s coarse, 13 s with the fine cost over only the last tenth of the moves, for a
/// layout 0.2 % better), so they anneal coarse and `--place best` judges by the schedule.
const FINE_MAX_TASKS: usize = 256;

/// The mean cost increase of the uphill moves among 200 proposals (1 when there are none).
fn mean_uphill(state: &mut PlaceState, rng: &mut ChaCha8Rng) -> f64 {
    let mut ups = Vec::new();
    for _ in 0..200 {
        if let Some(d) = state.propose(rng) {
            if d > 0.0 {
                ups.push(d);
            }
            state.reset();
        }
    }
    if ups.is_empty() {
        1.0
    } else {
        ups.iter().sum::<f64>() / ups.len() as f64
    }
}

/// Starting temperature: twice the mean cost increase of a sample of random swaps, so most uphill
/// moves are accepted at first; cooled geometrically down to 1/500 of that mean. The thesis steps
/// the temperature down linearly; geometric cooling spends more of the same budget near freezing,
/// which is where a torus-on-mesh layout is decided (a linear schedule stalled 15 % above the
/// folding mapping's cost). Fig 4-5's `n_iter_step` puts most of the budget at the cold end, where
/// the range-limited moves are cheap and useful: 3 iterations per task at first, 2 more per task
/// at each temperature, cooling by 7 % (95 temperatures, about 9,200 moves per task). On a 64×64
/// Jacobi torus this ends 5–28 % above the folding mapping (4 seeds) where cooling by 5 % from 10
/// iterations per task, growing by 1 (10,400 moves per task), ended 34 % above; on 32×32 it is as
/// good as before (5–9 %) in fewer moves.
fn default_schedule(state: &mut PlaceState, rng: &mut ChaCha8Rng, tasks: usize) -> Schedule {
    let mean = mean_uphill(state, rng);
    let t = tasks.max(2) as u64;
    if state.grid.is_some() {
        // The fine cost's moves cost ten times the coarse's: a shorter schedule (66
        // temperatures, a seventh of the moves) that still reaches the 4×4 Jacobi's 42 cycles
        // from every seed tried.
        return Schedule::geometric(2.0 * mean, mean / 500.0, 0.93, 6 * t, t);
    }
    Schedule::geometric(2.0 * mean, mean / 500.0, 0.93, 3 * t, 2 * t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::place::PlaceMethod;
    use crate::traffic::{Message, Task};

    /// A chain of `n` tasks, each forwarding `frames` 16-word frames downstream and returning a
    /// 1-word credit upstream, one frame every 20 cycles.
    fn chain(n: usize, frames: u64) -> Traffic {
        let tasks = (0..n)
            .map(|id| Task {
                id,
                name: format!("p{id}"),
                ..Task::default()
            })
            .collect();
        let mut messages = Vec::new();
        for f in 0..frames {
            for t in 0..n - 1 {
                for (src, dst, size) in [(t, t + 1, 16), (t + 1, t, 1)] {
                    let release = 20 * f + 20 * t as u64;
                    messages.push(Message {
                        id: messages.len(),
                        src,
                        dst: vec![dst].into(),
                        size,
                        release,
                        deadline: release + 20,
                        ..Message::default()
                    });
                }
            }
        }
        Traffic {
            tasks,
            messages,
            ..Traffic::default()
        }
    }

    #[test]
    fn small_problems_are_searched_whole() {
        // 5 tasks on 6 nodes: 720 arrangements, fewer than the anneal's moves. The optimum lays
        // the chain along a path of neighbours, whatever the seed.
        let net = Network::build(&"mesh:2x3".parse().expect("spec")).expect("network");
        let t = chain(5, 20);
        let ideal: u64 = t.messages.iter().map(|m| m.size).sum();
        for seed in 0..4 {
            let p = crate::place::place(&t, &net, PlaceMethod::Anneal, seed).expect("placed");
            assert_eq!(coarse_cost(&t, &net, &p), ideal, "seed {seed}");
            let again = crate::place::place(&t, &net, PlaceMethod::Anneal, seed).expect("placed");
            assert_eq!(p, again, "seed {seed}: the search is deterministic");
        }
        assert_eq!(arrangements(6), Some(720));
        assert_eq!(arrangements(11), None);
    }

    #[test]
    fn the_fine_cost_is_judged_by_its_work() {
        // The work of a search grows with the messages of the tasks it moves.
        let net = Network::build(&"mesh:4x3".parse().expect("spec")).expect("network");
        let work = |frames| {
            let t = chain(12, frames);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let slots = Slots::random(12, net.nodes(), &[None; 12], &mut rng);
            PlaceState::new(&t, &net, slots, CostKind::Fine, 1).fine_work(1000)
        };
        let (small, large) = (work(10), work(1000));
        assert!(small > 0 && small < FINE_BUDGET, "{small}");
        assert!(large > 50 * small, "{small} -> {large}");
    }
}
