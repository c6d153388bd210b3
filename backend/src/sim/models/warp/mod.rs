//! The WARP-style unscheduled baseline (Eberhart App. B) as a hardware model: time advances in
//! unit steps (one cycle each); every source sends its packets in order, one at a time, as soon
//! as it can; a header takes every free link of its path it reaches, and where several want one
//! link a random one of them wins; the others block and **hold every link back to the source**
//! until they are delivered (Fig B.1). Once the header is through, the packet streams over its
//! whole path for `size` cycles (links are held for the whole transmission), then the path is
//! released. The same rules as `ttdl array --unscheduled`, on any network and program, with
//! the node interface every model shares (SPEC §2, §5): a node ejects one word per cycle, so a
//! header that has its whole path also takes its destination's ejection port, or blocks (still
//! holding its path) until that is free; without it two worms ending at one node would stream
//! into it at once (the MPEG-4 decoder: 546 cycles, under the 598 of a plan that ejects one
//! word per cycle).

use std::collections::{BTreeMap, VecDeque};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::sim::options::{int_depends, ModelError, ModelOptions, OptionSpec};
use crate::sim::paths::Paths;
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};
use crate::topology::LinkId;

pub const OPTIONS: &[OptionSpec] = &[int_depends(
    "seed",
    "the run's seed",
    0,
    u64::MAX,
    "seed of the random winner of each contested link",
)];

pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let seed = opts.int_or("seed", ctx.seed)?;
    Ok(Box::new(Warp {
        paths: Paths::new(ctx.network),
        rng: ChaCha8Rng::seed_from_u64(seed),
        queues: BTreeMap::new(),
        owner: vec![None; ctx.network.links.len()],
        ejecting: vec![None; ctx.network.nodes()],
        busy: vec![0; ctx.network.links.len()],
        inflight: 0,
        progress: 0,
    }))
}

struct Worm {
    packet: Packet,
    path: Vec<LinkId>,
    /// Links of the path taken so far.
    taken: usize,
    /// Cycle by which its last word has arrived, once the header is through.
    done_at: Option<u64>,
}

struct Warp {
    paths: Paths,
    rng: ChaCha8Rng,
    /// Per source: its packets in order; the front one is in the network.
    queues: BTreeMap<usize, VecDeque<Worm>>,
    /// Which source's front worm holds each link.
    owner: Vec<Option<usize>>,
    /// Which source's front worm holds each node's ejection port.
    ejecting: Vec<Option<usize>>,
    busy: Vec<u64>,
    inflight: usize,
    progress: u64,
}

impl NetworkModel for Warp {
    fn name(&self) -> String {
        "warp".into()
    }

    fn inject(&mut self, _now: u64, packet: Packet) {
        // A path that cannot exist (a disconnected graph) is left empty: the packet is then
        // delivered in place, as the core's checks report such programs before this.
        let path = self.paths.path(packet.src, packet.dst).unwrap_or_default();
        self.inflight += 1;
        self.queues.entry(packet.src).or_default().push_back(Worm {
            packet,
            path,
            taken: 0,
            done_at: None,
        });
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        // Worms whose last word arrived by now release their path.
        for q in self.queues.values_mut() {
            while let Some(w) = q.front() {
                match w.done_at {
                    Some(t) if t <= now => {
                        let w = q.pop_front().expect("front exists");
                        for &l in &w.path {
                            self.owner[l] = None;
                            self.busy[l] += w.packet.size;
                        }
                        if let Some(e) = self.ejecting.get_mut(w.packet.dst) {
                            *e = None;
                        }
                        delivered.push(Delivery {
                            packet: w.packet.id,
                            at: t,
                        });
                        self.inflight -= 1;
                    }
                    _ => break,
                }
            }
        }
        // Headers advance in a random order, so a contested link goes to a random competitor.
        let mut heads: Vec<usize> = self
            .queues
            .iter()
            .filter(|(_, q)| q.front().is_some_and(|w| w.done_at.is_none()))
            .map(|(&s, _)| s)
            .collect();
        heads.shuffle(&mut self.rng);
        for src in heads {
            let Some(w) = self.queues.get_mut(&src).and_then(|q| q.front_mut()) else {
                continue;
            };
            while w.taken < w.path.len() {
                let l = w.path[w.taken];
                if self.owner[l].is_some() {
                    break;
                }
                self.owner[l] = Some(src);
                w.taken += 1;
                self.progress += 1;
            }
            if w.taken == w.path.len() {
                match self.ejecting.get_mut(w.packet.dst) {
                    Some(e) if e.is_some() => continue,
                    Some(e) => *e = Some(src),
                    None => {}
                }
                // Unit steps: the words stream for `size` cycles, the first in this one.
                w.done_at = Some(now + w.packet.size.max(1));
            }
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        if self.inflight == 0 {
            return None;
        }
        // Blocked headers retry every cycle; otherwise the next completion.
        let blocked = self
            .queues
            .values()
            .any(|q| q.front().is_some_and(|w| w.done_at.is_none()));
        if blocked {
            return Some(now);
        }
        self.queues
            .values()
            .filter_map(|q| q.front().and_then(|w| w.done_at))
            .min()
            .map(|t| t.max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.busy.clone()
    }

    fn progress(&self) -> u64 {
        self.progress + self.busy.iter().sum::<u64>()
    }
}
