//! The binary hypercube of dimension d: 2^d nodes, node bits are coordinates (bit 0 = x).

use super::registry::Topology;
use super::{Link, Network, NetworkSpec, NodeId, Port, TopologyError};

pub struct Hypercube;

impl Topology for Hypercube {
    fn name(&self) -> &'static str {
        "hypercube"
    }
    fn help(&self) -> &'static str {
        "binary hypercube of dimension d (2^d nodes)"
    }
    fn example(&self) -> &'static str {
        "hypercube:6"
    }
    fn arity(&self) -> Option<usize> {
        Some(1)
    }
    fn check(&self, spec: &NetworkSpec) -> Result<(), String> {
        match spec.dims.first() {
            Some(&d) if d > 20 => Err("hypercube dimension above 20".into()),
            _ => Ok(()),
        }
    }
    fn node_count(&self, spec: &NetworkSpec) -> usize {
        1usize << spec.dims.first().copied().unwrap_or(0).min(30)
    }
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
        Ok(build(spec.dims.first().copied().unwrap_or(0)))
    }
    fn index(&self, spec: &NetworkSpec, coords: &[i64]) -> Option<NodeId> {
        index(spec.dims.first().copied().unwrap_or(0), coords)
    }
    fn closed_form(&self) -> bool {
        true
    }
    fn distance(&self, _net: &Network, a: NodeId, b: NodeId) -> usize {
        distance(a, b)
    }
    fn dor_path(&self, _net: &Network, a: NodeId, b: NodeId) -> Vec<NodeId> {
        dor_path(a, b)
    }
    fn shortest_path_count(&self, _net: &Network, a: NodeId, b: NodeId) -> u128 {
        shortest_path_count(a, b)
    }
}

pub fn build(d: usize) -> (Vec<Vec<i64>>, Vec<Link>) {
    let nodes = 1usize << d;
    let coords = (0..nodes)
        .map(|n| (0..d).map(|b| ((n >> b) & 1) as i64).collect())
        .collect();
    let mut links = Vec::new();
    for n in 0..nodes {
        for b in 0..d {
            let to = n ^ (1 << b);
            links.push(Link {
                from: n,
                to,
                port: Port::Dir {
                    dim: b as u8,
                    positive: to > n,
                },
            });
        }
    }
    (coords, links)
}

pub fn index(d: usize, coords: &[i64]) -> Option<usize> {
    if coords.len() != d || coords.iter().any(|&c| c != 0 && c != 1) {
        return None;
    }
    Some(
        coords
            .iter()
            .enumerate()
            .map(|(b, &c)| (c as usize) << b)
            .sum(),
    )
}

/// Hamming distance.
pub fn distance(a: usize, b: usize) -> usize {
    (a ^ b).count_ones() as usize
}

/// E-cube routing: flip differing bits from the lowest up (the hypercube's dimension order).
pub fn dor_path(a: usize, b: usize) -> Vec<usize> {
    let mut path = vec![a];
    let mut cur = a;
    let diff = a ^ b;
    for bit in 0..usize::BITS {
        if diff & (1 << bit) != 0 {
            cur ^= 1 << bit;
            path.push(cur);
        }
    }
    path
}

/// h! shortest paths between nodes at Hamming distance h (the bits can be flipped in any order).
pub fn shortest_path_count(a: usize, b: usize) -> u128 {
    let h = distance(a, b) as u128;
    (1..=h).fold(1u128, |acc, k| acc.saturating_mul(k))
}
