//! Periodic (modulo) schedules: a long repeating program is scheduled as a short sample of its
//! iterations; where the sample's schedule repeats — iteration `i + q` holds the same resources
//! as iteration `i`, `P` cycles later — the repetition is the kernel, and the schedule of any
//! longer run is the sample with more kernel copies inserted (SPEC §2; Minsky §6.2.1 names
//! periodic scheduling as the way to schedule programs invoked many times).
//!
//! Nothing here is trusted: the pipeline verifies and replays the extrapolated schedule of a
//! run longer than the sample (so the inserted copies meet each other and the epilogue), and of
//! the whole program whenever it is small enough to write out.

use ttdl_ir::iterations::{Layout, Place};

use super::{Hold, Schedule};
use crate::traffic::Routing;

/// The repeating part of a sample's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Cycles between a kernel and the next: the steady-state period of `q` iterations.
    pub period: u64,
    /// Iterations per kernel.
    pub q: u64,
    /// The last iteration of the sample kept as scheduled; copies are inserted after it and
    /// every later iteration (and the suffix) moves by the copies' length.
    pub pump: u64,
    /// Iterations in the sample.
    pub sample: u64,
}

impl Kernel {
    /// Cycles per iteration.
    pub fn cycles_per_iteration(&self) -> f64 {
        self.period as f64 / self.q as f64
    }

    /// Kernel copies inserted to reach `count` iterations, if `count` is reachable.
    pub fn copies(&self, count: u64) -> Option<u64> {
        let extra = count.checked_sub(self.sample)?;
        (extra % self.q == 0).then_some(extra / self.q)
    }

    /// Where the hold of message `m` of a run of `count` iterations comes from in the sample:
    /// the sample's message and the cycles to add. `None` when `count` is not reachable.
    pub fn source(&self, run: &Layout, sample: &Layout, m: usize) -> Option<(usize, u64)> {
        let k = self.copies(run.count)?;
        let id =
            |iteration: u64, slot: usize| sample.prefix + sample.per * iteration as usize + slot;
        Some(match run.place(m) {
            Place::Prefix => (m, 0),
            Place::Suffix => (
                m - run.prefix - run.per * run.count as usize
                    + sample.prefix
                    + sample.per * sample.count as usize,
                k * self.period,
            ),
            Place::Iteration { iteration: j, slot } => {
                if j <= self.pump {
                    (id(j, slot), 0)
                } else if j <= self.pump + k * self.q {
                    let t = j - self.pump - 1;
                    let base = self.pump + 1 - self.q;
                    (id(base + t % self.q, slot), (t / self.q + 1) * self.period)
                } else {
                    (id(j - k * self.q, slot), k * self.period)
                }
            }
        })
    }

