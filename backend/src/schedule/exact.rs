//! The exact, cycle-level scheduler: what Minsky §4.2.4 "Refining the Approach to Scheduling
//! Messages on Links" asks for. Instead of holding every link of a route for the whole
//! transmission (the LP's circuit assumption), a message is pipelined hop by hop: it may enter a
//! link as soon as that link is free and its head has crossed the previous one, and each link is
//! free again once the tail has passed. Messages stay contiguous unless fragmenting them meets a
//! deadline contiguity misses (or saves half the message's length): every extra fragment costs a
//! switch instruction, and the thesis warns against fragmenting short messages.
//!
//! Scheduling is execution-driven: the task programs run (Fig 4-3 rules) and each message is
//! placed, in order of actual release (then deadline), at the earliest cycles its route allows;
//! its arrival then lets the readers go on. So a late message delays exactly the work that depends
//! on it, and nothing is released before its sender could send it.
//!
//! Messages are placed within the switches' input buffers (SPEC §2, [`super::buffers`]): a hop
//! may start only so much later than the one before it as the waiting words fit the buffer of
//! the input between them; otherwise the hop before starts later, and in the end the message
//! waits in its sender's memory. With `--buffer 0` every message takes a clear path: hop `i`
//! `i × latency` cycles after its injection.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::buffers::Load;
use super::choice::{self, Minimal};
use super::feedback;
use super::occupancy::Occupancy;
use super::priority;
use super::program::{self, Executor};
use super::{Hold, Method, Problem, Schedule, ScheduleError, Step};
use crate::progress::Progress;
use crate::topology::NodeId;
use crate::traffic::{MsgId, Route, Routing};

/// Orders among messages released at the same cycle. Several are tried (within [`SEARCH_BUDGET`]); the schedule with the
/// fewest relaxed deadlines, then least total lateness, then shortest makespan, wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Priority {
    /// Longest chain of work after the message first ([`priority::critical_to_end`]): what a
    /// compile-time scheduler knows and a network interface queue does not (SPEC §2).
    Chain,
    /// Earliest deadline first.
    Deadline,
    /// Least slack first (deadline − size: the latest start that still meets the deadline).
    Slack,
    /// Longest route first (most links to find free at once), then deadline.
    Longest,
    /// In the order the port-aware ideal timing sends them (a contention-free matching of
    /// injection to ejection ports, SPEC §2), then deadline.
    Ports,
    /// By the cycle the port-aware ideal timing sends them rather than by release: a writer far
    /// ahead of its reader releases its messages long before its port can send them, and placed
    /// by release they would book the ports of the whole run before the messages due earlier.
    Paced,
}

/// How many route steps the search over orders may place in all: a large program is scheduled
/// in the first order only (the port order when there is one), so time stays linear in its
/// size; a small one tries every order.
pub const SEARCH_BUDGET: usize = 2_000_000;

/// Most route steps a program may have for its messages to choose among their minimal routes
/// when they would wait ([`choice`]): beyond it every message keeps the route it was given, so
/// time stays what it was on the largest programs.
pub const CHOICE_LARGEST: usize = 1_000_000;

/// Per message, the route placement chose instead of the given one (see [`choice`]).
struct Chosen {
    on: bool,
    paths: Vec<Option<Vec<NodeId>>>,
}

impl Chosen {
    fn new(problem: &Problem, routes: bool) -> Chosen {
        let hops: usize = problem.steps.iter().map(Vec::len).sum();
        Chosen {
            on: routes && problem.choose_routes && hops <= CHOICE_LARGEST,
            paths: Vec::new(),
        }
    }

    fn keep(&mut self, m: MsgId, path: Vec<NodeId>, n: usize) {
        if self.paths.is_empty() {
            self.paths = vec![None; n];
        }
        self.paths[m] = Some(path);
    }

    /// The routing the schedule used, when it differs from the given one.
    fn routing(self, given: &Routing) -> Option<Routing> {
        if self.paths.iter().all(Option::is_none) {
            return None;
        }
        let mut r = given.clone();
        for (m, p) in self.paths.into_iter().enumerate() {
            if let (Some(p), Some(slot)) = (p, r.routes.get_mut(m)) {
                *slot = Route::Path(p);
            }
        }
        Some(r)
    }
}

/// Schedules every message; see the module documentation.
pub fn schedule(problem: &Problem) -> Result<Schedule, ScheduleError> {
    schedule_with_progress(problem, &Progress::none())
}

