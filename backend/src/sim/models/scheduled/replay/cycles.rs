//! Step 3 of the replay: the cycles. In each, the processors push one word per injection hold
//! into their switch, and every running instruction moves the next word of its message from its
//! input to its output, in route order, so that with no switch latency a word crosses several
//! switches in one cycle (Minsky's circuit model). A word that is not there, or a second word on
//! one link in one cycle, stops the replay: the programs do not do what the plan says.
//!
//! Idle stretches are skipped; the words waiting at each switch input are counted as they come
//! and go, for the plan's `buffered_max` (SPEC §2).

use std::collections::VecDeque;

use super::flat::{Flat, NONE};
use super::wiring::{is_eject, Act, Ejections, Queue, Wired};
use super::{mismatch, ReplayError};
use crate::progress::Progress;
use crate::schedule::{Hardware, Hold, Problem, Resource};
use crate::traffic::MsgId;

/// What the cycles did.
pub(super) struct Moved {
    /// Per cursor: the words it took.
    pub taken: Vec<u32>,
    /// Per ejection ([`Ejections`]): the cycle after its last word arrived.
    pub last_word: Vec<u64>,
    pub ejections: Ejections,
    /// Words moved across links.
    pub word_hops: u64,
    /// The most words waiting at one switch input at the end of a cycle.
    pub max_buffered: u64,
    /// Cycles simulated.
    pub horizon: u64,
}

/// Words waiting at each switch input (usable and not yet taken by every reader), with words
/// still crossing a hop (usable later) in `pending`. The peak is taken at the end of each
/// cycle, after its takes: a word that leaves in the cycle it became usable never waited.
struct Waiting {
    held: Vec<i64>,
    pending: VecDeque<(u64, u32)>,
    touched: Vec<u32>,
    max: i64,
}

impl Waiting {
    /// Counts the words that became usable before cycle `before` (`strict`) or by it.
    fn arrive(&mut self, t: u64, strict: bool) {
        while let Some(&(at, input)) = self.pending.front() {
            if at > t || (strict && at == t) {
                break;
            }
            self.pending.pop_front();
            self.held[input as usize] += 1;
            self.touched.push(input);
        }
        self.peak();
    }

    /// A word left `input` on every hop after it.
    fn leave(&mut self, input: u32) {
        self.held[input as usize] -= 1;
        self.touched.push(input);
    }

    fn peak(&mut self) {
        for &input in &self.touched {
            self.max = self.max.max(self.held[input as usize]);
        }
        self.touched.clear();
    }
}

