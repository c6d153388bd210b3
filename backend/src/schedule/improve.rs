//! The anytime improvement phase: large-neighbourhood search over the exact scheduler's order.
//!
//! The exact scheduler ([`super::exact`]) is a list scheduler: it places released messages one
//! at a time, each at the earliest cycles its route allows, so a schedule is fixed by the order
//! of placement. A greedy order leaves a message of the critical chain waiting behind one that
//! had slack. This phase rips up the order around the chain that sets the makespan and places
//! the whole program again (Minsky §4.2.4 "Propagation of results" relaxes deadlines after the
//! fact; this moves the messages responsible instead): each round takes the messages of the
//! critical chain that waited for a link or port, moves some of them ahead of the messages
//! released up to that many cycles later, pushes some of the messages that held their resources
//! back, and keeps the new order when the schedule is no worse (plateaus are walked; the best is
//! remembered). It stops at the lower bound ([`super::lower_bound`]: nothing can beat it), or
//! when its effort is spent. Everything is seeded, so a seed gives one answer; only an effort
//! given in seconds depends on the machine's speed.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::exact::{self, Order, Priority, Rank};
use super::{clear, feedback, priority, program, Problem, Resource, Schedule, ScheduleError};
use crate::progress::Progress;
use crate::traffic::{MsgId, Op};

/// How hard the improvement phase tries (the `effort` setting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Effort {
    /// No improvement phase: the best of the exact scheduler's fixed orders.
    Quick,
    /// Up to [`Effort::DEFAULT_ROUNDS`] rounds within [`Effort::DEFAULT_WORK`] words placed on
    /// route steps; skipped for programs of more than [`Effort::DEFAULT_LARGEST`] route steps,
    /// so a large program costs what it did without it.
    #[default]
    Default,
    /// Up to 20 times the default's rounds and work, for any size.
    Thorough,
    /// As many rounds as fit in this many seconds (not reproducible across machines).
    Seconds(u64),
}

impl Effort {
    pub const DEFAULT_ROUNDS: u64 = 300;
    pub const DEFAULT_WORK: u64 = 4_000_000;
    pub const DEFAULT_LARGEST: u64 = 100_000;

    /// Placements the bufferless search ([`clear`]) makes at default effort (each counted once
    /// per word of the message), beyond [`Effort::PLACEMENTS_PER_MESSAGE`] per message: about a second on small networks and
    /// three for the 9,900 one-word messages of a 10×10 all-to-all (a 2-core machine shared with
    /// other work).
    pub const DEFAULT_PLACEMENTS: u64 = 100_000;
    pub const PLACEMENTS_PER_MESSAGE: u64 = 16;

    /// The bufferless search's budget for `messages` messages, or `None` to skip it.
    fn clear_budget(self, messages: usize) -> Option<clear::Budget> {
        let default = Self::DEFAULT_PLACEMENTS
            .saturating_add(Self::PLACEMENTS_PER_MESSAGE.saturating_mul(messages as u64));
        match self {
            Effort::Quick | Effort::Seconds(0) => None,
            Effort::Default => Some(clear::Budget {
                placements: default,
                time: None,
            }),
            Effort::Thorough => Some(clear::Budget {
                placements: 20 * default,
                time: None,
            }),
            Effort::Seconds(s) => Some(clear::Budget {
                placements: u64::MAX,
                time: Some(Duration::from_secs(s)),
            }),
        }
    }

    /// (rounds, words placed on route steps in all, wall-clock limit), or `None` to skip the
    /// phase for a program of `steps` route steps.
    fn budget(self, steps: u64) -> Option<(u64, u64, Option<Duration>)> {
        match self {
            Effort::Quick => None,
            Effort::Default if steps > Self::DEFAULT_LARGEST => None,
            Effort::Default => Some((Self::DEFAULT_ROUNDS, Self::DEFAULT_WORK, None)),
            Effort::Thorough => Some((20 * Self::DEFAULT_ROUNDS, 20 * Self::DEFAULT_WORK, None)),
            Effort::Seconds(0) => None,
            Effort::Seconds(s) => Some((u64::MAX, u64::MAX, Some(Duration::from_secs(s)))),
        }
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Effort::Quick => f.write_str("quick"),
            Effort::Default => f.write_str("default"),
            Effort::Thorough => f.write_str("thorough"),
            Effort::Seconds(s) => write!(f, "{s}s"),
        }
    }
}

