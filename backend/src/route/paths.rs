//! Single-message path choice: dimension order, random minimal (a coin flip at every junction,
//! Minsky §4.2.2), shortest path on any topology, and multicast trees built from them.

use petgraph::graph::{DiGraph, NodeIndex};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::topology::{Network, NodeId};
use crate::traffic::Route;

/// Random minimal route: at each node one of the neighbours that brings the message closer.
pub fn random_minimal(net: &Network, a: NodeId, b: NodeId, rng: &mut ChaCha8Rng) -> Vec<NodeId> {
    let to = net.distances_to(b);
    let mut path = vec![a];
    let mut cur = a;
    while cur != b {
        let next = net.minimal_next_hops_by(cur, &to);
        if next.is_empty() {
            return Vec::new();
        }
        cur = next[rng.random_range(0..next.len())];
        path.push(cur);
    }
    path
}

/// The network as a petgraph graph (node i = network node i, one unit-weight edge per link).
pub fn to_graph(net: &Network) -> DiGraph<(), u32> {
    let mut g = DiGraph::with_capacity(net.nodes(), net.links.len());
    for _ in 0..net.nodes() {
        g.add_node(());
    }
    for l in &net.links {
        g.add_edge(NodeIndex::new(l.from), NodeIndex::new(l.to), 1);
    }
    g
}

/// A shortest path: the lowest-numbered minimal next hop at every step, from a breadth-first
/// search over the network's sorted adjacency (`Network::least_shortest_path`). petgraph's A*
/// keeps its frontier in hash maps; this never looks at hash order, so the same input gives the
/// same path in every process.
pub fn shortest(net: &Network, a: NodeId, b: NodeId) -> Vec<NodeId> {
    net.least_shortest_path(a, b)
}

/// A multicast tree from the source's paths to every destination: each node keeps the first edge
/// that reached it, so the union is a tree even when paths cross.
pub fn tree_from_paths(paths: &[Vec<NodeId>]) -> Route {
    let mut reached: std::collections::BTreeSet<NodeId> = paths
        .iter()
        .filter_map(|p| p.first().copied())
        .take(1)
        .collect();
    let mut edges = Vec::new();
    for p in paths {
        for w in p.windows(2) {
            if reached.insert(w[1]) {
                edges.push((w[0], w[1]));
            }
        }
    }
    Route::Tree(edges)
}
