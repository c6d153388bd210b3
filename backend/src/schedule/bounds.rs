//! Lower bounds that bind (SPEC §2): no valid schedule beats them, and each says what sets it.
//!
//! - **Makespan**: the critical path of the programs under the port model (each read waits until
//!   the reader's ejection port can have drained every word the task has read so far, counted from
//!   their releases), and, per port and per link, the one-machine bound of Jackson: for the
//!   messages released at or after some cycle `r`, `r + words / capacity + the least compute their
//!   readers still have to do`. Fragments may be preempted, so the preemptive bound is the right one.
//! - **Period** of a repeating phase: the resource bound (per iteration: a task's compute, a port's
//!   or link's words), the **recurrence bound** — the maximum cycle ratio of the iteration graph
//!   with its loop-carried edges (Σ time around a cycle / Σ iteration distance; Howard's policy
//!   iteration) — and the port recurrence: in a steady state the task of a communicating group whose
//!   sends start earliest must still drain the words it reads from the group, and do the compute
//!   after, before its next iteration's sends.
//!
//! All three work on the unrolled program the language produced: the iteration graph is folded
//! back from it when every iteration of a task has the same shape (otherwise only the resource
//! bound is given for that phase: weaker, still true).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::program::{drive, Executor};
use super::{Problem, Resource, ScheduleError};
use crate::topology::NodeId;
use crate::traffic::{MsgId, Op, PhaseId, TaskId, Traffic};

/// A bound and what sets it, for people (`lower_bound_by`, `period_bound_by`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    pub value: u64,
    pub by: String,
}

impl Bound {
    fn raise(&mut self, value: u64, by: impl FnOnce() -> String) {
        if value > self.value {
            self.value = value;
            self.by = by();
        }
    }
}

/// What the bounds may assume about the machine and the plan.
#[derive(Clone, Copy, Debug)]
pub struct Setting<'a> {
    pub traffic: &'a Traffic,
    /// Node of every task; `None` before placement (every task has its own node).
    pub node_of: Option<&'a [NodeId]>,
    /// Injection and ejection ports per node.
    pub ports: u32,
    /// After routing: per message and reader, the switch latency it pays at the least.
    pub latency: Option<&'a Latencies>,
}

impl<'a> Setting<'a> {
    /// Before placement: every task on a node of its own with `ports` ports.
    pub fn unplaced(traffic: &'a Traffic, ports: u32) -> Self {
        Setting {
            traffic,
            node_of: None,
            ports,
            latency: None,
        }
    }

    fn node(&self, t: TaskId) -> usize {
        self.node_of.and_then(|n| n.get(t).copied()).unwrap_or(t)
    }

    /// The fewest switch-latency cycles between message `m` leaving its sender and its first
    /// word reaching reader `t`.
    fn latency(&self, m: MsgId, t: TaskId) -> u64 {
        self.latency.map_or(0, |l| l.to(self.traffic, m, t))
    }

    fn local(&self, m: &crate::traffic::Message) -> bool {
        self.node_of.is_some() && m.dst.iter().all(|&d| self.node(d) == self.node(m.src))
    }
}

/// Per message and reader, the switch latency its words pay at the least (SPEC §2 "Bounds hold
/// under every setting"): every resource after the injection starts `hop_latency` cycles after
/// the one before it (the verifier's causality rule), so a reader whose node is `d` links down
/// the message's path or multicast tree sees its first word `(d + 1) × hop_latency` cycles after
/// it left at the earliest — its own depth, not the tree's size nor its deepest branch.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    /// Message `m`'s readers (in `dst` order) take slots `first[m]..first[m + 1]`.
    first: Vec<usize>,
    cycles: Vec<u64>,
}

impl Latencies {
    /// The latencies of a placed and routed problem.
    pub fn of(problem: &Problem) -> Latencies {
        let lat = problem.hardware.hop_latency;
        let mut first = Vec::with_capacity(problem.traffic.messages.len() + 1);
        first.push(0);
        let mut cycles = Vec::new();
        let mut depth: Vec<u64> = Vec::new();
        for (m, msg) in problem.traffic.messages.iter().enumerate() {
            let steps = problem.steps.get(m).map_or(&[][..], Vec::as_slice);
            depth.clear();
            for st in steps {
                let d = st.parent().and_then(|p| depth.get(p)).map_or(0, |&d| d + 1);
                depth.push(d);
            }
            for &t in &msg.dst {
                let node = problem.placement.node_of.get(t).copied();
                let d = steps
                    .iter()
                    .zip(&depth)
                    .find(|(st, _)| Some(st.resource()) == node.map(Resource::eject))
                    .map_or(0, |(_, &d)| d);
                cycles.push(d.saturating_mul(lat));
            }
            first.push(cycles.len());
        }
        Latencies { first, cycles }
    }

    fn to(&self, traffic: &Traffic, m: MsgId, t: TaskId) -> u64 {
        let Some(msg) = traffic.messages.get(m) else {
            return 0;
        };
        let base = self.first.get(m).copied().unwrap_or(0);
        msg.dst
            .iter()
            .position(|&d| d == t)
            .and_then(|j| self.cycles.get(base + j))
            .copied()
            .unwrap_or(0)
    }
}

/// How many recent reads of a task the port term of the critical path looks back over (a subset
/// of the reads gives a weaker, still true bound; this keeps the pass linear).
const WINDOW: usize = 64;

/// Edges the drain recurrence visits at most per phase, over all its anchors (about a tenth of a
/// second): beyond it the tasks left unanchored add nothing, and the bound stays true.
const DRAIN_BUDGET: usize = 20_000_000;

/// The lower-bound timing: releases and the critical path under the port model.
pub struct LowerTiming {
    pub release: Vec<u64>,
    pub critical_path: u64,
}

/// Runs the programs with every message arriving as early as it possibly can: `size` cycles
/// (plus switch latency) after its earliest release, and a run of reads starting no earlier
/// than the reader's ejection ports can have drained every word of its recent reads.
pub fn lower_timing(s: &Setting) -> Result<LowerTiming, ScheduleError> {
    let traffic = s.traffic;
    let cap = s.ports.max(1) as u64;
    // Per task, by its number (the executor runs the tasks of the program).
    let mut windows: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); traffic.tasks.len()];
    let local: Vec<bool> = traffic.messages.iter().map(|m| s.local(m)).collect();
    let bound = Box::new(|t: TaskId, read: &[(MsgId, u64)], start: u64| {
        if t >= windows.len() {
            windows.resize_with(t + 1, VecDeque::new);
        }
        let w = &mut windows[t];
        for &(m, r) in read {
            let msg = &traffic.messages[m];
            if !local[m] && msg.size > 0 {
                w.push_back((r + s.latency(m, t), msg.size));
                if w.len() > WINDOW {
                    w.pop_front();
                }
            }
        }
        start.max(jackson(w.iter().map(|&(r, p)| (r, p, 0)), cap))
    });
    let ex = Executor::with_read_bound(traffic, bound);
    let timing = drive(ex, traffic, |m, t, at| {
        at + traffic.messages[m].size + s.latency(m, t)
    })?;
    let mut critical = timing.makespan();
    for (msg, r) in traffic.messages.iter().zip(&timing.release) {
        for &t in &msg.dst {
            critical = critical.max(r + msg.size + s.latency(msg.id, t));
        }
    }
    Ok(LowerTiming {
        release: timing.release,
        critical_path: critical,
    })
}

