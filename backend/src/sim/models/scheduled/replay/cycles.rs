//! Step 3 of the replay: the cycles. In each, the processors push one word per injection hold
//! into their switch, and every running instruction moves the next word of its message from its
//! input to its output, in route order, so that with no switch latency a word crosses several
//! switches in one cycle (Minsky's circuit model). A word that is not there, or a second word on
//! one link in one cycle, stops the replay: the programs do not do what the plan says.
//!
//! Idle stretches are skipped; the words waiting at each switch input are counted as they come
//! and go, for the plan's `buffered_max` (SPEC §2).

use std::collections::VecDeque;

use super::wiring::{Ejections, Entry, Injection, Wired, NONE};
use super::{mismatch, ReplayError};
use crate::progress::Progress;
use crate::schedule::{Hardware, Hold, Problem};
use crate::switch;
use crate::traffic::MsgId;

/// A step's counters (see [`super::wiring`]): the words pushed into its queue, and the words its
/// cursor took. An ejection fills no queue: its first counter is the cycle after its last word
/// reached the processor. 8 bytes: a plan has one per step of every route.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cell {
    pub pushed: u32,
    pub taken: u32,
}

/// What the cycles did.
pub(super) struct Moved {
    /// Per step: its counters.
    pub cells: Vec<Cell>,
    pub ejections: Ejections,
    /// Words moved across links.
    pub word_hops: u64,
    /// The most words waiting at one switch input at the end of a cycle.
    pub max_buffered: u64,
    /// Cycles simulated.
    pub horizon: u64,
}

/// A running instruction as the cycles use it, made from its entry and its step's wiring when
/// it starts (only the running ones are kept whole).
#[derive(Clone, Copy, Debug)]
struct Act {
    /// Its step (its cursor, and for a link the queue it fills at the next switch): the order a
    /// cycle runs instructions in. A step's parent has a lower number, so a word crosses several
    /// switches in one cycle with no switch latency.
    step: u32,
    /// The cycle after its last.
    end: u32,
    /// The queue it reads (its step's parent), and that queue's switch input.
    inq: u32,
    in_input: u32,
    /// Its output slot: a link number, or past the links a node's ejection.
    slot: u32,
    /// The cursors that read the queue it fills.
    out_readers: u16,
}

impl Act {
    fn key(&self) -> (u32, u32) {
        (self.step, self.end)
    }
}

/// Words waiting at each switch input (usable and not yet taken by every reader), with words
/// still crossing a hop (usable later) in `pending`. The peak is taken at the end of each
/// cycle, after its takes: a word that leaves in the cycle it became usable never waited.
struct Waiting {
    held: Vec<i64>,
    pending: VecDeque<(u64, u32)>,
    /// Inputs whose count rose since the last peak (a fall never makes a new peak).
    touched: Vec<u32>,
    max: i64,
}

impl Waiting {
    /// A word usable at `input` from cycle `at`, pushed in cycle `t`: with no switch latency it
    /// counts at once (the peak is taken after the cycle's takes).
    fn push(&mut self, at: u64, t: u64, input: u32) {
        if at <= t {
            self.count(input);
        } else {
            self.pending.push_back((at, input));
        }
    }

    fn count(&mut self, input: u32) {
        if let Some(c) = self.held.get_mut(input as usize) {
            *c += 1;
            self.touched.push(input);
        }
    }

    /// Counts the words that became usable before cycle `before` (`strict`) or by it.
    fn arrive(&mut self, t: u64, strict: bool) {
        while let Some(&(at, input)) = self.pending.front() {
            if at > t || (strict && at == t) {
                break;
            }
            self.pending.pop_front();
            self.count(input);
        }
        self.peak();
    }

    /// A word left `input` on every hop after it.
    fn leave(&mut self, input: u32) {
        if let Some(c) = self.held.get_mut(input as usize) {
            *c -= 1;
        }
    }

    fn peak(&mut self) {
        for &input in &self.touched {
            self.max = self.max.max(self.held[input as usize]);
        }
        self.touched.clear();
    }
}

/// The words some reader has yet to take, for the queues that need the list: with a switch
/// latency (a word is usable a while after it was pushed) or several readers. An entry is (usable
/// from cycle, readers still to take it); a list is lent to a queue while it has such words, so
/// the lists follow the words in flight, not the queues of the plan.
struct Lists {
    /// Per step: its list, or NONE; empty when no queue needs one.
    of: Vec<u32>,
    lists: Vec<VecDeque<(u64, u16)>>,
    /// Per list: the word number of its front entry.
    base: Vec<u32>,
    free: Vec<u32>,
}

