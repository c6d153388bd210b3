//! A constructed start for the slot table of an all-to-all on a 2-D torus. The messages of one
//! iteration split into translations `(dx, dy)`: every node `(x, y)` sends to `(x+dx, y+dy)`.
//! Routed X then Y on the minimal direction (a half-ring shift goes either way, alternating),
//! a translation injected at `s` is a rigid wave: hop `i` of every message at `s + i·latency`,
//! each on a different link of one class (X+, X−, Y+, Y−), so the whole class is held at once.
//! The table is then a small problem over the translations alone: offsets such that the
//! injections, ejections and each link class never hold one cycle twice modulo `P`. On a k×k
//! torus every link class sums to the busiest link's words, so at the bound each class is an
//! exact tiling (the TDM schedules of Argo, POSEIDON.md, are built from the same all-to-all
//! pattern). The offsets are found by min-conflicts with a tabu list, deterministic for a seed;
//! the slot-table search then checks (and if need be repairs) the table as any other.

use std::collections::BTreeMap;

use crate::topology::{Kind, Network, NodeId};

/// One translation: its messages (slot indices), and the cells it holds relative to its start
/// as (class, offset) for one word.
struct Wave {
    slots: Vec<usize>,
    cells: Vec<(usize, u64)>,
}

/// Classes: 0 inject, 1 eject, 2 X+, 3 X−, 4 Y+, 5 Y−.
const CLASSES: usize = 6;

/// The waves of an iteration's messages, or `None` when they are not whole translations of a
/// 2-D torus (every node sending once per shift), words differ, or a wave holds one cell twice.
pub(super) struct Waves {
    waves: Vec<Wave>,
    words: u64,
    /// Per slot: its node path, X then Y.
    pub paths: Vec<Vec<NodeId>>,
}

impl Waves {
    pub(super) fn detect(
        net: &Network,
        pairs: &[(NodeId, NodeId, u64)],
        latency: u64,
    ) -> Option<Waves> {
        let dims = &net.spec.dims;
        if net.spec.kind != Kind::Torus || dims.len() != 2 || pairs.is_empty() || latency == 0 {
            return None;
        }
        let (kx, ky) = (dims[0] as i64, dims[1] as i64);
        let n = net.nodes();
        if net.coords.len() != n || kx < 2 || ky < 2 {
            return None;
        }
        let mut at: BTreeMap<(i64, i64), NodeId> = BTreeMap::new();
        for (v, c) in net.coords.iter().enumerate() {
            let [x, y] = c.as_slice() else { return None };
            at.insert((*x, *y), v);
        }
        let words = pairs[0].2;
        let mut by: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
        for (j, &(s, d, w)) in pairs.iter().enumerate() {
            if w != words || s == d {
                return None;
            }
            let (a, b) = (net.coords.get(s)?, net.coords.get(d)?);
            let key = ((b[0] - a[0]).rem_euclid(kx), (b[1] - a[1]).rem_euclid(ky));
            by.entry(key).or_default().push(j);
        }
        // Each shift moves every node once, so its messages are a wave.
        let mut waves = Vec::new();
        let mut paths = vec![Vec::new(); pairs.len()];
        for (&(dx, dy), slots) in &by {
            let mut srcs: Vec<NodeId> = slots.iter().map(|&j| pairs[j].0).collect();
            srcs.sort_unstable();
            srcs.dedup();
            if srcs.len() != n || slots.len() != n {
                return None;
            }
            // Minimal direction; a half-ring shift alternates with the other coordinate.
            let dir = |d: i64, k: i64, other: i64| -> (i64, i64) {
                if 2 * d < k {
                    (d, 1)
                } else if 2 * d > k {
                    (k - d, -1)
                } else if other % 2 == 0 {
                    (d, 1)
                } else {
                    (d, -1)
                }
            };
            let (a, sa) = dir(dx, kx, dy);
            let (b, sb) = dir(dy, ky, dx);
            let mut cells = vec![(0usize, 0u64)];
            let cx = if sa > 0 { 2 } else { 3 };
            let cy = if sb > 0 { 4 } else { 5 };
            for i in 1..=a as u64 {
                cells.push((cx, i * latency));
            }
            for i in 1..=b as u64 {
                cells.push((cy, (a as u64 + i) * latency));
            }
            cells.push((1, (a + b) as u64 * latency + latency));
            for &j in slots {
                let c = &net.coords[pairs[j].0];
                let (mut x, mut y) = (c[0], c[1]);
                let mut p = vec![pairs[j].0];
                for _ in 0..a {
                    x = (x + sa).rem_euclid(kx);
                    p.push(*at.get(&(x, y))?);
                }
                for _ in 0..b {
                    y = (y + sb).rem_euclid(ky);
                    p.push(*at.get(&(x, y))?);
                }
                if p.last() != Some(&pairs[j].1) {
                    return None;
                }
                paths[j] = p;
            }
            waves.push(Wave {
                slots: slots.clone(),
                cells,
            });
        }
        Some(Waves {
            waves,
            words,
            paths,
        })
    }