/// Jackson's preemptive one-machine bound for jobs `(head, body, tail)` on `cap` identical
/// machines: for every head `r`, `r + ⌈Σ bodies with head ≥ r / cap⌉ + min tail among them`.
fn jackson(jobs: impl Iterator<Item = (u64, u64, u64)>, cap: u64) -> u64 {
    let mut jobs: Vec<(u64, u64, u64)> = jobs.collect();
    jackson_in(&mut jobs, cap)
}

/// [`jackson`] on jobs it may reorder in place.
fn jackson_in(jobs: &mut [(u64, u64, u64)], cap: u64) -> u64 {
    jobs.sort_unstable_by_key(|j| std::cmp::Reverse(j.0));
    let (mut sum, mut tail, mut best) = (0u64, u64::MAX, 0u64);
    for &(r, p, q) in jobs.iter() {
        sum = sum.saturating_add(p);
        tail = tail.min(q);
        best = best.max(r.saturating_add(sum.div_ceil(cap)).saturating_add(tail));
    }
    best
}

/// Per message and reader (in `dst` order, flat: message `m`'s readers from `first[m]`), a lower
/// bound on the time from the message's arrival at that reader to the end of the program: the
/// longest chain of work the reader still has after reading it — its compute, and each message
/// it then sends (at least its size in cycles) followed by that message's own chain. Waits,
/// port sharing and latency only add to it. A program whose ops do not form a DAG (it could not
/// run) gets 0 for the messages on a cycle.
pub(crate) fn chain_tails(traffic: &Traffic) -> (Vec<usize>, Vec<u64>) {
    let tasks = traffic.tasks.len();
    let nmsg = traffic.messages.len();
    let mut base = vec![0usize; tasks + 1];
    for (t, task) in traffic.tasks.iter().enumerate() {
        base[t + 1] = base[t] + task.ops.len();
    }
    let n = base[tasks];
    // Where each message is sent and read (op nodes numbered task by task).
    let mut sender = vec![usize::MAX; nmsg];
    // Message `m`'s reading ops, in task order, are `read_ops[first_read[m]..first_read[m + 1]]`
    // (counted, then filled: no list per message).
    let mut first_read = vec![0usize; nmsg + 1];
    for task in &traffic.tasks {
        for op in &task.ops {
            if let Op::Recv(m) = *op {
                if m < nmsg {
                    first_read[m + 1] += 1;
                }
            }
        }
    }
    for m in 0..nmsg {
        first_read[m + 1] += first_read[m];
    }
    let mut fill = first_read.clone();
    let mut read_ops = vec![(0, 0); first_read[nmsg]];
    let mut op_of = Vec::with_capacity(n);
    for (t, task) in traffic.tasks.iter().enumerate() {
        for (i, op) in task.ops.iter().enumerate() {
            let node = base[t] + i;
            match *op {
                Op::Send(m) if m < nmsg => sender[m] = node,
                Op::Recv(m) if m < nmsg => {
                    read_ops[fill[m]] = (t, node);
                    fill[m] += 1;
                }
                _ => {}
            }
            op_of.push((*op, i > 0, i + 1 < task.ops.len()));
        }
    }
    drop(fill);
    let readers = |m: MsgId| -> &[(TaskId, usize)] { &read_ops[first_read[m]..first_read[m + 1]] };
    // Successors of a node: the next op of its task, and for a send every reading op.
    let mut left: Vec<u32> = (0..n)
        .map(|v| {
            let (op, _, next) = op_of[v];
            let reads = match op {
                Op::Send(m) if m < nmsg => readers(m).len(),
                _ => 0,
            };
            (next as usize + reads) as u32
        })
        .collect();
    let mut f = vec![0u64; n];
    let mut ready: Vec<usize> = (0..n).filter(|&v| left[v] == 0).collect();
    while let Some(v) = ready.pop() {
        let (op, prev, next) = op_of[v];
        let after = if next { f[v + 1] } else { 0 };
        f[v] = match op {
            Op::Compute(c) => after.saturating_add(c),
            Op::Send(m) if m < nmsg => {
                let size = traffic.messages[m].size;
                readers(m)
                    .iter()
                    .map(|&(_, r)| size.saturating_add(f[r]))
                    .fold(after, u64::max)
            }
            _ => after,
        };
        // Predecessors: the op before in the task, and for a read its message's send.
        if prev {
            left[v - 1] -= 1;
            if left[v - 1] == 0 {
                ready.push(v - 1);
            }
        }
        if let Op::Recv(m) = op {
            if let Some(&s) = sender.get(m).filter(|&&s| s != usize::MAX) {
                left[s] -= 1;
                if left[s] == 0 {
                    ready.push(s);
                }
            }
        }
    }
    let mut first = Vec::with_capacity(nmsg + 1);
    first.push(0);
    let mut tails = Vec::new();
    for (m, msg) in traffic.messages.iter().enumerate() {
        for &d in &msg.dst {
            let tail = readers(m)
                .iter()
                .filter(|&&(t, r)| t == d && left[r] == 0)
                .map(|&(_, r)| f[r])
                .max()
                .unwrap_or(0);
            tails.push(tail);
        }
        first.push(tails.len());
    }
    (first, tails)
}

