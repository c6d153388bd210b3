//! The geometry the dynamic models route on: per node, the neighbour and link through each port
//! (port `2·dim` is `+dim`, `2·dim+1` is `−dim`), and deterministic dimension-order routing —
//! x first, then y, … on meshes and tori (Chittor §3.1.1, assumption 4: "row channels first"), and
//! e-cube (lowest differing bit first) on hypercubes.

use crate::topology::{Kind, LinkId, Network, NodeId};

use super::options::ModelError;

/// Marks "no neighbour / no link" in the port tables.
pub const NONE: u32 = u32::MAX;

/// Routing geometry of a mesh, torus, ring, line or hypercube.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// Extent per dimension (2 per dimension for a hypercube).
    pub dims: Vec<usize>,
    /// Whether a dimension wraps around (torus/ring, extent above 2).
    pub wrap: Vec<bool>,
    pub hypercube: bool,
    /// `2 · dims.len()` link ports per node.
    pub ports: usize,
    /// Coordinates, node-major (`coord[node · ndim + dim]`).
    coord: Vec<i64>,
    /// Neighbour through `node · ports + port`, or [`NONE`].
    pub nbr: Vec<u32>,
    /// Link id through `node · ports + port`, or [`NONE`].
    pub link: Vec<u32>,
}

impl Geometry {
    /// Builds the tables; errors for topologies without a dimension order.
    pub fn new(net: &Network) -> Result<Geometry, ModelError> {
        let kind = net.spec.kind;
        let hypercube = kind == Kind::Hypercube;
        let (dims, wrap): (Vec<usize>, Vec<bool>) = match kind {
            Kind::Mesh | Kind::Line => (net.spec.dims.clone(), vec![false; net.spec.dims.len()]),
            Kind::Torus | Kind::Ring => (
                net.spec.dims.clone(),
                net.spec.dims.iter().map(|&d| d > 2).collect(),
            ),
            Kind::Hypercube => {
                let d = net.spec.dims.first().copied().unwrap_or(0);
                (vec![2; d], vec![false; d])
            }
            other => {
                return Err(ModelError(format!(
                    "routing by dimension order needs a mesh, torus, ring, line or \
                     hypercube, not a {}",
                    other.name()
                )))
            }
        };
        let ndim = dims.len();
        let ports = 2 * ndim;
        let nodes = net.nodes();
        let mut coord = Vec::with_capacity(nodes * ndim);
        for c in &net.coords {
            for d in 0..ndim {
                coord.push(c.get(d).copied().unwrap_or(0));
            }
        }
        let mut nbr = vec![NONE; nodes * ports];
        let mut link = vec![NONE; nodes * ports];
        for n in 0..nodes {
            for d in 0..ndim {
                for (p, step) in [(0usize, 1i64), (1, -1)] {
                    let mut c: Vec<i64> = coord[n * ndim..(n + 1) * ndim].to_vec();
                    if hypercube {
                        if (c[d] == 0) != (step > 0) {
                            continue;
                        }
                        c[d] = 1 - c[d];
                    } else {
                        c[d] += step;
                        if wrap[d] {
                            c[d] = c[d].rem_euclid(dims[d] as i64);
                        }
                    }
                    if let Some(m) = net.node_at(&c) {
                        if let Some(l) = net.link_between(n, m) {
                            nbr[n * ports + 2 * d + p] = m as u32;
                            link[n * ports + 2 * d + p] = l as u32;
                        }
                    }
                }
            }
        }
        Ok(Geometry {
            dims,
            wrap,
            hypercube,
            ports,
            coord,
            nbr,
            link,
        })
    }

    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    pub fn nodes(&self) -> usize {
        self.nbr.len() / self.ports.max(1)
    }

    #[inline]
    pub fn coord(&self, node: usize, dim: usize) -> i64 {
        self.coord[node * self.dims.len() + dim]
    }

