//! Physical (and logical) networks: nodes with coordinates, directed links, and each node's
//! injection and ejection ports. A topology kind is one file here; `Network::build` dispatches:
//! `grid` (n-dimensional mesh and torus; a line is a 1-D mesh, a ring a 1-D torus), `hypercube`,
//! `crossbar`, `diamond` (the NuMesh diamond lattice) and `graph` (an explicit edge list).
//! `paths` gives every kind hop distances, dimension-order routes and shortest-path counts.

use crate::limits::Limits;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub mod crossbar;
pub mod diamond;
pub mod graph;
pub mod grid;
pub mod hypercube;
mod paths;

pub use paths::DistancesTo;

pub type NodeId = usize;
pub type LinkId = usize;

/// The kinds of network TTDL knows (SPEC §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Mesh,
    Torus,
    Hypercube,
    Ring,
    Line,
    Diamond,
    Crossbar,
    Graph,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Mesh,
        Kind::Torus,
        Kind::Hypercube,
        Kind::Ring,
        Kind::Line,
        Kind::Diamond,
        Kind::Crossbar,
        Kind::Graph,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Mesh => "mesh",
            Kind::Torus => "torus",
            Kind::Hypercube => "hypercube",
            Kind::Ring => "ring",
            Kind::Line => "line",
            Kind::Diamond => "diamond",
            Kind::Crossbar => "crossbar",
            Kind::Graph => "graph",
        }
    }
}

impl FromStr for Kind {
    type Err = TopologyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| TopologyError::UnknownKind(s.to_string()))
    }
}

/// A description of a network, as written by users: `mesh:4x4`, `hypercube:6`, or `make-network`.
///
/// `dims` are the extents per dimension for mesh/torus/diamond (x first), `[n]` for ring, line and
/// crossbar, `[d]` (the dimension, 2^d nodes) for a hypercube, `[nodes]` for a graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NetworkSpec {
    pub kind: Kind,
    pub dims: Vec<usize>,
    /// Undirected edges of an explicit graph (each becomes two directed links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edges: Vec<(NodeId, NodeId)>,
}

impl NetworkSpec {
    pub fn new(kind: Kind, dims: Vec<usize>) -> Self {
        NetworkSpec {
            kind,
            dims,
            edges: Vec::new(),
        }
    }
}

impl fmt::Display for NetworkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        write!(f, "{}:{}", self.kind.name(), dims.join("x"))
    }
}

impl FromStr for NetworkSpec {
    type Err = TopologyError;
    /// `KIND:AxBxC`, e.g. `mesh:4x4`, `torus:8x8`, `mesh:3x3x3`, `hypercube:6`, `ring:16`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, dims) = s
            .split_once(':')
            .ok_or_else(|| TopologyError::Syntax(s.to_string()))?;
        let kind: Kind = kind.trim().parse()?;
        let dims = dims
            .split('x')
            .map(|d| d.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| TopologyError::Syntax(s.to_string()))?;
        let spec = NetworkSpec::new(kind, dims);
        spec.validate()?;
        Ok(spec)
    }
}