/// [`schedule`], reporting the messages placed to `progress` and stopping with
/// [`ScheduleError::Interrupted`] when it is cancelled.
pub fn schedule_with_progress(
    problem: &Problem,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let mut best: Option<(Schedule, Rank)> = None;
    // Every order costs one placement of every step of every route.
    let hops: usize = problem.steps.iter().map(Vec::len).sum();
    let mut tried = 0usize;
    let chain = priority::critical_to_end(problem.traffic);
    let pred = priority::stream_predecessor(problem.traffic);
    // The makespan no order can beat: the search stops there. Computed only when more than
    // one order will be tried.
    let floor = if hops.saturating_mul(2) <= SEARCH_BUDGET {
        super::lower_bound(problem).0
    } else {
        0
    };
    // The port-aware ideal timing, made when an order that uses it is reached (a large program
    // is placed in the first order only, which does not).
    let mut ideal: Option<Option<Vec<u64>>> = None;
    // With finite buffers each order is tried on clear paths alone, then using the buffers: a
    // word that waits in a switch takes buffer room the messages placed after it may need more,
    // and greedy placement does not foresee that (an 8×8 torus all-to-all of one word per pair,
    // --latency 1: 115 cycles using 2-word buffers greedily, 90 on clear paths; Jacobi 64×64 × 6
    // placed at random: 4,302 against 4,178). A clear-path plan fits any buffer, and a program
    // too large for more than one run gets it.
    let waits: &[bool] = match problem.hardware.buffer {
        Some(b) if b > 0 => &[true, false],
        _ => &[false],
    };
    // Each order is tried on the given routes and then with route choice, which is kept only
    // when strictly better: choosing greedily, message by message, may block messages placed
    // later more than the given routes would (an 8x8 mesh all-to-all, --buffer 0 --latency 1:
    // 144 cycles with choice, 142 without; the 10x10 torus: 159 against 165).
    let choices: &[bool] = if problem.choose_routes {
        &[false, true]
    } else {
        &[false]
    };
    let orders = [
        Priority::Chain,
        Priority::Ports,
        Priority::Paced,
        Priority::Deadline,
        Priority::Slack,
        Priority::Longest,
    ]
    .into_iter()
    .flat_map(|p| waits.iter().map(move |&clear| (p, clear)))
    .flat_map(|(p, clear)| choices.iter().map(move |&routes| (p, clear, routes)));
    for (prio, clear, routes) in orders {
        if best.is_some() && tried.saturating_add(hops) > SEARCH_BUDGET {
            break;
        }
        if matches!(prio, Priority::Ports | Priority::Paced)
            && ideal.get_or_insert_with(|| ideal_starts(problem)).is_none()
        {
            continue;
        }
        tried = tried.saturating_add(hops);
        progress.stage("schedule (exact)", problem.traffic.messages.len() as u64);
        let order = Order {
            prio,
            ideal: ideal.as_ref().and_then(Option::as_deref),
            chain: &chain,
            pred: &pred,
            shift: None,
            clear,
            routes,
        };
        let s = schedule_with(problem, &order, progress)?;
        let key = rank(&s);
        if best.as_ref().is_none_or(|(_, k)| key < *k) {
            best = Some((s, key));
        }
        if key.0 <= floor && key.1 == 0 {
            break;
        }
    }
    let mut s = best
        .map(|(s, _)| s)
        .ok_or_else(|| ScheduleError::Input("nothing to schedule".into()))?;
    feedback::blame_relaxed(problem, &mut s);
    Ok(s)
}

/// Per message, the cycle the port-aware ideal timing starts sending it (SPEC §2), when the
/// program is run against its schedule and has one.
fn ideal_starts(problem: &Problem) -> Option<Vec<u64>> {
    if !program::is_driven(problem.traffic) {
        return None;
    }
    program::port_schedule(
        problem.traffic,
        &problem.placement.node_of,
        problem.hardware.ports,
    )
    .map(|(_, _, start)| start)
    .ok()
}

/// The first order alone (longest chain first, every message on a clear path on its given
/// route): the cheap plan the bufferless search ([`super::clear`]) starts beside and falls back
/// to.
pub(crate) fn schedule_first(
    problem: &Problem,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let chain = priority::critical_to_end(problem.traffic);
    let pred = priority::stream_predecessor(problem.traffic);
    let order = Order {
        prio: Priority::Chain,
        ideal: None,
        chain: &chain,
        pred: &pred,
        shift: None,
        clear: true,
        routes: false,
    };
    progress.stage("schedule (exact)", problem.traffic.messages.len() as u64);
    let mut s = schedule_with(problem, &order, progress)?;
    feedback::blame_relaxed(problem, &mut s);
    Ok(s)
}