/// The makespan lower bound of a placed and routed problem: the port-model critical path, and
/// Jackson's bound on every port and link.
///
/// On every resource a message holds, its words cannot start before the message's earliest
/// release plus the switch latency of the resources before it (the lead-in: a link `d` hops
/// from the source is reached `d × hop_latency` cycles after the injection at the earliest),
/// and after its last word there the readers below it still wait one switch latency per
/// resource down to their ejection, then do the work their programs have left (the lead-out).
/// Jackson's preemptive bound over these heads, bodies and tails is the busiest resource's
/// words plus the shortest lead-in and lead-out among the messages that carry them (SPEC §2
/// "Bounds hold under every setting": multicast, latency, set-up, ports).
pub fn makespan(problem: &Problem) -> Result<Bound, ScheduleError> {
    let traffic = problem.traffic;
    let latencies = Latencies::of(problem);
    let setting = Setting {
        traffic,
        node_of: Some(&problem.placement.node_of),
        ports: problem.hardware.ports,
        latency: Some(&latencies),
    };
    let lower = lower_timing(&setting)?;
    let mut bound = Bound {
        value: lower.critical_path,
        by: format!(
            "critical path under the port model ({} cycles)",
            lower.critical_path
        ),
    };
    // Per message and reader: the work the reader still has after it arrives.
    let (first, reader_tail) = chain_tails(traffic);
    let lat = problem.hardware.hop_latency;
    let node_of = &problem.placement.node_of;
    // Every resource's jobs in one table, counted first and filled in message order (a step of
    // every message: a hundred million in a large plan), then read in resource order.
    let index = super::occupancy::ResourceIndex::new(problem.network);
    let mut first_job = vec![0usize; index.len() + 1];
    for (m, msg) in traffic.messages.iter().enumerate() {
        if msg.size == 0 {
            continue;
        }
        for st in &problem.steps[m] {
            if let Some(i) = index.of(st.resource()) {
                first_job[i + 1] += 1;
            }
        }
    }
    for i in 0..index.len() {
        first_job[i + 1] += first_job[i];
    }
    let mut jobs = vec![(0u64, 0u64, 0u64); first_job[index.len()]];
    let mut fill = first_job.clone();
    let mut depth: Vec<u64> = Vec::new();
    let mut tail: Vec<u64> = Vec::new();
    // Bufferless switches: per message, the depth and lead-out of every step.
    let mut leads: Vec<(MsgId, Vec<u64>, Vec<u64>)> = Vec::new();
    for (m, msg) in traffic.messages.iter().enumerate() {
        if msg.size == 0 {
            continue;
        }
        let steps = &problem.steps[m];
        depth.clear();
        for st in steps {
            let d = st.parent().and_then(|p| depth.get(p)).map_or(0, |&d| d + 1);
            depth.push(d);
        }
        // Lead-out of every step: at an ejection, the most work left to a reader on that
        // node; above it, the most over the steps below plus one switch latency each.
        tail.clear();
        tail.resize(steps.len(), 0);
        for (i, st) in steps.iter().enumerate().rev() {
            if let Resource::Eject(x) = st.resource() {
                let left = msg
                    .dst
                    .iter()
                    .enumerate()
                    .filter(|&(_, &d)| node_of.get(d) == Some(&(x as usize)))
                    .filter_map(|(j, _)| reader_tail.get(first[m] + j))
                    .copied()
                    .max()
                    .unwrap_or(0);
                tail[i] = tail[i].max(left);
            }
            if let Some(p) = st.parent() {
                let t = tail[i].saturating_add(lat);
                if let Some(up) = tail.get_mut(p) {
                    *up = (*up).max(t);
                }
            }
        }
        for (i, st) in steps.iter().enumerate() {
            let head = lower.release[m].saturating_add(depth[i].saturating_mul(lat));
            if let Some(r) = index.of(st.resource()) {
                jobs[fill[r]] = (head, msg.size, tail[i]);
                fill[r] += 1;
            }
        }
        if problem.hardware.buffer == Some(0) {
            leads.push((m, depth.clone(), tail.clone()));
        }
    }
    if problem.hardware.buffer == Some(0) {
        let v = bufferless_clique(problem, &lower.release, &leads);
        bound.raise(v.0, || v.1);
    }
    let mut held: Vec<(Resource, usize)> = (0..index.len())
        .filter(|&i| first_job[i + 1] > first_job[i])
        .map(|i| (index.resource(i), i))
        .collect();
    held.sort_unstable();
    for (r, i) in held {
        let js = &mut jobs[first_job[i]..first_job[i + 1]];
        let words: u64 = js.iter().map(|j| j.1).sum();
        let v = jackson_in(js, problem.hardware.capacity(r) as u64);
        bound.raise(v, || {
            format!(
                "{} ({words} words, from their releases, with the least lead-in and lead-out)",
                describe(r)
            )
        });
    }
    Ok(bound)
}

/// Pairs of messages the bufferless clique term compares at most (a smaller clique is still a
/// bound).
const CLIQUE_BUDGET: usize = 4_000_000;

/// Bufferless switches (`buffer` 0, SPEC §2; Minsky's clear path, the TDM NoCs): a word never
/// waits in a switch, so a fragment that leaves its source at `t` holds the resource `d` hops
/// down its path or tree at exactly `t + d × hop_latency`, for its whole length — it holds its
/// whole path at once. Shift each message's time by the depth `δ` of one of its resources: two
/// messages that share a resource at the same shifted depth (`depth − δ` equal on both) then
/// hold it in the same shifted cycles, so they cannot overlap in shifted time at all. A set of
/// messages that pairwise do so (a clique; one resource shared by all is the link bound) needs
/// its summed words in one shifted timeline: Jackson's bound with each message's release plus
/// `δ × hop_latency` as head and its lead-out from that resource as tail. The cliques are grown
/// greedily from the busiest exclusive resources.
fn bufferless_clique(
    problem: &Problem,
    release: &[u64],
    leads: &[(MsgId, Vec<u64>, Vec<u64>)],
) -> (u64, String) {
    let traffic = problem.traffic;
    let hw = problem.hardware;
    let exclusive = |r: Resource| hw.capacity(r) == 1;
    // Per message (index into `leads`), its exclusive resources with their depths.
    let held: Vec<Vec<(Resource, u64)>> = leads
        .iter()
        .map(|(m, depth, _)| {
            let mut v: Vec<(Resource, u64)> = problem.steps[*m]
                .iter()
                .zip(depth)
                .filter(|(st, _)| exclusive(st.resource()))
                .map(|(st, &d)| (st.resource(), d))
                .collect();
            v.sort_unstable();
            v
        })
        .collect();
    let mut on: BTreeMap<Resource, Vec<usize>> = BTreeMap::new();
    for (i, h) in held.iter().enumerate() {
        for &(r, _) in h {
            on.entry(r).or_default().push(i);
        }
    }
    let size = |i: usize| traffic.messages[leads[i].0].size;
    let mut busiest: Vec<(u64, Resource)> = on
        .iter()
        .map(|(&r, ms)| (ms.iter().map(|&i| size(i)).sum(), r))
        .collect();
    busiest.sort_unstable_by(|a, b| b.cmp(a));
    let depth_on = |i: usize, r: Resource| -> Option<u64> {
        held[i]
            .binary_search_by(|&(x, _)| x.cmp(&r))
            .ok()
            .map(|k| held[i][k].1)
    };
    let lat = hw.hop_latency as i128;
    let mut best = (0u64, String::new());
    let mut spent = 0usize;
    for &(_, r0) in busiest.iter().take(8) {
        // Members with their shift δ (as a signed depth).
        let mut clique: Vec<(usize, i128)> = on[&r0]
            .iter()
            .map(|&i| (i, depth_on(i, r0).unwrap_or(0) as i128))
            .collect();
        let members: Vec<usize> = clique.iter().map(|&(i, _)| i).collect();
        let candidates = neighbours(&members, &held, &on, size);
        for x in candidates {
            if spent > CLIQUE_BUDGET {
                break;
            }
            // The shift x must take to meet the first member, then every member at it.
            let mut shift: Option<i128> = None;
            let mut fits = true;
            for &(m, dm) in &clique {
                spent += 1;
                let meets = held[x]
                    .iter()
                    .filter_map(|&(r, dx)| depth_on(m, r).map(|d| dx as i128 - (d as i128 - dm)));
                let ok = match shift {
                    None => {
                        let first = meets.min();
                        shift = first;
                        first.is_some()
                    }
                    // Without a switch latency every shift meets, but x must still share a
                    // resource with the member: a message it never meets may overlap it.
                    Some(sx) => {
                        let mut meets = meets;
                        if lat == 0 {
                            meets.next().is_some()
                        } else {
                            meets.any(|s| s == sx)
                        }
                    }
                };
                if !ok {
                    fits = false;
                    break;
                }
            }
            if let (true, Some(sx)) = (fits, shift) {
                clique.push((x, sx));
            }
        }
        // In shifted time a member starts no earlier than its release plus δ switch latencies,
        // and after its shifted end every step j of it still ends (δ − depth_j) latencies
        // earlier and leaves its lead-out: the best of these is its tail (signed: δ may lie
        // beyond its deepest step).
        let mut jobs: Vec<(i128, i128, i128)> = clique
            .iter()
            .map(|&(i, d)| {
                let (m, depth, tail) = &leads[i];
                let q = depth
                    .iter()
                    .zip(tail)
                    .map(|(&x, &q)| q as i128 - (d - x as i128) * lat)
                    .max()
                    .unwrap_or(0);
                (release[*m] as i128 + d * lat, size(i) as i128, q)
            })
            .collect();
        jobs.sort_unstable_by_key(|j| std::cmp::Reverse(j.0));
        let (mut sum, mut tail, mut v) = (0i128, i128::MAX, 0i128);
        for (r, p, q) in jobs {
            sum += p;
            tail = tail.min(q);
            v = v.max(r + sum + tail);
        }
        let v = u64::try_from(v).unwrap_or(0);
        if v > best.0 {
            let words: u64 = clique.iter().map(|&(i, _)| size(i)).sum();
            best = (
                v,
                format!(
                    "bufferless switches: {} messages that pairwise share a resource in the same \
                     cycles, grown from {} ({words} words)",
                    clique.len(),
                    describe(r0)
                ),
            );
        }
    }
    best
}

