//! Where the tasks go: the placement a configuration asks for, or `--place best`, which plans
//! each candidate and keeps the shortest.

use super::{plan_placed_with_progress, PipelineError, Plan, PlanConfig};
use crate::place::{self, PlaceMethod};
use crate::progress::Progress;
use crate::schedule::Method;
use crate::topology::Network;
use crate::traffic::{Placement, Traffic};

/// The network and placement of a configuration. With `best`, each candidate is planned and the
/// placement of the best plan is kept (see [`plan_with_progress`]).
pub fn place(traffic: &Traffic, cfg: &PlanConfig) -> Result<(Network, Placement), PipelineError> {
    if cfg.place == PlaceMethod::Best {
        let plan = best_placement(traffic, cfg, &Progress::none())?;
        return Ok((plan.network, plan.placement));
    }
    let network = network(cfg)?;
    let placement = place_by(traffic, &network, cfg.place, cfg)?;
    Ok((network, placement))
}

fn network(cfg: &PlanConfig) -> Result<Network, PipelineError> {
    Network::build(&cfg.network).map_err(|e| PipelineError::Input(e.to_string()))
}

fn place_by(
    traffic: &Traffic,
    network: &Network,
    method: PlaceMethod,
    cfg: &PlanConfig,
) -> Result<Placement, PipelineError> {
    let options = place::PlaceOptions {
        ports: cfg.hardware.ports,
        ..place::PlaceOptions::new(method, cfg.seed)
    };
    place::place_with(traffic, network, &options, &mut |_| {})
        .map_err(|e| PipelineError::Input(e.to_string()))
}

/// `--place best`: plans the program on each of [`place::candidates`] — the canned mapping (when
/// it fits the network), identity, annealing — and keeps the placement with the smallest makespan
/// of the whole program, then the fewest relaxed deadlines; a tie goes to the earlier candidate. A
/// placement equal to an earlier one is not planned again. The candidates are judged by the
/// exact scheduler (fast, and where `--schedule best` starts); the kept placement is then planned
/// with the configured scheduler. The plan records what was tried.
pub(super) fn best_placement(
    traffic: &Traffic,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Plan, PipelineError> {
    let network = network(cfg)?;
    let judge = PlanConfig {
        schedule: Method::Exact,
        ..cfg.clone()
    };
    let mut best: Option<(PlaceMethod, Plan)> = None;
    let mut tried: Vec<PlaceTry> = Vec::new();
    // The placements planned so far, with the candidate that made each and its makespan.
    let mut planned: Vec<(Placement, PlaceMethod, u64)> = Vec::new();
    for method in place::candidates(traffic) {
        let placement = match place_by(traffic, &network, method, cfg) {
            Ok(p) => p,
            // A mapping made for another network is not a candidate on this one.
            Err(_) if method == PlaceMethod::Mapping => continue,
            Err(e) => return Err(e),
        };
        if let Some((_, first, makespan)) = planned.iter().find(|(p, ..)| *p == placement) {
            tried.push(PlaceTry {
                method,
                makespan: *makespan,
                same_as: Some(*first),
            });
            continue;
        }
        let plan = plan_placed_with_progress(
            traffic,
            network.clone(),
            placement.clone(),
            &judge,
            progress,
        )?;
        let key = plan.rank();
        tried.push(PlaceTry {
            method,
            makespan: key.0,
            same_as: None,
        });
        planned.push((placement, method, key.0));
        if best.as_ref().is_none_or(|(_, b)| key < b.rank()) {
            best = Some((method, plan));
        }
    }
    let (chosen, best) = best.ok_or_else(|| PipelineError::Input("no placement to try".into()))?;
    let mut plan = if cfg.schedule == Method::Exact {
        Plan {
            config: cfg.clone(),
            ..best
        }
    } else {
        plan_placed_with_progress(traffic, best.network, best.placement, cfg, progress)?
    };
    plan.placed_by = Some(PlaceChoice { chosen, tried });
    Ok(plan)
}

/// What `--place best` tried and kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceChoice {
    pub chosen: PlaceMethod,
    pub tried: Vec<PlaceTry>,
}

/// One candidate of `--place best`: its whole-program makespan, or the earlier candidate whose
/// placement it equals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceTry {
    pub method: PlaceMethod,
    pub makespan: u64,
    pub same_as: Option<PlaceMethod>,
}
