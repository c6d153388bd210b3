//! Link utilization, channel load, congestion and dilation, and Chittor's path contention level.
//!
//! `Metrics::compute` measures a placed and routed traffic; `contention_report` prints Chittor's
//! Contention Analyzer view of it (§3.7): worst paths, channels and nodes, saturation traffic, and
//! a verdict against the traffic the program applies.

use serde::{Deserialize, Serialize};

use crate::place::coarse_cost;
use crate::topology::{LinkId, Network, NodeId};
use crate::traffic::{MsgId, Placement, Routing, TaskId, Traffic};

pub mod contention;
pub mod links;
mod report;
pub mod utilization;

pub use contention::{Contention, PathStats};
pub use report::contention_report;

/// Every figure of merit of a placement + routing, for summaries and JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Largest link utilization `lu_j` (Minsky §4.2.2); above 1 no schedule can exist.
    pub peak_utilization: f64,
    /// The link where it occurs, as `[from, to]` (lowest id among equals).
    pub peak_link: Option<(NodeId, NodeId)>,
    /// Mean `lu_j` over the links that carry traffic.
    pub aggregate_utilization: f64,
    /// Chittor's channel load χ: the most distinct paths sharing one directed channel.
    pub channel_load_max: usize,
    /// χ averaged over all directed channels of the network.
    pub channel_load_avg: f64,
    /// Most words any one link carries (size-weighted congestion).
    pub congestion: u64,
    /// Longest route, in hops.
    pub dilation: usize,
    /// Path length D over distinct paths (average).
    pub path_length_avg: f64,
    /// Chittor's path contention level ν (other paths sharing a channel), maximum and average.
    pub path_contention_max: usize,
    pub path_contention_avg: f64,
    /// Chittor's logical path length d, maximum and average.
    pub logical_path_length_max: usize,
    pub logical_path_length_avg: f64,
    /// Saturation node traffic (fraction of a link's bandwidth) of the average node,
    /// δ_avg/(ν_avg+1) (Chittor Lemma 3), and of the worst node, δ_avg/(ν_max+1) (Lemma 4).
    pub saturation_avg_node: f64,
    pub saturation_worst_node: f64,
    /// Coarse placement cost: Σ size × hops (Minsky §4.2.1).
    pub placement_cost: u64,
    /// Distinct (source, destination, route) paths analysed.
    pub paths: usize,
}

/// Which messages use each link (all messages, repeated iterations included).
pub fn link_messages(traffic: &Traffic, network: &Network, routing: &Routing) -> Vec<Vec<MsgId>> {
    let mut users = vec![Vec::new(); network.links.len()];
    for (m, r) in routing
        .routes
        .iter()
        .enumerate()
        .take(traffic.messages.len())
    {
        for l in r.links(network) {
            users[l].push(m);
        }
    }
    users
}

/// `lu_j` of every link.
pub fn link_utilizations(traffic: &Traffic, network: &Network, routing: &Routing) -> Vec<f64> {
    link_messages(traffic, network, routing)
        .iter()
        .map(|ms| utilization::link_utilization(traffic, ms))
        .collect()
}

impl Metrics {
    pub fn compute(
        traffic: &Traffic,
        network: &Network,
        placement: &Placement,
        routing: &Routing,
    ) -> Metrics {
        // Every route's links once, for the utilization, the congestion and the paths.
        let routes = links::RouteLinks::of(traffic, network, routing);
        let users = routes.users(network.links.len());
        let mut spans = Vec::new();
        let mut lu = Vec::with_capacity(network.links.len());
        let mut congestion = 0u64;
        for l in 0..network.links.len() {
            let ms = users.of(l).iter().map(|&m| m as MsgId);
            let (words, u) = utilization::words_and_utilization(traffic, ms, &mut spans);
            lu.push(u);
            congestion = congestion.max(words);
        }
        let mut peak = 0.0f64;
        let mut peak_link: Option<LinkId> = None;
        for (l, &u) in lu.iter().enumerate() {
            if u > peak {
                peak = u;
                peak_link = Some(l);
            }
        }
        let busy: Vec<f64> = lu.iter().copied().filter(|&u| u > 0.0).collect();
        let c = Contention::of_links(traffic, network, routing, &routes);
        Metrics {
            peak_utilization: peak,
            peak_link: peak_link.map(|l| (network.links[l].from, network.links[l].to)),
            aggregate_utilization: mean(&busy),
            channel_load_max: c.channel_load.iter().copied().max().unwrap_or(0),
            channel_load_avg: if network.links.is_empty() {
                0.0
            } else {
                c.channel_load.iter().sum::<usize>() as f64 / network.links.len() as f64
            },
            congestion,
            dilation: routing.routes.iter().map(|r| r.hops()).max().unwrap_or(0),
            path_length_avg: mean(&c.paths.iter().map(|p| p.hops as f64).collect::<Vec<_>>()),
            path_contention_max: c.paths.iter().map(|p| p.contention).max().unwrap_or(0),
            path_contention_avg: mean(
                &c.paths
                    .iter()
                    .map(|p| p.contention as f64)
                    .collect::<Vec<_>>(),
            ),
            logical_path_length_max: c.paths.iter().map(|p| p.logical_length).max().unwrap_or(0),
            logical_path_length_avg: mean(
                &c.paths
                    .iter()
                    .map(|p| p.logical_length as f64)
                    .collect::<Vec<_>>(),
            ),
            saturation_avg_node: c.saturation_avg_node(),
            saturation_worst_node: c.saturation_worst_node(),
            placement_cost: coarse_cost(traffic, network, placement),
            paths: c.paths.len(),
        }
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Tasks that send at least one message (Chittor's δ_avg counts paths per communicating node).
fn senders(traffic: &Traffic) -> Vec<TaskId> {
    let mut s: Vec<TaskId> = traffic.messages.iter().map(|m| m.src).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Utilization of every busy link in every interval cut by releases and deadlines (Minsky §4.2.2):
/// the data behind per-interval snapshots of the network (Figs 5-6/5-7). Each message spreads its
/// words evenly over its window. Memory grows as busy links × intervals: meant for pictures of
/// programs of up to a few thousand messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalUtilization {
    /// Interval k is `[cuts[k], cuts[k+1])`.
    pub cuts: Vec<u64>,
    /// `(link id, utilization per interval)` for every link that carries a message, by link id.
    pub links: Vec<(LinkId, Vec<f64>)>,
}

impl IntervalUtilization {
    pub fn compute(traffic: &Traffic, network: &Network, routing: &Routing) -> Self {
        let cuts = utilization::interval_cuts(traffic);
        let links = link_messages(traffic, network, routing)
            .iter()
            .enumerate()
            .filter(|(_, ms)| !ms.is_empty())
            .map(|(l, ms)| (l, utilization::interval_profile(traffic, ms, &cuts)))
            .collect();
        IntervalUtilization { cuts, links }
    }

    /// The largest utilization of any link in any interval, with the link and interval index.
    pub fn peak(&self) -> Option<(LinkId, usize, f64)> {
        let mut best: Option<(LinkId, usize, f64)> = None;
        for (l, prof) in &self.links {
            for (k, &u) in prof.iter().enumerate() {
                if best.is_none_or(|b| u > b.2) {
                    best = Some((*l, k, u));
                }
            }
        }
        best
    }
}