    /// The routes of a run of `run.count` iterations: each message takes the route of the
    /// sample's message its holds come from, so the extrapolated holds lie on its route.
    pub fn routing(&self, run: &Layout, sample: &Layout, routing: &Routing) -> Option<Routing> {
        let routes = (0..run.total())
            .map(|m| {
                let (from, _) = self.source(run, sample, m)?;
                routing.routes.get(from).cloned()
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Routing { routes })
    }

    /// The holds of a run of `run.count` iterations, from the sample's (sorted by message).
    pub fn extrapolate(&self, run: &Layout, sample: &Layout, s: &Schedule) -> Option<Vec<Hold>> {
        let ranges = ranges_by_msg(s, sample.total());
        let mut holds = Vec::with_capacity(s.holds.len() / sample.total().max(1) * run.total());
        for m in 0..run.total() {
            let (from, shift) = self.source(run, sample, m)?;
            let (a, b) = ranges[from];
            for h in &s.holds[a..b] {
                // A run too long for a plan's 32-bit cycles is not extrapolated.
                holds.push(Hold::new(m, h.resource(), h.start() + shift, h.end() + shift).ok()?);
            }
        }
        Some(holds)
    }
}

/// Per message, its holds' range in `s.holds` (sorted by message).
fn ranges_by_msg(s: &Schedule, n: usize) -> Vec<(usize, usize)> {
    let mut ranges = vec![(0, 0); n];
    let mut i = 0;
    while i < s.holds.len() {
        let m = s.holds[i].msg();
        let mut j = i;
        while j < s.holds.len() && s.holds[j].msg() == m {
            j += 1;
        }
        if let Some(r) = ranges.get_mut(m) {
            *r = (i, j);
        }
        i = j;
    }
    ranges
}

/// The kernel of a sample's schedule: the smallest `q` (at most `max_q`) for which the
/// iterations repeat with one shift `P` over a run of at least `2q + 1` iterations; the pump
/// point is the middle of the longest such run.
pub fn detect(layout: &Layout, s: &Schedule, max_q: u64) -> Option<Kernel> {
    let ranges = ranges_by_msg(s, layout.total());
    let m = layout.count;
    let id = |iteration: u64, slot: usize| layout.prefix + layout.per * iteration as usize + slot;
    // The uniform shift from iteration i to i + q, if there is one.
    let shift = |i: u64, q: u64| -> Option<u64> {
        let mut p = None;
        for slot in 0..layout.per {
            let (a0, b0) = ranges[id(i, slot)];
            let (a1, b1) = ranges[id(i + q, slot)];
            if b0 - a0 != b1 - a1 {
                return None;
            }
            for (h0, h1) in s.holds[a0..b0].iter().zip(&s.holds[a1..b1]) {
                let d = h1.start().checked_sub(h0.start())?;
                if h0.resource() != h1.resource() || h1.end() - h1.start() != h0.end() - h0.start()
                {
                    return None;
                }
                if *p.get_or_insert(d) != d {
                    return None;
                }
            }
        }
        p.filter(|&d| d > 0)
    };
    for q in 1..=max_q {
        if m < 3 * q {
            break;
        }
        let shifts: Vec<Option<u64>> = (0..m - q).map(|i| shift(i, q)).collect();
        // Longest run of one shift (latest on ties).
        let mut best: Option<(usize, usize, u64)> = None;
        let mut i = 0;
        while i < shifts.len() {
            let Some(p) = shifts[i] else {
                i += 1;
                continue;
            };
            let mut j = i;
            while j < shifts.len() && shifts[j] == Some(p) {
                j += 1;
            }
            if best.is_none_or(|(a, b, _)| j - i >= b - a) {
                best = Some((i, j, p));
            }
            i = j;
        }
        let Some((a, b, p)) = best else { continue };
        // Iterations a ..= b - 1 + q repeat; keep a full kernel on each side of the pump.
        if (b - a) as u64 >= 2 * q {
            let pump = (a + (b - a) / 2) as u64 + q - 1;
            return Some(Kernel {
                period: p,
                q,
                pump,
                sample: m,
            });
        }
    }
    None
}

/// The schedule record of extrapolated holds: releases and task finishes from running the
/// programs against the arrivals the holds give, then arrivals, deadlines and relaxations.
pub fn schedule_from_holds(
    problem: &super::Problem,
    method: super::Method,
    holds: Vec<Hold>,
) -> Result<Schedule, super::ScheduleError> {
    use super::Resource;
    let traffic = problem.traffic;
    let node_of = &problem.placement.node_of;
    let mut arrival_at: std::collections::HashMap<(usize, usize), u64> =
        std::collections::HashMap::new();
    for h in &holds {
        if let Resource::Eject(node) = h.resource() {
            let a = arrival_at.entry((h.msg(), node as usize)).or_insert(0);
            *a = (*a).max(h.end());
        }
    }
    let timing = super::program::run_with(traffic, |m, d, at| {
        arrival_at.get(&(m, node_of[d])).copied().unwrap_or(at)
    })?;
    let released = (0..traffic.messages.len())
        .map(|m| timing.release[m].max(traffic.messages[m].release))
        .collect();
    Ok(super::feedback::assemble(
        problem,
        method,
        holds,
        released,
        timing.task_finish,
    ))
}