/// How schedules are ranked: the makespan (what the program's user waits for, and what
/// `compare` sets beside the dynamic models), then the fewest relaxed deadlines, then the least
/// total lateness.
pub(crate) type Rank = (u64, usize, u64);

pub(crate) fn rank(s: &Schedule) -> Rank {
    let late: u64 = s
        .relaxed
        .iter()
        .map(|r| r.new_deadline.saturating_sub(r.deadline))
        .sum();
    (s.makespan, s.relaxed.len(), late)
}

/// The order in which released messages are placed.
pub(crate) struct Order<'a> {
    pub prio: Priority,
    /// Per message: the cycle the port-aware ideal timing starts sending it.
    pub ideal: Option<&'a [u64]>,
    /// Per message: [`priority::critical_to_end`].
    pub chain: &'a [u64],
    /// Per message: the message before it on its stream, placed first.
    pub pred: &'a [Option<MsgId>],
    /// Per message: cycles added to (or, negative, taken from) its release in the heap order
    /// only, never in when it may be sent: a message moved ahead is placed before messages
    /// released up to that much later (the improvement phase's lever, see `improve`).
    pub shift: Option<&'a [i64]>,
    /// Every message on a clear path, as if the switches had no buffers (a plan that fits any
    /// buffer; see `schedule_with_progress`).
    pub clear: bool,
    /// Messages that would wait may take another minimal route ([`choice`]), when the problem
    /// allows it ([`Problem::choose_routes`]).
    pub routes: bool,
}

/// Schedules every message in one given order, without blaming late messages (the improvement
/// phase tries many orders and blames only the one it keeps).
pub(crate) fn schedule_order(
    problem: &Problem,
    order: &Order,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    schedule_with(problem, order, progress)
}

/// Heap order: release first, then the priority's tie-breakers, then the message id.
type Key = (u64, u64, u64, MsgId);

fn key(problem: &Problem, order: &Order, m: MsgId, release: u64) -> Key {
    let msg = &problem.traffic.messages[m];
    let d = msg.deadline.max(release + msg.size);
    let ideal = order.ideal;
    let shifted = match order.shift.and_then(|s| s.get(m)) {
        Some(&x) if x < 0 => release.saturating_sub(x.unsigned_abs()),
        Some(&x) => release.saturating_add(x as u64),
        None => release,
    };
    let release = shifted;
    match order.prio {
        Priority::Chain => (
            release,
            u64::MAX - order.chain.get(m).copied().unwrap_or(0),
            d,
            m,
        ),
        Priority::Ports => (
            release,
            ideal.and_then(|i| i.get(m).copied()).unwrap_or(u64::MAX),
            d,
            m,
        ),
        Priority::Paced => (
            release.max(ideal.and_then(|i| i.get(m).copied()).unwrap_or(0)),
            d,
            0,
            m,
        ),
        Priority::Deadline => (release, d, 0, m),
        Priority::Slack => (release, d - msg.size, d, m),
        Priority::Longest => (release, u64::MAX - problem.steps[m].len() as u64, d, m),
    }
}

