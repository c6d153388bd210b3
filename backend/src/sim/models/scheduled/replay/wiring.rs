//! Step 1 of the replay: the switch programs as the cycles run them, read straight from the
//! holds and the routes. A node's program is its holds that leave its switch, each on a step of
//! its message's route ([`crate::switch::instruction`] gives the instruction a hold is, the form
//! `--out` lists); listing them node by node first would keep a second copy of the plan, 20 bytes
//! per hold (2 GB for a million messages), so the replay numbers them here instead.
//!
//! Every step of every route gets a number once, message after message (the message's first step
//! number plus the step's index). Step `g` is at once the read cursor of the instructions on it
//! (one per message and output port of a switch: the fragments of a message through one port read
//! the same words in turn) and, for an injection or a link, the word queue it fills at the switch
//! it enters (a message's words waiting at one input port of that switch), which the instructions
//! on the steps after it read. A route enters and leaves each port of a switch at most once (a
//! tree reaches each node once; a route holding one resource twice is refused here), so these are
//! exactly the programs' (node, port) queues and cursors (Minsky Fig 5-9: `In`, `Out`).
//!
//! The instructions are listed in start order as (step, end) pairs, 8 bytes each, by a counting
//! sort on the start cycle; what else an instruction needs when it starts ([`super::cycles`]) is
//! kept per step, next to the step's counters, in the order the cycles reach them: its switch
//! port and the step before it.

use super::{mismatch, ReplayError};
use crate::schedule::{Groups, Hold, Problem, Resource, Step};
use crate::topology::Network;

/// No index: a queue, cursor or slot an instruction does not have.
pub(super) const NONE: u32 = u32::MAX;

/// A switch instruction as listed for the cycles: the step it runs on (see the module docs) and
/// the cycle after its last; its first is its run's ([`Wired::starts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub step: u32,
    pub end: u32,
}

/// A processor's injection: its hold and the queue (step) it fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Injection {
    pub hold: u32,
    pub step: u32,
}

/// The ejection steps of each message: (node, step), one per node it reaches.
pub(super) struct Ejections {
    first: Vec<u32>,
    at: Vec<(u32, u32)>,
}

impl Ejections {
    /// The step that took message `m`'s words at `node`.
    pub fn cursor(&self, m: usize, node: usize) -> Option<usize> {
        let (lo, hi) = (
            *self.first.get(m)? as usize,
            *self.first.get(m + 1)? as usize,
        );
        self.at[lo..hi]
            .iter()
            .find(|&&(at, _)| at as usize == node)
            .map(|&(_, step)| step as usize)
    }
}

/// The wired plan.
pub(super) struct Wired {
    /// Every switch instruction, in start order (a hold on no step of its route leaves an
    /// entry on step NONE, which runs nothing).
    pub acts: Vec<Entry>,
    /// The runs of `acts` that start in one cycle: (that cycle, the run's first act), in order.
    pub starts: Vec<(u64, u32)>,
    /// Every injection (the processor's, no switch instruction) with the queue it fills, in
    /// start order.
    pub injections: Vec<Injection>,
    /// Per message: the number of its first step; then the number of steps.
    pub first: Vec<u32>,
    /// Per step, its switch port: a link's number (the output slot of the instructions on it,
    /// and the switch input its words enter), and past the links its node's: an injection's
    /// input (a node's injection ports count as one) or an ejection's output slot. Read when
    /// an instruction starts rather than found again in the network.
    pub port: Vec<u32>,
    /// Per step, the step before it (NONE for an injection): the queue its instructions read.
    pub parent: Vec<u32>,
    /// The steps whose queue is read by other than one cursor (a multicast tree's branches, or
    /// a step no instruction reads), with their readers, in step order; every other queue has
    /// one reader.
    pub readers: Vec<(u32, u16)>,
    pub ejections: Ejections,
    /// The cycle after the last instruction or injection ends.
    pub horizon: u64,
}

