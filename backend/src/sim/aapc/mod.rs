//! All-to-all personalized communication (AAPC): conflict-free phases that together carry every
//! ordered pair of nodes of a ring or torus once, each phase sharing no directed link, no source
//! and no destination. The one place they are built: the optical TDM models realize the logical
//! all-to-all and allXY topologies from them (Yuan §4.1.2), and the compiled model's ordered-AAPC
//! scheduler orders connections by them (Yuan §5.4, Fig 5.14).
//!
//! Yuan takes the phases from Hinrichs et al. (SPAA'94), which the thesis does not reproduce. The
//! constructions here are ours, all routed as the schedulers route (x first, the shorter way
//! round, the half-way tie clockwise from an even coordinate, [`crate::topology::grid::offset`]):
//!
//! - [`ring`]: N²/8 ring phases of an N-node ring (N = 8, 16) in groups whose node sets partition
//!   the ring; from them [`grouped_phases`] builds the N³/8 phases of an N×N torus, each using
//!   every directed link once: the link-load lower bound (N⁴ pairs at mean distance N/2 over 4N²
//!   links), 64 on 8×8 and 512 on 16×16.
//! - [`product`]: for any ring or torus, a ring decomposition to the node and link-load bounds
//!   by a bounded search, and torus phases as products of one ring phase per dimension.
//! - [`greedy`]: a first-fit packing of any set of pairs, for tori without grouped phases when
//!   the phases must be explicit paths (the optical models), and for meshes.
//! - [`table`]: the phase of every pair, as the ordered-AAPC scheduler looks it up.
//!
//! Where the grouped phases exist every user takes them; elsewhere the optical models take the
//! greedy packing (fewer phases on most 2-D tori: 15 on 4×4 against 16) and the scheduler the
//! product (defined on rings and tori of any dimension).

// `is_multiple_of` is newer than the workspace's minimum Rust version (1.85).
#![allow(clippy::manual_is_multiple_of)]

pub mod greedy;
pub mod product;
pub mod ring;
pub mod table;

pub use greedy::{greedy_pairs, greedy_phases};
pub use product::{RingAapc, TorusAapc};
pub use ring::{ring_channels, ring_groups, RingPair};
pub use table::AapcPhases;

use crate::sim::optical::torus::Torus;
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

/// The AAPC phases of a torus as explicit paths: the N³/8 grouped phases where they exist
/// (N×N tori with N ∈ {8, 16}), otherwise the greedy packing.
pub fn aapc_phases(t: &Torus) -> Vec<Phase> {
    grouped_phases(t).unwrap_or_else(|| greedy_phases(t))
}

/// The N³/8 phases of an N×N torus built from the ring groups, `None` where there are none
/// (other sizes, meshes, or a ring-group search that ran out of budget).
pub fn grouped_phases(t: &Torus) -> Option<Vec<Phase>> {
    if !(t.wrap && t.nx == t.ny && t.nx % 8 == 0 && t.nx <= 16) {
        return None;
    }
    ring_groups(t.nx).map(|groups| torus_phases(t, &groups))
}

/// Builds the N³/8 torus phases from the ring groups ([`ring`], step 3).
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
