//! A dynamic model's run as an order for the exact scheduler: when a model finishes the program
//! sooner than the plan, the plan follows the order in which that run delivered.

use super::{PipelineError, PlanConfig};
use crate::progress::Progress;
use crate::schedule::{self, program, Method, Schedule};
use crate::topology::Network;
use crate::traffic::{Placement, Routing, Traffic};

/// The most messages a program may have for the dynamic models' runs to order its plan
/// ([`follow_runs`]): beyond it the plan is what the exact scheduler's own orders make.
/// It bounds the cost: each run that finishes first is followed by the exact scheduler three
/// times over, and the 9,900 messages of a 10×10 all-to-all made that minutes.
pub const FOLLOW_LARGEST: usize = 2_000;

/// The plan in the order of a dynamic model's run, when one finishes no later than `current`
/// (see [`schedule::from_run`]): every model `compare` runs but the plan's own is run on the
/// same placement, stopped once it is slower than the plan, and the exact scheduler follows
/// the sends of each that is not. Kept, with what ordered it, only when its verified plan is
/// strictly shorter. Not when the `follow` setting is off, nor for the LP (asked for by name), pipelined windows (`throughput`),
/// fixed windows (a tasks file), programs larger than [`FOLLOW_LARGEST`] messages, or a plan
/// already at its lower bound.
#[allow(clippy::too_many_arguments)]
pub(super) fn follow_runs(
    written: &Traffic,
    timed: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    current: &Schedule,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Option<(schedule::from_run::Followed, String)>, PipelineError> {
    use crate::sim::drive::program::{simulate, SimOptions};
    use crate::sim::registry::{self, ModelContext};
    let n = timed.messages.len();
    if !cfg.follow
        || cfg.schedule == Method::Lp
        || cfg.throughput
        || n > FOLLOW_LARGEST
        || !program::is_driven(timed)
        || current.method != Method::Exact
    {
        return Ok(None);
    }
    let mut problem = schedule::Problem::new(timed, network, placement, routing, cfg.hardware)?;
    problem.choose_routes = true;
    if current.makespan <= schedule::lower_bound(&problem).0 {
        return Ok(None);
    }
    let ctx = ModelContext::new(network)
        .with_program(written, placement)
        .with_seed(cfg.seed);
    let mut runs: Vec<(String, u64, &str)> = Vec::new();
    let mut sends: Vec<Vec<u64>> = Vec::new();
    for spec in registry::compare_specs() {
        if spec.split([' ', ':']).next() == Some("scheduled") {
            continue;
        }
        // A model that cannot run here, or does not finish before the plan, orders nothing.
        let Ok(mut model) = registry::build(&spec, &ctx) else {
            continue;
        };
        let mut opts = SimOptions::for_program(written, network, placement);
        opts.max_cycles = opts.max_cycles.min(current.makespan.saturating_add(1));
        let Ok(report) = simulate(written, placement, network, model.as_mut(), &opts) else {
            continue;
        };
        if report.completion > current.makespan {
            continue;
        }
        // Three views of the run's order: when it began to deliver each message (its delivery
        // less its words, the order in which it used the ports), when it delivered it, and
        // when the program queued it (`sent`).
        let mut began = vec![0u64; n];
        let mut delivered = vec![0u64; n];
        let mut queued = vec![0u64; n];
        for m in report.messages.iter().filter(|m| m.msg < n) {
            began[m.msg] = m.delivered.saturating_sub(m.size).max(m.sent);
            delivered[m.msg] = m.delivered;
            queued[m.msg] = m.sent;
        }
        for (view, order) in [
            ("began", began),
            ("delivered", delivered),
            ("queued", queued),
        ] {
            runs.push((spec.clone(), report.completion, view));
            sends.push(order);
        }
    }
    if runs.is_empty() {
        return Ok(None);
    }
    let Some(f) = schedule::from_run::follow(&problem, &sends, &cfg.improve(), progress)? else {
        return Ok(None);
    };
    if f.schedule.makespan >= current.makespan {
        return Ok(None);
    }
    let by = match f.run.and_then(|i| runs.get(i)) {
        Some((spec, completion, view)) => {
            let view = match *view {
                "began" => "the cycles it began to deliver each message",
                "delivered" => "the cycles it delivered each message",
                _ => "the cycles its programs sent each message",
            };
            format!("{view} in the {spec} run (done at cycle {completion}), each message released when its sender reaches it")
        }
        None => {
            "each message released when its sender reaches it (not held to the port-aware timing)"
                .to_string()
        }
    };
    Ok(Some((f, by)))
}
