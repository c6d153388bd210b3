//! AAPC phases of any ring or torus as products of ring phases, for the ordered-AAPC scheduler
//! (Yuan §5.4) where the grouped N³/8 phases do not exist.
//!
//! A ring of `n` nodes is decomposed by a bounded depth-first search into
//! `max(n, ⌈n·Σdist / 2n⌉)` phases (the node bound and the link-load bound; 8 phases for n = 8),
//! each phase a partial permutation that includes the self pairs. A torus phase is then a product of
//! one ring phase per dimension: with dimension-order routing, the x-part of a product phase uses
//! each row's links as its ring phase does, and because the x-part is a permutation exactly one
//! row's traffic turns into any column, which then uses that column's links as its ring phase does.
//! On an 8×8 torus this gives 8·8 = 64 phases, Yuan's N³/8 and the link-load lower bound; on larger
//! tori the product has (N²/8)² phases, more than Hinrichs' N³/8.

use crate::topology::grid;

/// The phases of AAPC on one ring: `phase_of[src][dst]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingAapc {
    pub n: usize,
    pub phases: usize,
    pub phase_of: Vec<Vec<usize>>,
}

/// The signed hops from `s` to `d` on a ring of `n` as the scheduler routes
/// ([`grid::offset`]: the shorter way, the half-way pair clockwise from an even `s`, Yuan Ch.6).
fn ring_offset(n: usize, s: usize, d: usize) -> i64 {
    grid::offset(s as i64, d as i64, n, true)
}

/// Hops from `s` to `d` on a ring of `n`.
fn ring_distance(n: usize, s: usize, d: usize) -> usize {
    ring_offset(n, s, d).unsigned_abs() as usize
}

/// Directed ring links a pair uses: `i` is `i → i+1`, `n + i` is `i → i−1`.
fn ring_links(n: usize, s: usize, d: usize) -> Vec<usize> {
    let off = ring_offset(n, s, d);
    let (hops, pos) = (off.unsigned_abs() as usize, off >= 0);
    (0..hops)
        .map(|h| {
            if pos {
                (s + h) % n
            } else {
                n + (s + n - h) % n
            }
        })
        .collect()
}

/// Search budget per phase count before one more phase is allowed.
const BUDGET: u64 = 400_000;

impl RingAapc {
    /// Decomposes AAPC on a ring of `n ≥ 1` nodes.
    pub fn new(n: usize) -> RingAapc {
        if n <= 1 {
            return RingAapc {
                n,
                phases: 1,
                phase_of: vec![vec![0; n]; n],
            };
        }
        let load: usize = (0..n).map(|d| ring_distance(n, 0, d)).sum::<usize>() * n;
        let mut phases = n.max(load.div_ceil(2 * n));
        loop {
            if let Some(phase_of) = search(n, phases) {
                return RingAapc {
                    n,
                    phases,
                    phase_of,
                };
            }
            phases += 1;
        }
    }
}

struct Item {
    s: usize,
    d: usize,
    links: Vec<usize>,
}

/// Depth-first assignment of every pair to one of `phases` phases, longest pairs first; `None`
/// when the budget runs out.
fn search(n: usize, phases: usize) -> Option<Vec<Vec<usize>>> {
    let mut items: Vec<Item> = (0..n)
        .flat_map(|s| {
            (0..n).map(move |d| Item {
                s,
                d,
                links: ring_links(n, s, d),
            })
        })
        .collect();
    items.sort_by_key(|it| (std::cmp::Reverse(it.links.len()), it.s, it.d));
    let mut st = State {
        link_used: vec![vec![false; 2 * n]; phases],
        src_used: vec![vec![false; n]; phases],
        dst_used: vec![vec![false; n]; phases],
        size: vec![0; phases],
        assign: vec![0; items.len()],
        budget: BUDGET,
    };
    if !dfs(&items, 0, &mut st) {
        return None;
    }
    let mut phase_of = vec![vec![0; n]; n];
    for (it, &p) in items.iter().zip(&st.assign) {
        phase_of[it.s][it.d] = p;
    }
    Some(phase_of)
}

struct State {
    link_used: Vec<Vec<bool>>,
    src_used: Vec<Vec<bool>>,
    dst_used: Vec<Vec<bool>>,
    size: Vec<usize>,
    assign: Vec<usize>,
    budget: u64,
}

fn dfs(items: &[Item], k: usize, st: &mut State) -> bool {
    let Some(it) = items.get(k) else {
        return true;
    };
    if st.budget == 0 {
        return false;
    }
    st.budget -= 1;
    for p in 0..st.size.len() {
        let fits = !st.src_used[p][it.s]
            && !st.dst_used[p][it.d]
            && it.links.iter().all(|&l| !st.link_used[p][l]);
        if fits {
            st.src_used[p][it.s] = true;
            st.dst_used[p][it.d] = true;
            for &l in &it.links {
                st.link_used[p][l] = true;
            }
            st.size[p] += 1;
            st.assign[k] = p;
            if dfs(items, k + 1, st) {
                return true;
            }
            st.size[p] -= 1;
            st.src_used[p][it.s] = false;
            st.dst_used[p][it.d] = false;
            for &l in &it.links {
                st.link_used[p][l] = false;
            }
        }
        // Empty phases are interchangeable: trying one is enough.
        if st.size[p] == 0 {
            break;
        }
        if st.budget == 0 {
            return false;
        }
    }
    false
}
/// AAPC phases of a torus (or ring) with the given extents, as products of ring phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TorusAapc {
    pub dims: Vec<usize>,
    pub rings: Vec<RingAapc>,
}

impl TorusAapc {
    pub fn new(dims: &[usize]) -> TorusAapc {
        let mut rings: Vec<RingAapc> = Vec::new();
        for &n in dims {
            let ring = match rings.iter().find(|r| r.n == n) {
                Some(r) => r.clone(),
                None => RingAapc::new(n),
            };
            rings.push(ring);
        }
        TorusAapc {
            dims: dims.to_vec(),
            rings,
        }
    }

    /// Number of phases: the product of the ring phase counts.
    pub fn phases(&self) -> usize {
        self.rings.iter().map(|r| r.phases).product()
    }

    /// The phase holding the pair `src → dst` (row-major node ids, x fastest).
    pub fn phase_of(&self, src: usize, dst: usize) -> usize {
        let (mut s, mut d) = (src, dst);
        let mut coords = Vec::with_capacity(self.dims.len());
        for &n in &self.dims {
            coords.push((s % n, d % n));
            s /= n;
            d /= n;
        }
        // Mixed radix, x most significant, so phases group by the x ring first.
        let mut phase = 0;
        for (ring, (cs, cd)) in self.rings.iter().zip(coords) {
            phase = phase * ring.phases + ring.phase_of[cs][cd];
        }
        phase
    }
}
