//! Minsky's rerouting (§4.2.2, "Rerouting Using Weighted Shortest Path"), run by the same annealer
//! as placement (Fig 4-5):
//!
//! 1. compute the link utilization `lu_j` of every link;
//! 2. find the peak link (ties broken at random, footnote 9);
//! 3. order its messages by flexibility — the number of shortest paths between their nodes
//!    (footnote 11) — and take the most flexible;
//! 4. give it a weighted shortest path that avoids the peak link and in which congested links are
//!    expensive (so an improvement that needs two moves can still start uphill); if that is longer
//!    than the message's maximum misrouting distance (footnote 13: at most `max_misroute` extra hops
//!    and never more than its slack, window − length), fall back to the cheapest *minimal* path, and
//!    if that changes nothing try the next most flexible message;
//! 5. the configuration cost is Σ_j lu_j (the thesis's sum over all links) plus
//!    `overload_weight · Σ_j max(0, lu_j − 1)`, which makes removing an overfull link worth a
//!    longer path; the change is accepted by the Boltzmann rule;
//! 6. stop when the peak utilization reaches the minimum acceptable value, or after the step cap
//!    (`RouteOptions::max_steps`, by default `default_max_steps`: 8 per message, at least 2,000).
//!
//! Multicast trees take part too: when a tree crosses the peak link, the destinations whose
//! branch crosses it get new weighted paths from the source (the kept branches count as free, so
//! the new branch joins the tree where it can), each within its own misrouting distance; the tree
//! is rebuilt from the kept and the new paths. A tree's flexibility is its least flexible branch's.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::paths::tree_from_paths;
use super::RouteOptions;
use crate::anneal::{simanneal, Configuration, Progress, Schedule};
use crate::metrics::utilization::{link_utilization, window};
use crate::topology::{LinkId, Network, NodeId};
use crate::traffic::{MsgId, Placement, Route, Routing, Traffic};

/// What rerouting achieved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RerouteOutcome {
    pub initial_peak: f64,
    pub final_peak: f64,
    /// Proposed reroutes (annealing steps that changed something).
    pub steps: u64,
    pub accepted: u64,
    /// Messages whose final route differs from the initial one, in id order.
    pub rerouted: Vec<MsgId>,
    /// The bound on steps that applied (`RouteOptions::max_steps` or its default).
    #[serde(default)]
    pub step_cap: u64,
    /// True when rerouting stopped because it reached `step_cap` rather than by its schedule or
    /// by reaching the acceptable peak.
    #[serde(default)]
    pub capped: bool,
}

struct RerouteState<'a> {
    traffic: &'a Traffic,
    net: &'a Network,
    placement: &'a Placement,
    opts: &'a RouteOptions,
    routes: Vec<Route>,
    link_msgs: Vec<Vec<MsgId>>,
    lu: Vec<f64>,
    cost: f64,
    /// Shortest-path counts, computed when a message first sits on a peak link (a count is a
    /// breadth-first search on graph and diamond networks).
    flex: Vec<Option<u128>>,
    pending: Option<(MsgId, Route, f64)>,
    best_routes: Vec<Route>,
    best_key: (f64, f64),
    dirty: Vec<MsgId>,
    steps: u64,
    step_cap: u64,
    accepted: u64,
}

fn link_cost(lu: f64, weight: f64) -> f64 {
    lu + weight * (lu - 1.0).max(0.0)
}

impl<'a> RerouteState<'a> {
    fn new(
        traffic: &'a Traffic,
        net: &'a Network,
        placement: &'a Placement,
        opts: &'a RouteOptions,
        routing: Routing,
    ) -> Self {
        let mut link_msgs = vec![Vec::new(); net.links.len()];
        for (m, r) in routing.routes.iter().enumerate() {
            for l in r.links(net) {
                link_msgs[l].push(m);
            }
        }
        let lu: Vec<f64> = link_msgs
            .iter()
            .map(|ms| link_utilization(traffic, ms))
            .collect();
        let cost = lu.iter().map(|&u| link_cost(u, opts.overload_weight)).sum();
        let flex = vec![None; traffic.messages.len()];
        let mut st = RerouteState {
            traffic,
            net,
            placement,
            opts,
            best_routes: routing.routes.clone(),
            routes: routing.routes,
            link_msgs,
            lu,
            cost,
            flex,
            pending: None,
            best_key: (f64::INFINITY, f64::INFINITY),
            dirty: Vec::new(),
            steps: 0,
            step_cap: opts
                .max_steps
                .unwrap_or_else(|| super::default_max_steps(traffic.messages.len())),
            accepted: 0,
        };
        st.best_key = (st.peak(), st.cost);
        st
    }