impl Lists {
    /// A word pushed into queue `q` (its `pushed`-th), usable from `at`, for `readers`.
    fn push(&mut self, q: u32, pushed: u32, at: u64, readers: u16) {
        let Some(of) = self.of.get_mut(q as usize) else {
            return;
        };
        if *of == NONE {
            *of = match self.free.pop() {
                Some(l) => l,
                None => {
                    self.lists.push(VecDeque::new());
                    self.base.push(0);
                    self.lists.len() as u32 - 1
                }
            };
            self.base[*of as usize] = pushed;
        }
        self.lists[*of as usize].push_back((at, readers));
    }

    /// A reader of queue `q` takes word `word` in cycle `t`: `None` if the word is not usable
    /// yet, else whether it was the word's last reader. A queue without a list has its words
    /// usable at once and one reader.
    fn take(&mut self, q: u32, word: u32, t: u64) -> Option<bool> {
        let Some(&l) = self.of.get(q as usize).filter(|&&l| l != NONE) else {
            return Some(true);
        };
        let (w, base) = (&mut self.lists[l as usize], &mut self.base[l as usize]);
        let at = word.checked_sub(*base)?;
        let last = match w.get_mut(at as usize) {
            Some(e) if e.0 <= t => {
                e.1 = e.1.saturating_sub(1);
                e.1 == 0
            }
            _ => return None,
        };
        while w.front().is_some_and(|e| e.1 == 0) {
            w.pop_front();
            *base += 1;
        }
        if w.is_empty() {
            self.of[q as usize] = NONE;
            self.free.push(l);
        }
        Some(last)
    }
}

/// What the cycles read: the routes and the wiring.
struct Plan<'a> {
    problem: &'a Problem<'a>,
    wired: &'a Wired,
}

impl Plan<'_> {
    /// The instruction `e` is, as the cycles run it: read from its step's wiring, laid out in
    /// step order (a message's steps side by side), not from its hold.
    fn act(&self, e: Entry) -> Act {
        let w = self.wired;
        let at = |v: &[u32], i: u32| v.get(i as usize).copied().unwrap_or(NONE);
        let inq = at(&w.parent, e.step);
        Act {
            step: e.step,
            end: e.end,
            inq,
            in_input: at(&w.port, inq),
            slot: at(&w.port, e.step),
            out_readers: w.readers_of(e.step),
        }
    }

    /// The message whose route has step `step`, and the node and ports of the instruction on it,
    /// for an error.
    fn describe(&self, step: u32) -> (MsgId, usize, String, String) {
        let first = &self.wired.first;
        let m = first.partition_point(|&f| f <= step).saturating_sub(1);
        let j = step.saturating_sub(first.get(m).copied().unwrap_or(0)) as usize;
        let steps = self.problem.steps.get(m).map_or(&[][..], |s| &s[..]);
        match switch::ports(self.problem.network, steps, j) {
            Some((node, input, output)) => (m, node, input.name(), output.name()),
            None => (m, 0, "?".into(), "?".into()),
        }
    }
}

