//! Outputs for people and scripts: text summary, JSON (SPEC §4), SVG pictures (Minsky Figs
//! 5-6/5-7 snapshots and a link-by-time chart).

use crate::metrics::Metrics;
use crate::schedule::periodic::{self, PeriodReport};
use crate::schedule::{self, Problem, Resource, Schedule};
use crate::topology::Network;
use crate::traffic::{Placement, Routing, Traffic};

pub mod compare;
pub mod csv;
pub mod html;
pub mod json;
mod plan_output;
mod pretty;
pub mod simulation;
pub mod svg;
pub mod tables;
pub mod text;
pub mod traffic;

/// Everything a report shows, computed once from a verified schedule.
pub struct Plan<'a> {
    pub traffic: &'a Traffic,
    pub network: &'a Network,
    pub placement: &'a Placement,
    pub routing: &'a Routing,
    pub schedule: &'a Schedule,
    /// Makespan lower bound and what sets it.
    pub lower_bound: (u64, String),
    /// Present when the program repeats.
    pub period: Option<PeriodReport>,
    /// Σ size × hops over all messages (words times links crossed).
    pub placement_cost: u64,
    /// Busiest link's busy cycles over the makespan, and that link.
    pub peak_utilization: (f64, Option<Resource>),
    /// Number of fragment-holds on links and ports.
    pub fragments: usize,
    /// Words waiting at switch inputs (SPEC §2): the most at one input is `buffered_max`.
    pub buffers: schedule::buffers::Usage,
    /// Route-level contention (Minsky's lu_j, Chittor's χ and ν, dilation), which does not depend
    /// on the schedule: it says how hard the placement and routing made the scheduler's job.
    pub contention: Metrics,
}

impl<'a> Plan<'a> {
    /// `windows` is the traffic whose release/deadline windows route contention is measured over:
    /// the problem's own, or the relaxed copy routing saw (`ttdl run --throughput`).
    pub fn new(problem: &'a Problem<'a>, schedule: &'a Schedule, windows: &Traffic) -> Plan<'a> {
        let traffic = problem.traffic;
        let lower_bound = schedule::lower_bound(problem);
        let period = periodic::analyze(problem, schedule);
        let placement_cost = traffic
            .messages
            .iter()
            .map(|m| {
                let links = problem.steps[m.id]
                    .iter()
                    .filter(|s| matches!(s.resource(), Resource::Link { .. }))
                    .count() as u64;
                m.size * links
            })
            .sum();
        // Busy cycles per link, counted by the resource's number in the network (a hold of
        // every message on every step: millions), the busiest chosen by a total order below.
        let index = schedule::ResourceIndex::new(problem.network);
        let mut busy = vec![0u64; index.len()];
        let mut held = vec![false; index.len()];
        let mut strays: schedule::FastMap<Resource, u64> = Default::default();
        for h in &schedule.holds {
            if let Resource::Link { .. } = h.resource() {
                match index.of(h.resource()) {
                    Some(i) => {
                        busy[i] += h.end() - h.start();
                        held[i] = true;
                    }
                    None => *strays.entry(h.resource()).or_default() += h.end() - h.start(),
                }
            }
        }
        let peak = (0..index.len())
            .filter(|&i| held[i])
            .map(|i| (index.resource(i), busy[i]))
            .chain(strays)
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(r, b)| {
                let u = if schedule.makespan == 0 {
                    0.0
                } else {
                    b as f64 / schedule.makespan as f64
                };
                (u, Some(r))
            })
            .unwrap_or((0.0, None));
        Plan {
            traffic,
            network: problem.network,
            placement: problem.placement,
            routing: problem.routing,
            schedule,
            lower_bound,
            period,
            placement_cost,
            peak_utilization: peak,
            fragments: schedule.holds.len(),
            buffers: schedule::buffers::usage_of(problem, schedule),
            contention: Metrics::compute(
                windows,
                problem.network,
                problem.placement,
                problem.routing,
            ),
        }
    }
}