/// Schedules in order `prio`; with `clear`, every message on a clear path (as if the switches
/// had no buffers), which fits any buffer.
fn schedule_with(
    problem: &Problem,
    order: &Order,
    progress: &Progress,
) -> Result<Schedule, ScheduleError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    let mut occ = Occupancy::new(problem.hardware);
    let mut load = Load::new(if order.clear {
        super::Hardware {
            buffer: Some(0),
            ..problem.hardware
        }
    } else {
        problem.hardware
    });
    // One hold per step of every message (exact keeps messages whole): sized once, as millions
    // of holds grown by doubling would take up to twice the room.
    let mut holds: Vec<Hold> = Vec::with_capacity(problem.steps.iter().map(Vec::len).sum());
    let mut heap: BinaryHeap<Reverse<(Key, u64)>> = BinaryHeap::new();
    let mut release = vec![0u64; n];
    let mut placed_count = 0u64;
    let mut chosen = Chosen::new(problem, order.routes);

    if program::is_driven(traffic) {
        let mut ex = Executor::new(traffic);
        // Messages of one stream are placed in order (SPEC §2): one whose predecessor is not
        // placed yet waits here, under its predecessor, until it is.
        let mut placed_yet = vec![false; n];
        let mut held: Vec<Option<(Key, u64)>> = vec![None; n];
        loop {
            for (m, at) in ex.run() {
                let r = at.max(traffic.messages[m].release);
                heap.push(Reverse((key(problem, order, m, r), r)));
            }
            let Some(Reverse((k, r))) = heap.pop() else {
                break;
            };
            let m = k.3;
            if let Some(p) = order.pred.get(m).copied().flatten() {
                if !placed_yet[p] {
                    held[p] = Some((k, r));
                    continue;
                }
            }
            placed_yet[m] = true;
            if let Some(next) = held[m].take() {
                heap.push(Reverse(next));
            }
            release[m] = r;
            placed_count += 1;
            if placed_count.is_multiple_of(4096) {
                progress.advance(4096);
                if progress.is_cancelled() {
                    return Err(ScheduleError::Interrupted);
                }
            }
            let placed = place(problem, &mut occ, &mut load, m, r, &mut chosen)?;
            for &d in &traffic.messages[m].dst {
                let node = problem.placement.node_of[d];
                ex.deliver(m, d, arrival_at(&placed, node));
            }
            holds.extend(placed);
        }
        let timing = ex.finish()?;
        let mut s =
            feedback::assemble_unblamed(problem, Method::Exact, holds, release, timing.task_finish);
        s.routes = chosen.routing(problem.routing);
        return Ok(s);
    }

    // Fixed windows (a tasks file): phases one after another, each shifted past the previous.
    let mut shift = 0u64;
    let phases = traffic.messages.iter().map(|m| m.phase).max().unwrap_or(0);
    for p in 0..=phases {
        let in_phase: Vec<MsgId> = (0..n).filter(|&m| traffic.messages[m].phase == p).collect();
        if in_phase.is_empty() {
            continue;
        }
        let first = 0;
        for &m in &in_phase {
            let r = traffic.messages[m].release + shift;
            heap.push(Reverse((key(problem, order, m, r), r)));
        }
        let mut end = 0;
        while let Some(Reverse(((_, _, _, m), r))) = heap.pop() {
            release[m] = r;
            placed_count += 1;
            if placed_count.is_multiple_of(4096) {
                progress.advance(4096);
                if progress.is_cancelled() {
                    return Err(ScheduleError::Interrupted);
                }
            }
            let placed = place(problem, &mut occ, &mut load, m, r, &mut chosen)?;
            end = placed.iter().map(|h| h.end()).max().unwrap_or(r).max(end);
            holds.extend(placed);
        }
        // The next phase starts when this one is done (`synchronize`).
        let _ = first;
        let next_first = (0..n)
            .filter(|&m| traffic.messages[m].phase > p)
            .map(|m| traffic.messages[m].release)
            .min();
        shift = next_first.map_or(shift, |f| end.saturating_sub(f));
    }
    let finish = static_finish(problem, &holds, &release);
    let mut s = feedback::assemble_unblamed(problem, Method::Exact, holds, release, finish);
    s.routes = chosen.routing(problem.routing);
    Ok(s)
}

/// Without programs, a task is done when its last message has left or arrived.
pub(crate) fn static_finish(problem: &Problem, holds: &[Hold], release: &[u64]) -> Vec<u64> {
    let traffic = problem.traffic;
    let mut finish = vec![0u64; traffic.tasks.len()];
    let mut arrival = vec![0u64; traffic.messages.len()];
    for h in holds {
        arrival[h.msg()] = arrival[h.msg()].max(h.end());
    }
    for m in &traffic.messages {
        if let Some(f) = finish.get_mut(m.src) {
            *f = (*f).max(release.get(m.id).copied().unwrap_or(0));
        }
        for &d in &m.dst {
            if let Some(f) = finish.get_mut(d) {
                *f = (*f).max(arrival[m.id]);
            }
        }
    }
    finish
}

/// When the last word of a message's holds reaches `node`'s processor.
pub(crate) fn arrival_at(holds: &[Hold], node: usize) -> u64 {
    holds
        .iter()
        .filter(|h| h.resource() == super::Resource::eject(node))
        .map(|h| h.end())
        .max()
        .unwrap_or(0)
}

