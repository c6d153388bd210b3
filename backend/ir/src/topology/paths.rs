//! Distances, dimension-order routes and shortest-path counts on any built network. Regular kinds
//! use closed forms; the explicit graph and the diamond lattice use rows of hop distances *to* a
//! target, each filled by one breadth-first search over the reversed links the first time it is
//! asked for and kept in a bounded cache. A route is built towards its destination, so one row
//! serves every step of it; no all-pairs table is needed, and networks of any size the node limit
//! allows can be routed.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};

use super::{diamond, Kind, Network, NodeId};

/// Memory the cached distance rows may use (64 MiB of `u32`); beyond it the oldest row goes.
const CACHE_BYTES: usize = 64 << 20;

const UNREACHED: u32 = u32::MAX;

/// Hop distances to a target node, computed on demand and cached (graph and diamond kinds).
///
/// The cache is derived data: clones start empty and every two caches compare equal, so a
/// `Network` is still compared by its spec, coordinates and links.
#[derive(Default)]
pub struct HopCache {
    inner: Mutex<CacheInner>,
}

#[derive(Default)]
struct CacheInner {
    /// Target node → distance from every node to it.
    rows: HashMap<NodeId, Arc<[u32]>>,
    /// Targets in the order their rows were computed (the eviction order).
    order: VecDeque<NodeId>,
}

impl Clone for HopCache {
    fn clone(&self) -> Self {
        HopCache::default()
    }
}

impl PartialEq for HopCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for HopCache {}

impl fmt::Debug for HopCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HopCache")
    }
}

impl HopCache {
    /// The row of distances from every node to `to`, computing (and caching) it if needed.
    fn row(&self, net: &Network, to: NodeId) -> Arc<[u32]> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(row) = inner.rows.get(&to) {
            return Arc::clone(row);
        }
        let n = net.nodes();
        let mut row = vec![UNREACHED; n];
        bfs_into(n, to, &mut row, |u| {
            net.into.get(u).map(|v| v.as_slice()).unwrap_or(&[])
        });
        let row: Arc<[u32]> = row.into();
        let capacity = (CACHE_BYTES / (4 * n.max(1))).max(1);
        while inner.order.len() >= capacity {
            match inner.order.pop_front() {
                Some(old) => {
                    inner.rows.remove(&old);
                }
                None => break,
            }
        }
        inner.order.push_back(to);
        inner.rows.insert(to, Arc::clone(&row));
        row
    }
}

/// Breadth-first search from `src` along `next(u)` (neighbour ids), writing hop counts to `row`.
fn bfs_into<'a>(n: usize, src: NodeId, row: &mut [u32], next: impl Fn(NodeId) -> &'a [NodeId]) {
    if src >= n {
        return;
    }
    let mut queue = VecDeque::new();
    row[src] = 0;
    queue.push_back(src);
    while let Some(u) = queue.pop_front() {
        let du = row[u];
        for &v in next(u) {
            if row[v] == UNREACHED {
                row[v] = du.saturating_add(1);
                queue.push_back(v);
            }
        }
    }
}

/// A node that node 0 cannot reach, or one that cannot reach node 0 (links are directed).
pub fn first_unreachable(net: &Network) -> Option<NodeId> {
    let n = net.nodes();
    if n == 0 {
        return None;
    }
    for adj in [&net.succ, &net.into] {
        let mut row = vec![UNREACHED; n];
        bfs_into(n, 0, &mut row, |u| {
            adj.get(u).map(|v| v.as_slice()).unwrap_or(&[])
        });
        if let Some(v) = row.iter().position(|&d| d == UNREACHED) {
            return Some(v);
        }
    }
    None
}

/// Hop distances from any node to one target: a cached row on graph and diamond networks, the
/// closed form elsewhere. Fetch it once per route rather than calling `Network::distance` per hop.
pub struct DistancesTo<'a> {
    net: &'a Network,
    to: NodeId,
    row: Option<Arc<[u32]>>,
}

impl DistancesTo<'_> {
    /// Hops from `v` to the target (`usize::MAX` if unreachable or not a node).
    pub fn from(&self, v: NodeId) -> usize {
        match &self.row {
            Some(row) => match row.get(v) {
                Some(&d) if d != UNREACHED => d as usize,
                _ => usize::MAX,
            },
            None => self.net.distance(v, self.to),
        }
    }

    /// The target node.
    pub fn target(&self) -> NodeId {
        self.to
    }
}

impl Network {
    fn coords_of(&self, n: NodeId) -> &[i64] {
        self.coords.get(n).map(|c| c.as_slice()).unwrap_or(&[])
    }

    fn has_table(&self) -> bool {
        !self.topology().closed_form()
    }

