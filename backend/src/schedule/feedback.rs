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
    holds: Vec<Hold>,
    release: Vec<u64>,
    task_finish: Vec<u64>,
) -> Schedule {
    let mut s = assemble_unblamed(problem, method, holds, release, task_finish);
    blame_relaxed(problem, &mut s);
    s
}

/// [`assemble`] without saying where late messages waited: enough to rank candidate schedules
/// (the count and lateness of relaxed deadlines); [`blame_relaxed`] completes the one kept.
pub(crate) fn assemble_unblamed(
    problem: &Problem,
    method: Method,
    mut holds: Vec<Hold>,
    release: Vec<u64>,
    task_finish: Vec<u64>,
) -> Schedule {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    // The keys are distinct (a fragment holds a resource once), so an unstable sort gives the
    // same order without a buffer the size of the holds.
    holds.sort_unstable_by_key(|h| (h.msg(), h.start(), h.resource()));
    // The schedule outlives the scheduler and a fragmented message overran the room reserved:
    // keep only what is used.
    holds.shrink_to_fit();
    let mut sent = vec![u64::MAX; n];
    let mut arrival = vec![0u64; n];
    for h in &holds {
        if let Resource::Inject(_) = h.resource() {
            sent[h.msg()] = sent[h.msg()].min(h.start());
        }
        if let Resource::Eject(_) = h.resource() {
            arrival[h.msg()] = arrival[h.msg()].max(h.end());
        }
    }
    for m in 0..n {
        if sent[m] == u64::MAX {
            // Empty messages hold nothing: sent and delivered at release.
            sent[m] = release[m];
            arrival[m] = release[m];
        }
    }
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
        relaxed.push(Relaxation {
            msg: m,
            deadline: msg.deadline,
            upstream,
            new_deadline: arrival[m],
            knock_on: false,
            blamed: Vec::new(),
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
        routes: None,
        optimum_bound: None,
        buffers: Default::default(),
    }
}

/// Fills in, for every relaxed deadline that is not only a knock-on of an upstream shift, the
/// resources the message waited on and who held them; one that waited nowhere is a knock-on.
pub(crate) fn blame_relaxed(problem: &Problem, s: &mut Schedule) {
    if s.relaxed.iter().all(|r| r.knock_on) {
        return;
    }
    // Blamed on the routes the schedule took.
    if let Some(routes) = s.routes.clone() {
        if let Ok(p) = problem.rerouted(&routes) {
            return blame_on(&p, s);
        }
    }
    blame_on(problem, s);
}

fn blame_on(problem: &Problem, s: &mut Schedule) {
    let by_resource = ByResource::new(&s.holds, problem.network);
    for r in s.relaxed.iter_mut().filter(|r| !r.knock_on) {
        r.blamed = blame(problem, &by_resource, &s.holds, r.msg, s.released[r.msg]);
        r.knock_on = r.blamed.is_empty();
    }
}

/// The most holders a [`Blame`] names: those that held the resource last.
pub const HOLDERS_KEPT: usize = 16;

/// Holds by resource, then start: built once, read only for the messages that were late.
struct ByResource {
    /// Hold numbers sorted by (resource, start, message).
    order: Vec<u32>,
    /// Each resource's run in `order`.
    runs: HashMap<Resource, (usize, usize)>,
    /// The longest hold: a hold starting this long before a cycle has ended by it.
    longest: u64,
}

impl ByResource {
    fn new(holds: &[Hold], network: &crate::topology::Network) -> Self {
        let (order, groups) = super::occupancy::by_resource(holds, network);
        let longest = holds.iter().map(|h| h.end() - h.start()).max().unwrap_or(0);
        let runs: HashMap<Resource, (usize, usize)> = groups
            .into_iter()
            .map(|(r, lo, hi)| (r, (lo, hi)))
            .collect();
        ByResource {
            order,
            runs,
            longest,
        }
    }

    /// Messages other than `m` holding `r` at some cycle of `[ready, start)`, sorted: the
    /// [`HOLDERS_KEPT`] that held it last before `m` got it, and whether there were more.
    fn holders(
        &self,
        holds: &[Hold],
        r: Resource,
        m: usize,
        ready: u64,
        start: u64,
    ) -> (Vec<usize>, bool) {
        let Some(&(lo, hi)) = self.runs.get(&r) else {
            return (Vec::new(), false);
        };
        let o = &self.order[lo..hi];
        // Only holds starting before `start` can overlap; of those, only the ones starting
        // within `longest` cycles before `ready` can still be held at `ready`.
        let upto = o.partition_point(|&i| holds[i as usize].start() < start);
        let from =
            o.partition_point(|&i| holds[i as usize].start().saturating_add(self.longest) <= ready);
        // Latest first, stopping past the kept number: a message queued behind a long backlog
        // (a writer far ahead of its reader) would otherwise list, and cost, all of it.
        let mut hs: Vec<usize> = Vec::new();
        for h in o[from.min(upto)..upto]
            .iter()
            .rev()
            .map(|&i| &holds[i as usize])
        {
            if h.msg() != m && h.end() > ready && !hs.contains(&h.msg()) {
                hs.push(h.msg());
                if hs.len() > HOLDERS_KEPT {
                    break;
                }
            }
        }
        let more = hs.len() > HOLDERS_KEPT;
        hs.truncate(HOLDERS_KEPT);
        hs.sort_unstable();
        (hs, more)
    }
}

/// Where message `m` waited: on each step of its route, the cycles between the moment its first
/// fragment could have entered (release, or the parent step's start plus switch latency) and the
/// moment it did, with the other messages holding that resource in those cycles.
fn blame(
    problem: &Problem,
    by_resource: &ByResource,
    holds: &[Hold],
    m: usize,
    release: u64,
) -> Vec<Blame> {
    let steps = &problem.steps[m];
    // `holds` is sorted by (msg, start): this message's holds are one contiguous run.
    let lo = holds.partition_point(|h| h.msg() < m);
    let hi = holds.partition_point(|h| h.msg() <= m);
    let mine = &holds[lo..hi];
    // This message's first start on each resource, looked up per step by binary search.
    let mut starts: Vec<(Resource, u64)> = mine.iter().map(|h| (h.resource(), h.start())).collect();
    starts.sort_unstable();
    let first: Vec<Option<u64>> = steps
        .iter()
        .map(|st| {
            let i = starts.partition_point(|&(r, _)| r < st.resource());
            starts
                .get(i)
                .filter(|&&(r, _)| r == st.resource())
                .map(|&(_, s)| s)
        })
        .collect();
    let mut out = Vec::new();
    for (j, st) in steps.iter().enumerate() {
        let Some(start) = first[j] else { continue };
        let ready = match st.parent() {
            Some(p) => first[p].unwrap_or(release) + problem.hardware.hop_latency,
            None => release,
        };
        if start <= ready {
            continue;
        }
        let (holders, more_holders) = by_resource.holders(holds, st.resource(), m, ready, start);
        out.push(Blame {
            resource: st.resource(),
            waited: start - ready,
            holders,
            more_holders,
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
