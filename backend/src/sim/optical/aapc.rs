//! All-to-all personalized communication (AAPC) phases on an N×N torus: N³/8 conflict-free
//! phases, each using every directed link exactly once on shortest XY paths, that together carry every
//! ordered pair of distinct nodes once.
//!
//! Yuan uses such phases (from Hinrichs et al., SPAA'94, not reproduced in the thesis) for the
//! logical all-to-all and allXY topologies (§4.1.2) and for the ordered-AAPC scheduler (§5.4,
//! Fig 5.14). N³/8 is the link-load lower bound: N⁴ pairs at mean distance N/2 over 4N² links.
//!
//! Construction (ours):
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
//! sides are not equal multiples of 8 [`aapc_phases`] falls back to a greedy first-fit packing of
//! all pairs (conflict-free, but more phases than N³/8: 601 instead of 512 on 16×16).

// `is_multiple_of` is newer than the workspace's minimum Rust version (1.85).
#![allow(clippy::manual_is_multiple_of)]

use crate::sim::optical::torus::{Torus, Way};
use crate::sim::optical::OpticalError;
use crate::topology::NodeId;

/// One connection of a phase: source, destination and its links (XY, shortest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    pub src: NodeId,
    pub dst: NodeId,
    pub links: Vec<usize>,
}

/// A conflict-free set of connections: one TDM channel's worth (Yuan's "configuration").
pub type Phase = Vec<Connection>;

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

