//! Paths for the models that move whole packets or circuits (store-and-forward, circuit):
//! dimension order where the topology has dimensions ([`Geometry`]), otherwise a shortest path
//! by breadth-first search over the links (crossbar, diamond lattice, explicit graphs), with ties
//! broken towards the lower link id so the choice is deterministic.

use std::collections::{BTreeMap, VecDeque};

use crate::topology::{LinkId, Network, NodeId};

use super::geometry::Geometry;
use super::options::ModelError;

/// A source of deterministic routes.
#[derive(Clone, Debug)]
pub enum Paths {
    DimensionOrder(Geometry),
    Shortest {
        /// `out[n]`: (link id, neighbour) leaving node n, by link id.
        out: Vec<Vec<(LinkId, NodeId)>>,
        cache: BTreeMap<(NodeId, NodeId), Vec<LinkId>>,
    },
}

impl Paths {
    pub fn new(net: &Network) -> Paths {
        match Geometry::new(net) {
            Ok(g) => Paths::DimensionOrder(g),
            Err(_) => Paths::Shortest {
                out: net
                    .out
                    .iter()
                    .map(|ls| ls.iter().map(|&l| (l, net.links[l].to)).collect())
                    .collect(),
                cache: BTreeMap::new(),
            },
        }
    }

    /// Whether routes follow dimension order (deadlock-free hold-and-wait on meshes).
    pub fn is_dimension_order(&self) -> bool {
        matches!(self, Paths::DimensionOrder(_))
    }

    /// The links from `src` to `dst` (empty when equal).
    pub fn path(&mut self, src: NodeId, dst: NodeId) -> Result<Vec<LinkId>, ModelError> {
        match self {
            Paths::DimensionOrder(g) => g.path(src, dst),
            Paths::Shortest { out, cache } => {
                if let Some(p) = cache.get(&(src, dst)) {
                    return Ok(p.clone());
                }
                let n = out.len();
                if src >= n || dst >= n {
                    return Err(ModelError(format!("no node {src} or {dst}")));
                }
                let mut via: Vec<Option<(LinkId, NodeId)>> = vec![None; n];
                let mut seen = vec![false; n];
                seen[src] = true;
                let mut q = VecDeque::from([src]);
                while let Some(u) = q.pop_front() {
                    if u == dst {
                        break;
                    }
                    for &(l, v) in &out[u] {
                        if !seen[v] {
                            seen[v] = true;
                            via[v] = Some((l, u));
                            q.push_back(v);
                        }
                    }
                }
                if !seen[dst] {
                    return Err(ModelError(format!(
                        "node {dst} cannot be reached from node {src}"
                    )));
                }
                let mut links = Vec::new();
                let mut cur = dst;
                while let Some((l, prev)) = via[cur] {
                    links.push(l);
                    cur = prev;
                }
                links.reverse();
                cache.insert((src, dst), links.clone());
                Ok(links)
            }
        }
    }
}