impl NetworkSpec {
    /// Checks the shape before anything is built, so users get a message rather than a panic.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let bad = |why: &str| Err(TopologyError::Shape(self.to_string(), why.to_string()));
        if self.dims.is_empty() {
            return bad("no dimensions given");
        }
        if self.dims.contains(&0) {
            return bad("every dimension must be at least 1");
        }
        match self.kind {
            Kind::Ring | Kind::Line | Kind::Crossbar | Kind::Hypercube | Kind::Graph
                if self.dims.len() != 1 =>
            {
                return bad("this kind takes one number");
            }
            Kind::Hypercube if self.dims[0] > 20 => return bad("hypercube dimension above 20"),
            Kind::Diamond if self.dims.len() > 3 => {
                return bad("a diamond lattice takes NXxNY or NXxNYxNZ")
            }
            _ => {}
        }
        if !self.edges.is_empty() && self.kind != Kind::Graph {
            return bad("only a `graph` network takes an edge list");
        }
        let nodes = self.node_count();
        if nodes > 1 << 22 {
            return bad("more than 4,194,304 nodes");
        }
        if self.kind == Kind::Crossbar && nodes > Limits::CROSSBAR_NODES {
            return bad(
                "a crossbar of n nodes has n(n-1) links; crossbars are limited to 4,096 nodes",
            );
        }
        for &(a, b) in &self.edges {
            if a >= nodes || b >= nodes {
                return Err(TopologyError::Shape(
                    self.to_string(),
                    format!("edge ({a}, {b}) names a node outside 0..{nodes}"),
                ));
            }
            if a == b {
                return Err(TopologyError::Shape(
                    self.to_string(),
                    format!("edge ({a}, {b}) is a self loop"),
                ));
            }
        }
        Ok(())
    }

    /// Reads a spec from JSON: `{"kind": "mesh", "dims": [4, 4]}`, or for an explicit graph
    /// `{"kind": "graph", "dims": [4], "edges": [[0, 1], [1, 2], [2, 3]]}`.
    pub fn from_json(text: &str) -> Result<NetworkSpec, TopologyError> {
        let spec: NetworkSpec =
            serde_json::from_str(text).map_err(|e| TopologyError::Json(e.to_string()))?;
        spec.validate()?;
        Ok(spec)
    }

    /// The spec as JSON (the inverse of `from_json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Number of nodes the spec describes.
    pub fn node_count(&self) -> usize {
        match self.kind {
            Kind::Hypercube => 1usize << self.dims.first().copied().unwrap_or(0).min(30),
            _ => self
                .dims
                .iter()
                .try_fold(1usize, |acc, &d| acc.checked_mul(d))
                .unwrap_or(usize::MAX),
        }
    }
}

/// A port of a node's switch: the processor interface or a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Port {
    /// Processor → switch (the thesis's `DownFifo`).
    Inject,
    /// Switch → processor (the thesis's `UpFifo`).
    Eject,
    /// The link leaving along `dim` in direction `+` (`positive`) or `-`.
    Dir { dim: u8, positive: bool },
    /// A link with no geometric direction (crossbar, explicit graph): the k-th neighbour.
    Other(u16),
}

impl Port {
    /// The thesis's names (Fig 5-9): East/West = ±x, North/South = ±y, Up/Down = ±z.
    pub fn name(self) -> String {
        match self {
            Port::Inject => "DownFifo".into(),
            Port::Eject => "UpFifo".into(),
            Port::Dir { dim, positive } => match (dim, positive) {
                (0, true) => "East".into(),
                (0, false) => "West".into(),
                (1, true) => "North".into(),
                (1, false) => "South".into(),
                (2, true) => "Up".into(),
                (2, false) => "Down".into(),
                (d, p) => format!("{}{}", if p { '+' } else { '-' }, d),
            },
            Port::Other(k) => format!("Port{k}"),
        }
    }
}

/// A directed link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    /// The port it leaves `from` by.
    pub port: Port,
}

/// A built network: node coordinates and directed links, with adjacency by port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    pub spec: NetworkSpec,
    /// Coordinates of every node, x first (for a hypercube: one 0/1 coordinate per dimension).
    pub coords: Vec<Vec<i64>>,
    /// Every directed link, sorted by (from, to).
    pub links: Vec<Link>,
    /// `out[n]`: ids of the links leaving node n, sorted by destination.
    pub out: Vec<Vec<LinkId>>,
    /// Neighbour ids of each node (successors and predecessors), sorted: the breadth-first
    /// searches behind distances on graph and diamond networks.
    succ: Vec<Vec<NodeId>>,
    into: Vec<Vec<NodeId>>,
    /// Rows of hop distances to a target, for kinds without a closed form (graph, diamond).
    hops: paths::HopCache,
}

