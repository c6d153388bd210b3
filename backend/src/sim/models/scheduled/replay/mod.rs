//! The `scheduled` model: the plan from `ttdl run`, replayed cycle by cycle from the switch
//! programs (Minsky Fig 5-9), moving actual words.
//!
//! Each processor pushes a message's words into its `DownFifo` in the cycles the schedule gives
//! its injection; each switch runs its `SWITCH` instructions, taking, in each cycle of an
//! instruction, the next word of that message waiting at the instruction's input and putting it
//! on the output (a link to the next switch, or the `UpFifo` to the processor). A word crossing a
//! link is usable at the next switch after the switch latency (0: the same cycle, the thesis's
//! circuit model). The replay fails loudly if an instruction finds no word to move, if a link
//! carries two words in one cycle, or if a message arrives incomplete, out of order or later than
//! planned; otherwise it reports when each message arrived and when each task finished, by
//! running the task programs against those arrivals.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::progress::Progress;
use crate::schedule::{program, Problem, Resource, Schedule, ScheduleError};
use crate::switch::{self, port_towards, Instruction, SwitchPrograms};
use crate::topology::{Network, NodeId, Port};
use crate::traffic::{MsgId, Placement, Routing, Traffic};

/// What the replay saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Per message: the cycle after its last word reached its last destination.
    pub delivered: Vec<u64>,
    /// Per message: the cycle its sender released it (program order, against these arrivals).
    pub released: Vec<u64>,
    /// Per message: `delivered − released`.
    pub latency: Vec<u64>,
    /// Per task: the cycle its program ended.
    pub task_finish: Vec<u64>,
    /// The last task finish or delivery.
    pub completion: u64,
    /// Words moved across links (word-hops).
    pub word_hops: u64,
    /// Most words waiting at one switch input in one cycle (SPEC §2): words that crossed the
    /// hop into the switch at least the switch latency ago and have not left on every hop after
    /// it. A node's injection ports count as one input. The plan's `buffered_max`.
    pub max_buffered: u64,
    /// Cycles simulated.
    pub cycles: u64,
}

impl ReplayReport {
    pub fn mean_latency(&self) -> f64 {
        if self.latency.is_empty() {
            0.0
        } else {
            self.latency.iter().sum::<u64>() as f64 / self.latency.len() as f64
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("replay: {0}")]
    Mismatch(String),
    #[error("interrupted")]
    Interrupted,
}

/// Replays a schedule: builds the switch programs and executes them cycle by cycle.
pub fn replay(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    schedule: &Schedule,
) -> Result<ReplayReport, ReplayError> {
    replay_with_progress(
        traffic,
        network,
        placement,
        routing,
        schedule,
        &Progress::none(),
    )
}

/// [`replay`], reporting the cycles replayed to `progress` and stopping when it is cancelled.
pub fn replay_with_progress(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    schedule: &Schedule,
    progress: &Progress,
) -> Result<ReplayReport, ReplayError> {
    let problem = Problem::new(traffic, network, placement, routing, schedule.hardware)?;
    let programs = switch::build(&problem, schedule);
    run_with_progress(&problem, schedule, &programs, progress)
}

/// `0..total` ordered by `start`, then number: a counting sort when the cycles are few
/// compared with the items (the usual case), else a comparison sort.
fn by_start(total: usize, start: impl Fn(usize) -> u64) -> Vec<u32> {
    let (lo, hi) = (0..total)
        .map(&start)
        .fold((u64::MAX, 0), |(l, h), s| (l.min(s), h.max(s)));
    if total == 0 {
        return Vec::new();
    }
    let span = hi - lo;
    if span <= 4 * total as u64 {
        let mut first = vec![0u32; span as usize + 2];
        for k in 0..total {
            first[(start(k) - lo) as usize + 1] += 1;
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        let mut out = vec![0u32; total];
        for k in 0..total {
            let b = (start(k) - lo) as usize;
            out[first[b] as usize] = k as u32;
            first[b] += 1;
        }
        out
    } else {
        let mut out: Vec<u32> = (0..total as u32).collect();
        out.sort_by_key(|&k| (start(k as usize), k));
        out
    }
}

/// An instruction while it runs, with what each cycle of it reads, laid out together.
#[derive(Clone, Copy)]
struct Act {
    depth: u32,
    k: u32,
    end: u64,
    node: u32,
    inq: u32,
    cur: u32,
    outq: u32,
    slot: u32,
    next: u32,
    eject: bool,
}

/// Every instruction of every node, numbered in program order, without copying them.
struct Flat<'a> {
    programs: &'a SwitchPrograms,
    /// Per instruction: its program's index in `programs.nodes`.
    np_of: Vec<u32>,
    /// Per program: the number of its first instruction.
    offset: Vec<usize>,
}

impl Flat<'_> {
    /// Instruction `k` and the node that runs it.
    fn get(&self, k: usize) -> (u32, Instruction) {
        let p = self.np_of[k] as usize;
        let np = &self.programs.nodes[p];
        (np.node as u32, np.instructions[k - self.offset[p]])
    }
}

