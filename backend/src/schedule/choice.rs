//! Route choice inside the exact scheduler: a message that would wait on its fixed route is
//! placed instead on whichever of its minimal routes delivers it first (every dimension order,
//! both directions of a torus dimension at exactly half the ring, and every staircase between).
//! Poseidon's greedy routes each channel this way, on any shortest path (POSEIDON.md); a fixed
//! dimension order leaves the other minimal paths idle while messages queue on one.
//!
//! The minimal paths of a message form layers (nodes `i` hops from the source on some minimal
//! path). Two searches run over them:
//! - with buffers that hold any number of words, a word may wait at any switch, so the earliest
//!   start on every node is found layer by layer (an earlier start upstream never shrinks the
//!   choices downstream, as in `exact::place_contiguous`);
//! - with bufferless switches (`--buffer 0`, and the clear-path passes of finite buffers) the
//!   message takes a clear path: injected at `t`, hop `i` at `t + i × latency`, ejected at
//!   `t + (hops + 1) × latency`; the injection cycles are tried in order, each a reachability
//!   sweep over the layers.

use super::occupancy::Occupancy;
use super::{Resource, Step};
use crate::topology::{Network, NodeId};

/// Most nodes the layers of one message may hold: beyond that (a long route across a large
/// network) the message keeps its fixed route, so placement stays cheap.
const MOST_NODES: usize = 4096;

/// The minimal paths between two nodes, as layers of nodes.
pub(crate) struct Minimal {
    layers: Vec<Vec<NodeId>>,
    /// `next[i][a]`: indices in `layers[i + 1]` of the minimal next hops of `layers[i][a]`.
    next: Vec<Vec<Vec<usize>>>,
}

impl Minimal {
    /// The layers from `src` to `dst`, or `None` when there is only one minimal path (nothing to
    /// choose), no path, or too many nodes.
    pub(crate) fn between(net: &Network, src: NodeId, dst: NodeId) -> Option<Minimal> {
        let to = net.distances_to(dst);
        let k = to.from(src);
        if k < 2 || k == usize::MAX {
            return None;
        }
        let mut layers = vec![vec![src]];
        let mut next = Vec::with_capacity(k);
        let mut nodes = 1usize;
        for i in 0..k {
            let mut layer: Vec<NodeId> = Vec::new();
            let mut hops = Vec::with_capacity(layers[i].len());
            for &u in &layers[i] {
                let mut out = Vec::new();
                for v in net.minimal_next_hops_by(u, &to) {
                    let at = match layer.iter().position(|&w| w == v) {
                        Some(at) => at,
                        None => {
                            layer.push(v);
                            layer.len() - 1
                        }
                    };
                    out.push(at);
                }
                hops.push(out);
            }
            nodes += layer.len();
            if layer.is_empty() || nodes > MOST_NODES {
                return None;
            }
            next.push(hops);
            layers.push(layer);
        }
        if layers.iter().all(|l| l.len() == 1) || layers[k] != [dst] {
            return None;
        }
        Some(Minimal { layers, next })
    }

    pub(crate) fn hops(&self) -> usize {
        self.layers.len() - 1
    }

    /// The nodes `i` hops from the source on some minimal path, per `i`.
    pub(crate) fn layers(&self) -> &[Vec<NodeId>] {
        &self.layers
    }

    /// Per layer `i`, per node of it: indices in layer `i + 1` of its minimal next hops.
    pub(crate) fn next(&self) -> &[Vec<Vec<usize>>] {
        &self.next
    }
}

/// A route chosen for a message: its nodes, its steps, and per step `(lane, start)` as
/// `exact::place_contiguous` gives them.
pub(crate) struct Choice {
    pub path: Vec<NodeId>,
    pub steps: Vec<Step>,
    pub placed: Vec<(usize, u64)>,
}

impl Choice {
    /// The cycle after the last word is ejected.
    pub(crate) fn arrival(&self, size: u64) -> u64 {
        self.placed.last().map_or(0, |&(_, s)| s + size)
    }
}

