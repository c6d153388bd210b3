//! Hop distances between nodes as the annealer's inner loop needs them: a handful per move.
//!
//! On meshes, tori, rings and lines the distance is computed from a flat array of node
//! coordinates (a few kilobytes, so it stays in cache); on hypercubes and crossbars it is a bit
//! count or a constant. Only explicit graphs and diamonds keep a table of all node pairs (up to
//! 4,096 nodes), or ask the network. A 64×64 mesh once had a 32 MB pair table here, and the
//! annealer spent 70 % of its time waiting for it.

use crate::topology::{Kind, Network, NodeId};

/// Largest network of another kind whose pair distances are tabulated.
const TABLE_NODES: usize = 4096;

pub(super) enum Metric<'a> {
    /// `coord[node * ndim + dim]`, extents `dims`; `wrap` on tori and rings.
    Grid {
        ndim: usize,
        dims: Vec<i32>,
        wrap: bool,
        coord: Vec<i32>,
    },
    Hypercube,
    Crossbar,
    Table {
        nodes: usize,
        hops: Vec<u16>,
    },
    Network(&'a Network),
}

impl<'a> Metric<'a> {
    pub(super) fn new(net: &'a Network) -> Metric<'a> {
        let nodes = net.nodes();
        match net.spec.kind {
            Kind::Mesh | Kind::Line | Kind::Torus | Kind::Ring => {
                let ndim = net.spec.dims.len();
                let mut coord = Vec::with_capacity(nodes * ndim);
                for c in &net.coords {
                    coord.extend((0..ndim).map(|d| c.get(d).copied().unwrap_or(0) as i32));
                }
                Metric::Grid {
                    ndim,
                    dims: net.spec.dims.iter().map(|&d| d as i32).collect(),
                    wrap: matches!(net.spec.kind, Kind::Torus | Kind::Ring),
                    coord,
                }
            }
            Kind::Hypercube => Metric::Hypercube,
            Kind::Crossbar => Metric::Crossbar,
            _ if nodes <= TABLE_NODES => {
                let mut hops = vec![0u16; nodes * nodes];
                for b in 0..nodes {
                    let to = net.distances_to(b);
                    for a in 0..nodes {
                        hops[a * nodes + b] = to.from(a).min(u16::MAX as usize) as u16;
                    }
                }
                Metric::Table { nodes, hops }
            }
            _ => Metric::Network(net),
        }
    }

    /// Hop distance from `a` to `b` (both nodes of the network).
    #[inline]
    pub(super) fn hops(&self, a: NodeId, b: NodeId) -> usize {
        match self {
            Metric::Grid {
                ndim,
                dims,
                wrap,
                coord,
            } => {
                let (pa, pb) = (
                    &coord[a * ndim..(a + 1) * ndim],
                    &coord[b * ndim..(b + 1) * ndim],
                );
                let mut sum = 0;
                for d in 0..*ndim {
                    let diff = (pa[d] - pb[d]).unsigned_abs();
                    sum += if *wrap {
                        diff.min(dims[d] as u32 - diff)
                    } else {
                        diff
                    };
                }
                sum as usize
            }
            Metric::Hypercube => (a ^ b).count_ones() as usize,
            Metric::Crossbar => usize::from(a != b),
            Metric::Table { nodes, hops } => hops[a * nodes + b] as usize,
            Metric::Network(net) => net.distance(a, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_network() {
        for spec in [
            "mesh:5x3",
            "torus:4x5",
            "torus:2x3",
            "ring:7",
            "line:4",
            "mesh:3x2x2",
            "hypercube:4",
            "crossbar:5",
        ] {
            let net = Network::build(&spec.parse().unwrap()).unwrap();
            let m = Metric::new(&net);
            for a in 0..net.nodes() {
                for b in 0..net.nodes() {
                    assert_eq!(m.hops(a, b), net.distance(a, b), "{spec}: {a} → {b}");
                }
            }
        }
    }
}