impl Network {
    /// Builds the network a spec describes.
    pub fn build(spec: &NetworkSpec) -> Result<Network, TopologyError> {
        spec.validate()?;
        let (coords, mut links) = match spec.kind {
            Kind::Mesh | Kind::Line => grid::build(&spec.dims, false),
            Kind::Torus | Kind::Ring => grid::build(&spec.dims, true),
            Kind::Hypercube => hypercube::build(spec.dims[0]),
            Kind::Crossbar => crossbar::build(spec.dims[0]),
            Kind::Diamond => diamond::build(&spec.dims),
            Kind::Graph => graph::build(spec.dims[0], &spec.edges, &spec.to_string())?,
        };
        links.sort_by_key(|l| (l.from, l.to, l.port));
        links.dedup_by_key(|l| (l.from, l.to));
        let n = coords.len();
        let mut out = vec![Vec::new(); n];
        let mut succ = vec![Vec::new(); n];
        let mut into = vec![Vec::new(); n];
        for (id, l) in links.iter().enumerate() {
            out[l.from].push(id);
            succ[l.from].push(l.to);
            into[l.to].push(l.from);
        }
        for v in into.iter_mut() {
            v.sort_unstable();
        }
        let net = Network {
            spec: spec.clone(),
            coords,
            links,
            out,
            succ,
            into,
            hops: paths::HopCache::default(),
        };
        if let Some(node) = paths::first_unreachable(&net) {
            return Err(TopologyError::Shape(
                spec.to_string(),
                format!("the network is disconnected: node {node} cannot be reached from node 0"),
            ));
        }
        Ok(net)
    }

    pub fn nodes(&self) -> usize {
        self.coords.len()
    }

    /// The node at these coordinates, if there is one.
    pub fn node_at(&self, coords: &[i64]) -> Option<NodeId> {
        match self.spec.kind {
            Kind::Mesh | Kind::Torus | Kind::Ring | Kind::Line => {
                grid::index(&self.spec.dims, coords)
            }
            Kind::Hypercube => hypercube::index(self.spec.dims[0], coords),
            _ => self.coords.iter().position(|c| c.as_slice() == coords),
        }
    }

    /// Every port of a node's switch: the processor's injection and ejection ports, then the port
    /// of each outgoing link in link order.
    pub fn ports(&self, node: NodeId) -> Vec<Port> {
        let mut ports = vec![Port::Inject, Port::Eject];
        if let Some(out) = self.out.get(node) {
            ports.extend(out.iter().map(|&l| self.links[l].port));
        }
        ports
    }

    /// The link from `a` to `b`, if they are adjacent.
    pub fn link_between(&self, a: NodeId, b: NodeId) -> Option<LinkId> {
        self.out
            .get(a)?
            .iter()
            .copied()
            .find(|&l| self.links[l].to == b)
    }