    fn flexibility(&mut self, m: MsgId) -> u128 {
        if let Some(f) = self.flex[m] {
            return f;
        }
        let msg = &self.traffic.messages[m];
        // A tree is as flexible as its least flexible branch.
        let src = self.placement.node_of[msg.src];
        let f = msg
            .dst
            .iter()
            .map(|&d| self.net.shortest_path_count(src, self.placement.node_of[d]))
            .min()
            .unwrap_or(0);
        self.flex[m] = Some(f);
        f
    }

    fn peak(&self) -> f64 {
        self.lu.iter().copied().fold(0.0, f64::max)
    }

    /// Replaces a message's route, keeping link lists, utilizations and the cost current.
    fn set_route(&mut self, m: MsgId, route: Route) {
        let old_links = self.routes[m].links(self.net);
        let new_links = route.links(self.net);
        for &l in &old_links {
            if let Some(pos) = self.link_msgs[l].iter().position(|&x| x == m) {
                self.link_msgs[l].swap_remove(pos);
            }
        }
        for &l in &new_links {
            self.link_msgs[l].push(m);
        }
        let mut touched: Vec<LinkId> = old_links.into_iter().chain(new_links).collect();
        touched.sort_unstable();
        touched.dedup();
        for l in touched {
            self.link_msgs[l].sort_unstable();
            let new = link_utilization(self.traffic, &self.link_msgs[l]);
            self.cost += link_cost(new, self.opts.overload_weight)
                - link_cost(self.lu[l], self.opts.overload_weight);
            self.lu[l] = new;
        }
        self.routes[m] = route;
    }

    /// Weighted shortest path for `m` (see the module docs), or `None` if none is allowed.
    ///
    /// `dst` is the node of one of the message's destinations; links in `shared` already carry the
    /// message (the kept part of a multicast tree), so taking them again adds no load.
    fn weighted_path(
        &self,
        m: MsgId,
        dst: NodeId,
        minimal_only: bool,
        avoid: LinkId,
        shared: &[LinkId],
    ) -> Option<Vec<NodeId>> {
        let msg = &self.traffic.messages[m];
        let src = self.placement.node_of[msg.src];
        let (a, b) = window(msg);
        let rate = msg.size as f64 / (b - a).max(1) as f64;
        let current: Vec<LinkId> = self.routes[m].links(self.net);
        let weight = |l: LinkId| -> f64 {
            if shared.contains(&l) {
                return SHARED_LINK_WEIGHT;
            }
            let base = if current.contains(&l) {
                let others: Vec<MsgId> = self.link_msgs[l]
                    .iter()
                    .copied()
                    .filter(|&x| x != m)
                    .collect();
                link_utilization(self.traffic, &others)
            } else {
                self.lu[l]
            };
            1.0 + 2.0 * base + self.opts.overload_weight * (base + rate - 1.0).max(0.0)
        };
        let n = self.net.nodes();
        let to = self.net.distances_to(dst);
        let mut dist = vec![f64::INFINITY; n];
        let mut prev = vec![usize::MAX; n];
        let mut heap = BinaryHeap::new();
        dist[src] = 0.0;
        heap.push(Reverse((Key(0.0), src)));
        while let Some(Reverse((Key(d), u))) = heap.pop() {
            if d > dist[u] {
                continue;
            }
            if u == dst {
                break;
            }
            let du = to.from(u);
            for &l in &self.net.out[u] {
                let v = self.net.links[l].to;
                if l == avoid || (minimal_only && to.from(v).saturating_add(1) != du) {
                    continue;
                }
                let nd = d + weight(l);
                if nd < dist[v] {
                    dist[v] = nd;
                    prev[v] = u;
                    heap.push(Reverse((Key(nd), v)));
                }
            }
        }
        if dist[dst].is_infinite() {
            return None;
        }
        let mut path = vec![dst];
        let mut cur = dst;
        while cur != src {
            cur = prev[cur];
            if cur == usize::MAX {
                return None;
            }
            path.push(cur);
        }
        path.reverse();
        Some(path)
    }