/// Places message `m`, released at `release`, at the earliest cycles its route and the switch
/// buffers allow, and records its holds in `occ` and its waiting words in `load`. When `chosen`
/// allows and the message would wait, another of its minimal routes that delivers it earlier is
/// taken instead (and kept in `chosen`).
fn place(
    problem: &Problem,
    occ: &mut Occupancy,
    load: &mut Load,
    m: MsgId,
    release: u64,
    chosen_routes: &mut Chosen,
) -> Result<Vec<Hold>, ScheduleError> {
    let mut steps: &[Step] = &problem.steps[m];
    let size = problem.traffic.messages[m].size;
    let h = problem.hardware.hop_latency;
    if size == 0 {
        return Ok(Vec::new());
    }
    let mut contiguous = place_contiguous(occ, load, steps, release, size, h);
    let mut contiguous_arrival = last_end(&contiguous, steps, size);
    let own;
    if chosen_routes.on {
        if let Some(c) = choose(problem, occ, load, m, release, contiguous_arrival) {
            contiguous_arrival = c.arrival(size);
            contiguous = c.placed;
            own = c.steps;
            steps = &own;
            chosen_routes.keep(m, c.path, problem.traffic.messages.len());
        }
    }
    let deadline = problem.traffic.messages[m].deadline;
    let mut chosen: Vec<(usize, usize, u64, u64)> = contiguous
        .iter()
        .enumerate()
        .map(|(j, &(lane, s))| (j, lane, s, s + size))
        .collect();
    // Word-by-word placement can only gain when the contiguous fragment waited somewhere:
    // without a wait it arrives as early as any placement can.
    let waited = steps.iter().zip(&contiguous).any(|(st, &(_, s))| {
        let ready = match st.parent() {
            Some(p) => contiguous[p].1 + h,
            None => release,
        };
        s > ready
    });
    let mut recorded = false;
    // With a set-up cost each fragment would pay it again: messages stay whole.
    if size > 1 && waited && problem.hardware.setup == 0 {
        // Words pay when they arrive earlier and either meet a deadline the whole message
        // misses or save half its length: the latest arrival that pays.
        let pays_by = if contiguous_arrival > deadline {
            contiguous_arrival - 1
        } else {
            contiguous_arrival.saturating_sub(size.div_ceil(2))
        };
        // The words' waits are recorded as a trial and kept only when they fit the buffers.
        let clear = load.hardware().buffer == Some(0);
        if let Some(frags) = place_words(occ, steps, release, size, h, pays_by, clear) {
            if record_waits(load, steps, &frags, h, true) {
                chosen = frags;
                recorded = true;
            }
        }
    }
    if !recorded {
        record_waits(load, steps, &chosen, h, false);
    }
    let mut out = Vec::with_capacity(chosen.len());
    for (j, lane, s, e) in chosen {
        occ.take(steps[j].resource(), lane, s, e - s, m);
        out.push(Hold::new(m, steps[j].resource(), s, e)?);
    }
    Ok(out)
}

/// Another minimal route for message `m` that delivers it before `arrival` (its arrival on the
/// route it was given), when one exists: only for a point-to-point message that would wait, on
/// a route that has alternatives, and with buffers that either hold any number of words or none
/// (a finite buffer's waits are left to the given route).
fn choose(
    problem: &Problem,
    occ: &Occupancy,
    load: &Load,
    m: MsgId,
    release: u64,
    arrival: u64,
) -> Option<choice::Choice> {
    let msg = &problem.traffic.messages[m];
    let steps = &problem.steps[m];
    let h = problem.hardware.hop_latency;
    // Inject, the links, eject: every hop `h` cycles after the one before when nothing waits.
    let unhindered = release + (steps.len() as u64 - 1) * h + msg.size;
    if arrival <= unhindered || msg.dst.len() != 1 {
        return None;
    }
    let Some(Route::Path(_)) = problem.routing.routes.get(m) else {
        return None;
    };
    let node = |t: usize| problem.placement.node_of.get(t).copied();
    let (src, dst) = (node(msg.src)?, node(*msg.dst.first()?)?);
    let clear = match load.hardware().buffer {
        None => false,
        Some(0) => true,
        Some(_) => return None,
    };
    let dag = Minimal::between(problem.network, src, dst)?;
    let c = if clear {
        let hops = (dag.hops() as u64 + 1) * h;
        let before = arrival.checked_sub(hops + msg.size)?;
        choice::earliest_clear(occ, &dag, release, msg.size, h, before)?
    } else {
        choice::earliest_waiting(occ, &dag, release, msg.size, h)?
    };
    (c.arrival(msg.size) < arrival).then_some(c)
}