/// The messages outside `members` that share a resource with one of them, the largest first
/// (ties by index): the candidates a bufferless clique grows by. Each resource's holders are
/// listed once and each message taken once, so this costs the members' resources plus their
/// holders — linear in the program — where listing every member's neighbours into a set costs
/// their product (members × holders per resource), quadratic in the iterations of a periodic
/// program whose busiest port every iteration uses.
fn neighbours(
    members: &[usize],
    held: &[Vec<(Resource, u64)>],
    on: &BTreeMap<Resource, Vec<usize>>,
    size: impl Fn(usize) -> u64,
) -> Vec<usize> {
    let mut taken = vec![false; held.len()];
    for &i in members {
        taken[i] = true;
    }
    let mut listed: BTreeSet<Resource> = BTreeSet::new();
    let mut candidates: Vec<(std::cmp::Reverse<u64>, usize)> = Vec::new();
    for &i in members {
        for &(r, _) in &held[i] {
            if !listed.insert(r) {
                continue;
            }
            for &j in on.get(&r).map_or(&[][..], Vec::as_slice) {
                if !std::mem::replace(&mut taken[j], true) {
                    candidates.push((std::cmp::Reverse(size(j)), j));
                }
            }
        }
    }
    candidates.sort_unstable();
    candidates.into_iter().map(|(_, j)| j).collect()
}

fn describe(r: Resource) -> String {
    match r {
        Resource::Link { from, to } => format!("link {from}->{to}"),
        Resource::Inject(x) => format!("injection port of node {x}"),
        Resource::Eject(x) => format!("ejection port of node {x}"),
    }
}

/// The period bound of one repeating phase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhasePeriod {
    pub phase: PhaseId,
    pub iterations: u64,
    pub bound: Bound,
}

/// Period bounds of every phase that repeats at least twice, in phase order. `words` gives,
/// after routing, every resource's words per phase (links and shared node ports); before it,
/// ports are counted per task.
pub fn periods(
    s: &Setting,
    words: Option<&BTreeMap<(PhaseId, Resource), u64>>,
) -> Vec<PhasePeriod> {
    let traffic = s.traffic;
    // An inconsistent Traffic document (a program naming a message that does not exist, or
    // one sent by another task) has no period to bound; the scheduler reports what is wrong.
    let consistent = traffic.tasks.iter().all(|t| {
        t.ops.iter().all(|op| match *op {
            Op::Send(m) => traffic.messages.get(m).is_some_and(|x| x.src == t.id),
            Op::Recv(m) => traffic
                .messages
                .get(m)
                .is_some_and(|x| x.dst.contains(&t.id)),
            _ => true,
        })
    });
    if !consistent {
        return Vec::new();
    }
    let cap = s.ports.max(1) as u64;
    let mut iters: BTreeMap<PhaseId, u64> = BTreeMap::new();
    for m in &traffic.messages {
        let e = iters.entry(m.phase).or_default();
        *e = (*e).max(m.iteration + 1);
    }
    let phase_of = phases_of_ops(traffic);
    let mut out = Vec::new();
    for (&phase, &n) in iters.iter().filter(|(_, &n)| n >= 2) {
        let pname = traffic
            .phases
            .get(phase)
            .map_or(phase.to_string(), |p| p.name.clone());
        let mut b = Bound::default();
        // Resources per iteration, per task (by id, so in task order): compute cycles, and
        // the words through its injection and ejection ports (`None`: no message at all).
        let tasks = traffic.tasks.len();
        let mut compute: Vec<Option<u64>> = vec![None; tasks];
        let mut inject: Vec<Option<u64>> = vec![None; tasks];
        let mut eject: Vec<Option<u64>> = vec![None; tasks];
        let add = |v: &mut Option<u64>, x: u64| *v = Some(v.unwrap_or(0) + x);
        for t in &traffic.tasks {
            let Some(id) = (t.id < tasks).then_some(t.id) else {
                continue;
            };
            for (i, op) in t.ops.iter().enumerate() {
                if phase_of[t.id][i] != phase {
                    continue;
                }
                match *op {
                    Op::Compute(c) => add(&mut compute[id], c),
                    // A message id out of range (an inconsistent Traffic document) adds
                    // nothing; the scheduler reports it.
                    Op::Send(m) => {
                        if let Some(msg) = traffic.messages.get(m).filter(|x| !s.local(x)) {
                            add(&mut inject[id], msg.size)
                        }
                    }
                    Op::Recv(m) => {
                        if let Some(msg) = traffic.messages.get(m).filter(|x| !s.local(x)) {
                            add(&mut eject[id], msg.size)
                        }
                    }
                    _ => {}
                }
            }
        }
        let name = |t: TaskId| traffic.tasks.get(t).map_or("?", |x| x.name.as_str());
        // The period is measured on message completions: a task that sends and receives
        // nothing in the phase runs beside the pattern, and its compute shows in the makespan.
        for (t, c) in compute.iter().enumerate() {
            let Some(c) = *c else { continue };
            if inject[t].is_none() && eject[t].is_none() {
                continue;
            }
            b.raise(c / n, || {
                format!(
                    "compute of task {} ({} cycles per iteration)",
                    name(t),
                    c / n
                )
            });
        }
        for (what, words) in [("injection", &inject), ("ejection", &eject)] {
            for (t, w) in words.iter().enumerate() {
                let Some(w) = *w else { continue };
                let v = w.div_ceil(n * cap);
                b.raise(v, || {
                    format!("{what} port of task {} ({v} words per iteration)", name(t))
                });
            }
        }
        if let Some(words) = words {
            // `Resource` orders links first: the range starts at the least link of the phase.
            let least = Resource::Link { from: 0, to: 0 };
            for (&(p, r), &w) in words.range((phase, least)..) {
                if p != phase {
                    break;
                }
                let c = match r {
                    Resource::Link { .. } => 1,
                    _ => cap,
                };
                let v = w.div_ceil(n * c);
                b.raise(v, || format!("{} ({v} words per iteration)", describe(r)));
            }
        }
        if let Some(folded) = Folded::build(s, phase, &phase_of) {
            let (v, why) = folded.recurrence();
            b.raise(v, || why);
            let (v, why) = folded.port_recurrence(cap);
            b.raise(v, || why);
            let (v, why) = folded.drain_recurrence(cap, DRAIN_BUDGET);
            b.raise(v, || why);
        }
        if b.value == 0 {
            b.by = "nothing: no compute or message inside `iterate`".into();
        }
        b.by = format!("{} in phase {pname}", b.by);
        out.push(PhasePeriod {
            phase,
            iterations: n,
            bound: b,
        });
    }
    out
}

