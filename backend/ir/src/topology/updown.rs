//! Up*/down* routing tables for networks without a dimension order (irregular anynet files,
//! explicit graphs, the diamond lattice, crossbars), after Autonet (Schroeder et al., "Autonet: a
//! high-speed, self-configuring local area network using point-to-point links", IEEE JSAC 1991).
//!
//! A breadth-first spanning tree from a root orders the nodes by (level, id); a link is *up* when
//! it leads to a node earlier in that order, *down* otherwise. A legal route takes zero or more up
//! links, then zero or more down links, never up after down. Up links alone cannot form a cycle,
//! nor down links alone (each follows a strict order), and no route turns from down to up, so the
//! channel dependency graph is acyclic and wormhole and virtual-channel routers cannot deadlock on
//! these routes whatever the buffer sizes (Dally & Seitz's condition).
//!
//! The table is per (node, destination), so a router decides from the destination alone as
//! BookSim2's anynet routers do: a node that can reach the destination by down links only takes
//! the down link nearest it (and so does every node after it, so the route stays down); any other
//! node climbs by the up link whose continuation, under the same rule, is shortest. The root
//! reaches every node down the tree, so every route exists. Routes are shortest among such
//! routes that go down as soon as they can; some are longer than the shortest path (the price of
//! deadlock freedom without virtual channels).

use std::collections::VecDeque;

use super::{Network, NodeId};

/// Networks above this size are refused (the table has one entry per pair of nodes).
pub const MAX_NODES: usize = 4096;

const NONE: u32 = u32::MAX;

/// The next node from every node towards every destination.
#[derive(Clone, Debug)]
pub struct UpDown {
    nodes: usize,
    root: NodeId,
    /// `next[u · nodes + d]`: the neighbour `u` forwards to towards `d` (`NONE` at `d`).
    next: Vec<u32>,
    /// (level, id) rank of each node: lower ranks are "up".
    rank: Vec<u32>,
}

