//! The schedule verifier: every schedule, from any scheduler, passes here before it is printed
//! (SPEC §2, "valid"). A failure is a bug in a scheduler and is reported as such.

use std::fmt;

use super::occupancy::Groups;
use super::{program, Problem, Resource, Schedule};

/// What is wrong with a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(pub String);

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! fail {
    ($($t:tt)*) => { return Err(Violation(format!($($t)*))) };
}

/// Checks that `schedule` is valid for `problem`:
/// - no resource held by more messages in one cycle than it has capacity (a link: one);
/// - nothing before its release (the traffic's, and the one the programs imply given the
///   schedule's own arrivals);
/// - every fragment holds each resource of its route for the same number of cycles, starting on
///   each no earlier than on the one before (plus the switch latency), and a message's fragments
///   carry exactly its size to every destination;
/// - every message arrives by its deadline, or its deadline is listed as relaxed;
/// - no switch input keeps more words waiting than its buffer holds ([`super::buffers`]).
pub fn verify(problem: &Problem, schedule: &Schedule) -> Result<(), Violation> {
    verify_with(problem, schedule, false).map(|_| ())
}

/// [`verify`], answering the words the schedule keeps waiting at switch inputs (measured on
/// every schedule, bounded buffers or not: the plan reports them).
pub fn verify_measuring(
    problem: &Problem,
    schedule: &Schedule,
) -> Result<super::buffers::Usage, Violation> {
    verify_with(problem, schedule, true).map(Option::unwrap_or_default)
}

/// [`verify`], with the buffers' usage measured always (`measure`) or only to check them.
fn verify_with(
    problem: &Problem,
    schedule: &Schedule,
    measure: bool,
) -> Result<Option<super::buffers::Usage>, Violation> {
    check_shape(problem, schedule)?;
    let holds = &schedule.holds;
    let by_msg = holds_by_message(problem, holds);
    check_routes(problem, schedule, &by_msg)?;
    check_capacity(problem, schedule)?;
    check_no_self_overlap(schedule, &by_msg)?;
    let listed: std::collections::BTreeSet<usize> =
        schedule.relaxed.iter().map(|r| r.msg).collect();
    // The words each message keeps waiting are gathered as it is checked, on its holds per
    // step as the check found them, and measured once every fragment is known to follow its
    // route in order (below).
    let measure = measure || problem.hardware.buffer.is_some();
    let mut waits = super::buffers::Waits::default();
    let mut scratch = (Vec::new(), Vec::new());
    for m in 0..problem.traffic.messages.len() {
        check_message(
            problem,
            schedule,
            &by_msg,
            m,
            listed.contains(&m),
            &mut scratch,
        )?;
        if measure {
            let lists = &scratch.1;
            waits.add(
                holds,
                by_msg.of(m),
                &problem.steps[m],
                lists,
                problem.hardware.hop_latency,
            );
        }
    }
    if program::is_driven(problem.traffic) {
        check_programs(problem, schedule, &by_msg)?;
    }
    // Buffers, once every fragment is known to follow its route in order.
    if !measure {
        return Ok(None);
    }
    let usage = waits.usage(&problem.hardware);
    if let (Some(b), Some((input, t, words, cap))) = (problem.hardware.buffer, usage.over) {
        fail!(
            "{} keeps {words} words waiting at cycle {t}, but its buffer holds {cap} (--buffer {b})",
            super::buffers::input_name(input)
        );
    }
    Ok(Some(usage))
}

/// One entry per message in each of the schedule's tables; every hold names a message and a
/// span that is not empty.
fn check_shape(problem: &Problem, schedule: &Schedule) -> Result<(), Violation> {
    let n = problem.traffic.messages.len();
    if schedule.arrival.len() != n
        || schedule.deadline.len() != n
        || schedule.sent.len() != n
        || schedule.released.len() != n
    {
        fail!(
            "the schedule describes {} messages, the traffic has {n}",
            schedule.arrival.len()
        );
    }
    for h in &schedule.holds {
        if h.msg() >= n {
            fail!("a hold names message {}, which does not exist", h.msg());
        }
        if h.end() <= h.start() {
            fail!(
                "message {} holds {} for the empty span {}..{}",
                h.msg(),
                h.resource(),
                h.start(),
                h.end()
            );
        }
    }
    if schedule.holds.len() >= u32::MAX as usize {
        fail!("{} holds: too many to check", schedule.holds.len());
    }
    Ok(())
}