/// Runs the wired programs to their last cycle.
pub(super) fn execute(
    problem: &Problem,
    holds: &[Hold],
    wired: Wired,
    hardware: Hardware,
    progress: &Progress,
) -> Result<Moved, ReplayError> {
    let network = problem.network;
    let h = hardware.hop_latency;
    let links = network.links.len();
    let plan = Plan {
        problem,
        wired: &wired,
    };
    let (acts, starts, injections) = (&wired.acts, &wired.starts, &wired.injections);
    let horizon = wired.horizon;
    progress.stage("replay", horizon);

    let steps = wired.first.last().copied().unwrap_or(0) as usize;
    let mut cells = vec![Cell::default(); steps];
    let mut lists = Lists {
        of: if h > 0 || !wired.readers.is_empty() {
            vec![NONE; steps]
        } else {
            Vec::new()
        },
        lists: Vec::new(),
        base: Vec::new(),
        free: Vec::new(),
    };
    let mut word_hops = 0u64;
    let mut waiting = Waiting {
        held: vec![0; links + network.nodes()],
        pending: VecDeque::new(),
        touched: Vec::new(),
        max: 0,
    };
    // Per output slot: the cycle it was last used in (+1, 32 bits as the holds keep cycles)
    // and how often in that cycle.
    let mut slot_use = vec![(0u32, 0u32); links + network.nodes()];
    let eject_cap = hardware.ports.max(1);

    // A word pushed into queue `q` (with `readers` cursors, at switch input `input`) in cycle
    // `t`: usable at the switch once it has crossed the hop into it (the latency).
    let push = |q: u32,
                readers: u16,
                input: u32,
                cells: &mut Vec<Cell>,
                lists: &mut Lists,
                waiting: &mut Waiting,
                t: u64| {
        let Some(c) = cells.get_mut(q as usize) else {
            return;
        };
        if h > 0 || readers > 1 {
            lists.push(q, c.pushed, t + h, readers);
        }
        c.pushed += 1;
        waiting.push(t + h, t, input);
    };
    // Per injection: its queue's readers and switch input.
    let injected = |e: &Injection| -> (u16, u32) {
        (
            wired.readers_of(e.step),
            wired.port.get(e.step as usize).copied().unwrap_or(NONE),
        )
    };

    let mut active_inj: Vec<Injection> = Vec::new();
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
    let inj_start = |j: usize| injections.get(j).map(|e| holds[e.hold as usize].start());
    let mut t = 0u64;
    let mut polled = 0u64;
    while t < horizon {
        // Skip idle stretches.
        if active.is_empty() && active_inj.is_empty() {
            let next = [start_of(si, &mut bi), inj_start(ji)]
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
        // (step, hold) without re-sorting it.
        fresh.clear();
        while let Some(s) = start_of(si, &mut bi) {
            if s > t {
                break;
            }
            // An entry on no step is a hold on no step of its route: in no program.
            if s == t && acts[si].step != NONE {
                fresh.push(plan.act(acts[si]));
            }
            si += 1;
        }
        active.retain(|a| a.end as u64 > t);
        if !fresh.is_empty() {
            fresh.sort_unstable_by_key(Act::key);
            merged.clear();
            merged.reserve(active.len() + fresh.len());
            let (mut x, mut y) = (0, 0);
            while x < active.len() && y < fresh.len() {
                let (a, b) = (active[x], fresh[y]);
                if a.key() <= b.key() {
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
        while let Some(s) = inj_start(ji) {
            if s > t {
                break;
            }
            if s == t {
                active_inj.push(injections[ji]);
            }
            ji += 1;
        }
        active_inj.retain(|e| holds[e.hold as usize].end() > t);

        // Processors push one word per injection hold per cycle.
        for e in &active_inj {
            let (readers, input) = injected(e);
            push(
                e.step,
                readers,
                input,
                &mut cells,
                &mut lists,
                &mut waiting,
                t,
            );
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
                let word = cells[act.step as usize].taken;
                let Some(q) = cells.get(act.inq as usize) else {
                    continue;
                };
                if word >= q.pushed {
                    continue;
                }
                let Some(last_reader) = lists.take(act.inq, word, t) else {
                    continue;
                };
                // The word has left on every hop after this input.
                if last_reader {
                    waiting.leave(act.in_input);
                }
                done[a] = true;
                left -= 1;
                moved = true;
                cells[act.step as usize].taken += 1;
                let eject = act.slot as usize >= links;
                if let Some((cycle, used)) = slot_use.get_mut(act.slot as usize) {
                    // `t` is below an instruction's 32-bit end.
                    let now = (t + 1) as u32;
                    if *cycle != now {
                        *cycle = now;
                        *used = 0;
                    }
                    *used += 1;
                    let cap = if eject { eject_cap } else { 1 };
                    if *used > cap {
                        return collision(&plan, &active[..=a], &done, act, t);
                    }
                }
                if eject {
                    // Words leave a queue in the order they entered it: a cursor's words
                    // reach the processor in order by construction. `t` is below the
                    // instruction's 32-bit end.
                    cells[act.step as usize].pushed = (t + 1) as u32;
                    continue;
                }
                word_hops += 1;
                push(
                    act.step,
                    act.out_readers,
                    act.slot,
                    &mut cells,
                    &mut lists,
                    &mut waiting,
                    t,
                );
            }
            if !moved {
                break;
            }
        }
        if let Some(a) = done.iter().position(|d| !d) {
            let (m, node, input, output) = plan.describe(active[a].step);
            return mismatch(format!(
                "in cycle {t}, node {node} is to send message {m} from {input} to {output} but no word of it is there"
            ));
        }
        waiting.arrive(t, false);
        t += 1;
    }
    waiting.arrive(u64::MAX, false);
    progress.advance(horizon.saturating_sub(polled));

    Ok(Moved {
        cells,
        ejections: wired.ejections,
        word_hops,
        max_buffered: waiting.max.max(0) as u64,
        horizon,
    })
}

/// The error for a second word on one output in one cycle: the messages sent out of it so far
/// this cycle (`ran`, the instructions up to the offending `act`, with `done` marking those
/// that moved a word).
fn collision<T>(
    plan: &Plan,
    ran: &[Act],
    done: &[bool],
    act: &Act,
    t: u64,
) -> Result<T, ReplayError> {
    let same: Vec<MsgId> = ran
        .iter()
        .enumerate()
        .filter(|&(b, o)| done[b] && o.slot == act.slot)
        .map(|(_, o)| plan.describe(o.step).0)
        .collect();
    let (_, node, _, output) = plan.describe(act.step);
    mismatch(format!(
        "node {node} sends messages {same:?} out of {output} in cycle {t}"
    ))
}
