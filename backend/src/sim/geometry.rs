//! The geometry the dynamic models route on: per node, the neighbour and link through each port
//! (port `2·dim` is `+dim`, `2·dim+1` is `−dim`), and deterministic dimension-order routing —
//! x first, then y, … on meshes and tori (Chittor §3.1.1, assumption 4: "row channels first"), and
//! e-cube (lowest differing bit first) on hypercubes. Networks without a dimension order
//! (anynet files, graphs, the diamond lattice, crossbars) route by up*/down* tables
//! ([`Geometry::routed`], `topology::updown`), whose routes cannot deadlock either.

use std::sync::Arc;

use crate::topology::grid;
use crate::topology::updown::UpDown;
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
    /// Up*/down* next hops, for a network without a dimension order (then `dims` is empty).
    table: Option<Arc<UpDown>>,
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
            table: None,
        })
    }

    /// Dimension order where the network has one, else up*/down* tables over its links: what
    /// the wormhole and router models route by.
    pub fn routed(net: &Network) -> Result<Geometry, ModelError> {
        if net.topology().grid_wrap().is_some() || net.spec.kind == Kind::Hypercube {
            return Geometry::new(net);
        }
        let table = UpDown::new(net).map_err(|e| ModelError(format!("{}: {e}", net.spec)))?;
        // Ports: each link gets the lowest number free both among its sender's outputs and its
        // receiver's inputs, since a flit leaving by port p arrives at input port p.
        let nodes = net.nodes();
        let mut out_used: Vec<Vec<bool>> = vec![Vec::new(); nodes];
        let mut in_used: Vec<Vec<bool>> = vec![Vec::new(); nodes];
        let mut assigned = Vec::with_capacity(net.links.len());
        for l in &net.links {
            let p = (0..)
                .find(|&p| {
                    !out_used[l.from].get(p).copied().unwrap_or(false)
                        && !in_used[l.to].get(p).copied().unwrap_or(false)
                })
                .unwrap_or(0);
            for (used, n) in [(&mut out_used, l.from), (&mut in_used, l.to)] {
                if used[n].len() <= p {
                    used[n].resize(p + 1, false);
                }
                used[n][p] = true;
            }
            assigned.push(p);
        }
        let ports = assigned.iter().map(|&p| p + 1).max().unwrap_or(1);
        let mut nbr = vec![NONE; nodes * ports];
        let mut link = vec![NONE; nodes * ports];
        for (id, (l, &p)) in net.links.iter().zip(&assigned).enumerate() {
            nbr[l.from * ports + p] = l.to as u32;
            link[l.from * ports + p] = id as u32;
        }
        Ok(Geometry {
            dims: Vec::new(),
            wrap: Vec::new(),
            hypercube: false,
            ports,
            coord: Vec::new(),
            nbr,
            link,
            table: Some(Arc::new(table)),
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

    /// The port to take from `cur` along `dim` to reduce the offset to `dst`, or `None` when
    /// already aligned in that dimension: the leg of the planner's dimension-order route
    /// ([`grid::offset`]: the shorter way round a torus, ties going `+` from even coordinates and
    /// `−` from odd ones; on a hypercube, whose coordinates are 0 and 1, the flip of the bit).
    #[inline]
    pub fn port_in_dim(&self, cur: usize, dst: usize, dim: usize) -> Option<usize> {
        let (a, b) = (self.coord(cur, dim), self.coord(dst, dim));
        match grid::offset(a, b, self.dims[dim], self.wrap[dim]) {
            0 => None,
            off => Some(2 * dim + usize::from(off < 0)),
        }
    }

    /// Dimension-order routing (or the up*/down* table): the next port, or `None` at the
    /// destination.
    #[inline]
    pub fn dor_port(&self, cur: usize, dst: usize) -> Option<usize> {
        if let Some(t) = &self.table {
            let next = t.next(cur, dst)? as u32;
            return (0..self.ports).find(|&p| self.nbr[cur * self.ports + p] == next);
        }
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

    /// Number of link hops between two nodes under dimension-order (or table) routing.
    pub fn distance(&self, src: NodeId, dst: NodeId) -> usize {
        if let Some(t) = &self.table {
            return t.route(src, dst).len().saturating_sub(1);
        }
        (0..self.dims.len())
            .map(|d| {
                let (a, b) = (self.coord(src, d), self.coord(dst, d));
                grid::offset(a, b, self.dims[d], self.wrap[d]).unsigned_abs() as usize
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

    /// One dimension-order router: the simulators' per-hop ports, the compiled model's link
    /// routes and the optical torus's XY routes visit the nodes of the planner's route
    /// (`Network::dor_path`, odd–even ties on tori) for every pair.
    #[test]
    fn every_dimension_order_route_is_the_planners() {
        use crate::sim::aapc::link_head;
        use crate::sim::models::compiled::patterns;
        use crate::sim::optical::torus::Torus;
        for spec in [
            "torus:4x4",
            "torus:6x3",
            "torus:2x4",
            "torus:4x2x3",
            "mesh:3x4",
            "ring:6",
            "ring:2",
            "line:5",
            "hypercube:3",
        ] {
            let (net, g) = geo(spec);
            let optical = Torus::from_spec(&net.spec).ok();
            let to = |links: &[usize]| -> Vec<usize> {
                links.iter().map(|&l| net.links[l].to).collect()
            };
            for a in 0..net.nodes() {
                for b in 0..net.nodes() {
                    let want: Vec<usize> = net.dor_path(a, b).into_iter().skip(1).collect();
                    assert_eq!(to(&g.path(a, b).unwrap()), want, "{spec} {a}->{b}");
                    assert_eq!(g.distance(a, b), want.len(), "{spec} {a}->{b}");
                    if spec != "hypercube:3" {
                        let links = patterns::route(&net, a, b).expect(spec);
                        assert_eq!(to(&links), want, "{spec} {a}->{b}");
                    }
                    if let Some(t) = optical {
                        let xy: Vec<usize> =
                            t.xy_route(a, b).iter().map(|&l| link_head(&t, l)).collect();
                        assert_eq!(xy, want, "{spec} {a}->{b}");
                        assert_eq!(t.distance(a, b), want.len(), "{spec} {a}->{b}");
                    }
                }
            }
        }
    }

    /// Off the grids, ports are numbered so that no node receives two links on one port, and
    /// the table's paths arrive.
    #[test]
    fn table_routing_on_a_diamond_and_a_graph() {
        for spec in ["diamond:4x4", "graph:0-1,1-2,2-3,3-0,0-2,3-4", "crossbar:5"] {
            let net = Network::build(&spec.parse().unwrap()).unwrap();
            assert!(Geometry::new(&net).is_err());
            let g = Geometry::routed(&net).unwrap();
            let mut seen = std::collections::BTreeSet::new();
            for n in 0..net.nodes() {
                for p in 0..g.ports {
                    let m = g.nbr[n * g.ports + p];
                    if m != NONE {
                        assert!(seen.insert((m, p)), "{spec}: node {m} port {p} twice");
                    }
                }
            }
            for a in 0..net.nodes() {
                for b in 0..net.nodes() {
                    let p = g.path(a, b).unwrap();
                    assert_eq!(p.len(), g.distance(a, b));
                    let end = p.last().map_or(a, |&l| net.links[l].to);
                    assert_eq!(end, b, "{spec}: {a}->{b}");
                }
            }
        }
    }
}