impl std::str::FromStr for Effort {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "quick" => Ok(Effort::Quick),
            "default" => Ok(Effort::Default),
            "thorough" => Ok(Effort::Thorough),
            _ => match s.trim_end_matches('s').parse::<u64>() {
                Ok(x) if x > 0 => Ok(Effort::Seconds(x)),
                _ => Err(format!(
                    "`{s}` is not an effort: quick, default, thorough or a number of seconds"
                )),
            },
        }
    }
}

/// What the improvement phase is given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Improve {
    pub effort: Effort,
    pub seed: u64,
}

/// The exact scheduler's plan improved as `opts` allows. A bufferless program whose releases
/// no arrival delays is searched directly ([`clear`]), beside the list scheduler's first order
/// only: the search covers what the other orders and this phase's re-ordering would try, in a
/// fraction of their time.
pub fn schedule(
    problem: &Problem,
    opts: &Improve,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    if let Some(budget) = opts.effort.clear_budget(problem.traffic.messages.len()) {
        if clear::fits(problem) {
            let first = exact::schedule_first(problem, progress)?;
            if let Ok(s) = clear::search(problem, first, budget, opts.seed, progress)? {
                return Ok(s);
            }
        }
    }
    let s = exact::schedule_with_progress(problem, progress)?;
    improve(problem, s, opts, progress)
}