fn last_end(placed: &[(usize, u64)], steps: &[Step], size: u64) -> u64 {
    steps
        .iter()
        .zip(placed)
        .filter(|(st, _)| matches!(st.resource(), super::Resource::Eject(_)))
        .map(|(_, &(_, s))| s + size)
        .max()
        .unwrap_or(0)
}

/// Records in `load` the words of `frags` (per fragment, one `(step, lane, start, end)` per
/// step, in step order) that wait at switch inputs. With `trial`, checks that every input they
/// wait at stays within its buffer, and takes them back and answers false when one does not.
fn record_waits(
    load: &mut Load,
    steps: &[Step],
    frags: &[(usize, usize, u64, u64)],
    h: u64,
    trial: bool,
) -> bool {
    if !load.bounded() || steps.is_empty() {
        return true;
    }
    let mut waits: Vec<(super::Resource, u64, u64, u64)> = Vec::new();
    let mut latest: Vec<Option<u64>> = vec![None; steps.len()];
    for frag in frags.chunks(steps.len()) {
        latest.iter_mut().for_each(|l| *l = None);
        for (j, st) in steps.iter().enumerate() {
            if let Some(p) = st.parent() {
                let s = frag[j].2;
                latest[p] = Some(latest[p].map_or(s, |l: u64| l.max(s)));
            }
        }
        for (j, st) in steps.iter().enumerate() {
            if let Some(c) = latest[j] {
                let a = frag[j].2 + h;
                let d = c.saturating_sub(a);
                if d > 0 {
                    waits.push((st.resource(), a, frag[j].3 - frag[j].2, d));
                }
            }
        }
    }
    for &(r, a, len, d) in &waits {
        load.add(r, a, len, d, false);
    }
    if !trial {
        return true;
    }
    let hw = load.hardware();
    let fits = waits.iter().all(|&(r, a, len, d)| {
        super::buffers::budget(&hw, r).is_none_or(|cap| load.peak(r, a, a + d + len - 1) <= cap)
    });
    if !fits {
        for &(r, a, len, d) in &waits {
            load.add(r, a, len, d, true);
        }
    }
    fits
}

/// One contiguous fragment: per step, the earliest free window no earlier than the parent's start
/// (plus the switch latency). Greedy is optimal here: an earlier start upstream never shrinks
/// the choices downstream.
///
/// With finite buffers a step may start only as late after its parent as the parent's input
/// buffer lets the words wait. When the earliest free window is later than that, the parent
/// must start later: its earliest start is raised to the child's window less the longest wait
/// that fits, and placement resumes from the parent (which in turn may push its own parent, and
/// in the end the injection: the message waits in its sender's memory). Starts only grow, and
/// past the last hold everything is free and nothing waits, so this ends; it jumps from window to
/// window rather than cycle by cycle.
fn place_contiguous(
    occ: &Occupancy,
    load: &Load,
    steps: &[Step],
    release: u64,
    size: u64,
    h: u64,
) -> Vec<(usize, u64)> {
    let k = steps.len();
    let mut placed: Vec<(usize, u64)> = Vec::with_capacity(k);
    if !load.bounded() {
        for st in steps {
            let t = match st.parent() {
                Some(p) => placed[p].1 + h,
                None => release,
            };
            let (s, lane) = occ.earliest(st.resource(), t, size);
            placed.push((lane, s));
        }
        return placed;
    }
    if load.hardware().buffer == Some(0) {
        return clear_path(occ, steps, release, size, h);
    }
    // Per step: the earliest start allowed, and the longest wait its children impose so far.
    let mut lb = vec![release; k];
    let mut wait = vec![0u64; k];
    let mut j = 0;
    while j < k {
        let st = &steps[j];
        let ready = match st.parent() {
            Some(p) => placed[p].1 + h,
            None => release,
        };
        let (s, lane) = occ.earliest(st.resource(), ready.max(lb[j]), size);
        if let Some(p) = st.parent() {
            let d = s - ready;
            if d > wait[p] {
                let input = steps[p].resource();
                if !load.fits(input, ready, size, d) {
                    let ok = load.longest_fitting(input, ready, size, d);
                    lb[p] = s - h - ok;
                    placed.truncate(p);
                    wait[p..].iter_mut().for_each(|w| *w = 0);
                    j = p;
                    continue;
                }
                wait[p] = d;
            }
        }
        placed.push((lane, s));
        j += 1;
    }
    placed
}

