//! Ring phases in groups, the building block of the N³/8 torus phases ([`super::grouped_phases`]).
//!
//! 1. **Ring phases.** An N-node ring (N a multiple of 8) is split into N²/8 *ring phases* of eight
//!    pairs each (self-pairs `i→i` included), every phase using each directed ring link exactly once:
//!    its clockwise arcs tile the ring, its counter-clockwise arcs tile the ring, and its cut points
//!    and self-pairs are eight distinct nodes. The phases are the rotations by even steps of N/4
//!    *base phases*, found by a depth-first search over arc lengths (each orbit
//!    `(source parity, displacement)` of pairs under rotation by 2 must be covered exactly once).
//! 2. **Groups.** The base phases come in runs of N/8, each with an offset, such that the offset
//!    node sets of a run partition the ring; the run rotated by 2t (t < N/2) is one *group*.
//! 3. **Torus phases.** For an x-group {X_u} and a y-group {Y_v}, and a shift σ < N/8, the torus phase
//!    ∪_u X_u × Y_(u+σ) holds the messages (sx,sy)→(dx,dy) with sx→dx ∈ X_u and sy→dy ∈ Y_(u+σ),
//!    routed x first along row sy, then along column dx. Rows used by different u are different (the
//!    Y phases of a group have disjoint senders), columns too (the X phases have disjoint receivers),
//!    and inside one row (column) the X (Y) phase uses each link once; every node sends and receives
//!    at most once. N groups × N groups × N/8 shifts = N³/8 phases.
//!
//! The search succeeds at once for N = 8 and in a few seconds for N = 16 (checked by the tests and
//! `examples/bench_optical.rs`); for N = 24 and 32 it exhausts its budget. For those and for tori whose
//! sides are not equal multiples of 8 [`super::aapc_phases`] falls back to a greedy first-fit packing of
//! all pairs (conflict-free, but more phases than N³/8: 601 instead of 512 on 16×16).

// `is_multiple_of` is newer than the workspace's minimum Rust version (1.85).
#![allow(clippy::manual_is_multiple_of)]

use super::greedy::greedy_phases;
use crate::sim::optical::torus::{Torus, Way};

/// A pair of a ring phase: `src → src ± len` going `way` (`len = 0` is a self-pair).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingPair {
    pub src: usize,
    pub way: Way,
    pub len: usize,
}

impl RingPair {
    pub fn dst(&self, n: usize) -> usize {
        match self.way {
            Way::Plus => (self.src + self.len) % n,
            Way::Minus => (self.src + n - self.len % n) % n,
        }
    }
}
/// Ring phases of an N-node ring, grouped so that each group's node sets partition the ring.
/// `None` if N is not a multiple of 8 or the search fails.
pub fn ring_groups(n: usize) -> Option<Vec<Vec<Vec<RingPair>>>> {
    if n % 8 != 0 || n == 0 || n > 16 {
        return None;
    }
    let bases = cached_bases(n)?;
    let k = n / 8;
    let mut groups = Vec::new();
    for run in bases.chunks(k) {
        for t in 0..n / 2 {
            let group = run
                .iter()
                .map(|(base, delta)| rotate(base, 2 * t + delta, n))
                .collect::<Vec<_>>();
            groups.push(group);
        }
    }
    Some(groups)
}

/// The base-phase search is deterministic but takes seconds for N = 16, so its answer is kept for
/// the life of the process (a pure function's memo, not shared mutable state).
fn cached_bases(n: usize) -> Option<Vec<(Vec<RingPair>, usize)>> {
    use std::sync::OnceLock;
    type Bases = Option<Vec<(Vec<RingPair>, usize)>>;
    static BASES_8: OnceLock<Bases> = OnceLock::new();
    static BASES_16: OnceLock<Bases> = OnceLock::new();
    match n {
        8 => BASES_8.get_or_init(|| ring_base_phases(8)).clone(),
        16 => BASES_16.get_or_init(|| ring_base_phases(16)).clone(),
        _ => ring_base_phases(n),
    }
}

fn rotate(phase: &[RingPair], by: usize, n: usize) -> Vec<RingPair> {
    phase
        .iter()
        .map(|p| RingPair {
            src: (p.src + by) % n,
            ..*p
        })
        .collect()
}

