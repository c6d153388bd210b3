//! Step 2 of the replay: the dense state the cycles touch, given out once before the first
//! cycle, message by message.
//!
//! A word queue is a message's words waiting at one input port of one switch; a read cursor is
//! one per message and output port of a switch (the fragments of a message through one port read
//! the same words in turn); an output slot is a link or a node's ejection, checked for one word
//! per cycle (Minsky §4.2: the plan never lets two words share a link cycle). Every index is
//! given out per message from a few sorted keys, so the cycles touch only arrays. A plan of 4.4
//! million holds has millions of each, so the per-instruction state is one record, laid out in
//! the order the cycles read it (by start), and a queue's counters sit together.

use crate::schedule::{FastMap, Groups, Hold, Problem, Resource};
use crate::switch::port_towards;
use crate::topology::Port;

use super::flat::{Flat, NONE};

/// An instruction as the cycles run it: its last cycle and what each cycle of it reads and
/// writes; its first cycle is its run's in [`Wired::starts`]. 28 bytes: a plan has one per
/// switch instruction, a hundred million for a million messages.
#[derive(Clone, Copy, Debug)]
pub(super) struct Act {
    /// The cycle after its last (32 bits, as the instruction keeps it).
    pub end: u32,
    /// Its step's index along its message's route: the order a cycle runs instructions in, so a
    /// word crosses several switches in one cycle with no switch latency.
    pub depth: u32,
    /// Its number ([`Flat`]).
    pub k: u32,
    /// The queue it reads.
    pub inq: u32,
    /// Its read cursor.
    pub cur: u32,
    /// The queue it feeds at the next switch (NONE for an output that leads nowhere); for an
    /// ejection, its number among the ejections ([`Ejections`]), which keep the last word's
    /// cycle (a per-ejection record, not one per cursor).
    pub outq: u32,
    /// Its output slot: a link number, or past the links a node's ejection (NONE for a link
    /// the network does not have).
    pub slot: u32,
}

/// A word queue's counters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Queue {
    /// Words pushed into it so far.
    pub pushed: u32,
    /// Its list of words some reader has yet to take ([`super::cycles`]), or NONE.
    pub list: u32,
    /// Its switch input.
    pub input: u32,
    /// How many cursors read it.
    pub readers: u16,
}

/// The ejection cursors of each message: (node, cursor), one per node it reaches; an ejection's
/// number is its place in `at`.
pub(super) struct Ejections {
    first: Vec<u32>,
    at: Vec<(u32, u32)>,
}

impl Ejections {
    /// The cursor that took message `m`'s words at `node`, and the ejection's number.
    pub fn cursor(&self, m: usize, node: usize) -> Option<(usize, usize)> {
        let (lo, hi) = (
            *self.first.get(m)? as usize,
            *self.first.get(m + 1)? as usize,
        );
        self.at[lo..hi]
            .iter()
            .position(|&(at, _)| at as usize == node)
            .map(|i| (self.at[lo + i].1 as usize, lo + i))
    }

    /// How many ejections there are.
    pub fn count(&self) -> usize {
        self.at.len()
    }
}

/// The wired plan.
pub(super) struct Wired {
    /// Every instruction, in start order (then number).
    pub acts: Vec<Act>,
    /// The runs of `acts` that start in one cycle: (that cycle, the run's first act), in order.
    pub starts: Vec<(u64, u32)>,
    pub queues: Vec<Queue>,
    /// Per injection hold: the queue it pushes into (NONE if it is no injection).
    pub inj_q: Vec<u32>,
    pub cursors: usize,
    /// Switch inputs (a node's input ports, its injection ports counted as one).
    pub inputs: usize,
    pub ejections: Ejections,
}

/// The output slot of node `node`'s ejection.
fn eject_slot(links: usize, node: u32) -> u32 {
    (links + node as usize) as u32
}

/// Is `slot` an ejection's ([`eject_slot`])?
pub(super) fn is_eject(links: usize, slot: u32) -> bool {
    slot != NONE && slot as usize >= links
}

