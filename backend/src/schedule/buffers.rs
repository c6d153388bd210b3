//! Switch input buffers (SPEC §2 "Switches have finite buffers").
//!
//! A word that crosses a hop into a switch (a link, or the injection port) may wait there only in
//! that input's buffer: from `latency` cycles after it crossed the hop until it has left on every
//! hop after it. A fragment of `L` words that holds the hop into a switch from cycle `s` and the
//! hops out of it from cycle `s + latency + d` on keeps each word waiting `d` cycles, so the words
//! waiting at that input over time form a trapezoid: it rises by one word a cycle to
//! `min(L, d)`, stays, and falls again, over `d + L − 1` cycles. With `d = 0` nothing waits:
//! the clear path of Minsky §4.2.4, every hop `latency` cycles after the one before, which is all
//! a bufferless switch (aelite, Argo) can carry.
//!
//! [`usage`] measures a schedule's waiting words (the verifier's check and the plan's
//! `buffered_max`); [`Load`] is the scheduler's running account of them, so it places messages
//! within the buffers.

use super::occupancy::partition_from_end;
use super::{FastMap, Hardware, Hold, Problem, Resource};

/// How many words may wait at input `r` at once, or `None` when unbounded. A node's injection
/// ports each have a buffer; they are counted together (`ports × buffer`), as a schedule does not
/// say which port a word took.
pub fn budget(hw: &Hardware, r: Resource) -> Option<u64> {
    let b = hw.buffer? as u64;
    Some(match r {
        Resource::Inject(_) => b * hw.ports.max(1) as u64,
        _ => b,
    })
}

/// An input for people: `the input of switch 4 from 3` or `the injection input of switch 3`.
pub fn input_name(r: Resource) -> String {
    match r {
        Resource::Link { from, to } => format!("the input of switch {to} from {from}"),
        Resource::Inject(n) => format!("the injection input of switch {n}"),
        Resource::Eject(n) => format!("the ejection of switch {n}"),
    }
}

/// Words waiting at one input `u = t − a` cycles after `a`, the cycle the first word may leave,
/// for a fragment of `len` words each waiting `d` cycles: `min(u + 1, min(len, d), d + len − 1 − u)`.
fn trapezoid(u: u64, len: u64, d: u64) -> u64 {
    let span = d + len - 1;
    if d == 0 || len == 0 || u >= span {
        return 0;
    }
    (u + 1).min(len.min(d)).min(span - u)
}

/// The largest value of [`trapezoid`] for `u` in `x..=y` (it is concave: its plateau, clamped).
fn trapezoid_max(x: u64, y: u64, len: u64, d: u64) -> u64 {
    if d == 0 || len == 0 {
        return 0;
    }
    let h = len.min(d);
    let (lo, hi) = (h - 1, d + len - 1 - h);
    if y < lo {
        trapezoid(y, len, d)
    } else if x > hi {
        trapezoid(x, len, d)
    } else {
        h
    }
}

/// The most words waiting at switch inputs in a schedule, and where the buffers overflow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The most words waiting at one input in one cycle (`buffered_max`).
    pub max: u64,
    /// That input and the first cycle it held them.
    pub at: Option<(Resource, u64)>,
    /// The first cycle (then input) at which an input held more words than its buffer takes:
    /// `(input, cycle, words, budget)`.
    pub over: Option<(Resource, u64, u64, u64)>,
}

impl Usage {
    /// The line of the text summary: the buffer setting and the most words used.
    pub fn summary(&self, hw: &Hardware) -> String {
        let used = group(self.max);
        match hw.buffer {
            None => format!("unbounded (idealisation; most used: {used})"),
            Some(b) => format!(
                "{} per switch input (most used: {used})",
                match b {
                    1 => "1 word".to_string(),
                    b => format!("{} words", group(b as u64)),
                }
            ),
        }
    }
}