/// Executes given switch programs (with the schedule's injections as the processors' sends).
///
/// The state is dense: every instruction, word queue (a message's words waiting at one input
/// port of one switch), read cursor (one per message and output port of a switch) and output
/// port gets an index once, before the first cycle, and each cycle touches only arrays. A queue
/// keeps only the words some reader has yet to take, so memory follows the words in flight,
/// not the words moved.
pub fn run(
    problem: &Problem,
    schedule: &Schedule,
    programs: &SwitchPrograms,
) -> Result<ReplayReport, ReplayError> {
    run_with_progress(problem, schedule, programs, &Progress::none())
}

/// [`run`], reporting the cycles replayed to `progress` and stopping when it is cancelled.
pub fn run_with_progress(
    problem: &Problem,
    schedule: &Schedule,
    programs: &SwitchPrograms,
    progress: &Progress,
) -> Result<ReplayReport, ReplayError> {
    let traffic = problem.traffic;
    let network = problem.network;
    let h = schedule.hardware.hop_latency;
    let n = traffic.messages.len();
    let bad = |s: String| Err(ReplayError::Mismatch(s));
    const NONE: u32 = u32::MAX;

    // Every instruction, flat, with its node.
    let total: usize = programs.nodes.iter().map(|np| np.instructions.len()).sum();
    if total >= NONE as usize {
        return bad(format!("{total} switch instructions: too many to replay"));
    }
    let mut np_of: Vec<u32> = Vec::with_capacity(total);
    let mut offset: Vec<usize> = Vec::with_capacity(programs.nodes.len());
    for (p, np) in programs.nodes.iter().enumerate() {
        offset.push(np_of.len());
        for i in &np.instructions {
            if i.msg >= n {
                return bad(format!(
                    "node {} has an instruction for message {}, which does not exist",
                    np.node, i.msg
                ));
            }
            np_of.push(p as u32);
        }
    }
    let all = Flat {
        programs,
        np_of,
        offset,
    };
    let injections = switch::injections(schedule);

    // Instructions and injections grouped by message (a counting sort), so every index below is
    // given out per message from a few sorted keys.
    let by_msg = crate::schedule::Groups::new(
        n,
        (0..total).map(|k| Some(all.get(k).1.msg).filter(|&m| m < n)),
    );
    let mut inj_by_msg: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (j, hold) in injections.iter().enumerate() {
        if let Some(v) = inj_by_msg.get_mut(hold.msg) {
            v.push(j as u32);
        }
    }

    // Per instruction: input queue, read cursor, the queue it feeds (NONE for ejection), output
    // port slot (for the one-word-per-cycle check) and depth along its message's route.
    let mut inq = vec![NONE; total];
    let mut cur = vec![NONE; total];
    let mut outq = vec![NONE; total];
    let mut slot = vec![NONE; total];
    let mut depth = vec![u32::MAX; total];
    let mut next_of = vec![NONE; total];
    let mut inj_q = vec![NONE; injections.len()];
    let mut queues = 0u32;
    let mut cursors = 0u32;
    let mut readers: Vec<u16> = Vec::new();
    // Per queue: its switch input, numbered in order of (node, port).
    let mut input_of: Vec<u32> = Vec::new();
    let mut inputs: std::collections::HashMap<(u32, Port), u32> = Default::default();
    let eject_slot = |node: u32| (network.links.len() + node as usize) as u32;
    let mut keys: Vec<((u32, Port), u8, u32)> = Vec::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut steps_sorted: Vec<(Resource, u32)> = Vec::new();
    for (m, injected) in inj_by_msg.iter().enumerate() {
        let ks = by_msg.of(m);
        keys.clear();
        steps_sorted.clear();
        steps_sorted.extend(
            problem.steps[m]
                .iter()
                .enumerate()
                .map(|(j, s)| (s.resource, j as u32)),
        );
        steps_sorted.sort();
        for &k in ks {
            let (node, ins) = all.get(k as usize);
            keys.push(((node, ins.input), 0, k));
            let r = match ins.output {
                Port::Eject => {
                    slot[k as usize] = eject_slot(node);
                    Some(Resource::Eject(node as usize))
                }
                out => network.neighbor(node as usize, out).map(|to| {
                    next_of[k as usize] = to as u32;
                    slot[k as usize] = network
                        .link_between(node as usize, to)
                        .map_or(NONE, |l| l as u32);
                    keys.push(((to as u32, port_towards(network, to, node as usize)), 0, k));
                    if let Some(e) = keys.last_mut() {
                        e.1 = 1;
                    }
                    Resource::Link {
                        from: node as usize,
                        to,
                    }
                }),
            };
            if let Some(r) = r {
                if let Ok(p) = steps_sorted.binary_search_by(|(s, _)| s.cmp(&r)) {
                    depth[k as usize] = steps_sorted[p].1;
                }
            }
        }
        for &j in injected {
            if let Resource::Inject(node) = injections[j as usize].resource {
                keys.push(((node as u32, Port::Inject), 2, j));
            }
        }
        // Queues: one per (node, input port) of this message.
        keys.sort_unstable();
        let mut last: Option<(u32, Port)> = None;
        for &(key, kind, idx) in &keys {
            if last != Some(key) {
                last = Some(key);
                queues += 1;
                readers.push(0);
                let next = inputs.len() as u32;
                input_of.push(*inputs.entry(key).or_insert(next));
            }
            let q = queues - 1;
            match kind {
                0 => inq[idx as usize] = q,
                1 => outq[idx as usize] = q,
                _ => inj_q[idx as usize] = q,
            }
        }
        // Cursors: one per (node, output port) of this message.
        keys.clear();
        for &k in ks {
            let (node, ins) = all.get(k as usize);
            keys.push(((node, ins.output), 0, k));
        }
        keys.sort_unstable();
        let mut last: Option<(u32, Port)> = None;
        for &(key, _, k) in &keys {
            if last != Some(key) {
                last = Some(key);
                cursors += 1;
            }
            cur[k as usize] = cursors - 1;
        }
        // Readers per queue: distinct cursors reading it.
        pairs.clear();
        pairs.extend(ks.iter().map(|&k| (inq[k as usize], cur[k as usize])));
        pairs.sort_unstable();
        pairs.dedup();
        for &(q, _) in &pairs {
            readers[q as usize] = readers[q as usize].saturating_add(1);
        }
    }

    // Start order of instructions and injections.
    let starts = by_start(total, |k| all.get(k).1.start);
    let mut inj_starts: Vec<u32> = (0..injections.len() as u32).collect();
    inj_starts.sort_by_key(|&j| (injections[j as usize].start, j));
    let horizon = programs
        .nodes
        .iter()
        .flat_map(|np| np.instructions.iter().map(|i| i.end))
        .chain(injections.iter().map(|h| h.end))
        .max()
        .unwrap_or(0);
    progress.stage("replay", horizon);

    // Words pushed into each queue so far. With a switch latency, or several readers, also the
    // words some reader has yet to take: (usable from cycle, readers still to take it), `base`
    // being the index of the front one, in a list of its own (`list[q]`). A queue without
    // either has a pushed word usable at once and taken by its one reader: the counts suffice,
    // which keeps the millions of queues of a large plan small.
    let mut pushed = vec![0u32; queues as usize];
    let mut list = vec![NONE; queues as usize];
    let mut lists = 0u32;
    for (q, l) in list.iter_mut().enumerate() {
        if h > 0 || readers[q] > 1 {
            *l = lists;
            lists += 1;
        }
    }
    let mut waiting: Vec<VecDeque<(u64, u16)>> = vec![VecDeque::new(); lists as usize];
    let mut base = vec![0u32; lists as usize];
    // How many words each cursor has taken.
    let mut taken = vec![0u32; cursors as usize];
    // Per cursor that ejects: the cycle after its last word arrived.
    let mut last_word = vec![0u64; cursors as usize];
    let mut word_hops = 0u64;
    // Words waiting per switch input (usable and not yet taken by every reader), with words
    // still crossing a hop (usable later) in `pending`; the peak is taken at the end of each
    // cycle, after its takes: a word that leaves in the cycle it became usable never waited.
    let mut held = vec![0i64; inputs.len()];
    let mut pending: VecDeque<(u64, u32)> = VecDeque::new();
    let mut touched: Vec<u32> = Vec::new();
    let mut max_buffered = 0i64;
    // Per output slot: the cycle it was last used in (+1) and how often in that cycle.
    let slots = network.links.len() + network.nodes();
    let mut slot_cycle = vec![0u64; slots];
    let mut slot_used = vec![0u32; slots];
    let eject_cap = schedule.hardware.ports.max(1);

    let mut active_inj: Vec<u32> = Vec::new();
    let mut active: Vec<Act> = Vec::new();
    let mut fresh: Vec<Act> = Vec::new();
    let mut merged: Vec<Act> = Vec::new();
    let mut done: Vec<bool> = Vec::new();
    let (mut si, mut ji) = (0usize, 0usize);
    let mut t = 0u64;
    let mut polled = 0u64;
    while t < horizon {
        // Skip idle stretches.
        if active.is_empty() && active_inj.is_empty() {
            let next = [
                starts.get(si).map(|&k| all.get(k as usize).1.start),
                inj_starts.get(ji).map(|&j| injections[j as usize].start),
            ]
            .into_iter()
            .flatten()
            .min();
            match next {
                Some(s) => t = t.max(s),
                None => break,
            }
        }
        if t >= polled + 1024 || t < polled {
            progress.advance(t.saturating_sub(polled));
            polled = t;
            if progress.is_cancelled() {
                return Err(ReplayError::Interrupted);
            }
        }
        // Words that became usable in skipped cycles count before this cycle's takes.
        while let Some(&(at, node)) = pending.front() {
            if at >= t {
                break;
            }
            pending.pop_front();
            held[node as usize] += 1;
            touched.push(node);
        }
        for &node in &touched {
            max_buffered = max_buffered.max(held[node as usize]);
        }
        touched.clear();

        // Instructions starting now, merged into the active list, which stays sorted by
        // (depth, instruction) without re-sorting it.
        fresh.clear();
        while let Some(&k) = starts.get(si) {
            if all.get(k as usize).1.start > t {
                break;
            }
            let (node, ins) = all.get(k as usize);
            if ins.start == t {
                let ku = k as usize;
                fresh.push(Act {
                    depth: depth[ku],
                    k,
                    end: ins.end,
                    node,
                    inq: inq[ku],
                    cur: cur[ku],
                    outq: outq[ku],
                    slot: slot[ku],
                    next: next_of[ku],
                    eject: ins.output == Port::Eject,
                });
            }
            si += 1;
        }
        active.retain(|a| a.end > t);
        if !fresh.is_empty() {
            fresh.sort_unstable_by_key(|a| (a.depth, a.k));
            merged.clear();
            merged.reserve(active.len() + fresh.len());
            let (mut x, mut y) = (0, 0);
            while x < active.len() && y < fresh.len() {
                let (a, b) = (active[x], fresh[y]);
                if (a.depth, a.k) <= (b.depth, b.k) {
                    merged.push(a);
                    x += 1;
                } else {
                    merged.push(b);
                    y += 1;
                }
            }
            merged.extend_from_slice(&active[x..]);
            merged.extend_from_slice(&fresh[y..]);
            std::mem::swap(&mut active, &mut merged);
        }
        while let Some(&j) = inj_starts.get(ji) {
            if injections[j as usize].start > t {
                break;
            }
            if injections[j as usize].start == t {
                active_inj.push(j);
            }
            ji += 1;
        }
        active_inj.retain(|&j| injections[j as usize].end > t);

        // Processors push one word per injection hold per cycle.
        for &j in &active_inj {
            let hold = injections[j as usize];
            if !matches!(hold.resource, Resource::Inject(_)) {
                continue;
            }
            let q = inj_q[j as usize];
            if q == NONE {
                continue;
            }
            pushed[q as usize] += 1;
            // Usable at the switch once it has crossed the injection hop (the latency).
            if let Some(w) = waiting.get_mut(list[q as usize] as usize) {
                w.push_back((t + h, readers[q as usize]));
            }
            pending.push_back((t + h, input_of[q as usize]));
        }
        // Switches: each active instruction moves one word this cycle; with zero latency a word
        // may cross several switches in one cycle, so repeat until nothing moves.
        done.clear();
        done.resize(active.len(), false);
        let mut left = active.len();
        while left > 0 {
            let mut moved = false;
            for (a, act) in active.iter().enumerate() {
                if done[a] || act.inq == NONE {
                    continue;
                }
                let (q, c, node) = (act.inq as usize, act.cur as usize, act.node);
                let word = taken[c];
                if word >= pushed[q] {
                    continue;
                }
                let mut last_reader = true;
                if let Some(w) = waiting.get_mut(list[q] as usize) {
                    let l = list[q] as usize;
                    let Some(at) = word.checked_sub(base[l]) else {
                        continue;
                    };
                    last_reader = match w.get_mut(at as usize) {
                        Some(e) if e.0 <= t => {
                            e.1 = e.1.saturating_sub(1);
                            e.1 == 0
                        }
                        _ => continue,
                    };
                    while w.front().is_some_and(|e| e.1 == 0) {
                        w.pop_front();
                        base[l] += 1;
                    }
                }
                // The word has left on every hop after this input.
                if last_reader {
                    let i = input_of[q];
                    held[i as usize] -= 1;
                    touched.push(i);
                }
                done[a] = true;
                left -= 1;
                moved = true;
                taken[c] += 1;
                let s = act.slot as usize;
                if let (Some(sc), Some(su)) = (slot_cycle.get_mut(s), slot_used.get_mut(s)) {
                    if *sc != t + 1 {
                        *sc = t + 1;
                        *su = 0;
                    }
                    *su += 1;
                    let cap = if act.eject { eject_cap } else { 1 };
                    if *su > cap {
                        let same: Vec<MsgId> = active[..=a]
                            .iter()
                            .enumerate()
                            .filter(|&(b, o)| done[b] && o.slot == act.slot)
                            .map(|(_, o)| all.get(o.k as usize).1.msg)
                            .collect();
                        let (_, ins) = all.get(act.k as usize);
                        return bad(format!(
                            "node {node} sends messages {same:?} out of {} in cycle {t}",
                            ins.output.name()
                        ));
                    }
                }
                if act.eject {
                    // Words leave a queue in the order they entered it: a cursor's words
                    // reach the processor in order by construction.
                    last_word[c] = t + 1;
                    continue;
                }
                let (o, next) = (act.outq, act.next);
                if o == NONE || next == NONE {
                    let (_, ins) = all.get(act.k as usize);
                    return bad(format!(
                        "node {node} sends message {} out of {}, which leads nowhere",
                        ins.msg,
                        ins.output.name()
                    ));
                }
                word_hops += 1;
                pushed[o as usize] += 1;
                if let Some(w) = waiting.get_mut(list[o as usize] as usize) {
                    w.push_back((t + h, readers[o as usize]));
                }
                pending.push_back((t + h, input_of[o as usize]));
            }
            if !moved {
                break;
            }
        }
        if let Some(a) = done.iter().position(|d| !d) {
            let (node, ins) = all.get(active[a].k as usize);
            return bad(format!(
                "in cycle {t}, node {node} is to send message {} from {} to {} but no word of it is there",
                ins.msg,
                ins.input.name(),
                ins.output.name()
            ));
        }
        while let Some(&(at, node)) = pending.front() {
            if at > t {
                break;
            }
            pending.pop_front();
            held[node as usize] += 1;
            touched.push(node);
        }
        for &node in &touched {
            max_buffered = max_buffered.max(held[node as usize]);
        }
        touched.clear();
        t += 1;
    }
    while let Some((_, node)) = pending.pop_front() {
        held[node as usize] += 1;
        max_buffered = max_buffered.max(held[node as usize]);
    }
    progress.advance(horizon.saturating_sub(polled));

    // Words each message delivered to `node`, and when the last came.
    let received = |m: MsgId, node: NodeId| -> Option<(u64, u64)> {
        let ks = by_msg.of(m);
        ks.iter()
            .map(|&k| k as usize)
            .find(|&k| {
                let (at, i) = all.get(k);
                i.output == Port::Eject && at as usize == node
            })
            .map(|k| (taken[cur[k] as usize] as u64, last_word[cur[k] as usize]))
    };

    // Every message complete at every destination, when planned.
    let node_of = &problem.placement.node_of;
    let mut delivered = vec![0u64; n];
    for (m, msg) in traffic.messages.iter().enumerate() {
        let mut nodes: Vec<NodeId> = msg
            .dst
            .iter()
            .filter_map(|&d| node_of.get(d).copied())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        for node in nodes {
            if msg.size == 0 {
                delivered[m] = delivered[m].max(schedule.arrival[m]);
                continue;
            }
            let (words, at) = received(m, node).unwrap_or((0, 0));
            if words != msg.size {
                return bad(format!(
                    "message {m} delivered {words} of its {} words at node {node}",
                    msg.size
                ));
            }
            delivered[m] = delivered[m].max(at);
        }
        if delivered[m] != schedule.arrival[m] {
            return bad(format!(
                "message {m} arrived at {} but the schedule planned {}",
                delivered[m], schedule.arrival[m]
            ));
        }
    }

    // The programs against the replayed arrivals.
    let (released, task_finish) = if program::is_driven(traffic) {
        let timing = program::run_with(traffic, |m, d, at| {
            node_of
                .get(d)
                .and_then(|&node| received(m, node))
                .map_or(at.max(schedule.arrival[m]), |(_, a)| a)
        })?;
        for m in 0..n {
            if schedule.sent[m] < timing.release[m] {
                return bad(format!(
                    "message {m} was injected at {} before its sender released it at {}",
                    schedule.sent[m], timing.release[m]
                ));
            }
        }
        (timing.release, timing.task_finish)
    } else {
        (
            traffic.messages.iter().map(|m| m.release).collect(),
            schedule.task_finish.clone(),
        )
    };
    let latency = (0..n)
        .map(|m| delivered[m].saturating_sub(released[m]))
        .collect();
    let completion = task_finish
        .iter()
        .chain(delivered.iter())
        .copied()
        .max()
        .unwrap_or(0);

    // What the switches held must be what the plan says they hold (`buffered_max`).
    let planned = crate::schedule::buffers::usage(problem, &schedule.holds).max;
    if max_buffered.max(0) as u64 != planned {
        return bad(format!(
            "the switches kept at most {} words waiting at one input, but the plan says {planned}",
            max_buffered.max(0)
        ));
    }

    Ok(ReplayReport {
        delivered,
        released,
        latency,
        task_finish,
        completion,
        word_hops,
        max_buffered: max_buffered.max(0) as u64,
        cycles: horizon,
    })
}
