//! Physical (and logical) networks: nodes with coordinates, directed links, and each node's
//! injection and ejection ports.
//!
//! A topology kind is a [`Topology`] (its name, help line, example, how it reads its spec, builds
//! its links, and any closed forms for distances and routes) in one file here, listed once in
//! [`registry`]: `grid` (mesh, torus, line, ring), `hypercube`, `crossbar`, `diamond` (the NuMesh
//! diamond lattice), `graph` (an explicit edge list) and `anynet` (BookSim2's irregular-network
//! files). The "unknown network kind" message and the `--network` help are generated from the
//! registry, so adding a kind is one file plus one registry line (as caminos-lib's topologies).
//! `paths` gives every kind hop distances, dimension-order routes and shortest-path counts (the
//! kind's closed form, else breadth-first rows); `updown` gives up*/down* routing tables.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub mod anynet;
pub mod crossbar;
pub mod diamond;
pub mod graph;
pub mod grid;
pub mod hypercube;
mod paths;
pub mod registry;
pub mod updown;

pub use paths::DistancesTo;
pub use registry::Topology;

pub type NodeId = usize;
pub type LinkId = usize;

/// A kind of network TTDL knows (SPEC §1.4): the name of a [`Topology`] in the [`registry`].
///
/// The constants name the kinds other code builds or tests for; any registered kind is reached
/// by name (`"anynet".parse::<Kind>()`) and its behaviour through [`Kind::topology`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind(&'static str);

#[allow(non_upper_case_globals)]
impl Kind {
    pub const Mesh: Kind = Kind("mesh");
    pub const Torus: Kind = Kind("torus");
    pub const Hypercube: Kind = Kind("hypercube");
    pub const Ring: Kind = Kind("ring");
    pub const Line: Kind = Kind("line");
    pub const Diamond: Kind = Kind("diamond");
    pub const Crossbar: Kind = Kind("crossbar");
    pub const Graph: Kind = Kind("graph");
    pub const Anynet: Kind = Kind("anynet");
}

impl Kind {
    /// Every registered kind, in registry order.
    pub fn all() -> impl Iterator<Item = Kind> {
        registry::TOPOLOGIES.iter().map(|t| Kind(t.name()))
    }

    pub fn name(self) -> &'static str {
        self.0
    }

    /// The kind's behaviour (every `Kind` value comes from the registry, so it is found).
    pub fn topology(self) -> &'static dyn Topology {
        registry::lookup(self.0).unwrap_or(&grid::MESH)
    }

    /// `Some(wrap)` for the grid kinds (mesh and line `false`, torus and ring `true`).
    pub fn grid_wrap(self) -> Option<bool> {
        self.topology().grid_wrap()
    }
}

impl FromStr for Kind {
    type Err = TopologyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        registry::lookup(s)
            .map(|t| Kind(t.name()))
            .ok_or_else(|| TopologyError::UnknownKind(s.to_string()))
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A description of a network, as written by users: `mesh:4x4`, `hypercube:6`,
/// `anynet:FILE`, or `make-network`.
///
/// `dims` are the extents per dimension for mesh/torus/diamond (x first), `[n]` for ring, line and
/// crossbar, `[d]` (the dimension, 2^d nodes) for a hypercube, `[nodes]` for a graph, and
/// `[terminals, routers]` for an anynet file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NetworkSpec {
    pub kind: Kind,
    pub dims: Vec<usize>,
    /// Undirected edges of an explicit graph or anynet file (each becomes two directed links).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edges: Vec<(NodeId, NodeId)>,
    /// The file an anynet network was read from (its spec is `anynet:FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl NetworkSpec {
    pub fn new(kind: Kind, dims: Vec<usize>) -> Self {
        NetworkSpec {
            kind,
            dims,
            edges: Vec::new(),
            file: None,
        }
    }
}

impl fmt::Display for NetworkSpec {
    /// `KIND:ARGS` as the kind writes it, so that it parses back to the same spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}",
            self.kind.name(),
            self.kind.topology().spec_args(self)
        )
    }
}

impl FromStr for NetworkSpec {
    type Err = TopologyError;
    /// `KIND:ARGS`, e.g. `mesh:4x4`, `torus:8x8`, `mesh:3x3x3`, `hypercube:6`, `ring:16`,
    /// `graph:0-1,1-2`, `anynet:FILE`; each kind reads its own ARGS.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, args) = s
            .split_once(':')
            .ok_or_else(|| TopologyError::Syntax(s.to_string()))?;
        let kind: Kind = kind.trim().parse()?;
        let spec = kind.topology().parse(kind, args.trim(), s)?;
        spec.validate()?;
        Ok(spec)
    }
}