/// `1615` → `1,615`.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// [`Usage`] as the verifier measured it on a schedule's holds ([`super::Schedule::buffers`]),
/// kept beside them so the replay and the report read it instead of measuring again: each
/// measure groups and walks every hold, three passes over a hundred million holds in a large
/// plan. Not written and not compared: a measurement of the holds, not part of what the
/// schedule is (two schedules with the same holds are equal, measured or not).
#[derive(Clone, Debug, Default)]
pub struct Measured(pub(crate) Option<Usage>);

impl PartialEq for Measured {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The words waiting at the switch inputs of `schedule`: as its verifier measured them, or
/// measured now ([`usage`]) when it was not verified through [`super::verify_on`].
pub fn usage_of(problem: &Problem, schedule: &super::Schedule) -> Usage {
    match &schedule.buffers.0 {
        Some(u) => u.clone(),
        None => usage(problem, &schedule.holds),
    }
}

/// Measures the words waiting at every switch input of `holds` (SPEC §2). Fragments are matched
/// hop to hop in order of start, as the verifier matches them; a hop that starts before its
/// parent allows (a causality error the verifier reports itself) counts as no wait. The
/// verifier gathers the same [`Waits`] as it checks each message.
pub fn usage(problem: &Problem, holds: &[Hold]) -> Usage {
    let by_msg = by_message(problem.traffic.messages.len(), holds);
    let mut waits = Waits::default();
    let (mut by_res, mut lists) = (Vec::new(), Vec::new());
    for m in 0..problem.traffic.messages.len() {
        let (run, steps) = (by_msg.of(m), &problem.steps[m]);
        step_ranges(holds, run, steps, &mut by_res, &mut lists);
        waits.add(holds, run, steps, &lists, problem.hardware.hop_latency);
    }
    waits.usage(&problem.hardware)
}

/// Hold numbers by message (holds naming no message of `n` left out), each message's by
/// (resource, start, number): what [`usage`] and the verifier read.
pub(crate) fn by_message(n: usize, holds: &[Hold]) -> super::occupancy::Groups {
    let mut by_msg =
        super::occupancy::Groups::new(n, holds.iter().map(|h| (h.msg() < n).then_some(h.msg())));
    // Each run sorted on its keys gathered once, not looked up in every comparison.
    let mut keyed: Vec<(Resource, u64, u32)> = Vec::new();
    for m in 0..n {
        let run = by_msg.of_mut(m);
        keyed.clear();
        keyed.extend(run.iter().map(|&i| {
            let h = &holds[i as usize];
            (h.resource(), h.start(), i)
        }));
        keyed.sort_unstable();
        for (o, &(_, _, i)) in run.iter_mut().zip(&keyed) {
            *o = i;
        }
    }
    by_msg
}

/// Per step of a route, its range of `run` (a message's hold numbers by resource, then start,
/// as [`by_message`] lists them): the steps in resource order walked along `run` once, where
/// looking each step up in the run reads a dozen holds spread over it. A route that passes a
/// resource twice gets the same range for both steps. `by_res` is scratch.
pub(crate) fn step_ranges(
    holds: &[Hold],
    run: &[u32],
    steps: &[super::Step],
    by_res: &mut Vec<u32>,
    ranges: &mut Vec<(usize, usize)>,
) {
    by_res.clear();
    by_res.extend(0..steps.len() as u32);
    by_res.sort_unstable_by_key(|&j| (steps[j as usize].resource(), j));
    ranges.clear();
    ranges.resize(steps.len(), (0, 0));
    let mut p = 0;
    for &j in by_res.iter() {
        let r = steps[j as usize].resource();
        while p < run.len() && holds[run[p] as usize].resource() < r {
            p += 1;
        }
        let hi = p + run[p..].partition_point(|&i| holds[i as usize].resource() == r);
        ranges[j as usize] = (p, hi);
    }
}

/// The words waiting at switch inputs, gathered message by message ([`Waits::add`]) as the
/// verifier walks the messages, then measured ([`Waits::usage`]): inputs by dense numbers, and
/// per input the changes of slope of its load (the trapezoids' second differences, module
/// documentation).
#[derive(Default)]
pub(crate) struct Waits {
    ids: FastMap<Resource, u32>,
    inputs: Vec<Resource>,
    /// (input, cycle, change of slope).
    events: Vec<(u32, u64, i64)>,
    latest: Vec<Option<u64>>,
}

impl Waits {
    /// The waits of one message: `run` its holds by (resource, start), `lists` each step's
    /// range of `run` ([`step_ranges`]), `lat` the switch latency.
    pub(crate) fn add(
        &mut self,
        holds: &[Hold],
        run: &[u32],
        steps: &[super::Step],
        lists: &[(usize, usize)],
        lat: u64,
    ) {
        let frags = lists.first().map_or(0, |&(lo, hi)| hi - lo);
        for f in 0..frags {
            // Per step: the latest start of its children for fragment f.
            let latest = &mut self.latest;
            latest.clear();
            latest.resize(steps.len(), None);
            for (j, st) in steps.iter().enumerate() {
                let (Some(p), (lo, hi)) = (st.parent(), lists[j]) else {
                    continue;
                };
                if lo + f < hi {
                    let s = holds[run[lo + f] as usize].start();
                    latest[p] = Some(latest[p].map_or(s, |l: u64| l.max(s)));
                }
            }
            for (j, st) in steps.iter().enumerate() {
                let (Some(child), (lo, hi)) = (self.latest[j], lists[j]) else {
                    continue;
                };
                if lo + f >= hi {
                    continue;
                }
                let h = &holds[run[lo + f] as usize];
                let a = h.start() + lat;
                let d = child.saturating_sub(a);
                let len = h.end() - h.start();
                if d == 0 {
                    continue;
                }
                let inputs = &mut self.inputs;
                let id = *self.ids.entry(st.resource()).or_insert_with(|| {
                    inputs.push(st.resource());
                    inputs.len() as u32 - 1
                });
                let top = len.min(d);
                // Second differences of the trapezoid (module documentation).
                self.events.push((id, a, 1));
                self.events.push((id, a + top, -1));
                self.events.push((id, a + d + len - top, -1));
                self.events.push((id, a + d + len, 1));
            }
        }
    }