    /// Hop distances from every node to `to` (see `DistancesTo`).
    pub fn distances_to(&self, to: NodeId) -> DistancesTo<'_> {
        let row = (self.has_table() && to < self.nodes()).then(|| self.hops.row(self, to));
        DistancesTo { net: self, to, row }
    }

    /// Hop distance from `a` to `b` along directed links (`usize::MAX` for a node that does not
    /// exist). This is the Manhattan distance of Minsky §4.2.1 on meshes.
    pub fn distance(&self, a: NodeId, b: NodeId) -> usize {
        if a >= self.nodes() || b >= self.nodes() {
            return usize::MAX;
        }
        if a == b {
            return 0;
        }
        let topo = self.topology();
        if topo.closed_form() {
            topo.distance(self, a, b)
        } else {
            self.distances_to(b).from(a)
        }
    }

    /// Neighbours of `a` one hop closer to `b`, in link order: the choices at a junction of a
    /// minimal route.
    pub fn minimal_next_hops(&self, a: NodeId, b: NodeId) -> Vec<NodeId> {
        self.minimal_next_hops_by(a, &self.distances_to(b))
    }

    /// `minimal_next_hops` with the target's distances already fetched.
    pub fn minimal_next_hops_by(&self, a: NodeId, to: &DistancesTo) -> Vec<NodeId> {
        let d = to.from(a);
        if d == 0 || d == usize::MAX {
            return Vec::new();
        }
        self.out
            .get(a)
            .map(|ls| {
                ls.iter()
                    .map(|&l| self.links[l].to)
                    .filter(|&v| to.from(v).checked_add(1) == Some(d))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A shortest route from `a` to `b`, both ends included, choosing the lowest-numbered minimal
    /// next hop at every step (the lexicographically least shortest path). It depends only on
    /// the network's sorted adjacency, never on hash order, so it is the same in every run.
    /// Empty if `b` cannot be reached.
    pub fn least_shortest_path(&self, a: NodeId, b: NodeId) -> Vec<NodeId> {
        if a >= self.nodes() || b >= self.nodes() {
            return Vec::new();
        }
        let to = self.distances_to(b);
        let mut path = vec![a];
        let mut cur = a;
        while cur != b {
            match self.minimal_next_hops_by(cur, &to).into_iter().min() {
                Some(next) => {
                    path.push(next);
                    cur = next;
                }
                None => return Vec::new(),
            }
        }
        path
    }

    /// The dimension-order route from `a` to `b` as node ids, both ends included: x first, then y…
    /// on meshes and tori, lowest bit first on a hypercube, the direct link on a crossbar, and the
    /// lowest-numbered minimal next hop at each step on the diamond lattice and explicit graphs.
    pub fn dor_path(&self, a: NodeId, b: NodeId) -> Vec<NodeId> {
        if a >= self.nodes() || b >= self.nodes() {
            return Vec::new();
        }
        if a == b {
            return vec![a];
        }
        self.topology().dor_path(self, a, b)
    }

    /// Number of distinct shortest paths from `a` to `b` (saturating): the router's measure of a
    /// message's flexibility (Minsky §4.2.2, footnote 11). Closed forms on meshes, tori and
    /// hypercubes; counted over the breadth-first layers elsewhere (on the diamond lattice this
    /// agrees with `diamond::lattice_path_count` away from the boundary).
    pub fn shortest_path_count(&self, a: NodeId, b: NodeId) -> u128 {
        if a >= self.nodes() || b >= self.nodes() {
            return 0;
        }
        if a == b {
            return 1;
        }
        self.topology().shortest_path_count(self, a, b)
    }

    /// Paths counted layer by layer of a breadth-first search from `a`: a node's count is the sum
    /// of the counts of its predecessors one layer nearer `a`. Stops once `b`'s layer is reached.
    pub fn count_by_layers(&self, a: NodeId, b: NodeId) -> u128 {
        let n = self.nodes();
        let mut dist = vec![UNREACHED; n];
        let mut count = vec![0u128; n];
        dist[a] = 0;
        count[a] = 1;
        let mut queue = VecDeque::from([a]);
        while let Some(u) = queue.pop_front() {
            if dist[b] != UNREACHED && dist[u] >= dist[b] {
                break;
            }
            for &v in &self.succ[u] {
                if dist[v] == UNREACHED {
                    dist[v] = dist[u] + 1;
                    queue.push_back(v);
                }
                if dist[v] == dist[u] + 1 {
                    count[v] = count[v].saturating_add(count[u]);
                }
            }
        }
        count[b]
    }

    /// The diamond lattice's own count (Minsky §4.2.2) for two nodes of a diamond network.
    pub fn diamond_formula_count(&self, a: NodeId, b: NodeId) -> Option<u128> {
        (self.spec.kind == Kind::Diamond && a < self.nodes() && b < self.nodes())
            .then(|| diamond::lattice_path_count(self.coords_of(a), self.coords_of(b)))
    }
}