/// Builds the choice from `pred` links (per layer, per node: lane, start, node before).
fn assemble(
    dag: &Minimal,
    inject: (usize, u64),
    reached: &[Vec<Option<Reached>>],
    eject: (usize, u64),
) -> Choice {
    let k = dag.hops();
    let mut rev = Vec::with_capacity(k);
    let mut at = 0usize;
    for i in (1..=k).rev() {
        let Some((lane, s, p)) = reached[i][at] else {
            break;
        };
        rev.push((dag.layers[i][at], lane, s));
        at = p;
    }
    let src = dag.layers[0][0];
    let mut path = vec![src];
    let mut steps = vec![Step::new(Resource::inject(src), None)];
    let mut placed = vec![inject];
    let mut from = src;
    for (to, lane, s) in rev.into_iter().rev() {
        steps.push(Step::new(Resource::link(from, to), Some(steps.len() - 1)));
        placed.push((lane, s));
        path.push(to);
        from = to;
    }
    steps.push(Step::new(Resource::eject(from), Some(steps.len() - 1)));
    placed.push(eject);
    Choice {
        path,
        steps,
        placed,
    }
}

/// The earliest delivery over the minimal paths when words may wait at any switch.
pub(crate) fn earliest_waiting(
    occ: &Occupancy,
    dag: &Minimal,
    release: u64,
    size: u64,
    h: u64,
) -> Option<Choice> {
    let k = dag.hops();
    let src = dag.layers[0][0];
    let inject = {
        let (s, lane) = occ.earliest(Resource::inject(src), release, size);
        (lane, s)
    };
    let mut reached: Vec<Vec<Option<(usize, u64, usize)>>> =
        dag.layers.iter().map(|l| vec![None; l.len()]).collect();
    reached[0][0] = Some((inject.0, inject.1, 0));
    for i in 0..k {
        for a in 0..dag.layers[i].len() {
            let Some((_, tu, _)) = reached[i][a] else {
                continue;
            };
            for &b in &dag.next[i][a] {
                let r = Resource::link(dag.layers[i][a], dag.layers[i + 1][b]);
                let (s, lane) = occ.earliest(r, tu + h, size);
                if reached[i + 1][b].is_none_or(|(_, t, _)| s < t) {
                    reached[i + 1][b] = Some((lane, s, a));
                }
            }
        }
    }
    let (_, td, _) = reached[k][0]?;
    let (se, le) = occ.earliest(Resource::eject(dag.layers[k][0]), td + h, size);
    Some(assemble(dag, inject, &reached, (le, se)))
}

/// The earliest clear path over the minimal paths (bufferless switches) that is injected before
/// `before`, if any.
pub(crate) fn earliest_clear(
    occ: &Occupancy,
    dag: &Minimal,
    release: u64,
    size: u64,
    h: u64,
    before: u64,
) -> Option<Choice> {
    let k = dag.hops();
    let src = dag.layers[0][0];
    let dst = dag.layers[k][0];
    let to_eject = (k as u64 + 1) * h;
    let mut reached: Vec<Vec<Option<(usize, u64, usize)>>> =
        dag.layers.iter().map(|l| vec![None; l.len()]).collect();
    let mut t = release;
    while t < before {
        let (s, l0) = occ.earliest(Resource::inject(src), t, size);
        if s >= before {
            return None;
        }
        t = s;
        let (se, le) = occ.earliest(Resource::eject(dst), t + to_eject, size);
        if se != t + to_eject {
            // No injection earlier than this one can eject in time.
            t = se - to_eject;
            continue;
        }
        reached
            .iter_mut()
            .for_each(|l| l.iter_mut().for_each(|x| *x = None));
        reached[0][0] = Some((l0, t, 0));
        for i in 0..k {
            let at = t + (i as u64 + 1) * h;
            for a in 0..dag.layers[i].len() {
                if reached[i][a].is_none() {
                    continue;
                }
                for &b in &dag.next[i][a] {
                    if reached[i + 1][b].is_some() {
                        continue;
                    }
                    let r = Resource::link(dag.layers[i][a], dag.layers[i + 1][b]);
                    let (s, lane) = occ.earliest(r, at, size);
                    if s == at {
                        reached[i + 1][b] = Some((lane, at, a));
                    }
                }
            }
        }
        if reached[k][0].is_some() {
            return Some(assemble(dag, (l0, t), &reached, (le, se)));
        }
        t += 1;
    }
    None
}

/// How a node of a layer was reached: (lane, start, node before).
type Reached = (usize, u64, usize);