/// Hold numbers by message, each message's by (resource, start): every check below reads a
/// contiguous run.
fn holds_by_message(problem: &Problem, holds: &[super::Hold]) -> Groups {
    let n = problem.traffic.messages.len();
    super::buffers::by_message(n, holds)
}

/// Message `m`'s holds on resource `r`, by start.
fn on<'a>(holds: &[super::Hold], by_msg: &'a Groups, m: usize, r: Resource) -> &'a [u32] {
    let run = by_msg.of(m);
    let lo = run.partition_point(|&i| holds[i as usize].resource() < r);
    let hi = run.partition_point(|&i| holds[i as usize].resource() <= r);
    &run[lo..hi]
}

/// Every hold is on its message's route.
fn check_routes(problem: &Problem, schedule: &Schedule, by_msg: &Groups) -> Result<(), Violation> {
    let holds = &schedule.holds;
    let mut route: Vec<Resource> = Vec::new();
    for m in 0..problem.traffic.messages.len() {
        route.clear();
        route.extend(problem.steps[m].iter().map(|s| s.resource()));
        route.sort_unstable();
        for &i in by_msg.of(m) {
            let h = &holds[i as usize];
            if route.binary_search(&h.resource()).is_err() {
                fail!(
                    "message {} holds {}, which is not on its route",
                    h.msg(),
                    h.resource()
                );
            }
        }
    }
    Ok(())
}

/// No resource held by more messages in a cycle than its capacity: each resource's holds swept
/// in time order.
fn check_capacity(problem: &Problem, schedule: &Schedule) -> Result<(), Violation> {
    let holds = &schedule.holds;
    let (by_res, groups) = super::occupancy::by_resource(holds, problem.network);
    let mut events: Vec<(u64, i64, usize)> = Vec::new();
    for &(r, lo, hi) in &groups {
        let hs = &by_res[lo..hi];
        let cap = problem.hardware.capacity(r) as i64;
        // One lane and holds by start: overlap-free when each starts after all before it end.
        if cap == 1 {
            let mut end = 0u64;
            let clear = hs.iter().all(|&i| {
                let h = &holds[i as usize];
                let ok = h.start() >= end;
                end = end.max(h.end());
                ok
            });
            if clear {
                continue;
            }
        }
        events.clear();
        for &i in hs {
            let h = &holds[i as usize];
            events.push((h.start(), 1, h.msg()));
            events.push((h.end(), -1, h.msg()));
        }
        // Ends before starts at the same cycle: holds are half-open.
        events.sort_unstable();
        let mut load = 0i64;
        for &(t, d, m) in &events {
            load += d;
            if load > cap {
                let others: Vec<usize> = hs
                    .iter()
                    .map(|&i| &holds[i as usize])
                    .filter(|h| h.start() <= t && t < h.end())
                    .map(|h| h.msg())
                    .collect();
                fail!("{r} is held by {load} messages at cycle {t} (capacity {cap}): messages {others:?} (last taken by {m})");
            }
        }
    }
    Ok(())
}

/// A message never overlaps itself on one resource.
fn check_no_self_overlap(schedule: &Schedule, by_msg: &Groups) -> Result<(), Violation> {
    let holds = &schedule.holds;
    for w in by_msg.all().windows(2) {
        let (a, b) = (&holds[w[0] as usize], &holds[w[1] as usize]);
        if a.msg() == b.msg() && a.resource() == b.resource() && b.start() < a.end() {
            fail!(
                "message {} holds {} twice at cycle {}",
                a.msg(),
                a.resource(),
                b.start()
            );
        }
    }
    Ok(())
}

