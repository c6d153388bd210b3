//! Routes and standard connection patterns for compiled communication (Yuan §5.4, Table 5.6).
//!
//! Routing is the one Yuan's schedulers assume (Ch.6): dimension order (x, then y, …), the shorter
//! way round each ring, and for the half-way pair of an even ring clockwise (positive) from an even
//! coordinate and counter-clockwise from an odd one: the planner's route. Networks that are not
//! grids get a breadth-first shortest path, lowest link id first.

use std::collections::VecDeque;

use rand::Rng;

use crate::sim::models::compiled::sched::Connection;
use crate::topology::{Kind, LinkId, Network, NodeId};

/// The directed links of the route from `src` to `dst`.
pub fn route(net: &Network, src: NodeId, dst: NodeId) -> Result<Vec<LinkId>, String> {
    let n = net.nodes();
    if src >= n || dst >= n {
        return Err(format!(
            "node {} is outside the network {} ({n} nodes)",
            src.max(dst),
            net.spec
        ));
    }
    match net.spec.kind {
        Kind::Torus | Kind::Ring | Kind::Mesh | Kind::Line => grid_route(net, src, dst),
        _ => bfs_route(net, src, dst),
    }
}

/// The links of the planner's dimension-order route ([`Network::dor_path`], which follows
/// [`crate::topology::grid::dor_legs`]).
fn grid_route(net: &Network, src: NodeId, dst: NodeId) -> Result<Vec<LinkId>, String> {
    let nodes = net.dor_path(src, dst);
    if nodes.first() != Some(&src) || nodes.last() != Some(&dst) {
        return Err(format!("no dimension-order route from {src} to {dst}"));
    }
    nodes
        .windows(2)
        .map(|w| {
            net.link_between(w[0], w[1])
                .ok_or_else(|| format!("no link from node {} to node {}", w[0], w[1]))
        })
        .collect()
}

fn bfs_route(net: &Network, src: NodeId, dst: NodeId) -> Result<Vec<LinkId>, String> {
    let mut via: Vec<Option<LinkId>> = vec![None; net.nodes()];
    let mut seen = vec![false; net.nodes()];
    seen[src] = true;
    let mut queue = VecDeque::from([src]);
    while let Some(n) = queue.pop_front() {
        if n == dst {
            break;
        }
        for &l in &net.out[n] {
            let to = net.links[l].to;
            if !seen[to] {
                seen[to] = true;
                via[to] = Some(l);
                queue.push_back(to);
            }
        }
    }
    if !seen[dst] {
        return Err(format!(
            "node {dst} cannot be reached from node {src} in {}",
            net.spec
        ));
    }
    let mut links = Vec::new();
    let mut at = dst;
    while at != src {
        let l = via[at].ok_or_else(|| format!("broken route to node {dst}"))?;
        links.push(l);
        at = net.links[l].from;
    }
    links.reverse();
    Ok(links)
}

/// Connections for a list of (src, dst) pairs, routed; pairs with `src == dst` are left out
/// (they never enter the network).
pub fn connections(net: &Network, pairs: &[(NodeId, NodeId)]) -> Result<Vec<Connection>, String> {
    pairs
        .iter()
        .filter(|(s, d)| s != d)
        .map(|&(src, dst)| {
            Ok(Connection {
                src,
                dst,
                links: route(net, src, dst)?,
            })
        })
        .collect()
}

/// Logical ring over all `p` nodes: i → i+1 and i → i−1 (mod p), by source (Yuan Table 5.6).
pub fn ring(p: usize) -> Vec<(NodeId, NodeId)> {
    let mut pairs = Vec::new();
    for i in 0..p {
        pairs.push((i, (i + 1) % p));
        pairs.push((i, (i + p - 1) % p));
    }
    pairs
}

/// Every node to its four torus neighbours (+x, −x, +y, −y) on an `nx × ny` torus.
pub fn nearest_neighbor(nx: usize, ny: usize) -> Vec<(NodeId, NodeId)> {
    let mut pairs = Vec::new();
    for i in 0..nx * ny {
        let (x, y) = (i % nx, i / nx);
        pairs.push((i, y * nx + (x + 1) % nx));
        pairs.push((i, y * nx + (x + nx - 1) % nx));
        pairs.push((i, ((y + 1) % ny) * nx + x));
        pairs.push((i, ((y + ny - 1) % ny) * nx + x));
    }
    pairs
}

