//! Physical (and logical) networks: nodes with coordinates, directed links, and each node's
//! injection and ejection ports. A topology kind is one file here; `Network::build` dispatches.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

mod grid;
mod hypercube;

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
            _ => {}
        }
        let nodes = self.node_count();
        if nodes > 1 << 22 {
            return bad("more than 4,194,304 nodes");
        }
        for &(a, b) in &self.edges {
            if a >= nodes || b >= nodes {
                return bad("an edge names a node that does not exist");
            }
        }
        Ok(())
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
}

impl Network {
    /// Builds the network a spec describes.
    pub fn build(spec: &NetworkSpec) -> Result<Network, TopologyError> {
        spec.validate()?;
        let (coords, mut links) = match spec.kind {
            Kind::Mesh | Kind::Line => grid::build(&spec.dims, false),
            Kind::Torus | Kind::Ring => grid::build(&spec.dims, true),
            Kind::Hypercube => hypercube::build(spec.dims[0]),
            other => return Err(TopologyError::NotYet(other.name().to_string())),
        };
        links.sort_by_key(|l| (l.from, l.to, l.port));
        links.dedup_by_key(|l| (l.from, l.to));
        let mut out = vec![Vec::new(); coords.len()];
        for (id, l) in links.iter().enumerate() {
            out[l.from].push(id);
        }
        Ok(Network {
            spec: spec.clone(),
            coords,
            links,
            out,
        })
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