    /// Longest path allowed from the message's source to `dst` (footnote 13).
    fn max_hops(&self, m: MsgId, dst: NodeId) -> usize {
        let msg = &self.traffic.messages[m];
        let src = self.placement.node_of[msg.src];
        let (a, b) = window(msg);
        let slack = (b - a).saturating_sub(msg.size) as usize;
        self.net
            .distance(src, dst)
            .saturating_add(self.opts.max_misroute.min(slack))
    }

    /// The weighted shortest path to `dst` if it is within the misrouting distance, else the
    /// cheapest minimal one (step 4 of the module docs).
    fn detour(
        &self,
        m: MsgId,
        dst: NodeId,
        avoid: LinkId,
        shared: &[LinkId],
    ) -> Option<Vec<NodeId>> {
        let limit = self.max_hops(m, dst);
        match self.weighted_path(m, dst, false, avoid, shared) {
            Some(p) if p.len().saturating_sub(1) <= limit => Some(p),
            _ => self.weighted_path(m, dst, true, avoid, shared),
        }
    }

    /// A multicast tree with the branches through `avoid` rerouted: every destination whose path
    /// in the tree crosses `avoid` gets a new weighted path from the source (sharing the kept
    /// branches for free); the others keep theirs. `None` if no destination crosses `avoid` or one
    /// cannot be reached without it.
    fn reroute_tree(&self, m: MsgId, edges: &[(NodeId, NodeId)], avoid: LinkId) -> Option<Route> {
        let msg = &self.traffic.messages[m];
        let src = self.placement.node_of[msg.src];
        let cut = self.net.links.get(avoid)?;
        let parent: BTreeMap<NodeId, NodeId> = edges.iter().map(|&(a, b)| (b, a)).collect();
        let tree_path = |d: NodeId| -> Option<Vec<NodeId>> {
            let mut p = vec![d];
            let mut cur = d;
            while cur != src {
                cur = *parent.get(&cur)?;
                p.push(cur);
                if p.len() > edges.len() + 1 {
                    return None;
                }
            }
            p.reverse();
            Some(p)
        };
        let mut dests: Vec<NodeId> = Vec::new();
        for &d in &msg.dst {
            let node = self.placement.node_of[d];
            if !dests.contains(&node) {
                dests.push(node);
            }
        }
        let mut paths: Vec<Option<Vec<NodeId>>> = vec![None; dests.len()];
        let mut shared: Vec<LinkId> = Vec::new();
        let mut affected = Vec::new();
        for (i, &d) in dests.iter().enumerate() {
            match tree_path(d) {
                Some(p) if !p.windows(2).any(|w| (w[0], w[1]) == (cut.from, cut.to)) => {
                    shared.extend(Route::Path(p.clone()).links(self.net));
                    paths[i] = Some(p);
                }
                _ => affected.push(i),
            }
        }
        if affected.is_empty() {
            return None;
        }
        for i in affected {
            let p = self.detour(m, dests[i], avoid, &shared)?;
            shared.extend(Route::Path(p.clone()).links(self.net));
            paths[i] = Some(p);
        }
        let paths: Vec<Vec<NodeId>> = paths.into_iter().flatten().collect();
        Some(tree_from_paths(&paths))
    }
}

/// Weight of a link the rerouted branch may share with the rest of its tree: small, so sharing is
/// preferred, but not zero, so shorter shared paths still win.
const SHARED_LINK_WEIGHT: f64 = 1e-3;