/// The AAPC phases of a torus: N³/8 of them for N×N tori with N ∈ {8, 16}; otherwise the greedy
/// packing.
pub fn aapc_phases(t: &Torus) -> Vec<Phase> {
    if t.nx == t.ny && t.nx % 8 == 0 && t.nx <= 16 {
        if let Some(groups) = ring_groups(t.nx) {
            return torus_phases(t, &groups);
        }
    }
    greedy_phases(t)
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

/// Builds the N³/8 torus phases from the ring groups (step 3 of the module docs).
fn torus_phases(t: &Torus, groups: &[Vec<Vec<RingPair>>]) -> Vec<Phase> {
    let n = t.nx;
    let k = n / 8;
    let mut phases = Vec::with_capacity(n * n * k);
    for xg in groups {
        for yg in groups {
            for shift in 0..k {
                let mut phase = Vec::new();
                for (u, xp) in xg.iter().enumerate() {
                    let Some(yp) = yg.get((u + shift) % k) else {
                        continue;
                    };
                    for x in xp {
                        for y in yp {
                            if x.len == 0 && y.len == 0 {
                                continue;
                            }
                            let src = t.node(x.src, y.src);
                            let mut links = Vec::with_capacity(x.len + y.len);
                            let mid = t.walk(src, 0, x.way, x.len, &mut links);
                            let dst = t.walk(mid, 1, y.way, y.len, &mut links);
                            phase.push(Connection { src, dst, links });
                        }
                    }
                }
                phase.sort_by_key(|c| (c.src, c.dst));
                phases.push(phase);
            }
        }
    }
    phases
}

/// First-fit packing of every ordered pair (by decreasing distance, then source, then
/// destination) into phases without link, source or destination conflicts.
pub fn greedy_phases(t: &Torus) -> Vec<Phase> {
    let all: Vec<(NodeId, NodeId)> = (0..t.nodes())
        .flat_map(|s| (0..t.nodes()).filter(move |&d| d != s).map(move |d| (s, d)))
        .collect();
    greedy_pairs(t, &all)
}

/// First-fit packing of the given pairs (longest first, then by source and destination) into
/// phases without link, source or destination conflicts; on a mesh this is how every logical
/// topology is realized, the torus constructions needing the wrap-around links.
pub fn greedy_pairs(t: &Torus, pairs: &[(NodeId, NodeId)]) -> Vec<Phase> {
    let mut pairs: Vec<(usize, NodeId, NodeId)> = pairs
        .iter()
        .map(|&(s, d)| (t.distance(s, d), s, d))
        .collect();
    pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut phases: Vec<Phase> = Vec::new();
    let mut busy: Vec<(Vec<bool>, Vec<bool>, Vec<bool>)> = Vec::new();
    for (_, s, d) in pairs {
        let links = t.xy_route(s, d);
        let fit = busy
            .iter()
            .position(|(l, tx, rx)| !tx[s] && !rx[d] && links.iter().all(|&x| !l[x]));
        let i = match fit {
            Some(i) => i,
            None => {
                busy.push((
                    vec![false; t.link_slots()],
                    vec![false; t.nodes()],
                    vec![false; t.nodes()],
                ));
                phases.push(Vec::new());
                busy.len() - 1
            }
        };
        let (l, tx, rx) = &mut busy[i];
        for &x in &links {
            l[x] = true;
        }
        tx[s] = true;
        rx[d] = true;
        phases[i].push(Connection {
            src: s,
            dst: d,
            links,
        });
    }
    phases
}

/// What is wrong with a set of phases as a conflict-free TDM realization, if anything: a link, a
/// source or a destination used twice in one phase, or a path that does not lead from its source
/// to its destination. Used for every realized logical topology (Yuan §4.1.1.1 conditions 1–2).
pub fn check_phases(t: &Torus, phases: &[Phase]) -> Result<(), OpticalError> {
    for (i, phase) in phases.iter().enumerate() {
        let mut link = vec![false; t.link_slots()];
        let mut tx = vec![false; t.nodes()];
        let mut rx = vec![false; t.nodes()];
        for c in phase {
            if c.src >= t.nodes() || c.dst >= t.nodes() {
                return Err(OpticalError::Broken(format!(
                    "phase {i}: connection {}→{} is off the torus",
                    c.src, c.dst
                )));
            }
            if std::mem::replace(&mut tx[c.src], true) {
                return Err(OpticalError::Broken(format!(
                    "phase {i}: node {} sends twice",
                    c.src
                )));
            }
            if std::mem::replace(&mut rx[c.dst], true) {
                return Err(OpticalError::Broken(format!(
                    "phase {i}: node {} receives twice",
                    c.dst
                )));
            }
            let mut at = c.src;
            for &l in &c.links {
                if l / 4 != at {
                    return Err(OpticalError::Broken(format!(
                        "phase {i}: path of {}→{} is broken",
                        c.src, c.dst
                    )));
                }
                if std::mem::replace(&mut link[l], true) {
                    return Err(OpticalError::Broken(format!(
                        "phase {i}: link {l} carries two connections"
                    )));
                }
                at = link_head(t, l);
            }
            if at != c.dst {
                return Err(OpticalError::Broken(format!(
                    "phase {i}: path of {}→{} ends at {at}",
                    c.src, c.dst
                )));
            }
        }
    }
    Ok(())
}

/// The node a directed link leads to.
pub fn link_head(t: &Torus, l: usize) -> NodeId {
    let (x, y) = t.xy(l / 4);
    match l % 4 {
        0 => t.node((x + 1) % t.nx, y),
        1 => t.node((x + t.nx - 1) % t.nx, y),
        2 => t.node(x, (y + 1) % t.ny),
        _ => t.node(x, (y + t.ny - 1) % t.ny),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_of_8_splits_into_8_perfect_phases() {
        let groups = ring_groups(8).expect("ring of 8");
        let phases: Vec<_> = groups.into_iter().flatten().collect();
        assert_eq!(phases.len(), 8);
        let mut seen = [false; 64];
        for p in &phases {
            assert_eq!(p.len(), 8);
            for q in p {
                let idx = q.src * 8 + q.dst(8);
                assert!(!seen[idx]);
                seen[idx] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn small_tori_fall_back_to_greedy_without_conflicts() {
        let t = Torus::new(4, 4);
        let p = aapc_phases(&t);
        check_phases(&t, &p).unwrap();
        assert_eq!(p.iter().map(Vec::len).sum::<usize>(), 16 * 15);
    }
}
#[cfg(test)]
mod ring_tests {
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