    /// Cells `(class, cycle mod P)` of wave `t` started at `s`.
    fn cells(&self, t: usize, s: u64, period: u64) -> impl Iterator<Item = usize> + '_ {
        self.waves[t].cells.iter().flat_map(move |&(c, o)| {
            (0..self.words).map(move |w| c * period as usize + ((s + o + w) % period) as usize)
        })
    }

    /// Per slot its offset in a table of `period` where no class cell holds more than its
    /// capacity (`ports` for the ports, 1 for a link class), found within `budget` moves.
    pub(super) fn table(
        &self,
        period: u64,
        ports: u32,
        seed: u64,
        budget: usize,
    ) -> Option<Vec<u64>> {
        let n = self.waves.len();
        let p = period as usize;
        let cap = |cell: usize| if cell / p < 2 { ports as usize } else { 1 };
        // A wave that holds one cell twice fits no table of this period.
        for t in 0..n {
            let mut cs: Vec<usize> = self.cells(t, 0, period).collect();
            cs.sort_unstable();
            if cs.windows(2).any(|w| w[0] == w[1]) {
                return None;
            }
        }
        let mut rng = seed ^ period.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let mut next = move || {
            rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut occ = vec![0usize; CLASSES * p];
        let mut s: Vec<u64> = (0..n).map(|_| next() % period).collect();
        for (t, &st) in s.iter().enumerate() {
            for c in self.cells(t, st, period) {
                occ[c] += 1;
            }
        }
        let mut tabu = vec![0usize; n * p];
        for step in 1..=budget {
            let bad: Vec<usize> = (0..n)
                .filter(|&t| self.cells(t, s[t], period).any(|c| occ[c] > cap(c)))
                .collect();
            if bad.is_empty() {
                let mut offsets = vec![0u64; self.paths.len()];
                for (t, w) in self.waves.iter().enumerate() {
                    for &j in &w.slots {
                        offsets[j] = s[t];
                    }
                }
                return Some(offsets);
            }
            let t = bad[(next() % bad.len() as u64) as usize];
            for c in self.cells(t, s[t], period) {
                occ[c] -= 1;
            }
            let mut best = usize::MAX;
            let mut choices = Vec::new();
            for v in 0..period {
                if tabu[t * p + v as usize] > step {
                    continue;
                }
                let cost = self
                    .cells(t, v, period)
                    .filter(|&c| occ[c] >= cap(c))
                    .count();
                if cost < best {
                    best = cost;
                    choices.clear();
                }
                if cost == best {
                    choices.push(v);
                }
            }
            let old = s[t];
            if !choices.is_empty() {
                s[t] = choices[(next() % choices.len() as u64) as usize];
            }
            tabu[t * p + old as usize] = step + 4 + (next() % 8) as usize;
            for c in self.cells(t, s[t], period) {
                occ[c] += 1;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waves(k: usize, latency: u64) -> Waves {
        let net = Network::build(&format!("torus:{k}x{k}").parse().expect("spec")).expect("net");
        let n = net.nodes();
        let pairs: Vec<(NodeId, NodeId, u64)> = (0..n)
            .flat_map(|i| (1..n).map(move |j| (i, (i + j) % n, 1)))
            .collect();
        Waves::detect(&net, &pairs, latency).expect("translations")
    }

    /// Whether every cell of the table holds at most one wave (independent of the search).
    fn clear(w: &Waves, offsets: &[u64], period: u64) -> bool {
        let mut seen = std::collections::BTreeSet::new();
        w.waves.iter().all(|wave| {
            let s = offsets[wave.slots[0]];
            wave.slots.iter().all(|&j| offsets[j] == s)
                && wave
                    .cells
                    .iter()
                    .all(|&(c, o)| seen.insert((c, (s + o) % period)))
        })
    }

    /// 4×4 and 6×6 tables one cycle above the port bound (15 and 35): at the bound itself rigid
    /// waves cannot fit, since with every injection and ejection cycle taken the ejections'
    /// sum minus the injections' (Σ hops + 1 over the waves: 47 and 143) would be 0 mod P.
    #[test]
    fn small_tori_tables_come_one_above_the_port_bound() {
        for (k, period) in [(4, 16), (6, 36)] {
            let w = waves(k, 1);
            assert_eq!(w.waves.len(), k * k - 1);
            let offsets = w.table(period, 1, 1, 200_000).expect("a table");
            assert!(clear(&w, &offsets, period), "{k}x{k}");
            assert!(w.table(period - 1, 1, 1, 20_000).is_none());
        }
    }

    /// Paths go X then Y on a minimal direction; latency 0 puts a wave's hops in one cycle,
    /// and messages that are not whole translations are left to the general search.
    #[test]
    fn paths_are_minimal_and_other_traffic_is_left_alone() {
        let net = Network::build(&"torus:4x4".parse().expect("spec")).expect("net");
        let w = waves(4, 1);
        for p in &w.paths {
            assert_eq!(p.len(), net.distance(p[0], p[p.len() - 1]) + 1);
        }
        let pairs = vec![(0, 1, 1), (1, 2, 1)];
        assert!(Waves::detect(&net, &pairs, 1).is_none());
        let mesh = Network::build(&"mesh:4x4".parse().expect("spec")).expect("net");
        assert!(Waves::detect(&mesh, &[(0, 1, 1)], 1).is_none());
    }
}