impl Wired {
    /// How many cursors read queue `step`.
    pub fn readers_of(&self, step: u32) -> u16 {
        match self.readers.binary_search_by_key(&step, |&(s, _)| s) {
            Ok(i) => self.readers[i].1,
            Err(_) => 1,
        }
    }
}

/// A message's steps by resource, found in constant time: a table over the network's links and
/// its nodes' ports, filled for one message at a time (a route is a hundred steps, a plan a
/// hundred million) and emptied by the cells it filled.
pub(super) struct StepOf {
    /// Per link, then per node's injection port, then per node's ejection port: the step.
    at: Vec<u32>,
    links: usize,
    nodes: usize,
    filled: Vec<u32>,
}

impl StepOf {
    pub fn new(network: &Network) -> StepOf {
        let (links, nodes) = (network.links.len(), network.nodes());
        StepOf {
            at: vec![NONE; links + 2 * nodes],
            links,
            nodes,
            filled: Vec::new(),
        }
    }

    /// The table cell of `r`, and its port ([`Wired::port`]).
    fn cell(&self, network: &Network, r: Resource) -> Option<(usize, usize)> {
        let node = |n: u32| Some(n as usize).filter(|&n| n < self.nodes);
        match r {
            Resource::Link { from, to } => network
                .link_between(from as usize, to as usize)
                .map(|l| (l, l)),
            Resource::Inject(n) => node(n).map(|n| (self.links + n, self.links + n)),
            Resource::Eject(n) => node(n).map(|n| (self.links + self.nodes + n, self.links + n)),
        }
    }

    /// Files message `m`'s `steps`, and pushes each one's port ([`Wired::port`]) onto `port`; a
    /// resource held twice, or one the network does not have, is refused (and the table left
    /// empty).
    pub fn load(
        &mut self,
        network: &Network,
        m: usize,
        steps: &[Step],
        port: &mut Vec<u32>,
    ) -> Result<(), ReplayError> {
        for (j, s) in steps.iter().enumerate() {
            let refused = match self.cell(network, s.resource()) {
                Some((c, p)) if self.at[c] == NONE => {
                    self.at[c] = j as u32;
                    self.filled.push(c as u32);
                    port.push(p as u32);
                    None
                }
                Some(_) => Some("twice"),
                None => Some("but the network has no such resource"),
            };
            if let Some(why) = refused {
                self.clear();
                return mismatch(format!(
                    "the route of message {m} holds {} {why}",
                    s.resource()
                ));
            }
        }
        Ok(())
    }

    /// The index of the loaded message's step on `r`.
    pub fn find(&self, network: &Network, r: Resource) -> Option<u32> {
        self.cell(network, r)
            .map(|(c, _)| self.at[c])
            .filter(|&j| j != NONE)
    }

    /// Empties the table for the next message.
    pub fn clear(&mut self) {
        for &c in &self.filled {
            self.at[c as usize] = NONE;
        }
        self.filled.clear();
    }
}

/// The holds of each message, in hold order: their ranges when the holds are sorted by message
/// (as every scheduler leaves them), else a counting sort.
enum ByMessage {
    Sorted(Vec<u32>),
    Grouped(Groups),
}

impl ByMessage {
    fn new(n: usize, holds: &[Hold]) -> ByMessage {
        if holds.windows(2).all(|w| w[0].msg() <= w[1].msg()) {
            let mut first = Vec::with_capacity(n + 1);
            let mut i = 0;
            for m in 0..=n {
                while i < holds.len() && holds[i].msg() < m {
                    i += 1;
                }
                first.push(i as u32);
            }
            ByMessage::Sorted(first)
        } else {
            ByMessage::Grouped(Groups::new(
                n,
                holds.iter().map(|h| (h.msg() < n).then_some(h.msg())),
            ))
        }
    }

    fn of(&self, m: usize) -> impl Iterator<Item = u32> + '_ {
        let (range, listed) = match self {
            ByMessage::Sorted(first) => (first[m]..first[m + 1], None),
            ByMessage::Grouped(g) => (0..g.of(m).len() as u32, Some(g.of(m))),
        };
        range.map(move |i| listed.map_or(i, |l| l[i as usize]))
    }
}

