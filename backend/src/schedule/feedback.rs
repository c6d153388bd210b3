//! Feedback from scheduling (Minsky §4.2.4 "Propagation of results", §6.2.2): when deadlines
//! cannot all be met, say which messages were late, by how much, on which links they waited and
//! which messages held those links meanwhile; move those deadlines (only those, only as far as
//! the schedule needs) and retime the programs so everything downstream follows.
//!
//! The schedulers try several orders and keep the one with the fewest late messages, then the
//! least total lateness (see `exact`); this module turns a schedule into that report.

use std::collections::HashMap;

use super::{Blame, Hold, Method, Problem, Relaxation, Resource, Schedule};

/// Builds the [`Schedule`] record from holds: arrivals, effective deadlines, relaxations.
pub(crate) fn assemble(
    problem: &Problem,
    method: Method,
    mut holds: Vec<Hold>,
    release: Vec<u64>,
    task_finish: Vec<u64>,
) -> Schedule {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    holds.sort_by_key(|h| (h.msg, h.start, h.resource));
    let mut sent = vec![u64::MAX; n];
    let mut arrival = vec![0u64; n];
    for h in &holds {
        if let Resource::Inject(_) = h.resource {
            sent[h.msg] = sent[h.msg].min(h.start);
        }
        if let Resource::Eject(_) = h.resource {
            arrival[h.msg] = arrival[h.msg].max(h.end);
        }
    }
    for m in 0..n {
        if sent[m] == u64::MAX {
            // Empty messages hold nothing: sent and delivered at release.
            sent[m] = release[m];
            arrival[m] = release[m];
        }
    }
    let by_resource = index(&holds);
    let mut relaxed = Vec::new();
    let mut deadline = Vec::with_capacity(n);
    for (m, msg) in traffic.messages.iter().enumerate() {
        // A message released late because a message upstream was late keeps its window: its
        // deadline moves with its release (retiming), and only what is late beyond that counts.
        // Every message delivered after its program deadline is listed (SPEC §4): either it
        // waited itself (blamed resources) or it only kept the window an upstream shift gave it.
        let upstream = release[m].saturating_sub(msg.release);
        let shifted = msg.deadline + upstream;
        if arrival[m] <= msg.deadline {
            deadline.push(shifted.max(msg.deadline));
            continue;
        }
        if arrival[m] <= shifted {
            deadline.push(shifted);
            relaxed.push(Relaxation {
                msg: m,
                deadline: msg.deadline,
                upstream,
                new_deadline: arrival[m],
                knock_on: true,
                blamed: Vec::new(),
            });
            continue;
        }
        deadline.push(arrival[m]);
        let blamed = blame(problem, &by_resource, &holds, m, release[m]);
        relaxed.push(Relaxation {
            msg: m,
            deadline: msg.deadline,
            upstream,
            new_deadline: arrival[m],
            knock_on: blamed.is_empty(),
            blamed,
        });
    }
    let makespan = task_finish
        .iter()
        .copied()
        .chain(arrival.iter().copied())
        .max()
        .unwrap_or(0);
    Schedule {
        method,
        hardware: problem.hardware,
        holds,
        released: release,
        sent,
        arrival,
        deadline,
        task_finish,
        makespan,
        relaxed,
        lp: None,
    }
}

fn index(holds: &[Hold]) -> HashMap<Resource, Vec<Hold>> {
    let mut map: HashMap<Resource, Vec<Hold>> = HashMap::new();
    for h in holds {
        map.entry(h.resource).or_default().push(*h);
    }
    for v in map.values_mut() {
        v.sort_by_key(|h| (h.start, h.msg));
    }
    map
}

/// Where message `m` waited: on each step of its route, the cycles between the moment its first
/// fragment could have entered (release, or the parent step's start plus switch latency) and the
/// moment it did, with the other messages holding that resource in those cycles.
fn blame(
    problem: &Problem,
    by_resource: &HashMap<Resource, Vec<Hold>>,
    holds: &[Hold],
    m: usize,
    release: u64,
) -> Vec<Blame> {
    let steps = &problem.steps[m];
    // `holds` is sorted by (msg, start): this message's holds are one contiguous run.
    let lo = holds.partition_point(|h| h.msg < m);
    let hi = holds.partition_point(|h| h.msg <= m);
    let mine = &holds[lo..hi];
    let first: Vec<Option<u64>> = steps
        .iter()
        .map(|st| {
            mine.iter()
                .filter(|h| h.resource == st.resource)
                .map(|h| h.start)
                .min()
        })
        .collect();
    let mut out = Vec::new();
    for (j, st) in steps.iter().enumerate() {
        let Some(start) = first[j] else { continue };
        let ready = match st.parent {
            Some(p) => first[p].unwrap_or(release) + problem.hardware.hop_latency,
            None => release,
        };
        if start <= ready {
            continue;
        }
        let holders: Vec<usize> = by_resource
            .get(&st.resource)
            .map(|v| {
                // `v` is sorted by start: only holds starting before `start` can overlap.
                let upto = v.partition_point(|h| h.start < start);
                let mut hs: Vec<usize> = v[..upto]
                    .iter()
                    .filter(|h| h.msg != m && h.end > ready)
                    .map(|h| h.msg)
                    .collect();
                hs.sort_unstable();
                hs.dedup();
                hs
            })
            .unwrap_or_default();
        out.push(Blame {
            resource: st.resource,
            waited: start - ready,
            holders,
        });
    }
    out
}

/// Links (and ports) most often responsible for relaxed deadlines, busiest first.
pub fn hot_resources(schedule: &Schedule) -> Vec<(Resource, u64)> {
    let mut waited: HashMap<Resource, u64> = HashMap::new();
    for r in &schedule.relaxed {
        for b in &r.blamed {
            *waited.entry(b.resource).or_default() += b.waited;
        }
    }
    let mut v: Vec<(Resource, u64)> = waited.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}