/// The phase of every op of every task (a `synchronize` belongs to the phase it starts).
fn phases_of_ops(traffic: &Traffic) -> Vec<Vec<PhaseId>> {
    traffic
        .tasks
        .iter()
        .map(|t| {
            let mut p = 0;
            t.ops
                .iter()
                .map(|op| {
                    if let Op::Sync(q) = *op {
                        p = q;
                    }
                    p
                })
                .collect()
        })
        .collect()
}

/// An op of an iteration body: (task, offset in its body).
type OpNode = (TaskId, usize);

/// One iteration of a phase, folded back from the unrolled program: every op of a task's
/// iteration body is a node `(task, offset)`; edges carry a time and an iteration distance.
struct Folded<'a> {
    traffic: &'a Traffic,
    /// Per task taking part: its body (ops of its first iteration).
    bodies: BTreeMap<TaskId, Vec<Op>>,
    /// Message edges: (sender node, reader node) → (words + latency, largest distance, words),
    /// the least time and words over the iterations.
    messages: BTreeMap<(OpNode, OpNode), (u64, u64, u64)>,
}

impl<'a> Folded<'a> {
    fn build(s: &Setting<'a>, phase: PhaseId, phase_of: &[Vec<PhaseId>]) -> Option<Folded<'a>> {
        let traffic = s.traffic;
        let mut bodies = BTreeMap::new();
        // Per message: where it is sent and read, as (task, offset, iteration).
        const UNSENT: (TaskId, usize, u64) = (usize::MAX, 0, 0);
        let mut sent: Vec<(TaskId, usize, u64)> = vec![UNSENT; traffic.messages.len()];
        let mut read: Vec<(MsgId, (TaskId, usize, u64))> = Vec::new();
        // Two ops are alike when they do the same thing with the same size to the same peers.
        let alike = |a: Op, b: Op| -> bool {
            match (a, b) {
                (Op::Compute(x), Op::Compute(y)) => x == y,
                (Op::Sync(x), Op::Sync(y)) => x == y,
                (Op::Send(x), Op::Send(y)) => {
                    let (x, y) = (&traffic.messages[x], &traffic.messages[y]);
                    x.size == y.size && x.dst == y.dst
                }
                (Op::Recv(x), Op::Recv(y)) => {
                    let (x, y) = (&traffic.messages[x], &traffic.messages[y]);
                    x.size == y.size && x.src == y.src
                }
                _ => false,
            }
        };
        let mut iters: Vec<(u64, usize)> = Vec::new();
        for t in &traffic.tasks {
            let its = t.op_iterations();
            // The phase's ops by iteration (stable: each iteration's ops in program order).
            iters.clear();
            iters.extend(
                its.iter()
                    .enumerate()
                    .filter(|&(i, _)| phase_of[t.id][i] == phase)
                    .filter_map(|(i, it)| it.map(|k| (k, i))),
            );
            iters.sort_by_key(|&(k, _)| k);
            let groups: Vec<&[(u64, usize)]> = iters.chunk_by(|a, b| a.0 == b.0).collect();
            if groups.len() < 2 {
                continue;
            }
            let first = groups[0];
            for ops in &groups {
                if ops.len() != first.len()
                    || ops
                        .iter()
                        .zip(first.iter())
                        .any(|(&(_, i), &(_, f))| !alike(t.ops[i], t.ops[f]))
                {
                    return None;
                }
                for (off, &(k, i)) in ops.iter().enumerate() {
                    match t.ops[i] {
                        Op::Send(m) => sent[m] = (t.id, off, k),
                        Op::Recv(m) => read.push((m, (t.id, off, k))),
                        _ => {}
                    }
                }
            }
            let body: Vec<Op> = first.iter().map(|&(_, i)| t.ops[i]).collect();
            // As for the resource bound: a task without messages runs beside the pattern.
            if body
                .iter()
                .any(|op| matches!(op, Op::Send(_) | Op::Recv(_)))
            {
                bodies.insert(t.id, body);
            }
        }
        // Message edges, merged per (sender op, reader op): hashed while merging, then kept
        // ordered so everything downstream runs in the same order every time.
        let mut merged: HashMap<(OpNode, OpNode), (u64, u64, u64)> = HashMap::new();
        for (m, (rt, roff, rk)) in read {
            let (st, soff, sk) = sent[m];
            if st == UNSENT.0 {
                continue;
            }
            if rk < sk {
                return None;
            }
            let size = traffic.messages[m].size;
            let w = size + s.latency(m, rt);
            let e = merged
                .entry(((st, soff), (rt, roff)))
                .or_insert((w, rk - sk, size));
            e.0 = e.0.min(w);
            e.1 = e.1.max(rk - sk);
            e.2 = e.2.min(size);
        }
        let messages: BTreeMap<(OpNode, OpNode), (u64, u64, u64)> = merged.into_iter().collect();
        if bodies.is_empty() {
            return None;
        }
        Some(Folded {
            traffic,
            bodies,
            messages,
        })
    }

    fn name(&self, t: TaskId) -> &str {
        self.traffic.tasks.get(t).map_or("?", |x| x.name.as_str())
    }

    /// The maximum cycle ratio of the iteration graph (Howard's policy iteration), rounded up,
    /// and the cycle that sets it.
    fn recurrence(&self) -> (u64, String) {
        // Nodes: (task, offset) in body order; node value = when the op completes.
        let mut index: BTreeMap<(TaskId, usize), usize> = BTreeMap::new();
        for (&t, body) in &self.bodies {
            for off in 0..body.len() {
                let n = index.len();
                index.insert((t, off), n);
            }
        }
        let dur = |op: &Op| match *op {
            Op::Compute(c) => c,
            _ => 0,
        };
        let mut edges: Vec<Edge> = Vec::new();
        for (&t, body) in &self.bodies {
            for off in 0..body.len() {
                let (next, d) = if off + 1 < body.len() {
                    (off + 1, 0)
                } else {
                    (0, 1)
                };
                edges.push(Edge {
                    from: index[&(t, off)],
                    to: index[&(t, next)],
                    w: dur(&body[next]),
                    d,
                    msg: false,
                });
            }
        }
        for (&(a, b), &(w, d, _)) in &self.messages {
            if let (Some(&from), Some(&to)) = (index.get(&a), index.get(&b)) {
                edges.push(Edge {
                    from,
                    to,
                    w,
                    d,
                    msg: true,
                });
            }
        }
        let names: Vec<(TaskId, usize)> = index.keys().copied().collect();
        match max_cycle_ratio(index.len(), &edges) {
            Some((w, d, cycle)) if d > 0 && w > 0 => {
                let v = w.div_ceil(d);
                let mut tasks: Vec<&str> = Vec::new();
                for &e in &cycle {
                    let n = self.name(names[edges[e].from].0);
                    if tasks.last() != Some(&n) {
                        tasks.push(n);
                    }
                }
                if tasks.len() > 1 && tasks.first() == tasks.last() {
                    tasks.pop();
                }
                let msgs = cycle.iter().filter(|&&e| edges[e].msg).count();
                let what = if msgs == 0 {
                    format!("task {}'s own loop", tasks.first().copied().unwrap_or("?"))
                } else if tasks.len() > 6 {
                    format!(
                        "a cycle through {} tasks ({} → … → {})",
                        tasks.len(),
                        tasks[0],
                        tasks[tasks.len() - 1]
                    )
                } else {
                    format!("the cycle {}", tasks.join(" → "))
                };
                (
                    v,
                    format!("recurrence: {what}, {w} cycles over {d} iteration(s)"),
                )
            }
            _ => (0, String::new()),
        }
    }

    /// The port recurrence of every strongly connected group of communicating tasks: in a
    /// periodic schedule, take the task `t` of the group whose first send to the group comes
    /// earliest in the iteration. What `t` reads from the group between that send and its next
    /// iteration's was sent no earlier, so `t`'s ejection ports must drain it, and `t` must do the
    /// compute in between, within one period. The bound is the least of these over the tasks of
    /// the group that can be that earliest one.
    fn port_recurrence(&self, cap: u64) -> (u64, String) {
        let tasks: Vec<TaskId> = self.bodies.keys().copied().collect();
        let pos: BTreeMap<TaskId, usize> = tasks.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        let mut g = petgraph::graph::DiGraph::<TaskId, ()>::new();
        let nodes: Vec<_> = tasks.iter().map(|&t| g.add_node(t)).collect();
        let mut dist: BTreeMap<(TaskId, usize), u64> = BTreeMap::new();
        let mut pairs = BTreeSet::new();
        for (&((st, _), (rt, roff)), &(_, d, _)) in &self.messages {
            if let (Some(&a), Some(&b)) = (pos.get(&st), pos.get(&rt)) {
                if st != rt && pairs.insert((a, b)) {
                    g.add_edge(nodes[a], nodes[b], ());
                }
            }
            let e = dist.entry((rt, roff)).or_insert(d);
            *e = (*e).max(d);
        }
        let mut best = (0u64, String::new());
        for scc in petgraph::algo::tarjan_scc(&g) {
            if scc.len() < 2 {
                continue;
            }
            let group: BTreeSet<TaskId> = scc.iter().map(|&n| g[n]).collect();
            let mut least: Option<(u64, TaskId)> = None;
            for &t in &group {
                let body = &self.bodies[&t];
                let sends_to_group = |op: &Op| match *op {
                    Op::Send(m) => self.traffic.messages[m]
                        .dst
                        .iter()
                        .any(|d| group.contains(d)),
                    _ => false,
                };
                let Some(f) = body.iter().position(sends_to_group) else {
                    continue;
                };
                let mut time = 0u64;
                let mut words = 0u64;
                let mut possible = true;
                for (step, off) in (f..body.len()).chain(0..f).enumerate() {
                    let next_iter = u64::from(step >= body.len() - f);
                    match body[off] {
                        Op::Compute(c) => time += c,
                        Op::Recv(m) => {
                            let msg = &self.traffic.messages[m];
                            if !group.contains(&msg.src) || msg.size == 0 {
                                continue;
                            }
                            let d = dist.get(&(t, off)).copied().unwrap_or(u64::MAX);
                            if d == u64::MAX || d > next_iter {
                                continue; // sent in an earlier iteration: no constraint
                            }
                            if next_iter - d >= 1 {
                                possible = false; // t cannot be the earliest
                                break;
                            }
                            words += msg.size;
                            time = time.max(words.div_ceil(cap));
                        }
                        _ => {}
                    }
                }
                if possible && least.is_none_or(|(v, _)| time < v) {
                    least = Some((time, t));
                }
            }
            if let Some((v, t)) = least {
                if v > best.0 {
                    best = (
                        v,
                        format!(
                            "port recurrence of a group of {} tasks: each must drain what it reads from the group and compute before its next sends (least: task {}, {v} cycles)",
                            group.len(),
                            self.name(t)
                        ),
                    );
                }
            }
        }
        best
    }
    /// The drain recurrence: from a task's first send of one iteration to the same send of the
    /// next, along everything that send sets off. A longest path over two iterations of the
    /// folded graph, anchored at that send, in which a run of reads also waits for the reader's
    /// ejection ports to drain every message it has read since the anchor, each no earlier than
    /// its send plus its switch latency to that reader (Jackson's bound, as the critical path
    /// under the port model). Only messages whose sends follow the anchor count, so every task
    /// gives a true bound and the largest is kept. A producer multicasting a frame that five
    /// consumers each answer with a summary cannot send the next frame before the five
    /// summaries drained through its one ejection port: more than the slowest single cycle.
    /// `budget` caps the edges visited over all anchors (a subset of anchors is still a bound).
    fn drain_recurrence(&self, cap: u64, budget: usize) -> (u64, String) {
        let mut index: BTreeMap<OpNode, usize> = BTreeMap::new();
        let mut names: Vec<OpNode> = Vec::new();
        for (&t, body) in &self.bodies {
            for off in 0..body.len() {
                index.insert((t, off), names.len());
                names.push((t, off));
            }
        }
        let n = names.len();
        // Edges out of every node: (to, time, distance, words if a message).
        let mut out: Vec<Vec<DrainEdge>> = vec![Vec::new(); n];
        for (&t, body) in &self.bodies {
            for off in 0..body.len() {
                let (next, d) = if off + 1 < body.len() {
                    (off + 1, 0)
                } else {
                    (0, 1)
                };
                let w = match body[next] {
                    Op::Compute(c) => c,
                    _ => 0,
                };
                out[index[&(t, off)]].push((index[&(t, next)], w, d, None));
            }
        }
        for (&(a, b), &(w, d, size)) in &self.messages {
            if let (Some(&from), Some(&to)) = (index.get(&a), index.get(&b)) {
                if d <= 1 {
                    out[from].push((to, w, d, Some(size)));
                }
            }
        }
        // A topological order of the edges within one iteration (a cycle there would be a
        // program that cannot run: no bound from it).
        let mut indeg = vec![0usize; n];
        for es in &out {
            for &(to, _, d, _) in es {
                if d == 0 {
                    indeg[to] += 1;
                }
            }
        }
        let mut order: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut i = 0;
        while i < order.len() {
            let v = order[i];
            i += 1;
            for &(to, _, d, _) in &out[v] {
                if d == 0 {
                    indeg[to] -= 1;
                    if indeg[to] == 0 {
                        order.push(to);
                    }
                }
            }
        }
        if order.len() < n {
            return (0, String::new());
        }
        let edges: usize = out.iter().map(Vec::len).sum::<usize>() + n;
        // Anchors: every task's first send, the tasks that read the most words first.
        let mut read_words: BTreeMap<TaskId, u64> = BTreeMap::new();
        for (&(_, (rt, _)), &(_, _, size)) in &self.messages {
            *read_words.entry(rt).or_default() += size;
        }
        let mut anchors: Vec<(u64, TaskId, usize)> = self
            .bodies
            .iter()
            .filter_map(|(&t, body)| {
                let f = body.iter().position(|op| matches!(op, Op::Send(_)))?;
                Some((read_words.get(&t).copied().unwrap_or(0), t, f))
            })
            .collect();
        anchors.sort_by_key(|&(w, t, _)| (std::cmp::Reverse(w), t));
        let mut best = (0u64, String::new());
        let mut spent = 0usize;
        let mut val: Vec<Option<u64>> = vec![None; 2 * n];
        let mut pending: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 2 * n];
        let mut drained: BTreeMap<TaskId, Vec<(u64, u64, u64)>> = BTreeMap::new();
        for (_, t, f) in anchors {
            if spent.saturating_add(2 * edges) > budget {
                break;
            }
            spent += 2 * edges;
            val.iter_mut().for_each(|v| *v = None);
            pending.iter_mut().for_each(Vec::clear);
            drained.clear();
            let source = index[&(t, f)];
            val[source] = Some(0);
            for layer in 0..2 {
                for &v in &order {
                    let at = layer * n + v;
                    let task = names[v].0;
                    // Most nodes have nothing pending: look before moving the list out.
                    if !pending[at].is_empty() {
                        let jobs = std::mem::take(&mut pending[at]);
                        let mine = drained.entry(task).or_default();
                        mine.extend(jobs.iter().map(|&(h, p)| (h, p, 0)));
                        let j = jackson(mine.iter().copied(), cap);
                        val[at] = Some(val[at].map_or(j, |x| x.max(j)));
                    }
                    let Some(x) = val[at] else { continue };
                    if layer == 1 && v == source {
                        continue;
                    }
                    for &(to, w, d, size) in &out[v] {
                        let l = layer + d as usize;
                        if l > 1 {
                            continue;
                        }
                        let slot = l * n + to;
                        let y = x.saturating_add(w);
                        val[slot] = Some(val[slot].map_or(y, |z| z.max(y)));
                        if let Some(p) = size.filter(|&p| p > 0) {
                            pending[slot].push((x.saturating_add(w - p), p));
                        }
                    }
                }
            }
            if let Some(v) = val[n + source] {
                if v > best.0 {
                    best = (
                        v,
                        format!(
                            "drain recurrence: from task {}'s first send to the next iteration's, \
                             its readers' ports draining what that send sets off, {v} cycles",
                            self.name(t)
                        ),
                    );
                }
            }
        }
        best
    }
}