/// Runs the wired programs to their last cycle.
pub(super) fn execute(
    all: &Flat,
    injections: &[Hold],
    wired: Wired,
    hardware: Hardware,
    problem: &Problem,
    progress: &Progress,
) -> Result<Moved, ReplayError> {
    let network = problem.network;
    let h = hardware.hop_latency;
    let links = network.links.len();
    let Wired {
        acts,
        starts,
        mut queues,
        inj_q,
        cursors,
        inputs,
        ejections,
    } = wired;

    let mut inj_starts: Vec<u32> = (0..injections.len() as u32).collect();
    inj_starts.sort_by_key(|&j| (injections[j as usize].start(), j));
    let horizon = all
        .horizon()
        .max(injections.iter().map(|h| h.end()).max().unwrap_or(0));
    progress.stage("replay", horizon);

    // With a switch latency, or several readers, a queue also lists the words some reader has
    // yet to take: (usable from cycle, readers still to take it), `base` being the index of the
    // front one, in a list of its own. A queue without either has a pushed word usable at once
    // and taken by its one reader: the counts suffice, which keeps the millions of queues of a
    // large plan small.
    let mut lists = 0u32;
    for q in &mut queues {
        if h > 0 || q.readers > 1 {
            q.list = lists;
            lists += 1;
        }
    }
    let mut lists: Vec<VecDeque<(u64, u16)>> = vec![VecDeque::new(); lists as usize];
    let mut base = vec![0u32; lists.len()];
    let mut taken = vec![0u32; cursors];
    let mut last_word = vec![0u64; ejections.count()];
    let mut word_hops = 0u64;
    let mut waiting = Waiting {
        held: vec![0; inputs],
        pending: VecDeque::new(),
        touched: Vec::new(),
        max: 0,
    };
    // Per output slot: the cycle it was last used in (+1) and how often in that cycle.
    let mut slot_use = vec![(0u64, 0u32); links + network.nodes()];
    let eject_cap = hardware.ports.max(1);

    // A word pushed into queue `q` in cycle `t`: usable at the switch once it has crossed the
    // hop into it (the latency).
    let push =
        |q: &mut Queue, lists: &mut Vec<VecDeque<(u64, u16)>>, waiting: &mut Waiting, t: u64| {
            q.pushed += 1;
            if let Some(w) = lists.get_mut(q.list as usize) {
                w.push_back((t + h, q.readers));
            }
            waiting.pending.push_back((t + h, q.input));
        };

    let mut active_inj: Vec<u32> = Vec::new();
    let mut active: Vec<Act> = Vec::new();
    let mut fresh: Vec<Act> = Vec::new();
    let mut merged: Vec<Act> = Vec::new();
    let mut done: Vec<bool> = Vec::new();
    let (mut si, mut ji) = (0usize, 0usize);
    // The start cycle of act `si` (its run's in `starts`, `bi` following `si`).
    let mut bi = 0usize;
    let start_of = |si: usize, bi: &mut usize| -> Option<u64> {
        if si >= acts.len() {
            return None;
        }
        while starts.get(*bi + 1).is_some_and(|&(_, f)| f as usize <= si) {
            *bi += 1;
        }
        starts.get(*bi).map(|&(s, _)| s)
    };
    let mut t = 0u64;
    let mut polled = 0u64;
    while t < horizon {
        // Skip idle stretches.
        if active.is_empty() && active_inj.is_empty() {
            let next = [
                start_of(si, &mut bi),
                inj_starts.get(ji).map(|&j| injections[j as usize].start()),
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
        waiting.arrive(t, true);

        // Instructions starting now, merged into the active list, which stays sorted by
        // (depth, instruction) without re-sorting it.
        fresh.clear();
        while let Some(s) = start_of(si, &mut bi) {
            if s > t {
                break;
            }
            if s == t {
                fresh.push(acts[si]);
            }
            si += 1;
        }
        active.retain(|a| a.end as u64 > t);
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
            if injections[j as usize].start() > t {
                break;
            }
            if injections[j as usize].start() == t {
                active_inj.push(j);
            }
            ji += 1;
        }
        active_inj.retain(|&j| injections[j as usize].end() > t);

        // Processors push one word per injection hold per cycle.
        for &j in &active_inj {
            if !matches!(injections[j as usize].resource(), Resource::Inject(_)) {
                continue;
            }
            let q = inj_q[j as usize];
            if let Some(q) = queues.get_mut(q as usize) {
                push(q, &mut lists, &mut waiting, t);
            }
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
                let (qi, c) = (act.inq as usize, act.cur as usize);
                let q = queues[qi];
                let word = taken[c];
                if word >= q.pushed {
                    continue;
                }
                let mut last_reader = true;
                if let Some(w) = lists.get_mut(q.list as usize) {
                    let l = q.list as usize;
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
                    waiting.leave(q.input);
                }
                done[a] = true;
                left -= 1;
                moved = true;
                taken[c] += 1;
                let eject = is_eject(links, act.slot);
                if let Some((cycle, used)) = slot_use.get_mut(act.slot as usize) {
                    if *cycle != t + 1 {
                        *cycle = t + 1;
                        *used = 0;
                    }
                    *used += 1;
                    let cap = if eject { eject_cap } else { 1 };
                    if *used > cap {
                        return collision(all, &active[..=a], &done, act, t);
                    }
                }
                if eject {
                    // Words leave a queue in the order they entered it: a cursor's words
                    // reach the processor in order by construction.
                    if let Some(l) = last_word.get_mut(act.outq as usize) {
                        *l = t + 1;
                    }
                    continue;
                }
                let Some(out) = queues.get_mut(act.outq as usize) else {
                    let (node, ins) = all.get(act.k as usize);
                    return mismatch(format!(
                        "node {node} sends message {} out of {}, which leads nowhere",
                        ins.msg,
                        ins.output.name()
                    ));
                };
                word_hops += 1;
                push(out, &mut lists, &mut waiting, t);
            }
            if !moved {
                break;
            }
        }
        if let Some(a) = done.iter().position(|d| !d) {
            let (node, ins) = all.get(active[a].k as usize);
            return mismatch(format!(
                "in cycle {t}, node {node} is to send message {} from {} to {} but no word of it is there",
                ins.msg,
                ins.input.name(),
                ins.output.name()
            ));
        }
        waiting.arrive(t, false);
        t += 1;
    }
    waiting.arrive(u64::MAX, false);
    progress.advance(horizon.saturating_sub(polled));

    Ok(Moved {
        taken,
        last_word,
        ejections,
        word_hops,
        max_buffered: waiting.max.max(0) as u64,
        horizon,
    })
}

/// The error for a second word on one output in one cycle: the messages sent out of it so far
/// this cycle (`ran`, the instructions up to the offending `act`, with `done` marking those
/// that moved a word).
fn collision<T>(
    all: &Flat,
    ran: &[Act],
    done: &[bool],
    act: &Act,
    t: u64,
) -> Result<T, ReplayError> {
    let same: Vec<MsgId> = ran
        .iter()
        .enumerate()
        .filter(|&(b, o)| done[b] && o.slot == act.slot)
        .map(|(_, o)| all.get(o.k as usize).1.msg())
        .collect();
    let (node, ins) = all.get(act.k as usize);
    mismatch(format!(
        "node {node} sends messages {same:?} out of {} in cycle {t}",
        ins.output.name()
    ))
}