impl UpDown {
    /// Builds the tables, rooted at the node of highest degree (lowest id on a tie), so that a
    /// router rather than a terminal is the root of an anynet network.
    pub fn new(net: &Network) -> Result<UpDown, String> {
        let n = net.nodes();
        if n > MAX_NODES {
            return Err(format!(
                "up*/down* routing tables are limited to {MAX_NODES} nodes, not {n}"
            ));
        }
        let nbrs: Vec<Vec<NodeId>> = (0..n)
            .map(|u| net.out[u].iter().map(|&l| net.links[l].to).collect())
            .collect();
        let root = (0..n)
            .max_by_key(|&u| (nbrs[u].len(), std::cmp::Reverse(u)))
            .unwrap_or(0);
        // Levels of the breadth-first tree.
        let mut level = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        if n > 0 {
            level[root] = 0;
            queue.push_back(root);
        }
        while let Some(u) = queue.pop_front() {
            for &v in &nbrs[u] {
                if level[v] == u32::MAX {
                    level[v] = level[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        if let Some(v) = level.iter().position(|&l| l == u32::MAX) {
            return Err(format!("node {v} cannot be reached from node {root}"));
        }
        let mut order: Vec<NodeId> = (0..n).collect();
        order.sort_by_key(|&u| (level[u], u));
        let mut rank = vec![0u32; n];
        for (i, &u) in order.iter().enumerate() {
            rank[u] = i as u32;
        }
        let up = |u: NodeId, v: NodeId| rank[v] < rank[u];
        // Down links reversed: `into_down[v]` are the nodes with a down link to v.
        let mut into_down: Vec<Vec<NodeId>> = vec![Vec::new(); n];
        for (u, list) in nbrs.iter().enumerate() {
            for &v in list {
                if !up(u, v) {
                    into_down[v].push(u);
                }
            }
        }
        let mut next = vec![NONE; n * n];
        let mut down = vec![u32::MAX; n];
        let mut dist = vec![u32::MAX; n];
        for d in 0..n {
            // Down-only distances to d.
            down.fill(u32::MAX);
            down[d] = 0;
            queue.clear();
            queue.push_back(d);
            while let Some(v) = queue.pop_front() {
                for &u in &into_down[v] {
                    if down[u] == u32::MAX {
                        down[u] = down[v] + 1;
                        queue.push_back(u);
                    }
                }
            }
            // The rule's distances and choices, root first: an up neighbour ranks lower.
            for &u in &order {
                if u == d {
                    dist[u] = 0;
                    continue;
                }
                let choice = if down[u] != u32::MAX {
                    dist[u] = down[u];
                    nbrs[u]
                        .iter()
                        .copied()
                        .filter(|&v| !up(u, v) && down[v].checked_add(1) == Some(down[u]))
                        .min()
                } else {
                    let best = nbrs[u]
                        .iter()
                        .copied()
                        .filter(|&v| up(u, v))
                        .min_by_key(|&v| (dist[v], v));
                    dist[u] = best.map_or(u32::MAX, |v| dist[v].saturating_add(1));
                    best
                };
                next[u * n + d] = choice.map_or(NONE, |v| v as u32);
            }
        }
        Ok(UpDown {
            nodes: n,
            root,
            next,
            rank,
        })
    }

    /// The root of the spanning tree.
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// Whether the link `from → to` goes up.
    pub fn is_up(&self, from: NodeId, to: NodeId) -> bool {
        self.rank[to] < self.rank[from]
    }

    /// The neighbour `at` forwards to towards `dst` (`None` at `dst` or for a bad node).
    #[inline]
    pub fn next(&self, at: NodeId, dst: NodeId) -> Option<NodeId> {
        if at >= self.nodes || dst >= self.nodes {
            return None;
        }
        match self.next[at * self.nodes + dst] {
            NONE => None,
            v => Some(v as usize),
        }
    }

    /// The route from `a` to `b` as nodes, both ends included.
    pub fn route(&self, a: NodeId, b: NodeId) -> Vec<NodeId> {
        let mut path = vec![a];
        let mut cur = a;
        while let Some(v) = self.next(cur, b) {
            path.push(v);
            cur = v;
            if path.len() > self.nodes {
                break; // cannot happen: every step is by the rule, which always progresses
            }
        }
        path
    }

    /// A cycle in the channel dependency graph of every route (each a list of directed links,
    /// `(from, to)`), or `None`: the check that the routes cannot deadlock.
    pub fn dependency_cycle(&self, net: &Network) -> Option<Vec<(NodeId, NodeId)>> {
        let mut deps: Vec<Vec<usize>> = vec![Vec::new(); net.links.len()];
        for a in 0..self.nodes {
            for b in 0..self.nodes {
                let path = self.route(a, b);
                for w in path.windows(3) {
                    let (l1, l2) = (net.link_between(w[0], w[1])?, net.link_between(w[1], w[2])?);
                    deps[l1].push(l2);
                }
            }
        }
        for d in deps.iter_mut() {
            d.sort_unstable();
            d.dedup();
        }
        // Depth-first search for a back edge.
        let mut state = vec![0u8; deps.len()]; // 0 new, 1 on stack, 2 done
        for s in 0..deps.len() {
            if state[s] != 0 {
                continue;
            }
            let mut stack = vec![(s, 0usize)];
            state[s] = 1;
            while let Some(&mut (u, ref mut i)) = stack.last_mut() {
                if let Some(&v) = deps[u].get(*i) {
                    *i += 1;
                    match state[v] {
                        0 => {
                            state[v] = 1;
                            stack.push((v, 0));
                        }
                        1 => {
                            let from = stack.iter().position(|&(x, _)| x == v).unwrap_or(0);
                            let cycle = stack[from..]
                                .iter()
                                .map(|&(l, _)| (net.links[l].from, net.links[l].to))
                                .collect();
                            return Some(cycle);
                        }
                        _ => {}
                    }
                } else {
                    state[u] = 2;
                    stack.pop();
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::NetworkSpec;

    fn graph(n: usize, edges: &[(usize, usize)]) -> Network {
        let mut spec = NetworkSpec::new(crate::topology::Kind::Graph, vec![n]);
        spec.edges = edges.to_vec();
        Network::build(&spec).unwrap()
    }

    /// On a ring of 6 shortest paths deadlock (each direction's links form a cycle of
    /// dependencies); up*/down* routes do not, and every route is legal (no up after down).
    #[test]
    fn ring_routes_are_legal_and_acyclic() {
        let net = graph(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]);
        let t = UpDown::new(&net).unwrap();
        for a in 0..6 {
            for b in 0..6 {
                let p = t.route(a, b);
                assert_eq!(p.first(), Some(&a));
                assert_eq!(p.last(), Some(&b));
                let mut gone_down = false;
                for w in p.windows(2) {
                    assert!(net.link_between(w[0], w[1]).is_some());
                    if t.is_up(w[0], w[1]) {
                        assert!(!gone_down, "{a}->{b}: {p:?}");
                    } else {
                        gone_down = true;
                    }
                }
            }
        }
        assert_eq!(t.dependency_cycle(&net), None);
    }

    /// The check finds the cycle shortest-path routing has on the same ring (clockwise routes
    /// of two hops chain around it), so it can fail.
    #[test]
    fn the_dependency_check_finds_a_ring_cycle() {
        let net = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0)]);
        let mut t = UpDown::new(&net).unwrap();
        // Route everything clockwise: u → u+1.
        for u in 0..4 {
            for d in 0..4 {
                t.next[u * 4 + d] = if u == d { NONE } else { ((u + 1) % 4) as u32 };
            }
        }
        assert!(t.dependency_cycle(&net).is_some());
    }
}