    /// The neighbour through a port (wrapping on a torus), or `None` off the edge.
    pub fn neighbor(&self, node: NodeId, port: Port) -> Option<NodeId> {
        self.out
            .get(node)?
            .iter()
            .map(|&l| self.links[l])
            .find(|l| l.port == port)
            .map(|l| l.to)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("unknown topology `{0}`: expected one of mesh, torus, hypercube, ring, line, diamond, crossbar, graph")]
    UnknownKind(String),
    #[error("cannot read network `{0}`: write KIND:DIMS, e.g. `mesh:4x4`, `torus:8x8`, `hypercube:6`, `ring:16`")]
    Syntax(String),
    #[error("bad network `{0}`: {1}")]
    Shape(String, String),
    #[error("topology `{0}` is not supported yet")]
    NotYet(String),
    #[error("cannot read network JSON: {0}")]
    Json(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_build_grid() {
        let spec: NetworkSpec = "torus:4x4".parse().unwrap();
        let net = Network::build(&spec).unwrap();
        assert_eq!(net.nodes(), 16);
        assert_eq!(net.links.len(), 64);
        let east = Port::Dir {
            dim: 0,
            positive: true,
        };
        assert_eq!(net.neighbor(3, east), Some(0));
        let mesh = Network::build(&"mesh:4x4".parse().unwrap()).unwrap();
        assert_eq!(mesh.links.len(), 48);
        assert_eq!(mesh.neighbor(3, east), None);
        assert_eq!(mesh.node_at(&[1, 2]), Some(9));
    }

    #[test]
    fn bad_specs_are_errors() {
        assert!("mesh".parse::<NetworkSpec>().is_err());
        assert!("blob:4".parse::<NetworkSpec>().is_err());
        assert!("mesh:0x4".parse::<NetworkSpec>().is_err());
        assert!("ring:4x4".parse::<NetworkSpec>().is_err());
    }

    #[test]
    fn hypercube() {
        let net = Network::build(&"hypercube:3".parse().unwrap()).unwrap();
        assert_eq!(net.nodes(), 8);
        assert_eq!(net.links.len(), 24);
        assert_eq!(net.coords[5], vec![1, 0, 1]);
    }
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    fn net(s: &str) -> Network {
        Network::build(&s.parse().unwrap()).unwrap()
    }

    #[test]
    fn distances_routes_and_counts_on_grids() {
        let m = net("mesh:4x4");
        assert_eq!(m.distance(0, 15), 6);
        assert_eq!(m.dor_path(0, 6), vec![0, 1, 2, 6]);
        assert_eq!(m.shortest_path_count(0, 15), 20); // 6!/(3!3!)
        let t = net("torus:4x4");
        assert_eq!(t.distance(0, 3), 1);
        assert_eq!(t.dor_path(0, 3), vec![0, 3]);
        assert_eq!(t.shortest_path_count(0, 10), 24); // 4!/(2!2!) × 2 × 2 (both halves tie)
        let r = net("ring:6");
        assert_eq!(r.dor_path(1, 5), vec![1, 0, 5]);
        let l = net("line:5");
        assert_eq!(l.links.len(), 8);
        assert_eq!(l.distance(0, 4), 4);
        let h = net("hypercube:4");
        assert_eq!(h.dor_path(0, 0b1011), vec![0, 1, 3, 11]);
        assert_eq!(h.shortest_path_count(0, 0b1011), 6);
        assert_eq!(m.minimal_next_hops(5, 15), vec![6, 9]);
    }

    #[test]
    fn crossbar_and_graph() {
        let c = net("crossbar:5");
        assert_eq!(c.links.len(), 20);
        assert_eq!(c.dor_path(1, 4), vec![1, 4]);
        let spec = NetworkSpec::from_json(
            r#"{"kind":"graph","dims":[4],"edges":[[0,1],[1,2],[2,3],[3,0],[0,2]]}"#,
        )
        .unwrap();
        let g = Network::build(&spec).unwrap();
        assert_eq!(g.links.len(), 10);
        assert_eq!(g.distance(1, 3), 2);
        assert_eq!(g.shortest_path_count(1, 3), 2);
        assert_eq!(g.dor_path(1, 3), vec![1, 0, 3]);
        assert_eq!(NetworkSpec::from_json(&spec.to_json()).unwrap(), spec);
    }

    #[test]
    fn bad_graphs_are_clear_errors() {
        let mk = |edges: Vec<(usize, usize)>| {
            let mut s = NetworkSpec::new(Kind::Graph, vec![4]);
            s.edges = edges;
            Network::build(&s).map(|_| ()).unwrap_err().to_string()
        };
        assert!(
            mk(vec![(0, 1), (2, 3)]).contains("disconnected"),
            "{}",
            mk(vec![(0, 1), (2, 3)])
        );
        assert!(mk(vec![(0, 0), (1, 2)]).contains("self loop"));
        assert!(mk(vec![(0, 9)]).contains("outside 0..4"));
        assert!(NetworkSpec::from_json("{\"kind\":\"mesh\"}").is_err());
    }

    #[test]
    fn diamond_lattice_counts_match_the_thesis_formula() {
        let d = net("diamond:9x9x9");
        assert!(d.out.iter().all(|o| o.len() <= 4));
        let center = d.node_at(&[4, 4, 4]).unwrap();
        for (x, y, z) in [
            (5, 4, 4),
            (6, 5, 4),
            (5, 5, 5),
            (6, 6, 5),
            (3, 5, 6),
            (2, 4, 6),
        ] {
            let other = d.node_at(&[x, y, z]).unwrap();
            let by_layers = d.shortest_path_count(center, other);
            let formula = d.diamond_formula_count(center, other).unwrap();
            assert_eq!(by_layers, formula, "to ({x},{y},{z})");
            assert_eq!(
                d.distance(center, other),
                diamond::lattice_distance(&d.coords[center], &d.coords[other])
            );
        }
        // A layer is the brick-wall cross-section; too thin a box falls apart.
        assert!(Network::build(&"diamond:4x4".parse().unwrap()).is_ok());
        assert!(Network::build(&"diamond:1x3".parse().unwrap()).is_err());
    }
}