    /// The most words waiting at one input, and the first input over its budget in `hw`.
    pub(crate) fn usage(self, hw: &Hardware) -> Usage {
        let hw = *hw;
        let Waits {
            inputs, mut events, ..
        } = self;
        // Inputs in resource order, so the report does not depend on hashing.
        let mut rank: Vec<u32> = (0..inputs.len() as u32).collect();
        rank.sort_unstable_by_key(|&i| inputs[i as usize]);
        let mut pos = vec![0u32; inputs.len()];
        for (r, &i) in rank.iter().enumerate() {
            pos[i as usize] = r as u32;
        }
        events.sort_unstable_by_key(|&(i, t, d)| (pos[i as usize], t, d));
        let mut out = Usage::default();
        let mut k = 0;
        while k < events.len() {
            let input = inputs[events[k].0 as usize];
            let cap = budget(&hw, input);
            // `before` is the load in the cycle before the current event's, `slope` the change per
            // cycle from the event's cycle to the next event's.
            let (mut before, mut slope) = (0i64, 0i64);
            while k < events.len() && inputs[events[k].0 as usize] == input {
                let t = events[k].1;
                while k < events.len() && inputs[events[k].0 as usize] == input && events[k].1 == t
                {
                    slope += events[k].2;
                    k += 1;
                }
                let next = match events.get(k) {
                    Some(&(i, n, _)) if inputs[i as usize] == input => n,
                    _ => t + 1,
                };
                let cycles = (next - t) as i64;
                // Largest load over t..next: at its start when falling, at its end when rising.
                let (peak, when) = if slope > 0 {
                    (before + slope * cycles, next - 1)
                } else {
                    (before + slope, t)
                };
                if peak > out.max as i64 {
                    out.max = peak as u64;
                    // The first cycle of that load.
                    let first_at = if slope > 0 { when } else { t };
                    out.at = Some((input, first_at));
                }
                if let Some(c) = cap {
                    let c = c as i64;
                    if peak > c {
                        // First cycle above the budget in this stretch.
                        let at = if slope > 0 && before <= c {
                            t + ((c - before) / slope) as u64
                        } else {
                            t
                        };
                        let words = (before + slope * (at - t + 1) as i64) as u64;
                        if out.over.is_none_or(|(r, ot, _, _)| (at, input) < (ot, r)) {
                            out.over = Some((input, at, words, c as u64));
                        }
                    }
                }
                before += slope * cycles;
            }
        }
        out
    }
}

/// The words waiting at each switch input as the scheduler places messages: per input, sorted
/// disjoint spans `[start, end)` with the number of words waiting in each cycle of them.
#[derive(Clone, Debug, Default)]
pub struct Load {
    hardware: Hardware,
    spans: FastMap<Resource, Vec<(u64, u64, u64)>>,
}

impl Load {
    pub fn new(hardware: Hardware) -> Self {
        Load {
            hardware,
            spans: FastMap::default(),
        }
    }