/// Hypercube on `2^r` nodes: i → i XOR 2^l for every l < r.
pub fn hypercube(r: u32) -> Vec<(NodeId, NodeId)> {
    let p = 1usize << r;
    (0..p)
        .flat_map(|i| (0..r).map(move |l| (i, i ^ (1 << l))))
        .collect()
}

/// Shuffle-exchange on `2^r` nodes: shuffle i → rotl(i) (the fixed points are no connection)
/// and exchange i → i XOR 1; 62 + 64 = 126 connections for r = 6 (Yuan Table 5.6).
pub fn shuffle_exchange(r: u32) -> Vec<(NodeId, NodeId)> {
    let p = 1usize << r;
    let mask = p - 1;
    let mut pairs = Vec::new();
    for i in 0..p {
        let rot = ((i << 1) | (i >> (r.saturating_sub(1)))) & mask;
        if rot != i {
            pairs.push((i, rot));
        }
        pairs.push((i, i ^ 1));
    }
    pairs
}

/// All-to-all: every ordered pair of distinct nodes, by source then destination.
pub fn all_to_all(p: usize) -> Vec<(NodeId, NodeId)> {
    (0..p)
        .flat_map(|i| (0..p).filter(move |&j| j != i).map(move |j| (i, j)))
        .collect()
}

/// `k` distinct connections with uniformly random distinct endpoints (Yuan Table 5.4; the thesis
/// does not say whether repeats were allowed — here they are not, so `k ≤ p(p−1)`).
pub fn random<R: Rng>(p: usize, k: usize, rng: &mut R) -> Vec<(NodeId, NodeId)> {
    let k = k.min(p * p.saturating_sub(1));
    let mut taken = vec![false; p * p];
    let mut pairs = Vec::with_capacity(k);
    while pairs.len() < k {
        let s = rng.random_range(0..p);
        let d = rng.random_range(0..p);
        if s != d && !std::mem::replace(&mut taken[s * p + d], true) {
            pairs.push((s, d));
        }
    }
    pairs
}

/// One block-cyclic distribution of a 3-D array over 64 processors: per dimension `(p, s)`,
/// `p` processors and blocks of `s` elements (Yuan's `p:block(s)`).
pub type Distribution = [(usize, usize); 3];

/// A random distribution of an `n`-cube (`n` a power of two) over `procs` processors (a power
/// of two): the processor counts split `log2 procs` at random over the three dimensions, each
/// block size a power of two drawn uniformly from 1 to `n / p`, so no processor is empty (Yuan
/// Table 5.5: "the block size is not too large so that some processors do not contain any part
/// of the array"; the thesis does not say how sizes are drawn).
pub fn random_distribution<R: Rng>(n: usize, procs: usize, rng: &mut R) -> Distribution {
    let bits = procs.trailing_zeros();
    let mut exp = [0u32; 3];
    for _ in 0..bits {
        exp[rng.random_range(0..3)] += 1;
    }
    exp.map(|e| {
        let p = 1usize << e;
        let top = (n / p).max(1).trailing_zeros();
        (p, 1usize << rng.random_range(0..=top))
    })
}

/// The connections of redistributing an `n`-cube from `from` to `to` (Yuan Table 5.5): processor
/// u sends to v ≠ u when some element lives on u before and on v after. Processors are numbered
/// with the first dimension fastest, and processor i is node i. Sorted by source, then
/// destination.
pub fn redistribution(n: usize, from: &Distribution, to: &Distribution) -> Vec<(NodeId, NodeId)> {
    // Per dimension, the (old, new) owner coordinate pairs; the array is their product.
    let per_dim: Vec<Vec<(usize, usize)>> = (0..3)
        .map(|d| {
            let ((p, s), (q, t)) = (from[d], to[d]);
            let mut pairs: Vec<(usize, usize)> =
                (0..n).map(|x| ((x / s) % p, (x / t) % q)).collect();
            pairs.sort_unstable();
            pairs.dedup();
            pairs
        })
        .collect();
    let id = |c: [usize; 3], dist: &Distribution| c[0] + dist[0].0 * (c[1] + dist[1].0 * c[2]);
    let mut out = Vec::new();
    for &(a0, b0) in &per_dim[0] {
        for &(a1, b1) in &per_dim[1] {
            for &(a2, b2) in &per_dim[2] {
                let (u, v) = (id([a0, a1, a2], from), id([b0, b1, b2], to));
                if u != v {
                    out.push((u, v));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
