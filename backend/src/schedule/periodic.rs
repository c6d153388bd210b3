//! Periodic programs (`iterate`): the steady-state period a schedule achieves, and the lower
//! bound on it with what sets it (SPEC §2; Minsky §5.2: "the maximum thruput … is 12").
//!
//! The bound is [`bounds::periods`] on the placed and routed program: the resource bound (a task's
//! compute, a port's or link's words per iteration), the recurrence bound and the port
//! recurrence. The achieved period is read off the schedule as the mean gap between the
//! completions of consecutive iterations over the whole run, `⌈(done[n−1] − done[0]) / (n−1)⌉`:
//! it leaves out the pipeline's fill (the first iteration's latency) but not a backlog that
//! drains at the end, so a schedule that delays early iterations cannot look fast.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bounds::{self, Latencies, Setting};
use super::occupancy::ResourceIndex;
use super::{Problem, Resource, Schedule};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodReport {
    pub iterations: u64,
    /// Cycles per iteration nothing can beat.
    pub lower_bound: u64,
    /// What sets the bound, e.g. `compute of task t3 (12 cycles)`, `link 4->5 (12 words)`.
    pub bound_by: String,
    /// Cycles between the completions of the first and last iteration, per iteration: the
    /// steady-state period of the schedule when the run is long enough to reach one.
    pub achieved: u64,
}

impl PeriodReport {
    /// Whether the run reached a steady state. Iterations that end closer together than the
    /// bound allows are a short run draining (its first iteration was late, the rest caught
    /// up), not a period anything could sustain: no figure is printed for it.
    pub fn steady(&self) -> bool {
        self.achieved >= self.lower_bound
    }
}

/// Words every resource carries per phase (links and node ports, after placement and routing).
///
/// A step of every message is counted (a hundred million in a large plan): by phase, into one
/// table numbered by resource ([`ResourceIndex`]), instead of a map hashed by phase and resource.
pub fn phase_words(problem: &Problem) -> BTreeMap<(usize, Resource), u64> {
    let messages = &problem.traffic.messages;
    let index = ResourceIndex::new(problem.network);
    // Messages by phase, in message order within one (a stable sort: one pass when the
    // messages already come phase by phase).
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by_key(|&m| messages[m].phase);
    let mut words = vec![0u64; index.len()];
    // `stamp[i]` is the group (plus one) that last counted resource `i`.
    let mut stamp = vec![0usize; index.len()];
    let mut touched: Vec<usize> = Vec::new();
    // A resource outside the network (never in a checked problem) is counted all the same.
    let mut strays: super::FastMap<(usize, Resource), u64> = Default::default();
    let mut out: Vec<((usize, Resource), u64)> = Vec::new();
    for (g, group) in order
        .chunk_by(|&a, &b| messages[a].phase == messages[b].phase)
        .enumerate()
    {
        let phase = messages[group[0]].phase;
        for &m in group {
            let (id, size) = (messages[m].id, messages[m].size);
            for st in problem.steps.get(id).map_or(&[][..], Vec::as_slice) {
                match index.of(st.resource()) {
                    Some(i) => {
                        if stamp[i] != g + 1 {
                            stamp[i] = g + 1;
                            words[i] = 0;
                            touched.push(i);
                        }
                        words[i] += size;
                    }
                    None => *strays.entry((phase, st.resource())).or_default() += size,
                }
            }
        }
        out.extend(
            touched
                .drain(..)
                .map(|i| ((phase, index.resource(i)), words[i])),
        );
    }
    out.extend(strays);
    out.into_iter().collect()
}

/// The period bound of every repeating phase of a placed and routed problem.
pub fn bounds(problem: &Problem) -> Vec<bounds::PhasePeriod> {
    let latencies = Latencies::of(problem);
    let setting = Setting {
        traffic: problem.traffic,
        node_of: Some(&problem.placement.node_of),
        ports: problem.hardware.ports,
        latency: Some(&latencies),
    };
    bounds::periods(&setting, Some(&phase_words(problem)))
}

/// None when no phase of the program repeats. Phases are measured separately (a distribution
/// phase followed by a pipeline has the pipeline's period); the phase with the longest period is
/// reported.
pub fn analyze(problem: &Problem, schedule: &Schedule) -> Option<PeriodReport> {
    analyze_with(problem, schedule, &bounds(problem))
}

/// [`analyze`] with the bounds already computed.
pub fn analyze_with(
    problem: &Problem,
    schedule: &Schedule,
    phases: &[bounds::PhasePeriod],
) -> Option<PeriodReport> {
    let traffic = problem.traffic;
    let mut best: Option<PeriodReport> = None;
    for ph in phases {
        let n = ph.iterations;
        // Completion of iteration k of this phase: its last arrival.
        let mut done = vec![0u64; n as usize];
        for m in traffic.messages.iter().filter(|m| m.phase == ph.phase) {
            if let Some(d) = done.get_mut(m.iteration as usize) {
                *d = (*d).max(schedule.arrival[m.id]);
            }
        }
        let last = done.len() - 1;
        let achieved = done[last].saturating_sub(done[0]).div_ceil(last as u64);
        let report = PeriodReport {
            iterations: n,
            lower_bound: ph.bound.value,
            bound_by: ph.bound.by.clone(),
            achieved,
        };
        if best.as_ref().is_none_or(|b| report.achieved > b.achieved) {
            best = Some(report);
        }
    }
    best
}