/// `AxBxC` as extents (the regular kinds' ARGS).
pub fn parse_dims(args: &str, whole: &str) -> Result<Vec<usize>, TopologyError> {
    args.split('x')
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| TopologyError::Syntax(whole.to_string()))
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
        let topo = self.kind.topology();
        if let Some(n) = topo.arity() {
            if self.dims.len() != n {
                return bad(match n {
                    1 => "this kind takes one number",
                    _ => "this kind takes two numbers",
                });
            }
        }
        topo.check(self)
            .map_err(|why| TopologyError::Shape(self.to_string(), why))?;
        if !self.edges.is_empty() && !topo.takes_edges() {
            return bad("only a `graph` network takes an edge list");
        }
        let nodes = self.node_count();
        if nodes > 1 << 22 {
            return bad("more than 4,194,304 nodes");
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
        self.kind.topology().node_count(self)
    }

    /// The nodes that stand for processors: every node, except on an anynet network, where the
    /// routers (numbered after the terminals) are switches only.
    pub fn terminals(&self) -> usize {
        self.kind.topology().terminals(self)
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
    /// `first_out[n]..first_out[n + 1]`: the ids of the links leaving node n (links are sorted
    /// by source), and `link_to[l]`: where link l goes. [`Network::link_between`] is asked once
    /// per hold of a plan (a hundred million in a large one): these two small tables answer it
    /// from the cache, where `out` and `links` cost a miss each.
    first_out: Vec<u32>,
    link_to: Vec<u32>,
    /// Neighbour ids of each node (successors and predecessors), sorted: the breadth-first
    /// searches behind distances on graph and diamond networks.
    succ: Vec<Vec<NodeId>>,
    into: Vec<Vec<NodeId>>,
    /// Rows of hop distances to a target, for kinds without a closed form (graph, diamond).
    hops: paths::HopCache,
    /// The kind's behaviour, looked up once (distances are asked for per hop).
    topo: TopoRef,
}

/// The registry entry of a built network's kind: derived from its spec, so it compares equal.
#[derive(Clone, Copy)]
struct TopoRef(&'static dyn Topology);

impl PartialEq for TopoRef {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for TopoRef {}

impl fmt::Debug for TopoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl Network {
    /// Builds the network a spec describes.
    pub fn build(spec: &NetworkSpec) -> Result<Network, TopologyError> {
        spec.validate()?;
        let (coords, mut links) = spec.kind.topology().build(spec)?;
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
        let narrow = |x: usize| {
            u32::try_from(x).map_err(|_| {
                TopologyError::Shape(
                    spec.to_string(),
                    format!("{x} is more than a network may number (2^32 - 1)"),
                )
            })
        };
        let mut first_out = Vec::with_capacity(n + 1);
        first_out.push(0);
        for o in &out {
            first_out.push(narrow(
                first_out.last().copied().unwrap_or(0) as usize + o.len(),
            )?);
        }
        let link_to = links
            .iter()
            .map(|l| narrow(l.to))
            .collect::<Result<_, _>>()?;
        let net = Network {
            spec: spec.clone(),
            coords,
            links,
            out,
            first_out,
            link_to,
            succ,
            into,
            hops: paths::HopCache::default(),
            topo: TopoRef(spec.kind.topology()),
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

    /// The network's kind (its registry entry).
    pub fn topology(&self) -> &'static dyn Topology {
        self.topo.0
    }

    /// The node at these coordinates, if there is one.
    pub fn node_at(&self, coords: &[i64]) -> Option<NodeId> {
        self.topology()
            .index(&self.spec, coords)
            .or_else(|| self.coords.iter().position(|c| c.as_slice() == coords))
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
    #[inline]
    pub fn link_between(&self, a: NodeId, b: NodeId) -> Option<LinkId> {
        let (lo, hi) = (*self.first_out.get(a)?, *self.first_out.get(a + 1)?);
        let b = u32::try_from(b).ok()?;
        let to = &self.link_to[lo as usize..hi as usize];
        to.iter().position(|&t| t == b).map(|i| lo as usize + i)
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
    #[error("unknown topology `{0}`: {hint}", hint = registry::unknown_hint(.0))]
    UnknownKind(String),
    #[error("cannot read network `{0}`: write KIND:ARGS, e.g. {examples}", examples = registry::examples())]
    Syntax(String),
    /// A bad line in a network file, located as `FILE:LINE:COLUMN`.
    #[error("{file}:{line}:{column}: {message}")]
    File {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
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
