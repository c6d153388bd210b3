//! Routing: a path for every message (Minsky §4.2.2–4.2.3).
//!
//! `dor` (dimension order), `random` (random minimal: a coin flip at every junction), `shortest`
//! (a shortest path on any topology) and `reroute`: an initial dimension-order routing improved by
//! Minsky's rerouting — find the link of peak utilization `lu_j`, take its most flexible message
//! (most shortest paths), give it a weighted shortest path that avoids congested links within a
//! maximum misrouting distance, and accept by the annealing rule until the peak utilization is
//! acceptable. Multicast messages get a `Route::Tree`: the union of their paths to each destination.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::anneal::{Progress, Schedule};
use crate::topology::{Network, NodeId};
use crate::traffic::{Message, Placement, Route, Routing, Traffic};

pub mod paths;
mod reroute;

pub use reroute::{reroute, RerouteOutcome};

pub use ttdl_ir::config::RouteMethod;

/// Options of `route_with`; `RouteOptions::new(method, seed)` gives the defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouteOptions {
    pub method: RouteMethod,
    pub seed: u64,
    /// The routing rerouting starts from (`dor`, `random` or `shortest`). The thesis's FFT run
    /// started from random routes.
    pub initial: RouteMethod,
    /// Most extra hops a rerouted message may take beyond its shortest path; further limited by
    /// the message's slack (window − length), Minsky §4.2.2 footnote 13.
    pub max_misroute: usize,
    /// Stop once the peak link utilization is at most this (the minimum acceptable cost).
    pub min_acceptable_peak: f64,
    /// Annealing schedule for rerouting (`None`: 20 temperatures, 10 steps growing by 5).
    pub schedule: Option<Schedule>,
    /// Weight of link overload (Σ max(0, lu − 1)) in the rerouting cost, next to Σ lu.
    pub overload_weight: f64,
    /// Most rerouting steps (proposed reroutes); `None`: `default_max_steps` of the message
    /// count. Rerouting stops when it is reached and `RerouteOutcome::capped` says so.
    #[serde(default)]
    pub max_steps: Option<u64>,
}

/// Rerouting steps allowed per message by default.
pub const REROUTE_STEPS_PER_MESSAGE: u64 = 8;

/// Fewest rerouting steps allowed by default, so small inputs keep the whole schedule.
pub const REROUTE_MIN_STEPS: u64 = 2_000;

/// The default bound on rerouting steps: `max(REROUTE_MIN_STEPS, 8 × messages)`. Each step costs
/// a weighted shortest-path search and a scan of the links, so a bound that grows with the
/// input (rather than with the schedule alone) keeps huge inputs finishing in time while every
/// message can still be moved several times.
pub fn default_max_steps(messages: usize) -> u64 {
    (messages as u64)
        .saturating_mul(REROUTE_STEPS_PER_MESSAGE)
        .max(REROUTE_MIN_STEPS)
}

impl RouteOptions {
    pub fn new(method: RouteMethod, seed: u64) -> RouteOptions {
        RouteOptions {
            method,
            seed,
            initial: RouteMethod::Dor,
            max_misroute: 4,
            min_acceptable_peak: 1.0,
            schedule: None,
            overload_weight: 10.0,
            max_steps: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("{0}")]
    UnknownMethod(#[from] ttdl_ir::config::UnknownChoice),
    #[error("the placement covers {placed} tasks but the traffic has {tasks}")]
    PlacementSize { placed: usize, tasks: usize },
    #[error("task {task} is placed on node {node}, but {network} has {nodes} nodes")]
    NodeOutOfRange {
        task: usize,
        node: NodeId,
        network: String,
        nodes: usize,
    },
    #[error("message {msg} names task {task}, which does not exist")]
    UnknownTask { msg: usize, task: usize },
    #[error("no path from node {from} to node {to} for message {msg}")]
    NoPath {
        msg: usize,
        from: NodeId,
        to: NodeId,
    },
}

/// Routes every message with the default options of `method`.
pub fn route(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    method: RouteMethod,
    seed: u64,
) -> Result<Routing, RouteError> {
    route_with(
        traffic,
        network,
        placement,
        &RouteOptions::new(method, seed),
        &mut |_| {},
    )
    .map(|(r, _)| r)
}

/// Routes with full options; for `reroute` also says what rerouting achieved.
pub fn route_with(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    options: &RouteOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Routing, Option<RerouteOutcome>), RouteError> {
    check(traffic, network, placement)?;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let first = match options.method {
        RouteMethod::Reroute => match options.initial {
            RouteMethod::Reroute => RouteMethod::Dor,
            m => m,
        },
        m => m,
    };
    let routing = initial_routing(traffic, network, placement, first, &mut rng)?;
    if options.method != RouteMethod::Reroute {
        return Ok((routing, None));
    }
    let (routing, outcome) = reroute(
        traffic, network, placement, routing, options, &mut rng, progress,
    );
    Ok((routing, Some(outcome)))
}

fn check(traffic: &Traffic, network: &Network, placement: &Placement) -> Result<(), RouteError> {
    if placement.node_of.len() != traffic.tasks.len() {
        return Err(RouteError::PlacementSize {
            placed: placement.node_of.len(),
            tasks: traffic.tasks.len(),
        });
    }
    if let Some((task, &node)) = placement
        .node_of
        .iter()
        .enumerate()
        .find(|(_, &n)| n >= network.nodes())
    {
        return Err(RouteError::NodeOutOfRange {
            task,
            node,
            network: network.spec.to_string(),
            nodes: network.nodes(),
        });
    }
    for (i, m) in traffic.messages.iter().enumerate() {
        if let Some(&t) = std::iter::once(&m.src)
            .chain(m.dst.iter())
            .find(|&&t| t >= traffic.tasks.len())
        {
            return Err(RouteError::UnknownTask { msg: i, task: t });
        }
    }
    Ok(())
}

/// One path per destination of `m` by `method`.
fn message_paths(
    network: &Network,
    placement: &Placement,
    m: &Message,
    method: RouteMethod,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<NodeId>> {
    let src = placement.node_of[m.src];
    m.dst
        .iter()
        .map(|&d| {
            let dst = placement.node_of[d];
            match method {
                RouteMethod::Random => paths::random_minimal(network, src, dst, rng),
                RouteMethod::Shortest => paths::shortest(network, src, dst),
                RouteMethod::Dor | RouteMethod::Reroute => network.dor_path(src, dst),
            }
        })
        .collect()
}

fn initial_routing(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    method: RouteMethod,
    rng: &mut ChaCha8Rng,
) -> Result<Routing, RouteError> {
    let mut routes = Vec::with_capacity(traffic.messages.len());
    for (i, m) in traffic.messages.iter().enumerate() {
        let ps = message_paths(network, placement, m, method, rng);
        if let Some(pos) = ps.iter().position(|p| p.is_empty()) {
            return Err(RouteError::NoPath {
                msg: i,
                from: placement.node_of[m.src],
                to: placement.node_of[m.dst[pos]],
            });
        }
        routes.push(if m.dst.len() == 1 {
            Route::Path(ps.into_iter().next().unwrap_or_default())
        } else {
            paths::tree_from_paths(&ps)
        });
    }
    Ok(Routing { routes })
}
