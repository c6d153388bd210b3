//! A dynamic model's run as the order of a plan.
//!
//! A compile-time scheduler knows everything a dynamic network discovers: a run of the same
//! program on a dynamic model (store-and-forward, circuit, compiled configurations, …) is one
//! order in which messages can leave, and when it finishes sooner than the plan it shows an
//! order the plan's own priorities missed. Two things can make it so:
//! - *the order*: a compiled model sends a nearest-neighbour exchange in rounds that are
//!   permutations (every node sends one message and receives one), where a greedy order by
//!   release and chain collides at the ejection ports (`examples/pr-channel.ttdl`: the plan
//!   9,785 cycles, compiled communication 8,243);
//! - *the releases*: the plan's messages are released no earlier than the port-aware timing
//!   releases them (SPEC §2), and that timing is one greedy port schedule, not the earliest
//!   possible one; a dynamic run releases each write when its sender reaches it
//!   (`examples/mwd.ttdl`: 92 cycles against store-and-forward's 80).
//!
//! So the exact scheduler is run again with the programs alone deciding releases (every message
//! still leaves only when its sender reaches the write, given the arrivals planned so far), in
//! the run's order of sends ([`Priority::Paced`], [`Priority::Ports`] with the run's send cycles
//! as the reference), on clear paths and within the switches' buffers. The words are placed by
//! the exact scheduler under the plan's own buffers, ports and latency, so a run that stored
//! whole messages in node memory (store-and-forward) lends only its order, never its storage.
//! The best schedule's releases become the traffic's (never later than the port-aware timing's:
//! each is the smaller), its deadlines stay the port-aware timing's, and the verifier checks the
//! whole plan against that traffic like any other.

use super::exact::{self, Order, Priority, Rank};
use super::{
    feedback, improve, priority, program, verify, Method, Problem, Schedule, ScheduleError,
};
use crate::progress::Progress;
use crate::traffic::Traffic;

/// The largest program (route steps over all messages, times the orders tried) the runs may
/// order: as much as the exact scheduler's own search over orders.
pub const BUDGET: usize = exact::SEARCH_BUDGET;

/// The schedule of a program retimed to follow a run, with the traffic it is verified against.
pub struct Followed {
    /// The problem's traffic with each release the smaller of the port-aware timing's and the
    /// schedule's (deadlines unchanged).
    pub traffic: Traffic,
    pub schedule: Schedule,
    /// Which of the `sends` orders gave it (`None`: the exact scheduler's own orders with the
    /// programs alone deciding releases).
    pub run: Option<usize>,
}

/// Schedules `problem`'s program with releases set by the programs alone, in the exact
/// scheduler's own orders and in the order of each run of `sends` (per message, the cycle a
/// run sent it), the best improved as `effort` allows; returns it verified, or `None` when the
/// program has no programs to drive it or nothing could be tried within [`BUDGET`].
pub fn follow(
    problem: &Problem,
    sends: &[Vec<u64>],
    effort: &improve::Improve,
    progress: &Progress,
) -> Result<Option<Followed>, ScheduleError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    if n == 0 || !program::is_driven(traffic) {
        return Ok(None);
    }
    let mut free = traffic.clone();
    for m in &mut free.messages {
        m.release = 0;
    }
    let mut fp = Problem::new(
        &free,
        problem.network,
        problem.placement,
        problem.routing,
        problem.hardware,
    )?;
    fp.choose_routes = problem.choose_routes;
    let hops: usize = fp.steps.iter().map(Vec::len).sum::<usize>().max(1);
    let chain = priority::critical_to_end(&free);
    let pred = priority::stream_predecessor(&free);
    // As the exact scheduler does: on clear paths, and using the buffers when there are some.
    let waits: &[bool] = match problem.hardware.buffer {
        Some(b) if b > 0 => &[true, false],
        _ => &[false],
    };
    let mut best: Option<(Schedule, Rank, Option<usize>)> = None;
    let mut keep = |s: Schedule, run: Option<usize>| {
        let r = exact::rank(&s);
        if best.as_ref().is_none_or(|(_, k, _)| r < *k) {
            best = Some((s, r, run));
        }
    };
    let mut tried = 0usize;
    for (i, sent) in sends.iter().enumerate() {
        if sent.len() != n {
            continue;
        }
        for prio in [Priority::Paced, Priority::Ports] {
            for &clear in waits {
                if tried.saturating_add(hops) > BUDGET {
                    break;
                }
                tried += hops;
                progress.stage("schedule (in a run's order)", n as u64);
                let order = Order {
                    prio,
                    ideal: Some(sent),
                    chain: &chain,
                    pred: &pred,
                    shift: None,
                    clear,
                    routes: false,
                };
                keep(exact::schedule_order(&fp, &order, progress)?, Some(i));
            }
        }
    }
    // The exact scheduler's own orders, released by the programs alone (its search keeps to
    // its own budget): on a program small enough for it to try more than one order.
    if hops.saturating_mul(2) <= BUDGET {
        keep(exact::schedule_with_progress(&fp, progress)?, None);
    }
    let Some((s, _, run)) = best else {
        return Ok(None);
    };
    // The improvement phase re-orders the critical chain of the best, as for the exact
    // scheduler's own plan (as much as `effort` allows).
    let s = improve::improve(&fp, s, effort, progress)?;
    // The traffic the plan is verified against: the releases this schedule's programs reach,
    // never later than the port-aware timing's; the deadlines as they were.
    let mut timed = traffic.clone();
    for (msg, &r) in timed.messages.iter_mut().zip(&s.released) {
        msg.release = msg.release.min(r);
    }
    let routes = s.routes.clone();
    let routing = routes.as_ref().unwrap_or(problem.routing);
    let tp = Problem::new(
        &timed,
        problem.network,
        problem.placement,
        routing,
        problem.hardware,
    )?;
    let mut out =
        feedback::assemble_unblamed(&tp, Method::Exact, s.holds, s.released, s.task_finish);
    out.routes = routes.clone();
    feedback::blame_relaxed(&tp, &mut out);
    verify::verify(&tp, &out).map_err(|why| ScheduleError::Invalid {
        method: Method::Exact.name(),
        why: why.to_string(),
    })?;
    Ok(Some(Followed {
        traffic: timed,
        schedule: out,
        run,
    }))
}