    pub fn hardware(&self) -> Hardware {
        self.hardware
    }

    /// Whether anything is to be tracked at all.
    pub fn bounded(&self) -> bool {
        self.hardware.buffer.is_some()
    }

    /// Can a fragment of `len` words that crosses the hop into input `r` from cycle `a − latency`
    /// on wait `d` cycles there (each word), on top of what waits already?
    pub fn fits(&self, r: Resource, a: u64, len: u64, d: u64) -> bool {
        let Some(cap) = budget(&self.hardware, r) else {
            return true;
        };
        if d == 0 {
            return true;
        }
        if len.min(d) > cap {
            return false;
        }
        let Some(spans) = self.spans.get(&r) else {
            return true;
        };
        let end = a + d + len - 1;
        let from = partition_from_end(spans, |s| s.1 <= a);
        for &(s, e, w) in &spans[from..] {
            if s >= end {
                break;
            }
            let (x, y) = (s.max(a) - a, e.min(end) - 1 - a);
            if w + trapezoid_max(x, y, len, d) > cap {
                return false;
            }
        }
        true
    }

    /// The longest wait below `d` that [`Load::fits`] (0 always does).
    pub fn longest_fitting(&self, r: Resource, a: u64, len: u64, d: u64) -> u64 {
        let (mut lo, mut hi) = (0u64, d);
        // Invariant: lo fits, hi does not.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.fits(r, a, len, mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Records (or, with `remove`, takes back) a fragment of `len` words waiting `d` cycles at
    /// input `r` from cycle `a`: the trapezoid as `min(len, d)` nested spans of one word.
    pub fn add(&mut self, r: Resource, a: u64, len: u64, d: u64, remove: bool) {
        if !self.bounded() || d == 0 || len == 0 {
            return;
        }
        let spans = self.spans.entry(r).or_default();
        let top = len.min(d);
        for k in 0..top {
            add_span(spans, a + k, a + d + len - 1 - k, remove);
        }
    }

    /// The most words waiting at `r` in any cycle of `from..to`.
    pub fn peak(&self, r: Resource, from: u64, to: u64) -> u64 {
        let Some(spans) = self.spans.get(&r) else {
            return 0;
        };
        let i = partition_from_end(spans, |s| s.1 <= from);
        spans[i..]
            .iter()
            .take_while(|s| s.0 < to)
            .map(|s| s.2)
            .max()
            .unwrap_or(0)
    }
}

/// Adds one word (or removes it) over `[s, e)` of sorted, disjoint, non-empty spans, splitting
/// and merging as needed.
fn add_span(spans: &mut Vec<(u64, u64, u64)>, s: u64, e: u64, remove: bool) {
    if s >= e {
        return;
    }
    let lo = partition_from_end(spans, |x| x.1 <= s);
    let hi = partition_from_end(spans, |x| x.0 < e);
    // The affected stretch, rebuilt: old spans cut at s and e, gaps filled.
    let mut out: Vec<(u64, u64, u64)> = Vec::with_capacity(hi - lo + 4);
    let mut t = s;
    let push = |out: &mut Vec<(u64, u64, u64)>, a: u64, b: u64, w: u64| {
        if a >= b || w == 0 {
            return;
        }
        match out.last_mut() {
            Some(l) if l.1 == a && l.2 == w => l.1 = b,
            _ => out.push((a, b, w)),
        }
    };
    let step = |w: u64| if remove { w.saturating_sub(1) } else { w + 1 };
    for &(a, b, w) in &spans[lo..hi] {
        if a < s {
            push(&mut out, a, s, w);
        }
        if t < a.max(s) {
            push(&mut out, t, a.max(s), step(0));
        }
        push(&mut out, a.max(s), b.min(e), step(w));
        if b > e {
            push(&mut out, e, b, w);
        }
        t = b.min(e).max(t);
    }
    if t < e {
        push(&mut out, t, e, step(0));
    }
    // Merge with untouched neighbours of equal load.
    let (mut lo, mut hi) = (lo, hi);
    if lo > 0 {
        if let Some(f) = out.first_mut() {
            let p = spans[lo - 1];
            if p.1 == f.0 && p.2 == f.2 {
                f.0 = p.0;
                lo -= 1;
            }
        }
    }
    if hi < spans.len() {
        if let Some(l) = out.last_mut() {
            let nx = spans[hi];
            if l.1 == nx.0 && l.2 == nx.2 {
                l.1 = nx.1;
                hi += 1;
            }
        }
    }
    spans.splice(lo..hi, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trapezoids() {
        // One word waiting 3 cycles: a box.
        assert_eq!(
            (0..5).map(|u| trapezoid(u, 1, 3)).collect::<Vec<_>>(),
            [1, 1, 1, 0, 0]
        );
        // Four words waiting 2 cycles each: up to 2, for 5 cycles.
        assert_eq!(
            (0..6).map(|u| trapezoid(u, 4, 2)).collect::<Vec<_>>(),
            [1, 2, 2, 2, 1, 0]
        );
        for len in 1..6 {
            for d in 0..6 {
                for x in 0..10 {
                    for y in x..10 {
                        let m = (x..=y).map(|u| trapezoid(u, len, d)).max().unwrap();
                        assert_eq!(trapezoid_max(x, y, len, d), m, "{len} {d} {x} {y}");
                    }
                }
            }
        }
    }

    #[test]
    fn load_adds_removes_and_fits() {
        let hw = Hardware {
            buffer: Some(2),
            ..Hardware::default()
        };
        let r = Resource::Link { from: 0, to: 1 };
        let mut l = Load::new(hw);
        assert!(l.fits(r, 10, 1, 100));
        assert!(!l.fits(r, 10, 3, 3), "3 words waiting at once");
        l.add(r, 10, 1, 5, false); // [10,15) 1 word
        l.add(r, 12, 2, 2, false); // 1 at 12, 2 at 13, 1 at 14
        assert_eq!(l.peak(r, 0, 100), 3);
        assert_eq!(l.peak(r, 0, 13), 2);
        l.add(r, 12, 2, 2, true);
        assert_eq!(l.spans[&r], vec![(10, 15, 1)]);
        assert!(l.fits(r, 14, 1, 10));
        assert!(!l.fits(r, 13, 2, 2));
        assert!(l.fits(r, 14, 2, 1));
        assert_eq!(l.longest_fitting(r, 0, 2, 30), 10);
        l.add(r, 10, 1, 5, true);
        assert!(l.spans[&r].is_empty());
        assert_eq!(group(1615), "1,615");
        assert_eq!(group(615), "615");
    }
}