#[derive(Clone, Copy, Debug)]
struct Edge {
    from: usize,
    to: usize,
    w: u64,
    d: u64,
    msg: bool,
}

/// Howard's policy iteration for the maximum cycle ratio Σw / Σd over the cycles of a graph in
/// which every node has an outgoing edge and every cycle has Σd > 0. Returns the critical
/// cycle's exact (Σw, Σd) and its edges.
fn max_cycle_ratio(n: usize, edges: &[Edge]) -> Option<(u64, u64, Vec<usize>)> {
    if n == 0 {
        return None;
    }
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, e) in edges.iter().enumerate() {
        out[e.from].push(i);
    }
    if out.iter().any(Vec::is_empty) {
        return None;
    }
    // Initial policy: the heaviest edge out of every node.
    let mut policy: Vec<usize> = out
        .iter()
        .map(|es| *es.iter().max_by_key(|&&e| edges[e].w).unwrap_or(&es[0]))
        .collect();
    let mut eta = vec![0f64; n];
    let mut x = vec![0f64; n];
    let eps = 1e-9;
    for _round in 0..(10 * n + 100) {
        // Value determination: every node reaches one cycle of the policy graph.
        let mut state = vec![0u8; n]; // 0 new, 1 on the current walk, 2 done
        for s in 0..n {
            if state[s] != 0 {
                continue;
            }
            let mut walk = Vec::new();
            let mut v = s;
            while state[v] == 0 {
                state[v] = 1;
                walk.push(v);
                v = edges[policy[v]].to;
            }
            if state[v] == 1 {
                // A new cycle from v.
                let start = walk.iter().position(|&u| u == v).unwrap_or(0);
                let cyc = &walk[start..];
                let (w, d) = cyc.iter().fold((0u64, 0u64), |(w, d), &u| {
                    (w + edges[policy[u]].w, d + edges[policy[u]].d)
                });
                let r = if d == 0 { 0.0 } else { w as f64 / d as f64 };
                eta[v] = r;
                x[v] = 0.0;
                // Around the cycle backwards from v.
                for &u in cyc.iter().skip(1).rev() {
                    let e = &edges[policy[u]];
                    eta[u] = r;
                    x[u] = e.w as f64 - r * e.d as f64 + x[e.to];
                }
                for &u in cyc {
                    state[u] = 2;
                }
                walk.truncate(start);
            }
            for &u in walk.iter().rev() {
                let e = &edges[policy[u]];
                eta[u] = eta[e.to];
                x[u] = e.w as f64 - eta[u] * e.d as f64 + x[e.to];
                state[u] = 2;
            }
        }
        // Improvement: first by ratio, then by value.
        let mut changed = false;
        for u in 0..n {
            let mut best = policy[u];
            for &e in &out[u] {
                if eta[edges[e].to] > eta[edges[best].to] + eps {
                    best = e;
                }
            }
            if eta[edges[best].to] > eta[u] + eps {
                policy[u] = best;
                changed = true;
            }
        }
        if !changed {
            for u in 0..n {
                let mut best = policy[u];
                let val = |e: usize| {
                    let ed = &edges[e];
                    ed.w as f64 - eta[u] * ed.d as f64 + x[ed.to]
                };
                for &e in &out[u] {
                    if (eta[edges[e].to] - eta[u]).abs() <= eps && val(e) > val(best) + eps {
                        best = e;
                    }
                }
                if best != policy[u] && val(best) > x[u] + eps {
                    policy[u] = best;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // The critical cycle of the final policy, in exact arithmetic.
    let top = (0..n).max_by(|&a, &b| eta[a].total_cmp(&eta[b]))?;
    let mut seen = vec![false; n];
    let mut v = top;
    while !seen[v] {
        seen[v] = true;
        v = edges[policy[v]].to;
    }
    let mut cycle = Vec::new();
    let (mut w, mut d) = (0u64, 0u64);
    let start = v;
    loop {
        let e = policy[v];
        cycle.push(e);
        w += edges[e].w;
        d += edges[e].d;
        v = edges[e].to;
        if v == start {
            break;
        }
    }
    Some((w, d, cycle))
}

/// Raises the period bound of a program not yet placed (as `check` prints it) by the
/// recurrence and port bounds (SPEC §2): before placement every task has its own node with one
/// port each way. The language's own bound counts only each task's and stream's work per
/// iteration.
pub fn refine_unplaced_period(traffic: &mut crate::traffic::Traffic) {
    // A program beyond the limits (a 2^63-word message, say) is refused by the pipeline with
    // its own message; its bounds are not worth the overflow checks.
    if traffic.period.is_none() || traffic.check_limits().is_err() {
        return;
    }
    let setting = Setting::unplaced(traffic, 1);
    let best = periods(&setting, None)
        .into_iter()
        .max_by_key(|p| p.bound.value);
    if let (Some(best), Some(p)) = (best, traffic.period.as_mut()) {
        if best.bound.value > p.lower_bound {
            p.lower_bound = best.bound.value;
            p.bound_by = best.bound.by;
        }
    }
}

/// An edge of the drain-recurrence graph: (to, time, iteration distance, words if a message).
type DrainEdge = (usize, u64, u64, Option<u64>);

#[cfg(test)]
mod tests {
    use super::*;

    fn e(from: usize, to: usize, w: u64, d: u64) -> Edge {
        Edge {
            from,
            to,
            w,
            d,
            msg: false,
        }
    }

    /// Two cycles, ratios 5/1 and 12/2 = 6: the larger wins, exactly.
    #[test]
    fn howard_finds_the_largest_ratio() {
        let edges = [
            e(0, 1, 2, 0),
            e(1, 0, 3, 1),
            e(1, 2, 4, 1),
            e(2, 3, 4, 0),
            e(3, 1, 4, 1),
        ];
        let (w, d, _) = max_cycle_ratio(4, &edges).unwrap();
        assert_eq!((w, d), (12, 2));
    }

    /// Three messages of 10 words on a 3x2 mesh (nodes 0 1 2 / 3 4 5): 0→1→2 and 1→2→5 share
    /// the link 1->2, 0→1→2 and 0→3→4→5 the injection port of node 0, 1→2→5 and 0→3→4→5 the
    /// ejection port of node 5; no resource is shared by all three. Switches with buffers can
    /// finish in 20 cycles (each shared resource carries 20 words); bufferless ones hold a
    /// message's whole path at once, so the three go one after another: 30 cycles, with or
    /// without a switch latency (then plus the lead-in and lead-out).
    fn triangle(hardware: super::super::Hardware) -> u64 {
        use crate::topology::Network;
        use crate::traffic::{Placement, Route, Routing};
        let mut b = Traffic::builder();
        b.tasks(4);
        b.send(0, 2, 10);
        b.send(0, 3, 10);
        b.send(1, 3, 10);
        let mut traffic = b.build();
        super::super::program::apply_ideal_timing(&mut traffic).unwrap();
        let network = Network::build(&"mesh:3x2".parse().unwrap()).unwrap();
        let placement = Placement {
            node_of: vec![0, 1, 2, 5],
        };
        let routing = Routing {
            routes: vec![
                Route::Path(vec![0, 1, 2]),
                Route::Path(vec![0, 3, 4, 5]),
                Route::Path(vec![1, 2, 5]),
            ],
        };
        let problem = Problem::new(&traffic, &network, &placement, &routing, hardware).unwrap();
        makespan(&problem).unwrap().value
    }

    #[test]
    fn bufferless_switches_serialize_messages_that_pairwise_meet() {
        let hw = super::super::Hardware::default();
        assert_eq!(triangle(hw), 20);
        let bufferless = super::super::Hardware {
            buffer: Some(0),
            ..hw
        };
        assert_eq!(triangle(bufferless), 30);
        // With one cycle per switch: 0→1→2 leaves at 0 and ends at 13 on node 2; 1→2→5
        // follows it on 1->2, shifted one hop, and 0→3→4→5 on the port of node 0. The bound
        // counts the three in one shifted timeline with the lead-in and lead-out.
        let slow = super::super::Hardware {
            hop_latency: 1,
            ..bufferless
        };
        let buffered = super::super::Hardware {
            hop_latency: 1,
            ..hw
        };
        assert!(triangle(slow) > triangle(buffered));
        assert!(triangle(slow) >= 30);
    }

    /// A chain, not a clique: on a 4x1 mesh 0→1→2 shares the link 1->2 with 1→2→3, which
    /// shares the link 2->3 with 2→3, but 0→1→2 and 2→3 share nothing and may go together.
    /// Bufferless and without a switch latency, 20 cycles are enough (both ends together, then
    /// the middle), so the bound is no more. (The third message's writer is a task of its own,
    /// so it does not wait to read the first.)
    #[test]
    fn bufferless_cliques_hold_only_messages_that_meet() {
        use crate::topology::Network;
        use crate::traffic::{Placement, Route, Routing};
        let mut b = Traffic::builder();
        b.tasks(5);
        b.send(0, 2, 10);
        b.send(1, 3, 10);
        b.send(4, 3, 10);
        let mut traffic = b.build();
        super::super::program::apply_ideal_timing(&mut traffic).unwrap();
        let network = Network::build(&"mesh:4x1".parse().unwrap()).unwrap();
        let placement = Placement {
            node_of: vec![0, 1, 2, 3, 2],
        };
        let routing = Routing {
            routes: vec![
                Route::Path(vec![0, 1, 2]),
                Route::Path(vec![1, 2, 3]),
                Route::Path(vec![2, 3]),
            ],
        };
        let hw = super::super::Hardware {
            buffer: Some(0),
            ..super::super::Hardware::default()
        };
        let problem = Problem::new(&traffic, &network, &placement, &routing, hw).unwrap();
        assert_eq!(makespan(&problem).unwrap().value, 20);
        let exact = super::super::exact::schedule(&problem).unwrap();
        assert_eq!(exact.makespan, 20);
    }

    /// The clique's candidates listed once per resource are those of the direct definition
    /// (every member's every resource's holders not in the clique, into an ordered set), in the
    /// same order.
    #[test]
    fn clique_neighbours_are_those_of_the_direct_listing() {
        let mut seed = 12345u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..20 {
            let msgs = 40 + next(60) as usize;
            let held: Vec<Vec<(Resource, u64)>> = (0..msgs)
                .map(|_| {
                    let mut v: Vec<(Resource, u64)> = (0..1 + next(4))
                        .map(|d| (Resource::inject(next(12) as usize), d))
                        .collect();
                    v.sort_unstable();
                    v.dedup_by_key(|x| x.0);
                    v
                })
                .collect();
            let sizes: Vec<u64> = (0..msgs).map(|_| 1 + next(3)).collect();
            let mut on: BTreeMap<Resource, Vec<usize>> = BTreeMap::new();
            for (i, h) in held.iter().enumerate() {
                for &(r, _) in h {
                    on.entry(r).or_default().push(i);
                }
            }
            let members: Vec<usize> = (0..msgs).filter(|_| next(5) == 0).collect();
            let inside: BTreeSet<usize> = members.iter().copied().collect();
            let mut direct: BTreeSet<(std::cmp::Reverse<u64>, usize)> = BTreeSet::new();
            for &i in &members {
                for &(r, _) in &held[i] {
                    for &j in &on[&r] {
                        if !inside.contains(&j) {
                            direct.insert((std::cmp::Reverse(sizes[j]), j));
                        }
                    }
                }
            }
            let direct: Vec<usize> = direct.into_iter().map(|(_, j)| j).collect();
            assert_eq!(neighbours(&members, &held, &on, |j| sizes[j]), direct);
        }
    }

    #[test]
    fn jackson_counts_words_from_each_head() {
        // Heads 0, 10, 10 with 4, 8, 8 words: from 10 on 16 words → 26.
        assert_eq!(
            jackson([(0, 4, 0), (10, 8, 0), (10, 8, 3)].into_iter(), 1),
            26
        );
        assert_eq!(jackson([(0, 4, 5)].into_iter(), 1), 9);
        assert_eq!(jackson([(0, 8, 0), (0, 8, 0)].into_iter(), 2), 8);
    }
}