/// Depth-first search for the N/4 base phases (see the module docs), in runs of N/8 whose node
/// sets, each moved by its own offset, partition the ring.
fn ring_base_phases(n: usize) -> Option<Vec<(Vec<RingPair>, usize)>> {
    let mut s = Search {
        n,
        covered: vec![false; 2 * n],
        used: vec![false; n],
        allowed: vec![true; n],
        occupied: vec![false; n],
        current: Vec::new(),
        done: Vec::new(),
        delta: 0,
        budget: 5_000_000,
    };
    if s.phase() {
        Some(s.done)
    } else {
        None
    }
}

struct Search {
    n: usize,
    /// Orbit `(src parity, displacement)` already carried.
    covered: Vec<bool>,
    used: Vec<bool>,
    /// Nodes the phase under construction may use (its group's other members hold the rest).
    allowed: Vec<bool>,
    /// Nodes held by the finished members of the current group (after their offsets).
    occupied: Vec<bool>,
    current: Vec<RingPair>,
    /// Finished base phases with their offsets inside their group.
    done: Vec<(Vec<RingPair>, usize)>,
    /// Offset of the phase under construction.
    delta: usize,
    /// Node visits left before giving up (keeps a pathological size from hanging).
    budget: u64,
}

impl Search {
    fn orbit(&self, p: &RingPair) -> usize {
        let disp = (p.dst(self.n) + self.n - p.src) % self.n;
        // The phase is used moved by `delta`, which may change the source's parity.
        ((p.src + self.delta) % 2) * self.n + disp
    }

    fn can_use(&self, node: usize) -> bool {
        !self.used[node] && self.allowed[node]
    }

    fn take(&mut self, node: usize) {
        self.used[node] = true;
    }

    fn free(&mut self, node: usize) {
        self.used[node] = false;
    }

    /// Starts a new base phase, or succeeds when all N/4 are built.
    fn phase(&mut self) -> bool {
        if self.done.len() == self.n / 4 {
            return self.covered.iter().all(|&c| c);
        }
        let first_of_group = self.done.len() % (self.n / 8) == 0;
        if first_of_group {
            self.occupied = vec![false; self.n];
        }
        let offsets = if first_of_group { 1 } else { self.n };
        for delta in 0..offsets {
            self.delta = delta;
            self.allowed = (0..self.n)
                .map(|x| !self.occupied[(x + delta) % self.n])
                .collect();
            // Rotating a base phase by 2 gives the same orbits, so its first clockwise cut is 0 or 1.
            for c0 in 0..2 {
                if !self.can_use(c0) {
                    continue;
                }
                self.take(c0);
                if self.cw(c0, 0, delta) {
                    return true;
                }
                self.free(c0);
            }
        }
        false
    }

    fn push(&mut self, p: RingPair) -> Option<usize> {
        let o = self.orbit(&p);
        if self.covered[o] {
            return None;
        }
        self.covered[o] = true;
        self.current.push(p);
        Some(o)
    }

    fn pop(&mut self, o: usize) {
        self.covered[o] = false;
        self.current.pop();
    }