/// Message `m`'s fragments carry its words along its route in order, and its recorded send,
/// release, arrival and deadline are what its holds say; `relaxed` says whether the schedule
/// lists its deadline as relaxed.
fn check_message(
    problem: &Problem,
    schedule: &Schedule,
    by_msg: &Groups,
    m: usize,
    relaxed: bool,
    (by_res, ranges): &mut (Vec<u32>, Vec<(usize, usize)>),
) -> Result<(), Violation> {
    let holds = &schedule.holds;
    let msg = &problem.traffic.messages[m];
    let hw = problem.hardware;
    let steps = &problem.steps[m];
    let run = by_msg.of(m);
    super::buffers::step_ranges(holds, run, steps, by_res, ranges);
    let list = |j: usize| &run[ranges[j].0..ranges[j].1];
    if msg.size == 0 {
        if (0..steps.len()).any(|j| !list(j).is_empty()) {
            fail!("message {m} has no words but holds resources");
        }
        return Ok(());
    }
    let frags = list(0).len();
    if frags == 0 {
        fail!("message {m} is never sent");
    }
    if hw.setup > 0 && frags > 1 {
        fail!("message {m} is sent in {frags} transfers, but with a set-up cost each message is one transfer");
    }
    for (j, step) in steps.iter().enumerate() {
        let l = list(j);
        if l.len() != frags {
            fail!(
                "message {m} has {frags} fragments at its source but {} on {}",
                l.len(),
                step.resource()
            );
        }
        let words: u64 = l
            .iter()
            .map(|&i| holds[i as usize].end() - holds[i as usize].start())
            .sum();
        if words != msg.size {
            fail!(
                "message {m} carries {words} of its {} words over {}",
                msg.size,
                step.resource()
            );
        }
        if let Some(p) = step.parent() {
            for (f, (&h, &ph)) in l.iter().zip(list(p)).enumerate() {
                let (h, ph) = (&holds[h as usize], &holds[ph as usize]);
                if h.end() - h.start() != ph.end() - ph.start() {
                    fail!(
                        "fragment {f} of message {m} holds {} for {} cycles but {} for {}",
                        ph.resource(),
                        ph.end() - ph.start(),
                        h.resource(),
                        h.end() - h.start()
                    );
                }
                if h.start() < ph.start() + hw.hop_latency {
                    fail!(
                        "fragment {f} of message {m} starts on {} at {} before it started on {} at {} (causality)",
                        h.resource(), h.start(), ph.resource(), ph.start()
                    );
                }
            }
        }
    }
    let first = holds[list(0)[0] as usize].start();
    if first < msg.release {
        fail!(
            "message {m} leaves at {first}, before its release at {}",
            msg.release
        );
    }
    if schedule.sent[m] != first {
        fail!(
            "message {m} is recorded as sent at {} but leaves at {first}",
            schedule.sent[m]
        );
    }
    let arrival = by_msg
        .of(m)
        .iter()
        .map(|&i| &holds[i as usize])
        .filter(|h| matches!(h.resource(), Resource::Eject(_)))
        .map(|h| h.end())
        .max()
        .unwrap_or(0);
    if arrival != schedule.arrival[m] {
        fail!(
            "message {m} is recorded as arriving at {} but its last word arrives at {arrival}",
            schedule.arrival[m]
        );
    }
    if arrival > schedule.deadline[m] {
        fail!(
            "message {m} arrives at {arrival}, after its deadline {}",
            schedule.deadline[m]
        );
    }
    let released = schedule.released[m];
    if released < msg.release || first < released {
        fail!(
            "message {m} is recorded as released at {released} (ideal {}) but leaves at {first}",
            msg.release
        );
    }
    let shifted = msg.deadline + (released - msg.release);
    if schedule.deadline[m] > shifted && !relaxed {
        fail!(
            "the deadline of message {m} moved from {shifted} to {} without being reported",
            schedule.deadline[m]
        );
    }
    // `relaxed` is complete: exactly the messages delivered after the program's deadline.
    if arrival > msg.deadline && !relaxed {
        fail!(
            "message {m} arrives at {arrival}, after its deadline {}, but is not listed as relaxed",
            msg.deadline
        );
    }
    if relaxed && arrival <= msg.deadline {
        fail!("message {m} is reported relaxed but meets its deadline");
    }
    Ok(())
}

/// The programs, run against this schedule's arrivals, send nothing later than the schedule
/// sends it, and delay each release exactly as far as they reach the send.
fn check_programs(
    problem: &Problem,
    schedule: &Schedule,
    by_msg: &Groups,
) -> Result<(), Violation> {
    let traffic = problem.traffic;
    let holds = &schedule.holds;
    let node_of = &problem.placement.node_of;
    let timing = program::run_with(traffic, |m, d, _| {
        let at_node = on(holds, by_msg, m, Resource::eject(node_of[d]))
            .iter()
            .map(|&i| holds[i as usize].end())
            .max();
        at_node.unwrap_or(schedule.arrival[m])
    })
    .map_err(|e| Violation(format!("the programs do not run against the schedule: {e}")))?;
    for m in 0..traffic.messages.len() {
        // A release is only delayed as far as the programs delay it.
        let due = timing.release[m].max(traffic.messages[m].release);
        if schedule.released.get(m) != Some(&due) {
            fail!(
                "message {m} is recorded as released at {:?}, but its sender reaches the send at {due}",
                schedule.released.get(m)
            );
        }
        if schedule.sent[m] < timing.release[m] {
            fail!(
                "message {m} leaves at {} but its sender only reaches the send at {}",
                schedule.sent[m],
                timing.release[m]
            );
        }
    }
    Ok(())
}
