//! Periodic programs (`iterate`): the steady-state period a schedule achieves, and the lower
//! bound on it with what sets it (SPEC §2; Minsky §5.2: "the maximum thruput … is 12").
//!
//! The bound is the busiest of: a task's compute per iteration, a processor port's words per
//! iteration, a link's words per iteration. The achieved period is read off the schedule: the
//! largest gap between the completions of consecutive iterations in the second half of the run
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

/// None when the program does not repeat.
pub fn analyze(problem: &Problem, schedule: &Schedule) -> Option<PeriodReport> {
    let traffic = problem.traffic;
    let iterations = traffic
        .messages
        .iter()
        .map(|m| m.iteration + 1)
        .max()
        .unwrap_or(1)
        .max(traffic.period.as_ref().map_or(1, |p| p.iterations));
    if iterations < 2 {
        return None;
    }
    let mut bound = (0u64, String::new());
    let mut consider = |v: u64, why: String| {
        if v > bound.0 {
            bound = (v, why);
        }
    };
    for t in &traffic.tasks {
        let compute: u64 = t
            .ops
            .iter()
            .map(|op| if let Op::Compute(c) = op { *c } else { 0 })
            .sum();
        let per = compute / iterations;
        consider(per, format!("compute of task {} ({per} cycles)", t.name));
    }
    // Only words that repeat count: messages of iteration ≥ 1 (so a one-off distribution phase
    // does not set the period).
    let mut words: BTreeMap<Resource, u64> = BTreeMap::new();
    for m in traffic.messages.iter().filter(|m| m.iteration >= 1) {
        for st in &problem.steps[m.id] {
            *words.entry(st.resource).or_default() += m.size;
        }
    }
    for (r, w) in words {
        let cap = problem.hardware.capacity(r) as u64;
        let per = w.div_ceil((iterations - 1) * cap);
        let what = match r {
            Resource::Link { from, to } => format!("link {from}->{to} ({per} words)"),
            Resource::Inject(n) => format!("injection port of node {n} ({per} words)"),
            Resource::Eject(n) => format!("ejection port of node {n} ({per} words)"),
        };
        consider(per, what);
    }
    if let Some(p) = &traffic.period {
        if p.lower_bound > bound.0 {
            bound = (p.lower_bound, p.bound_by.clone());
        }
    }
    // Completion of iteration k: its last arrival.
    let mut done = vec![0u64; iterations as usize];
    for m in &traffic.messages {
        if let Some(d) = done.get_mut(m.iteration as usize) {
            *d = (*d).max(schedule.arrival[m.id]);
        }
    }
    let half = (iterations as usize) / 2;
    let achieved = (half.max(1)..done.len())
        .map(|k| done[k].saturating_sub(done[k - 1]))
        .max()
        .unwrap_or(0);
    Some(PeriodReport {
        iterations,
        lower_bound: bound.0,
        bound_by: bound.1,
        achieved,
    })
}