/// An f64 ordered totally, for the heap.
#[derive(Clone, Copy, PartialEq)]
struct Key(f64);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl Configuration for RerouteState<'_> {
    fn propose(&mut self, rng: &mut ChaCha8Rng) -> Option<f64> {
        let peak = self.peak();
        if peak <= self.opts.min_acceptable_peak {
            return None;
        }
        let peaks: Vec<LinkId> = (0..self.lu.len())
            .filter(|&l| self.lu[l] >= peak - 1e-12)
            .collect();
        let link = peaks[rng.random_range(0..peaks.len())];
        let cands: Vec<MsgId> = self.link_msgs[link].clone();
        // Most flexible first; equally flexible messages in random order (as equal peaks are).
        let mut keyed: Vec<(Reverse<u128>, Reverse<u64>, u64, MsgId)> = cands
            .iter()
            .map(|&m| {
                let flex = self.flexibility(m);
                let msg = &self.traffic.messages[m];
                let (a, b) = window(msg);
                (
                    Reverse(flex),
                    Reverse((b - a).saturating_sub(msg.size)),
                    rng.random::<u64>(),
                    m,
                )
            })
            .collect();
        keyed.sort_unstable();
        let cands: Vec<MsgId> = keyed.into_iter().map(|k| k.3).collect();
        for m in cands.into_iter().take(8) {
            let route = match &self.routes[m] {
                Route::Path(current) => {
                    let Some(&dst) = current.last() else { continue };
                    match self.detour(m, dst, link, &[]) {
                        Some(p) if p != *current => Route::Path(p),
                        _ => continue,
                    }
                }
                Route::Tree(edges) => match self.reroute_tree(m, edges, link) {
                    Some(t) if t != self.routes[m] => t,
                    _ => continue,
                },
            };
            let old_cost = self.cost;
            let old = self.routes[m].clone();
            self.set_route(m, route);
            self.pending = Some((m, old, old_cost));
            self.steps += 1;
            return Some(self.cost - old_cost);
        }
        None
    }

    fn accept(&mut self) {
        if let Some((m, _, _)) = self.pending.take() {
            self.accepted += 1;
            self.dirty.push(m);
            let key = (self.peak(), self.cost);
            if key.0 < self.best_key.0 - 1e-12
                || (key.0 <= self.best_key.0 + 1e-12 && key.1 < self.best_key.1 - 1e-9)
            {
                self.best_key = key;
                for d in self.dirty.drain(..) {
                    self.best_routes[d] = self.routes[d].clone();
                }
            }
        }
    }

    fn reset(&mut self) {
        if let Some((m, old, _)) = self.pending.take() {
            self.set_route(m, old);
        }
    }

    fn deciding_cost(&self) -> f64 {
        self.best_key.0
    }

    fn exhausted(&self) -> bool {
        self.steps >= self.step_cap
    }
}

/// Improves `routing` by rerouting (see the module docs). Returns the best routing seen.
pub fn reroute(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: Routing,
    options: &RouteOptions,
    rng: &mut ChaCha8Rng,
    progress: &mut dyn FnMut(Progress),
) -> (Routing, RerouteOutcome) {
    let initial = routing.routes.clone();
    let mut st = RerouteState::new(traffic, network, placement, options, routing);
    let initial_peak = st.peak();
    let mut schedule = options
        .schedule
        .clone()
        .unwrap_or_else(|| Schedule::linear(options.overload_weight.max(1.0) / 2.0, 20, 10, 5));
    schedule.min_acceptable_cost = options.min_acceptable_peak;
    simanneal(&mut st, &schedule, rng, progress);
    let routes = st.best_routes;
    let rerouted = (0..routes.len())
        .filter(|&m| routes[m] != initial[m])
        .collect();
    let outcome = RerouteOutcome {
        initial_peak,
        final_peak: st.best_key.0,
        steps: st.steps,
        accepted: st.accepted,
        rerouted,
        step_cap: st.step_cap,
        capped: st.steps >= st.step_cap,
    };
    (Routing { routes }, outcome)
}