/// Improves `start` (a schedule of the exact scheduler) as `opts` allows; returns it unchanged
/// when nothing better is found. The caller verifies the answer.
pub fn improve(
    problem: &Problem,
    start: Schedule,
    opts: &Improve,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    let steps: u64 = problem.steps.iter().map(|s| s.len() as u64).sum();
    // One round places the whole program again; a long message may be placed word by word.
    let round_cost: u64 = problem
        .steps
        .iter()
        .zip(&traffic.messages)
        .map(|(s, m)| (s.len() as u64).saturating_mul(m.size.max(1)))
        .fold(0u64, u64::saturating_add);
    let Some((rounds, work, time)) = opts.effort.budget(steps) else {
        return Ok(start);
    };
    // Only programs run against their schedule (not a tasks file's fixed windows) have an
    // order to improve.
    if n == 0 || !program::is_driven(traffic) {
        return Ok(start);
    }
    let floor = super::lower_bound(problem).0;
    if start.makespan <= floor {
        return Ok(start);
    }
    let began = Instant::now();
    // Orders are judged by the makespan (then relaxed deadlines and lateness), whichever way
    // the program's loops are written: a guard on the steady-state period would apply to an
    // `iterate` and not to the same messages written with `dotimes`, and the two must get the
    // same plan (SPEC §2). Over a long run the makespan is the period times the iterations.

    let chain = priority::critical_to_end(traffic);
    let pred = priority::stream_predecessor(traffic);
    let sender = senders(problem);
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ 0x1a5_7e11);

    // Orders are improved on the routes the start took: chosen per message, or the given ones.
    let chose = start.routes.is_some();
    let run = |shift: &[i64]| -> Result<Schedule, ScheduleError> {
        let order = Order {
            prio: Priority::Chain,
            ideal: None,
            chain: &chain,
            pred: &pred,
            shift: Some(shift),
            clear: false,
            routes: chose,
        };
        exact::schedule_order(problem, &order, &Progress::none())
    };

    let mut shift = vec![0i64; n];
    let mut cur = run(&shift)?;
    let mut cur_rank = exact::rank(&cur);
    let mut best: Option<(Schedule, Rank)> = None;
    let start_rank = exact::rank(&start);
    if cur_rank < start_rank {
        best = Some((cur.clone(), cur_rank));
    }
    let mut spent = round_cost;
    progress.stage("improve", rounds.min(1 << 20));
    let mut round = 0u64;
    let mut critical = critical_chain(problem, &cur, &sender);
    let mut holders = Holders::of(&cur);
    while round < rounds && spent.saturating_add(round_cost) <= work {
        if let Some(limit) = time {
            if began.elapsed() >= limit {
                break;
            }
        }
        if progress.is_cancelled() {
            return Err(ScheduleError::Interrupted);
        }
        let reached = best.as_ref().map_or(start_rank, |b| b.1);
        if reached.0 <= floor && reached.1 == 0 {
            break;
        }
        round += 1;
        progress.advance(1);
        if critical.is_empty() {
            break;
        }
        // The neighbourhood: one to three moves on the critical chain.
        let mut trial = shift.clone();
        let moves = rng.random_range(1..=3);
        for _ in 0..moves {
            let &(m, wait) = &critical[rng.random_range(0..critical.len())];
            let size = traffic.messages[m].size.max(1) as i64;
            match rng.random_range(0..10) {
                // Ahead: placed before messages released up to `ahead` cycles later.
                0..=5 => {
                    let ahead = rng.random_range(1..=(wait.max(1) as i64 + size));
                    move_ahead(&mut trial, &pred, m, ahead);
                }
                // A message that held a resource it waited for goes back.
                6..=8 => {
                    let hs = holders.blocking(problem, &cur, m);
                    if let Some(&b) = hs.get(rng.random_range(0..hs.len().max(1))) {
                        trial[b] = trial[b].saturating_add(rng.random_range(1..=size));
                    } else {
                        move_ahead(&mut trial, &pred, m, size);
                    }
                }
                // Undo an earlier move.
                _ => trial[m] = 0,
            }
        }
        let s = run(&trial)?;
        spent = spent.saturating_add(round_cost);
        let r = exact::rank(&s);
        if r <= cur_rank {
            if best.as_ref().map_or(start_rank, |b| b.1) > r {
                best = Some((s.clone(), r));
            }
            let changed = r < cur_rank || s.holds != cur.holds;
            shift = trial;
            cur = s;
            cur_rank = r;
            if changed {
                critical = critical_chain(problem, &cur, &sender);
                holders = Holders::of(&cur);
            }
        }
    }
    match best {
        Some((mut s, _)) => {
            feedback::blame_relaxed(problem, &mut s);
            Ok(s)
        }
        None => Ok(start),
    }
}

/// Moves `m` ahead by `by` cycles of release, and the messages before it on its stream with
/// it (they are placed first: left behind, they would hold it back).
fn move_ahead(shift: &mut [i64], pred: &[Option<MsgId>], m: MsgId, by: i64) {
    let target = shift[m].saturating_sub(by);
    shift[m] = target;
    let mut at = m;
    for _ in 0..64 {
        let Some(p) = pred.get(at).copied().flatten() else {
            break;
        };
        if shift[p] <= target {
            break;
        }
        shift[p] = target;
        at = p;
    }
}

/// Per message: the task that sends it and the index of the send in its program.
fn senders(problem: &Problem) -> Vec<Option<(usize, usize)>> {
    let mut at = vec![None; problem.traffic.messages.len()];
    for (t, task) in problem.traffic.tasks.iter().enumerate() {
        for (i, op) in task.ops.iter().enumerate() {
            if let Op::Send(m) = *op {
                if let Some(slot) = at.get_mut(m) {
                    *slot = Some((t, i));
                }
            }
        }
    }
    at
}