/// Gives every instruction its queues, cursor, slot and depth, and every injection its queue.
pub(super) fn wire(problem: &Problem, all: &Flat, injections: &[Hold]) -> Wired {
    let network = problem.network;
    let n = problem.traffic.messages.len();
    let total = all.total();
    let links = network.links.len();

    // Per instruction, in number order: its program (4 bytes; its ports are read from the
    // program when needed rather than copied, as a plan of a hundred million instructions
    // would keep 1.6 GB of copies) and its place in start order; and its record, placed where
    // the cycles will read it.
    let rank = all.rank_by_start();
    let mut program: Vec<u32> = Vec::with_capacity(total);
    let blank = Act {
        end: 0,
        depth: u32::MAX,
        k: 0,
        inq: NONE,
        cur: NONE,
        outq: NONE,
        slot: NONE,
    };
    let mut acts = vec![blank; total];
    // Per start cycle, the first act starting then (acts are in start order).
    let mut first: FastMap<u64, u32> = FastMap::default();
    for (k, ((p, _, ins), &r)) in all.iter_programs().zip(&rank).enumerate() {
        program.push(p);
        acts[r as usize] = Act {
            end: ins.end,
            k: k as u32,
            ..blank
        };
        let f = first.entry(ins.start as u64).or_insert(r);
        *f = (*f).min(r);
    }
    let mut starts: Vec<(u64, u32)> = first.into_iter().collect();
    starts.sort_unstable();
    // Instruction `k`: its node, input and output ports, and its place in start order.
    let ports = |k: u32| -> (u32, Port, Port, u32) {
        let (node, ins) = all.at(program[k as usize], k as usize);
        (node, ins.input, ins.output, rank[k as usize])
    };

    // Instructions and injections grouped by message (a counting sort).
    let by_msg = Groups::new(n, all.iter().map(|(_, i)| Some(i.msg()).filter(|&m| m < n)));
    let inj_by_msg = Groups::new(
        n,
        injections.iter().map(|h| (h.msg() < n).then_some(h.msg())),
    );

    let mut inj_q = vec![NONE; injections.len()];
    // A queue per (node, input) of each message: at most one per instruction and injection,
    // sized once rather than grown by doubling (up to twice the room on a large plan).
    let mut queues: Vec<Queue> = Vec::with_capacity(total + injections.len());
    let mut cursors = 0u32;
    let mut ej_first = Vec::with_capacity(n + 1);
    let mut ej_at: Vec<(u32, u32)> = Vec::new();
    // Per queue: its switch input, numbered as first seen.
    let mut inputs: FastMap<(u32, Port), u32> = FastMap::default();
    let mut keys: Vec<((u32, Port), u8, u32)> = Vec::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut steps_sorted: Vec<(Resource, u32)> = Vec::new();
    // This message's instructions by (node, output port): read from the programs once.
    let mut outs: Vec<((u32, Port), u32)> = Vec::new();
    for m in 0..n {
        let ks = by_msg.of(m);
        keys.clear();
        outs.clear();
        steps_sorted.clear();
        steps_sorted.extend(
            problem.steps[m]
                .iter()
                .enumerate()
                .map(|(j, s)| (s.resource(), j as u32)),
        );
        steps_sorted.sort();
        for &k in ks {
            let (node, input, output, at) = ports(k);
            let a = &mut acts[at as usize];
            keys.push(((node, input), 0, k));
            outs.push(((node, output), k));
            let r = match output {
                Port::Eject => {
                    a.slot = eject_slot(links, node);
                    Some(Resource::Eject(node))
                }
                out => network.neighbor(node as usize, out).map(|to| {
                    a.slot = network
                        .link_between(node as usize, to)
                        .map_or(NONE, |l| l as u32);
                    keys.push(((to as u32, port_towards(network, to, node as usize)), 1, k));
                    Resource::link(node as usize, to)
                }),
            };
            if let Some(r) = r {
                if let Ok(p) = steps_sorted.binary_search_by(|(s, _)| s.cmp(&r)) {
                    a.depth = steps_sorted[p].1;
                }
            }
        }
        for &j in inj_by_msg.of(m) {
            if let Resource::Inject(node) = injections[j as usize].resource() {
                keys.push(((node, Port::Inject), 2, j));
            }
        }
        // Queues: one per (node, input port) of this message.
        keys.sort_unstable();
        let mut last: Option<(u32, Port)> = None;
        for &(key, kind, idx) in &keys {
            if last != Some(key) {
                last = Some(key);
                let next = inputs.len() as u32;
                queues.push(Queue {
                    pushed: 0,
                    list: NONE,
                    input: *inputs.entry(key).or_insert(next),
                    readers: 0,
                });
            }
            let q = queues.len() as u32 - 1;
            match kind {
                0 => acts[rank[idx as usize] as usize].inq = q,
                1 => acts[rank[idx as usize] as usize].outq = q,
                _ => inj_q[idx as usize] = q,
            }
        }
        // Cursors: one per (node, output port) of this message.
        keys.clear();
        keys.extend(outs.iter().map(|&(key, k)| (key, 0, k)));
        keys.sort_unstable();
        ej_first.push(ej_at.len() as u32);
        let mut last: Option<(u32, Port)> = None;
        for &(key, _, k) in &keys {
            if last != Some(key) {
                last = Some(key);
                cursors += 1;
                if key.1 == Port::Eject {
                    ej_at.push((key.0, cursors - 1));
                }
            }
            let a = &mut acts[rank[k as usize] as usize];
            a.cur = cursors - 1;
            if key.1 == Port::Eject {
                a.outq = ej_at.len() as u32 - 1;
            }
        }
        // Readers per queue: distinct cursors reading it.
        pairs.clear();
        pairs.extend(ks.iter().map(|&k| {
            let a = &acts[rank[k as usize] as usize];
            (a.inq, a.cur)
        }));
        pairs.sort_unstable();
        pairs.dedup();
        for &(q, _) in &pairs {
            if let Some(q) = queues.get_mut(q as usize) {
                q.readers = q.readers.saturating_add(1);
            }
        }
    }
    ej_first.push(ej_at.len() as u32);

    Wired {
        acts,
        starts,
        queues,
        inj_q,
        cursors: cursors as usize,
        inputs: inputs.len(),
        ejections: Ejections {
            first: ej_first,
            at: ej_at,
        },
    }
}

#[cfg(test)]
mod tests {
    /// The replay keeps one record per switch instruction, a hundred million for a million
    /// messages: 28 bytes each.
    #[test]
    fn an_instruction_record_is_28_bytes() {
        assert_eq!(std::mem::size_of::<super::Act>(), 28);
    }
}