/// Is `h` a switch's instruction (a hold on a link or an ejection port)?
fn is_instruction(h: &Hold) -> bool {
    !matches!(h.resource(), Resource::Inject(_))
}

/// Numbers every step, lists every instruction and injection with its step in start order.
pub(super) fn wire(problem: &Problem, holds: &[Hold]) -> Result<Wired, ReplayError> {
    let network = problem.network;
    let n = problem.traffic.messages.len();
    if holds.len() >= NONE as usize {
        return mismatch(format!("{} holds: too many to replay", holds.len()));
    }
    if let Some(h) = holds.iter().find(|h| h.msg() >= n) {
        return mismatch(format!(
            "a hold of message {}, which does not exist",
            h.msg()
        ));
    }
    let mut first = Vec::with_capacity(n + 1);
    let mut total = 0u64;
    for m in 0..n {
        first.push(total as u32);
        total += problem.steps.get(m).map_or(0, |s| s.len() as u64);
        if total >= NONE as u64 {
            return mismatch(format!("{total} route steps: too many to replay"));
        }
    }
    first.push(total as u32);

    // A counting sort of the instructions by start cycle: the buckets' first places. A plan's
    // starts span its makespan, far fewer cycles than it has holds; a plan whose starts do not
    // (a few holds far apart) is sorted by comparison instead.
    let (mut lo, mut hi, mut count, mut horizon) = (u64::MAX, 0u64, 0usize, 0u64);
    for h in holds {
        horizon = horizon.max(h.end());
        if is_instruction(h) {
            lo = lo.min(h.start());
            hi = hi.max(h.start());
            count += 1;
        }
    }
    let span = if count == 0 { 0 } else { hi - lo + 1 };
    let counting = span <= 4 * count as u64 + 1024;
    let mut fill: Vec<u32> = Vec::new();
    let mut starts: Vec<(u64, u32)> = Vec::new();
    if counting && count > 0 {
        fill = vec![0u32; span as usize + 1];
        for h in holds.iter().filter(|h| is_instruction(h)) {
            fill[(h.start() - lo) as usize + 1] += 1;
        }
        for i in 1..fill.len() {
            fill[i] += fill[i - 1];
        }
        for (b, w) in fill.windows(2).enumerate() {
            if w[1] > w[0] {
                starts.push((lo + b as u64, w[0]));
            }
        }
    }
    let blank = Entry { step: NONE, end: 0 };
    let mut acts = vec![blank; if counting { count } else { 0 }];
    // Without the counting sort: (start, entry), sorted below.
    let mut unsorted: Vec<(u32, Entry)> = Vec::new();
    let mut injections: Vec<Injection> = Vec::new();
    let mut readers: Vec<(u32, u16)> = Vec::new();
    let mut ej_first = Vec::with_capacity(n + 1);
    let mut ej_at: Vec<(u32, u32)> = Vec::new();
    let by_msg = ByMessage::new(n, holds);
    let mut step_of = StepOf::new(network);
    let mut port: Vec<u32> = Vec::with_capacity(total as usize);
    let mut parent: Vec<u32> = Vec::with_capacity(total as usize);
    // Per step of the message: does an instruction run on it; how many cursors read its queue.
    let mut used: Vec<bool> = Vec::new();
    let mut read_by: Vec<u16> = Vec::new();
    let no_steps: Vec<Step> = Vec::new();
    for (m, &base) in first.iter().take(n).enumerate() {
        let steps = problem.steps.get(m).unwrap_or(&no_steps);
        step_of.load(network, m, steps, &mut port)?;
        parent.extend(
            steps
                .iter()
                .map(|s| s.parent().map_or(NONE, |p| base + p as u32)),
        );
        used.clear();
        used.resize(steps.len(), false);
        for k in by_msg.of(m) {
            let h = &holds[k as usize];
            // A hold on no step of the route is in no program (as `switch::build` leaves it).
            let Some(j) = step_of.find(network, h.resource()) else {
                continue;
            };
            let step = base + j;
            let (_, start, end) = h.fields32();
            if !is_instruction(h) {
                injections.push(Injection { hold: k, step });
                continue;
            }
            used[j as usize] = true;
            let e = Entry { step, end };
            if counting {
                let b = &mut fill[(h.start() - lo) as usize];
                acts[*b as usize] = e;
                *b += 1;
            } else {
                unsorted.push((start, e));
            }
        }
        step_of.clear();
        // Readers per queue: the steps after it that an instruction runs on.
        read_by.clear();
        read_by.resize(steps.len(), 0);
        for (j, s) in steps.iter().enumerate() {
            if let Some(p) = s.parent().filter(|_| used[j]) {
                if let Some(r) = read_by.get_mut(p) {
                    *r = r.saturating_add(1);
                }
            }
        }
        ej_first.push(ej_at.len() as u32);
        for (j, s) in steps.iter().enumerate() {
            match s.resource() {
                Resource::Eject(node) => ej_at.push((node, base + j as u32)),
                _ if read_by[j] != 1 => readers.push((base + j as u32, read_by[j])),
                _ => {}
            }
        }
    }
    ej_first.push(ej_at.len() as u32);
    if !counting {
        unsorted.sort_unstable_by_key(|&(s, e)| (s, e.step, e.end));
        for (i, &(s, e)) in unsorted.iter().enumerate() {
            if starts.last().is_none_or(|&(t, _)| t != s as u64) {
                starts.push((s as u64, i as u32));
            }
            acts.push(e);
        }
    }
    // The keys read once, in hold order, rather than at every comparison.
    injections.sort_by_cached_key(|e| (holds[e.hold as usize].start(), e.hold));
    Ok(Wired {
        acts,
        starts,
        injections,
        first,
        port,
        parent,
        readers,
        ejections: Ejections {
            first: ej_first,
            at: ej_at,
        },
        horizon,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::NetworkSpec;

    /// The replay keeps one entry per switch instruction, a hundred million for a million
    /// messages: 8 bytes each.
    #[test]
    fn an_instruction_entry_is_8_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 8);
    }

    /// A route's steps are found by resource, with each step's port, and the tables are empty
    /// again for the next message; a route that holds a link twice is refused.
    #[test]
    fn steps_are_found_by_resource_and_a_repeat_is_refused() {
        let spec: NetworkSpec = "mesh:3x1".parse().unwrap();
        let net = Network::build(&spec).unwrap();
        let links = net.links.len();
        let path = [
            Step::new(Resource::inject(0), None),
            Step::new(Resource::link(0, 1), Some(0)),
            Step::new(Resource::link(1, 2), Some(1)),
            Step::new(Resource::eject(2), Some(2)),
        ];
        let mut of = StepOf::new(&net);
        let mut port = Vec::new();
        of.load(&net, 0, &path, &mut port).unwrap();
        assert_eq!(of.find(&net, Resource::link(1, 2)), Some(2));
        assert_eq!(of.find(&net, Resource::eject(2)), Some(3));
        assert_eq!(of.find(&net, Resource::link(2, 1)), None);
        assert_eq!(of.find(&net, Resource::eject(1)), None);
        let l12 = net.link_between(1, 2).unwrap() as u32;
        assert_eq!(port[2], l12);
        assert_eq!((port[0], port[3]), (links as u32, links as u32 + 2));
        of.clear();
        assert_eq!(of.find(&net, Resource::link(1, 2)), None);
        let looped = [
            Step::new(Resource::inject(0), None),
            Step::new(Resource::link(0, 1), Some(0)),
            Step::new(Resource::link(1, 0), Some(1)),
            Step::new(Resource::link(0, 1), Some(2)),
        ];
        let e = of.load(&net, 7, &looped, &mut port).unwrap_err();
        assert!(e.to_string().contains("message 7 holds"), "{e}");
        // Refused, and nothing of it is left behind.
        assert_eq!(of.find(&net, Resource::link(0, 1)), None);
    }
}
