//! The kinds of network, one [`Topology`] per kind, and the one list of them.
//!
//! Everything that names the kinds — the "unknown topology … did you mean" message, the
//! `--network` help, `Kind::from_str` and serde — reads [`TOPOLOGIES`]; nothing else lists them.
//! Adding a kind is one file implementing [`Topology`] plus one line below (ARCHITECTURE.md, after
//! caminos-lib's one module per topology).

use super::{anynet, crossbar, diamond, graph, grid, hypercube};
use super::{parse_dims, Kind, Link, Network, NetworkSpec, NodeId, TopologyError};

/// One kind of network: how it is written, checked and built, and any closed forms it has for
/// distances and routes (the defaults are breadth-first rows over the built links).
pub trait Topology: Sync {
    /// The name before the colon of a spec (`mesh` in `mesh:4x4`).
    fn name(&self) -> &'static str;
    /// One line for `--help` and error messages.
    fn help(&self) -> &'static str;
    /// A spec that builds, shown in help and in "cannot read network" messages.
    fn example(&self) -> &'static str;

    /// Reads the text after `KIND:` (`whole` is the full spec, for messages). The default takes
    /// extents `AxBxC`.
    fn parse(&self, kind: Kind, args: &str, whole: &str) -> Result<NetworkSpec, TopologyError> {
        Ok(NetworkSpec::new(kind, parse_dims(args, whole)?))
    }
    /// The text after `KIND:` that `parse` reads back to this spec.
    fn spec_args(&self, spec: &NetworkSpec) -> String {
        let dims: Vec<String> = spec.dims.iter().map(|d| d.to_string()).collect();
        dims.join("x")
    }
    /// How many numbers `dims` holds, when the kind fixes it.
    fn arity(&self) -> Option<usize> {
        None
    }
    /// Checks of the kind's own (after the shared ones: dims present and non-zero).
    fn check(&self, _spec: &NetworkSpec) -> Result<(), String> {
        Ok(())
    }
    /// Whether the spec may carry an edge list.
    fn takes_edges(&self) -> bool {
        false
    }
    /// Number of nodes the spec describes.
    fn node_count(&self, spec: &NetworkSpec) -> usize {
        spec.dims
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .unwrap_or(usize::MAX)
    }
    /// How many of the nodes (the first ones) stand for processors.
    fn terminals(&self, spec: &NetworkSpec) -> usize {
        self.node_count(spec)
    }
    /// Node coordinates and directed links (sorted and deduplicated by the caller).
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError>;

    /// The node at these coordinates in closed form (`None`: search the coordinates).
    fn index(&self, _spec: &NetworkSpec, _coords: &[i64]) -> Option<NodeId> {
        None
    }
    /// `Some(wrap)` for the grid kinds, whose links follow coordinates (with wrap-around).
    fn grid_wrap(&self) -> Option<bool> {
        None
    }
    /// Whether distances come from a closed form (`distance`) rather than breadth-first rows.
    fn closed_form(&self) -> bool {
        false
    }
    /// Hop distance between two distinct nodes, where `closed_form` is true.
    fn distance(&self, net: &Network, a: NodeId, b: NodeId) -> usize {
        net.distances_to(b).from(a)
    }
    /// The dimension-order route between two distinct nodes; by default the lexicographically
    /// least shortest path (lowest-numbered minimal next hop at every step).
    fn dor_path(&self, net: &Network, a: NodeId, b: NodeId) -> Vec<NodeId> {
        net.least_shortest_path(a, b)
    }
    /// Number of shortest paths between two distinct nodes (saturating); by default counted
    /// over the breadth-first layers.
    fn shortest_path_count(&self, net: &Network, a: NodeId, b: NodeId) -> u128 {
        net.count_by_layers(a, b)
    }
}

/// Every kind of network, in the order help lists them.
pub static TOPOLOGIES: &[&dyn Topology] = &[
    &grid::MESH,
    &grid::TORUS,
    &hypercube::Hypercube,
    &grid::RING,
    &grid::LINE,
    &diamond::Diamond,
    &crossbar::Crossbar,
    &graph::Graph,
    &anynet::Anynet,
];

/// The kind with this name.
pub fn lookup(name: &str) -> Option<&'static dyn Topology> {
    TOPOLOGIES.iter().copied().find(|t| t.name() == name)
}

/// What follows "unknown topology `X`:" — the closest name if it looks like a typo, and the list.
pub fn unknown_hint(name: &str) -> String {
    let names: Vec<&str> = TOPOLOGIES.iter().map(|t| t.name()).collect();
    let list = format!("expected one of {}", names.join(", "));
    match crate::settings::did_you_mean(name, names.iter().copied()) {
        Some(close) => format!("did you mean `{close}`? ({list})"),
        None => list,
    }
}

/// Every kind's example, quoted: `mesh:4x4`, `torus:8x8`, ….
pub fn examples() -> String {
    TOPOLOGIES
        .iter()
        .map(|t| format!("`{}`", t.example()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `--network` help: one line per kind, its example and what it is.
pub fn help() -> String {
    let width = TOPOLOGIES
        .iter()
        .map(|t| t.example().len())
        .max()
        .unwrap_or(0);
    TOPOLOGIES
        .iter()
        .map(|t| format!("  {:width$}  {}", t.example(), t.help()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind's example parses, builds and prints back as written; names are unique.
    #[test]
    fn every_example_builds_and_round_trips() {
        let mut names: Vec<&str> = TOPOLOGIES.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOPOLOGIES.len());
        for t in TOPOLOGIES {
            if t.name() == "anynet" {
                continue; // reads a file; tested in `anynet`
            }
            let spec: NetworkSpec = t.example().parse().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(spec.to_string(), t.example());
            assert!(Network::build(&spec).is_ok(), "{}", t.example());
            assert!(help().contains(t.help()));
        }
    }

    /// Every named constant is a registered kind (so `Kind::topology` always finds it).
    #[test]
    fn the_named_kinds_are_registered() {
        for k in [
            Kind::Mesh,
            Kind::Torus,
            Kind::Hypercube,
            Kind::Ring,
            Kind::Line,
            Kind::Diamond,
            Kind::Crossbar,
            Kind::Graph,
            Kind::Anynet,
        ] {
            assert_eq!(lookup(k.name()).map(|t| t.name()), Some(k.name()));
            assert_eq!(k.name().parse::<Kind>(), Ok(k));
        }
        assert_eq!(Kind::all().count(), TOPOLOGIES.len());
    }

    #[test]
    fn unknown_kinds_suggest_the_closest() {
        let e = "meshh:4x4".parse::<NetworkSpec>().unwrap_err().to_string();
        assert!(e.contains("did you mean `mesh`?"), "{e}");
        assert!(e.contains("anynet"), "{e}");
        let e = "blob:4".parse::<NetworkSpec>().unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
        let e = "mesh".parse::<NetworkSpec>().unwrap_err().to_string();
        assert!(e.contains("`anynet:FILE`"), "{e}");
    }
}