/// [`place_contiguous`] where no input may keep a word waiting: every hop starts exactly `h`
/// cycles after its parent, so the message is one start `t` at its injection and step `j` runs
/// from `t + depth_j × h`. The earliest such `t` is found by raising it to each step's earliest
/// window in turn, round and round the route, until every step has been found free at the same
/// `t`. A raise keeps its place on the route, where walking back through the parents to the
/// injection would place every step before it again, at each raise: under contention a route of
/// a hundred hops is raised at many of them.
fn clear_path(
    occ: &Occupancy,
    steps: &[Step],
    release: u64,
    size: u64,
    h: u64,
) -> Vec<(usize, u64)> {
    let k = steps.len();
    let mut depth = vec![0u64; k];
    for j in 0..k {
        if let Some(p) = steps[j].parent() {
            depth[j] = depth[p] + 1;
        }
    }
    let at: Vec<Option<(usize, usize)>> = steps
        .iter()
        .map(|st| occ.lanes_index(st.resource()))
        .collect();
    let mut placed = vec![(0usize, 0u64); k];
    let mut t = release;
    // Steps found free at `t` since its last raise, and the step to look at next.
    let (mut clean, mut j) = (0usize, 0usize);
    while clean < k {
        let want = t + depth[j] * h;
        let (s, lane) = occ.earliest_in_lanes(at[j], want, size);
        // No lane is free for `size` cycles from any cycle in `want..s`: no start below
        // `s − depth_j × h` fits this step. At the raised start this step is free on `lane`,
        // the first lane free then, as looking again would find.
        if s > want {
            t = s - depth[j] * h;
            clean = 0;
        }
        placed[j] = (lane, s);
        clean += 1;
        j = (j + 1) % k;
    }
    placed
}

/// Word by word: each word takes, on every step, the first free cycle after it crossed the parent
/// and after the previous word used this step. Runs of words that move in lock step on every step
/// (same lane) become one fragment. Returns `(step, lane, start, end)` per fragment per step, or
/// `None` as soon as the last word's arrival must be later than `pays_by`
/// (each later word reaches a processor at least a cycle after the one before it): under
/// contention most messages cannot gain by splitting, and this finds out within a word or two
/// instead of placing all of them. With `clear` (no input may keep a word waiting), also `None`
/// as soon as a word would wait at a switch: its fragment would not fit the buffers.
fn place_words(
    occ: &Occupancy,
    steps: &[Step],
    release: u64,
    size: u64,
    h: u64,
    pays_by: u64,
    clear: bool,
) -> Option<Vec<(usize, usize, u64, u64)>> {
    let k = steps.len();
    let at: Vec<Option<(usize, usize)>> = steps
        .iter()
        .map(|st| occ.lanes_index(st.resource()))
        .collect();
    // times[w][j] = (cycle, lane)
    let mut times: Vec<Vec<(u64, usize)>> = Vec::with_capacity(size as usize);
    for w in 0..size as usize {
        let mut row: Vec<(u64, usize)> = Vec::with_capacity(k);
        for (j, st) in steps.iter().enumerate() {
            let mut t = match st.parent() {
                Some(p) => row[p].0 + h,
                None => release,
            };
            if w > 0 {
                t = t.max(times[w - 1][j].0 + 1);
            }
            let (s, lane) = occ.earliest_in_lanes(at[j], t, 1);
            if clear && st.parent().is_some_and(|p| s > row[p].0 + h) {
                return None;
            }
            if matches!(st.resource(), super::Resource::Eject(_)) && s + (size - w as u64) > pays_by
            {
                return None;
            }
            row.push((s, lane));
        }
        times.push(row);
    }
    let mut frags = Vec::new();
    let mut w0 = 0usize;
    for w in 1..=times.len() {
        let breaks = w == times.len()
            || (0..k).any(|j| {
                times[w][j].0 != times[w - 1][j].0 + 1 || times[w][j].1 != times[w - 1][j].1
            });
        if breaks {
            let len = (w - w0) as u64;
            for (j, &(s, lane)) in times[w0].iter().enumerate() {
                frags.push((j, lane, s, s + len));
            }
            w0 = w;
        }
    }
    Some(frags)
}
