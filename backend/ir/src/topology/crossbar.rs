//! A full crossbar: every node reaches every other in one hop (the PMS switch of Ding et al. and
//! the compiled-communication crossbar). Modelled as a complete directed graph; the k-th link of a
//! node is its port `Other(k)`.

use super::registry::Topology;
use super::{Link, Network, NetworkSpec, NodeId, Port, TopologyError};
use crate::limits::Limits;

pub struct Crossbar;

impl Topology for Crossbar {
    fn name(&self) -> &'static str {
        "crossbar"
    }
    fn help(&self) -> &'static str {
        "n nodes, every one linked to every other"
    }
    fn example(&self) -> &'static str {
        "crossbar:16"
    }
    fn arity(&self) -> Option<usize> {
        Some(1)
    }
    fn check(&self, spec: &NetworkSpec) -> Result<(), String> {
        if self.node_count(spec) > Limits::CROSSBAR_NODES {
            return Err(
                "a crossbar of n nodes has n(n-1) links; crossbars are limited to 4,096 nodes"
                    .into(),
            );
        }
        Ok(())
    }
    fn build(&self, spec: &NetworkSpec) -> Result<(Vec<Vec<i64>>, Vec<Link>), TopologyError> {
        Ok(build(spec.dims.first().copied().unwrap_or(0)))
    }
    fn closed_form(&self) -> bool {
        true
    }
    fn distance(&self, _net: &Network, _a: NodeId, _b: NodeId) -> usize {
        1
    }
    fn dor_path(&self, _net: &Network, a: NodeId, b: NodeId) -> Vec<NodeId> {
        vec![a, b]
    }
    fn shortest_path_count(&self, _net: &Network, _a: NodeId, _b: NodeId) -> u128 {
        1
    }
}

pub fn build(n: usize) -> (Vec<Vec<i64>>, Vec<Link>) {
    let coords = (0..n).map(|i| vec![i as i64]).collect();
    let mut links = Vec::with_capacity(n * n.saturating_sub(1));
    for from in 0..n {
        for to in 0..n {
            if to != from {
                links.push(Link {
                    from,
                    to,
                    port: Port::Other(to.min(u16::MAX as usize) as u16),
                });
            }
        }
    }
    (coords, links)
}