    /// The port to take from `cur` along `dim` to reduce the offset to `dst` (shortest way round
    /// on a torus, ties going `+` from even coordinates and `−` from odd ones), or `None` when
    /// already aligned in that dimension.
    #[inline]
    pub fn port_in_dim(&self, cur: usize, dst: usize, dim: usize) -> Option<usize> {
        let (a, b) = (self.coord(cur, dim), self.coord(dst, dim));
        if a == b {
            return None;
        }
        if self.hypercube {
            return Some(2 * dim + usize::from(a == 1));
        }
        let positive = if self.wrap[dim] {
            // As the planner routes (`topology::grid::offset`): the shorter way round; half way
            // round goes `+` from an even coordinate and `−` from an odd one.
            let k = self.dims[dim] as i64;
            let fwd = (b - a).rem_euclid(k);
            fwd < k - fwd || (fwd == k - fwd && a.rem_euclid(2) == 0)
        } else {
            b > a
        };
        Some(2 * dim + usize::from(!positive))
    }

    /// Dimension-order routing: the next port, or `None` at the destination.
    #[inline]
    pub fn dor_port(&self, cur: usize, dst: usize) -> Option<usize> {
        (0..self.dims.len()).find_map(|d| self.port_in_dim(cur, dst, d))
    }

    /// Whether leaving `node` by `port` crosses a torus wrap-around link (the dateline).
    #[inline]
    pub fn crosses_dateline(&self, node: usize, port: usize) -> bool {
        let d = port / 2;
        if !self.wrap.get(d).copied().unwrap_or(false) {
            return false;
        }
        let c = self.coord(node, d);
        if port.is_multiple_of(2) {
            c == self.dims[d] as i64 - 1
        } else {
            c == 0
        }
    }

    /// The dimension-order path from `src` to `dst` as link ids (empty when equal).
    pub fn path(&self, src: NodeId, dst: NodeId) -> Result<Vec<LinkId>, ModelError> {
        let mut links = Vec::new();
        let mut cur = src;
        while let Some(p) = self.dor_port(cur, dst) {
            let i = cur * self.ports + p;
            let (next, l) = (self.nbr[i], self.link[i]);
            if next == NONE || l == NONE || links.len() > self.nodes() {
                return Err(ModelError(format!(
                    "no dimension-order path from node {src} to node {dst}"
                )));
            }
            links.push(l as usize);
            cur = next as usize;
        }
        Ok(links)
    }

    /// Number of link hops between two nodes under dimension-order routing.
    pub fn distance(&self, src: NodeId, dst: NodeId) -> usize {
        (0..self.dims.len())
            .map(|d| {
                let (a, b) = (self.coord(src, d), self.coord(dst, d));
                let diff = (b - a).unsigned_abs() as usize;
                if self.wrap[d] {
                    diff.min(self.dims[d] - diff)
                } else {
                    diff
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(s: &str) -> (Network, Geometry) {
        let net = Network::build(&s.parse().unwrap()).unwrap();
        let g = Geometry::new(&net).unwrap();
        (net, g)
    }

    #[test]
    fn paths_follow_dimension_order() {
        let (net, g) = geo("mesh:4x4");
        let p = g.path(0, 15).unwrap();
        let nodes: Vec<usize> = p.iter().map(|&l| net.links[l].to).collect();
        assert_eq!(nodes, vec![1, 2, 3, 7, 11, 15]);
        let (net, g) = geo("torus:5x5");
        let nodes: Vec<usize> = g
            .path(0, 4)
            .unwrap()
            .iter()
            .map(|&l| net.links[l].to)
            .collect();
        assert_eq!(nodes, vec![4]);
        assert!(g.crosses_dateline(0, 1));
        assert_eq!(g.distance(0, 24), 2);
        let (net, g) = geo("hypercube:3");
        let nodes: Vec<usize> = g
            .path(0, 7)
            .unwrap()
            .iter()
            .map(|&l| net.links[l].to)
            .collect();
        assert_eq!(nodes, vec![1, 3, 7]);
        assert_eq!(g.path(6, 1).unwrap().len(), 3);
    }
}