    /// Extends the clockwise tiling that has reached `at` after `sum` links.
    fn cw(&mut self, at: usize, sum: usize, delta: usize) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        let n = self.n;
        for len in (1..=n / 2).rev() {
            if sum + len > n {
                continue;
            }
            let next = (at + len) % n;
            let closes = sum + len == n;
            if !closes && !self.can_use(next) {
                continue;
            }
            let Some(o) = self.push(RingPair {
                src: at,
                way: Way::Plus,
                len,
            }) else {
                continue;
            };
            let ok = if closes {
                self.ccw_start(delta)
            } else {
                self.take(next);
                let ok = self.cw(next, sum + len, delta);
                if !ok {
                    self.free(next);
                }
                ok
            };
            if ok {
                return true;
            }
            self.pop(o);
        }
        false
    }

    /// Chooses the smallest counter-clockwise cut point.
    fn ccw_start(&mut self, delta: usize) -> bool {
        for c1 in 0..self.n {
            if self.can_use(c1) {
                self.take(c1);
                if self.ccw(c1, c1, 0, delta) {
                    return true;
                }
                self.free(c1);
            }
        }
        false
    }

    fn ccw(&mut self, start: usize, at: usize, sum: usize, delta: usize) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        let n = self.n;
        for len in (1..=n / 2).rev() {
            if sum + len > n {
                continue;
            }
            let next = (at + n - len) % n;
            let closes = sum + len == n;
            if !closes && (next < start || !self.can_use(next)) {
                continue;
            }
            let Some(o) = self.push(RingPair {
                src: at,
                way: Way::Minus,
                len,
            }) else {
                continue;
            };
            let ok = if closes {
                self.selfs(delta)
            } else {
                self.take(next);
                let ok = self.ccw(start, next, sum + len, delta);
                if !ok {
                    self.free(next);
                }
                ok
            };
            if ok {
                return true;
            }
            self.pop(o);
        }
        false
    }

    /// Completes the phase to eight pairs with self-pairs, then starts the next phase.
    fn selfs(&mut self, delta: usize) -> bool {
        let missing = 8usize.saturating_sub(self.current.len());
        if self.current.len() > 8 {
            return false;
        }
        if missing == 0 {
            return self.finish(delta);
        }
        for node in 0..self.n {
            if !self.can_use(node) {
                continue;
            }
            let Some(o) = self.push(RingPair {
                src: node,
                way: Way::Plus,
                len: 0,
            }) else {
                continue;
            };
            self.take(node);
            if self.selfs(delta) {
                return true;
            }
            self.free(node);
            self.pop(o);
        }
        false
    }

    fn finish(&mut self, delta: usize) -> bool {
        let phase = std::mem::take(&mut self.current);
        let saved_used = std::mem::replace(&mut self.used, vec![false; self.n]);
        let saved_allowed = self.allowed.clone();
        let saved_occupied = self.occupied.clone();
        for p in &phase {
            self.occupied[(p.src + delta) % self.n] = true;
        }
        self.done.push((phase, delta));
        if self.phase() {
            return true;
        }
        let (phase, _) = self.done.pop().unwrap_or_default();
        self.used = saved_used;
        self.allowed = saved_allowed;
        self.occupied = saved_occupied;
        self.delta = delta;
        self.current = phase;
        false
    }
}

/// All-to-all on a ring of `n` as channels of line pairs (the rows and columns of allXY): the
/// ring phases where they exist, without their self-pairs, otherwise the greedy packing.
pub fn ring_channels(n: usize) -> Vec<Vec<RingPair>> {
    if let Some(groups) = ring_groups(n) {
        return groups
            .into_iter()
            .flatten()
            .map(|p| p.into_iter().filter(|q| q.len > 0).collect())
            .collect();
    }
    let ring = Torus::new(n, 1);
    greedy_phases(&ring)
        .into_iter()
        .map(|phase| {
            phase
                .into_iter()
                .map(|c| RingPair {
                    src: c.src,
                    // Links are `4·node + dir`, dir 0 = +x and 1 = −x.
                    way: match c.links.first() {
                        Some(l) if l % 4 == 1 => Way::Minus,
                        _ => Way::Plus,
                    },
                    len: c.links.len(),
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ring_groups_cover_every_pair_once_and_partition_nodes() {
        for n in [8usize, 16] {
            let groups = ring_groups(n).expect("ring");
            assert_eq!(groups.len(), n);
            let mut seen = vec![0; n * n];
            for g in &groups {
                let mut nodes = vec![0; n];
                for p in g {
                    let mut link = vec![0; 2 * n];
                    for q in p {
                        seen[q.src * n + q.dst(n)] += 1;
                        nodes[q.src] += 1;
                        for h in 0..q.len {
                            let l = match q.way {
                                Way::Plus => 2 * ((q.src + h) % n),
                                Way::Minus => 2 * ((q.src + n - h) % n) + 1,
                            };
                            link[l] += 1;
                        }
                    }
                    assert!(link.iter().all(|&c| c == 1), "n={n} links {link:?} {p:?}");
                }
                assert!(nodes.iter().all(|&c| c == 1), "n={n} nodes {nodes:?}");
            }
            assert!(seen.iter().all(|&c| c == 1), "n={n} {seen:?}");
        }
    }
}
