//! Placement: which node each task runs on (Minsky §4.2.1).
//!
//! Four methods: `mapping` (the canned mapping's physical coordinates in `Task.mapped`), `identity`
//! (task i on node i, wrapping), `random` (seeded) and `anneal` (simulated annealing, Minsky Fig
//! 4-5, with the fine cost by default: word-hops plus the words estimated to overflow links and
//! ports inside their release–deadline windows; or the coarse Manhattan cost; a problem with fewer
//! arrangements than the anneal has moves is searched whole, and the fine cost gives way to the
//! coarse when its work would outgrow a budget, see `cost::FINE_BUDGET`). Wired-down tasks
//! (`Task.wired`, from a tasks file) stay where `mapped` says under every method. When there are
//! more tasks than nodes, each node holds up to ⌈tasks/nodes⌉ of them. The fifth, `best`, needs
//! a scheduler to judge by: the pipeline plans each of [`candidates`] and keeps the best.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::topology::{Network, NodeId};
use crate::traffic::{Placement, TaskId, Traffic};

pub use crate::anneal;
mod cost;
mod metric;
mod multilevel;
mod slots;

pub use anneal::{Progress, Schedule};
pub use cost::{coarse_cost, CostKind};

pub use ttdl_ir::config::PlaceMethod;

/// Everything `place_with` can be told; `PlaceOptions::new(method, seed)` gives the defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlaceOptions {
    pub method: PlaceMethod,
    pub seed: u64,
    /// Annealing cost: fine (× estimated link and port overload, the default) or coarse.
    pub cost: CostKind,
    /// Injection and ejection ports per node (the fine cost's port capacity).
    pub ports: u32,
    /// Annealing schedule; `None` picks one from the problem size and a sample of moves.
    pub schedule: Option<Schedule>,
    /// Stop (and skip restarts) once the cost is at most this.
    pub min_acceptable_cost: Option<f64>,
    /// Start annealing from this placement instead of a random one (Minsky: "it is possible to
    /// specify an initial configuration").
    pub initial: Option<Placement>,
}

impl PlaceOptions {
    pub fn new(method: PlaceMethod, seed: u64) -> PlaceOptions {
        PlaceOptions {
            method,
            seed,
            cost: CostKind::Fine,
            ports: 1,
            schedule: None,
            min_acceptable_cost: None,
            initial: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("{0}")]
    UnknownMethod(#[from] ttdl_ir::config::UnknownChoice),
    #[error("placement by mapping needs physical coordinates for every task, but {0} have none (was a mapping given with `target :mapping`?)")]
    Unmapped(String),
    #[error("task {task} is mapped to {coords:?}, which is not a node of {network}; the mapping was made for another network: choose a placement for this one (`--place identity`, `anneal` or `random`) or the network the mapping fits")]
    OutOfNetwork {
        task: String,
        coords: Vec<i64>,
        network: String,
    },
    #[error("task {0} is wired down but has no mapped coordinates")]
    WiredWithoutCoords(String),
    #[error("the network has no nodes")]
    EmptyNetwork,
    #[error("the initial placement has {given} entries for {tasks} tasks, or names a node outside the network")]
    BadInitial { given: usize, tasks: usize },
}

/// Places `traffic`'s tasks on `network` with the default options of `method`.
pub fn place(
    traffic: &Traffic,
    network: &Network,
    method: PlaceMethod,
    seed: u64,
) -> Result<Placement, PlaceError> {
    place_with(
        traffic,
        network,
        &PlaceOptions::new(method, seed),
        &mut |_| {},
    )
}

/// Places with full options, reporting annealing progress to `progress` (once per temperature).
pub fn place_with(
    traffic: &Traffic,
    network: &Network,
    options: &PlaceOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Placement, PlaceError> {
    if network.nodes() == 0 {
        return Err(PlaceError::EmptyNetwork);
    }
    match options.method {
        PlaceMethod::Mapping => by_mapping(traffic, network),
        PlaceMethod::Identity => {
            let wired = wired_nodes(traffic, network)?;
            Ok(Placement {
                node_of: (0..traffic.tasks.len())
                    .map(|t| wired[t].unwrap_or(t % network.spec.terminals().max(1)))
                    .collect(),
            })
        }
        PlaceMethod::Random => {
            let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
            let wired = wired_nodes(traffic, network)?;
            let slots = slots::Slots::random(
                traffic.tasks.len(),
                network.spec.terminals(),
                &wired,
                &mut rng,
            );
            Ok(slots.placement())
        }
        // Without a scheduler to judge the candidates by, the best guess is the annealer's.
        PlaceMethod::Anneal | PlaceMethod::Best => {
            cost::anneal(traffic, network, options, progress)
        }
    }
}

/// The placements `best` plans and judges, in order of preference on a tie: the canned mapping
/// when every task has one, identity, and annealing.
pub fn candidates(traffic: &Traffic) -> Vec<PlaceMethod> {
    let mapped = !traffic.tasks.is_empty() && traffic.tasks.iter().all(|t| t.mapped.is_some());
    let mut v = Vec::new();
    if mapped {
        v.push(PlaceMethod::Mapping);
    }
    v.extend([PlaceMethod::Identity, PlaceMethod::Anneal]);
    v
}

/// The node a task's `mapped` coordinates name.
fn mapped_node(
    traffic: &Traffic,
    network: &Network,
    t: TaskId,
) -> Result<Option<NodeId>, PlaceError> {
    let task = &traffic.tasks[t];
    match &task.mapped {
        None => Ok(None),
        Some(c) => network
            .node_at(c)
            .map(Some)
            .ok_or_else(|| PlaceError::OutOfNetwork {
                task: task.name.clone(),
                coords: c.clone(),
                network: network.spec.to_string(),
            }),
    }
}

/// `Some(node)` for every wired-down task.
fn wired_nodes(traffic: &Traffic, network: &Network) -> Result<Vec<Option<NodeId>>, PlaceError> {
    (0..traffic.tasks.len())
        .map(|t| {
            if !traffic.tasks[t].wired {
                return Ok(None);
            }
            match mapped_node(traffic, network, t)? {
                Some(n) => Ok(Some(n)),
                None => Err(PlaceError::WiredWithoutCoords(
                    traffic.tasks[t].name.clone(),
                )),
            }
        })
        .collect()
}

fn by_mapping(traffic: &Traffic, network: &Network) -> Result<Placement, PlaceError> {
    let missing: Vec<&str> = traffic
        .tasks
        .iter()
        .filter(|t| t.mapped.is_none())
        .map(|t| t.name.as_str())
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(12).copied().collect();
        let mut names = shown.join(", ");
        if missing.len() > shown.len() {
            names.push_str(&format!(" and {} more", missing.len() - shown.len()));
        }
        return Err(PlaceError::Unmapped(format!(
            "{} task{} ({names})",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" }
        )));
    }
    let node_of = (0..traffic.tasks.len())
        .map(|t| mapped_node(traffic, network, t).map(|n| n.unwrap_or(0)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Placement { node_of })
}
