//! Periodic programs (`iterate`): the steady-state period a schedule achieves, and the lower
//! bound on it with what sets it (SPEC §2; Minsky §5.2: "the maximum thruput … is 12").
//!
//! The bound is the busiest of: a task's compute per iteration, a processor port's words per
//! iteration, a link's words per iteration. The achieved period is read off the schedule: the
//! mean gap between the completions of consecutive iterations over the second half of the run
//! (after the pipeline has filled).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Problem, Resource, Schedule};
use crate::traffic::Op;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodReport {
    pub iterations: u64,
    /// Cycles per iteration nothing can beat.
    pub lower_bound: u64,
    /// What sets the bound, e.g. `compute of task t3 (12 cycles)`, `link 4->5 (12 words)`.
    pub bound_by: String,
    /// The steady-state period of the schedule.
    pub achieved: u64,
}

/// None when no phase of the program repeats. Phases are measured separately (a distribution
/// phase followed by a pipeline has the pipeline's period); the phase with the longest period is
/// reported.
pub fn analyze(problem: &Problem, schedule: &Schedule) -> Option<PeriodReport> {
    let traffic = problem.traffic;
    let mut iters: BTreeMap<usize, u64> = BTreeMap::new();
    for m in &traffic.messages {
        let e = iters.entry(m.phase).or_default();
        *e = (*e).max(m.iteration + 1);
    }
    // Compute per task per phase, following each program's `synchronize` points.
    let mut compute: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for t in &traffic.tasks {
        let mut phase = 0;
        for op in &t.ops {
            match *op {
                Op::Sync(p) => phase = p,
                Op::Compute(c) => *compute.entry((phase, t.id)).or_default() += c,
                _ => {}
            }
        }
    }
    let mut best: Option<PeriodReport> = None;
    for (&phase, &n) in iters.iter().filter(|(_, &n)| n >= 2) {
        let mut bound = (0u64, String::new());
        let mut consider = |v: u64, why: String| {
            if v > bound.0 {
                bound = (v, why);
            }
        };
        for (&(p, t), &c) in &compute {
            if p == phase {
                let per = c / n;
                let name = traffic.tasks.get(t).map_or("?", |x| x.name.as_str());
                consider(per, format!("compute of task {name} ({per} cycles)"));
            }
        }
        let mut words: BTreeMap<Resource, u64> = BTreeMap::new();
        for m in traffic.messages.iter().filter(|m| m.phase == phase) {
            for st in &problem.steps[m.id] {
                *words.entry(st.resource).or_default() += m.size;
            }
        }
        for (r, w) in words {
            let cap = problem.hardware.capacity(r) as u64;
            let per = w.div_ceil(n * cap);
            let what = match r {
                Resource::Link { from, to } => format!("link {from}->{to} ({per} words)"),
                Resource::Inject(x) => format!("injection port of node {x} ({per} words)"),
                Resource::Eject(x) => format!("ejection port of node {x} ({per} words)"),
            };
            consider(per, what);
        }
        // Completion of iteration k of this phase: its last arrival.
        let mut done = vec![0u64; n as usize];
        for m in traffic.messages.iter().filter(|m| m.phase == phase) {
            if let Some(d) = done.get_mut(m.iteration as usize) {
                *d = (*d).max(schedule.arrival[m.id]);
            }
        }
        // Steady state: the mean gap over the second half (single iterations may jitter; the
        // switches' buffers absorb that, and throughput is what the period measures).
        let last = done.len() - 1;
        let half = (done.len() / 2).min(last - 1);
        let achieved = done[last]
            .saturating_sub(done[half])
            .div_ceil((last - half) as u64);
        let name = traffic
            .phases
            .get(phase)
            .map_or(phase.to_string(), |p| p.name.clone());
        let report = PeriodReport {
            iterations: n,
            lower_bound: bound.0,
            bound_by: format!("{} in phase {name}", bound.1),
            achieved,
        };
        if best.as_ref().is_none_or(|b| report.achieved > b.achieved) {
            best = Some(report);
        }
    }
    best
}
