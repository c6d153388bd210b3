//! Distances, dimension-order routes and shortest-path counts on any built network. Regular kinds
//! use closed forms; the explicit graph and the diamond lattice use an all-pairs hop table filled
//! by breadth-first search when the network is built.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use super::{diamond, grid, hypercube, Kind, Network, NodeId};

/// Largest network that gets an all-pairs table (4,096² two-byte entries = 32 MiB).
pub const MAX_TABLE_NODES: usize = 4096;

/// All-pairs hop distances, `dist[a * n + b]`; empty for kinds with a closed form.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HopTable {
    n: usize,
    dist: Arc<Vec<u16>>,
}

impl fmt::Debug for HopTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HopTable({} nodes)", self.n)
    }
}

const UNREACHED: u16 = u16::MAX;

impl HopTable {
    pub fn all_pairs(net: &Network) -> HopTable {
        let n = net.nodes();
        let mut dist = vec![UNREACHED; n * n];
        for src in 0..n {
            let row = &mut dist[src * n..(src + 1) * n];
            bfs_into(net, src, row);
        }
        HopTable {
            n,
            dist: Arc::new(dist),
        }
    }

    fn get(&self, a: NodeId, b: NodeId) -> Option<usize> {
        let d = *self.dist.get(a * self.n + b)?;
        (d != UNREACHED).then_some(d as usize)
    }
}

fn bfs_into(net: &Network, src: NodeId, row: &mut [u16]) {
    let mut queue = VecDeque::new();
    row[src] = 0;
    queue.push_back(src);
    while let Some(u) = queue.pop_front() {
        let du = row[u];
        for &l in &net.out[u] {
            let v = net.links[l].to;
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
    let mut row = vec![UNREACHED; n];
    bfs_into(net, 0, &mut row);
    if let Some(v) = row.iter().position(|&d| d == UNREACHED) {
        return Some(v);
    }
    // Reverse reachability: every link of ours has its reverse for all built kinds, but check.
    let mut rev: Vec<Vec<NodeId>> = vec![Vec::new(); n];
    for l in &net.links {
        rev[l.to].push(l.from);
    }
    let mut seen = vec![false; n];
    let mut queue = VecDeque::from([0]);
    seen[0] = true;
    while let Some(u) = queue.pop_front() {
        for &v in &rev[u] {
            if !seen[v] {
                seen[v] = true;
                queue.push_back(v);
            }
        }
    }
    seen.iter().position(|&s| !s)
}

impl Network {
    fn coords_of(&self, n: NodeId) -> &[i64] {
        self.coords.get(n).map(|c| c.as_slice()).unwrap_or(&[])
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
        let dims = &self.spec.dims;
        match self.spec.kind {
            Kind::Mesh | Kind::Line => {
                grid::distance(dims, false, self.coords_of(a), self.coords_of(b))
            }
            Kind::Torus | Kind::Ring => {
                grid::distance(dims, true, self.coords_of(a), self.coords_of(b))
            }
            Kind::Hypercube => hypercube::distance(a, b),
            Kind::Crossbar => 1,
            Kind::Diamond | Kind::Graph => self.hops.get(a, b).unwrap_or(usize::MAX),
        }
    }

    /// Neighbours of `a` one hop closer to `b`, in link order: the choices at a junction of a
    /// minimal route.
    pub fn minimal_next_hops(&self, a: NodeId, b: NodeId) -> Vec<NodeId> {
        let d = self.distance(a, b);
        if d == 0 || d == usize::MAX {
            return Vec::new();
        }
        self.out
            .get(a)
            .map(|ls| {
                ls.iter()
                    .map(|&l| self.links[l].to)
                    .filter(|&v| self.distance(v, b) + 1 == d)
                    .collect()
            })
            .unwrap_or_default()
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
        let dims = &self.spec.dims;
        match self.spec.kind {
            Kind::Mesh | Kind::Line => {
                grid::dor_path(dims, false, self.coords_of(a), self.coords_of(b))
            }
            Kind::Torus | Kind::Ring => {
                grid::dor_path(dims, true, self.coords_of(a), self.coords_of(b))
            }
            Kind::Hypercube => hypercube::dor_path(a, b),
            Kind::Crossbar => vec![a, b],
            Kind::Diamond | Kind::Graph => {
                let mut path = vec![a];
                let mut cur = a;
                while cur != b {
                    match self.minimal_next_hops(cur, b).into_iter().min() {
                        Some(next) => {
                            path.push(next);
                            cur = next;
                        }
                        None => return Vec::new(),
                    }
                }
                path
            }
        }
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
        let dims = &self.spec.dims;
        match self.spec.kind {
            Kind::Mesh | Kind::Line => {
                grid::shortest_path_count(dims, false, self.coords_of(a), self.coords_of(b))
            }
            Kind::Torus | Kind::Ring => {
                grid::shortest_path_count(dims, true, self.coords_of(a), self.coords_of(b))
            }
            Kind::Hypercube => hypercube::shortest_path_count(a, b),
            Kind::Crossbar => 1,
            Kind::Diamond | Kind::Graph => self.count_by_layers(a, b),
        }
    }

    /// Paths counted backwards from `b`: count(v) = Σ count(w) over minimal next hops w of v.
    fn count_by_layers(&self, a: NodeId, b: NodeId) -> u128 {
        let d = self.distance(a, b);
        if d == usize::MAX {
            return 0;
        }
        // Nodes on some shortest a→b path, by distance from a.
        let mut layers: Vec<Vec<NodeId>> = vec![Vec::new(); d + 1];
        for v in 0..self.nodes() {
            let (da, db) = (self.distance(a, v), self.distance(v, b));
            if da != usize::MAX && db != usize::MAX && da + db == d {
                layers[da].push(v);
            }
        }
        let mut count = vec![0u128; self.nodes()];
        count[b] = 1;
        for layer in layers.iter().rev().skip(1) {
            for &v in layer {
                count[v] = self
                    .minimal_next_hops(v, b)
                    .iter()
                    .fold(0u128, |acc, &w| acc.saturating_add(count[w]));
            }
        }
        count[a]
    }

    /// The diamond lattice's own count (Minsky §4.2.2) for two nodes of a diamond network.
    pub fn diamond_formula_count(&self, a: NodeId, b: NodeId) -> Option<u128> {
        (self.spec.kind == Kind::Diamond && a < self.nodes() && b < self.nodes())
            .then(|| diamond::lattice_path_count(self.coords_of(a), self.coords_of(b)))
    }
}