/// The messages of the chain that ends last, with how long each waited for its resources
/// beyond the time its words need (0 for a message on the chain that did not wait): walked back
/// from the task that finishes last, through each run of receives to the message that arrived
/// last, and on from where its sender released it.
fn critical_chain(
    problem: &Problem,
    s: &Schedule,
    sender: &[Option<(usize, usize)>],
) -> Vec<(MsgId, u64)> {
    let traffic = problem.traffic;
    let mut out = Vec::new();
    let Some((mut task, _)) = s
        .task_finish
        .iter()
        .enumerate()
        .max_by_key(|&(t, &f)| (f, std::cmp::Reverse(t)))
    else {
        return out;
    };
    let mut pc = traffic.tasks[task].ops.len();
    let mut guard = traffic.tasks.iter().map(|t| t.ops.len()).sum::<usize>() + 1;
    while pc > 0 && guard > 0 {
        guard -= 1;
        pc -= 1;
        let Op::Recv(_) = traffic.tasks[task].ops[pc] else {
            continue;
        };
        // The run of receives ending here: the one that arrived last set its start.
        let mut first = pc;
        while first > 0 && matches!(traffic.tasks[task].ops[first - 1], Op::Recv(_)) {
            first -= 1;
        }
        let last = traffic.tasks[task].ops[first..=pc]
            .iter()
            .filter_map(|op| match *op {
                Op::Recv(m) => Some(m),
                _ => None,
            })
            .max_by_key(|&m| (s.arrival[m], std::cmp::Reverse(m)));
        pc = first;
        let Some(m) = last else { continue };
        let msg = &traffic.messages[m];
        let hops = problem.steps[m].len().saturating_sub(2) as u64;
        let free = s.released[m] + msg.size + hops * problem.hardware.hop_latency;
        out.push((m, s.arrival[m].saturating_sub(free)));
        match sender[m] {
            Some((t, i)) => {
                task = t;
                pc = i;
            }
            None => break,
        }
    }
    // Waiting messages first in weight: a message that did not wait is kept once, so moves
    // still reach the chain when nothing on it waited.
    out.sort_by_key(|&(m, w)| (std::cmp::Reverse(w), m));
    out.dedup_by_key(|e| e.0);
    out
}

/// Who holds each resource when: to find the messages a late one waited behind.
struct Holders {
    by_resource: BTreeMap<Resource, Vec<(u64, u64, MsgId)>>,
}

impl Holders {
    fn of(s: &Schedule) -> Holders {
        let mut by_resource: BTreeMap<Resource, Vec<(u64, u64, MsgId)>> = BTreeMap::new();
        for h in &s.holds {
            by_resource
                .entry(h.resource())
                .or_default()
                .push((h.start(), h.end(), h.msg()));
        }
        for v in by_resource.values_mut() {
            v.sort_unstable();
        }
        Holders { by_resource }
    }

    /// The other messages that held a resource of `m`'s route between its release and its
    /// arrival, sorted and without repeats.
    fn blocking(&self, problem: &Problem, s: &Schedule, m: MsgId) -> Vec<MsgId> {
        let (from, to) = (s.released[m], s.arrival[m]);
        let mut out: Vec<MsgId> = Vec::new();
        for st in &problem.steps[m] {
            if let Some(v) = self.by_resource.get(&st.resource()) {
                out.extend(
                    v.iter()
                        .take_while(|h| h.0 < to)
                        .filter(|h| h.1 > from && h.2 != m)
                        .map(|h| h.2),
                );
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_parses_and_gates_by_size() {
        assert_eq!("quick".parse::<Effort>(), Ok(Effort::Quick));
        assert_eq!("thorough".parse::<Effort>(), Ok(Effort::Thorough));
        assert!("2.5".parse::<Effort>().is_err());
        assert_eq!("3s".parse::<Effort>(), Ok(Effort::Seconds(3)));
        assert!("fast".parse::<Effort>().is_err());
        assert!("-1".parse::<Effort>().is_err());
        assert!(Effort::Quick.budget(10).is_none());
        assert!(Effort::Default.budget(Effort::DEFAULT_LARGEST).is_some());
        assert!(Effort::Default
            .budget(Effort::DEFAULT_LARGEST + 1)
            .is_none());
        assert!(Effort::Thorough.budget(u64::MAX).is_some());
    }
}
