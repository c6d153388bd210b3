//! A constructed start for the slot table of an all-to-all on a 2-D torus. The
//! messages of one iteration split into translations `(dx, dy)`: every node `(x, y)` sends to
//! `(x+dx, y+dy)`. Routed dimension by dimension on a minimal direction, a translation injected
//! at `s` is a rigid wave: hop `i` of every message at `s + i·latency`, each on a different
//! link, so no two of its messages ever meet. The table is then a problem over the
//! translations alone: an offset and a route per translation. A translation may go X then Y or
//! Y then X, and a half-ring shift either way round: up to eight routes, all minimal.
//!
//! A whole translation holds every link of one class (X+, X−, Y+, Y−) at once, so the
//! resources reduce to six classes (injections, ejections and the four link classes); every
//! link class sums to the busiest link's words, so at the bound each class is an exact tiling
//! (the TDM schedules of Argo, POSEIDON.md, are built from the same all-to-all pattern). The
//! search is [`super::wave_search`]; the slot-table search then checks the table as any other.
//! (On a mesh, translations are not uniform: rigid waves of whole translations, or of their
//! rows, found no table where the per-message search does — POSEIDON.md.)

use std::collections::BTreeMap;

use super::wave_search::{self, WaveRoutes};
use crate::topology::{Kind, Network, NodeId};

/// One route of a translation.
#[derive(Clone, Copy, Debug)]
struct Variant {
    /// Whether Y goes first.
    y_first: bool,
    /// (sign, hops) in X and in Y.
    steps: [(i64, i64); 2],
}

/// One translation: its messages (slot indices) and the routes it may take.
struct Wave {
    slots: Vec<usize>,
    variants: Vec<Variant>,
}

/// The waves of an iteration's messages, or `None` when they are not whole translations of a
/// 2-D torus (every node sending once per shift) or words differ.
pub(super) struct Waves {
    waves: Vec<Wave>,
    routes: Vec<WaveRoutes>,
    /// Per slot: its source's coordinates.
    from: Vec<(i64, i64)>,
    dims: (i64, i64),
    /// Node at `x + kx·y`.
    at: Vec<NodeId>,
    /// Resources: whether each is a port (else a link), and the groups each counts in.
    port: Vec<bool>,
    groups: Vec<Vec<usize>>,
    group_count: usize,
}

/// A table found: per slot its offset and its node path.
pub(super) type Seeded = (Vec<u64>, Vec<Vec<NodeId>>);

/// Torus classes: 0 inject, 1 eject, 2 X+, 3 X−, 4 Y+, 5 Y−.
const CLASSES: usize = 6;

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
        if net.coords.len() != n || kx < 2 || ky < 2 || (kx * ky) as usize != n {
            return None;
        }
        let mut at = vec![usize::MAX; n];
        for (v, c) in net.coords.iter().enumerate() {
            let [x, y] = c.as_slice() else { return None };
            let i = usize::try_from(x + kx * y).ok()?;
            *at.get_mut(i)? = v;
        }
        if at.contains(&usize::MAX) {
            return None;
        }
        let words = pairs[0].2;
        let mut by: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
        let mut from = Vec::with_capacity(pairs.len());
        for (j, &(s, d, w)) in pairs.iter().enumerate() {
            if w != words || s == d {
                return None;
            }
            let (a, b) = (net.coords.get(s)?, net.coords.get(d)?);
            let key = ((b[0] - a[0]).rem_euclid(kx), (b[1] - a[1]).rem_euclid(ky));
            by.entry(key).or_default().push(j);
            from.push((a[0], a[1]));
        }
        // Minimal directions of a shift `d` on a ring of `k`: (sign, hops).
        let dirs = |d: i64, k: i64| -> Vec<(i64, i64)> {
            if d == 0 {
                vec![(1, 0)]
            } else if 2 * d < k {
                vec![(1, d)]
            } else if 2 * d > k {
                vec![(-1, k - d)]
            } else {
                vec![(1, d), (-1, d)]
            }
        };
        let mut waves = Vec::new();
        for (&(dx, dy), slots) in &by {
            // Each shift must move every node once: then its messages hold whole link classes.
            let mut srcs: Vec<NodeId> = slots.iter().map(|&j| pairs[j].0).collect();
            srcs.sort_unstable();
            srcs.dedup();
            if srcs.len() != n || slots.len() != n {
                return None;
            }
            let mut variants = Vec::new();
            for &(sx, a) in &dirs(dx, kx) {
                for &(sy, b) in &dirs(dy, ky) {
                    let orders: &[bool] = if a > 0 && b > 0 {
                        &[false, true]
                    } else {
                        &[false]
                    };
                    for &y_first in orders {
                        variants.push(Variant {
                            y_first,
                            steps: [(sx, a), (sy, b)],
                        });
                    }
                }
            }
            waves.push(Wave {
                slots: slots.clone(),
                variants,
            });
        }
        let mut me = Waves {
            waves,
            routes: Vec::new(),
            from,
            dims: (kx, ky),
            at,
            port: Vec::new(),
            groups: Vec::new(),
            group_count: 0,
        };
        let cells_per_hop =
            |i: usize, res: usize| (0..words).map(move |w| (res, i as u64 * latency + w));
        me.port = vec![true, true, false, false, false, false];
        me.groups = vec![
            vec![0],
            vec![1],
            vec![2, 6],
            vec![3, 6],
            vec![4, 7],
            vec![5, 7],
        ];
        me.group_count = CLASSES + 2;
        for w in &me.waves {
            let routes = w
                .variants
                .iter()
                .map(|v| {
                    let cx = if v.steps[0].0 > 0 { 2 } else { 3 };
                    let cy = if v.steps[1].0 > 0 { 4 } else { 5 };
                    let (a, b) = (v.steps[0].1 as usize, v.steps[1].1 as usize);
                    let legs = if v.y_first {
                        [(cy, b), (cx, a)]
                    } else {
                        [(cx, a), (cy, b)]
                    };
                    let mut hops = vec![0usize];
                    for (c, len) in legs {
                        hops.extend(std::iter::repeat_n(c, len));
                    }
                    hops.push(1);
                    hops.iter()
                        .enumerate()
                        .flat_map(|(i, &c)| cells_per_hop(i, c))
                        .collect()
                })
                .collect();
            me.routes.push(WaveRoutes { routes });
        }
        Some(me)
    }

    /// The node path of slot `j` on route `v`.
    fn path(&self, j: usize, v: &Variant) -> Vec<NodeId> {
        let (kx, ky) = self.dims;
        let (mut x, mut y) = self.from[j];
        let mut p = vec![self.at[(x + kx * y) as usize]];
        let order: [usize; 2] = if v.y_first { [1, 0] } else { [0, 1] };
        for d in order {
            let (sign, len) = v.steps[d];
            for _ in 0..len {
                if d == 0 {
                    x = (x + sign).rem_euclid(kx);
                } else {
                    y = (y + sign).rem_euclid(ky);
                }
                p.push(self.at[(x + kx * y) as usize]);
            }
        }
        p
    }

    /// Per slot its offset and path in a table of `period` where no cell holds more than its
    /// capacity (`ports` for the ports, 1 for a link) and no link carries more than `load_cap`
    /// words per iteration, found within `budget` search nodes.
    pub(super) fn table(
        &self,
        period: u64,
        ports: u32,
        load_cap: u64,
        seed: u64,
        budget: usize,
    ) -> Option<Seeded> {
        let cap: Vec<u32> = self
            .port
            .iter()
            .map(|&p| if p { ports.max(1) } else { 1 })
            .collect();
        let link: Vec<bool> = self.port.iter().map(|&p| !p).collect();
        let problem = wave_search::Problem {
            waves: &self.routes,
            cap: &cap,
            link: &link,
            load_cap,
            groups: &self.groups,
            group_count: self.group_count,
        };
        let placed = wave_search::solve(&problem, period, seed, budget)?;
        let mut offsets = vec![0u64; self.from.len()];
        let mut paths = vec![Vec::new(); self.from.len()];
        for (w, &(route, offset)) in self.waves.iter().zip(&placed) {
            let v = &w.variants[route];
            for &j in &w.slots {
                offsets[j] = offset;
                paths[j] = self.path(j, v);
            }
        }
        Some((offsets, paths))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waves(k: usize, latency: u64) -> (Network, Waves) {
        let net = Network::build(&format!("torus:{k}x{k}").parse().expect("spec")).expect("net");
        let n = net.nodes();
        let pairs: Vec<(NodeId, NodeId, u64)> = (0..n)
            .flat_map(|i| (1..n).map(move |j| (i, (i + j) % n, 1)))
            .collect();
        let w = Waves::detect(&net, &pairs, latency).expect("translations");
        (net, w)
    }

    /// Whether no port or link holds one cycle twice (independent of the search): every hop
    /// of every path, by node pair, at its cycle modulo the period.
    fn clear(net: &Network, table: &Seeded, period: u64, latency: u64) -> bool {
        let mut seen = std::collections::BTreeSet::new();
        let (offsets, paths) = table;
        offsets.iter().zip(paths).all(|(&s, p)| {
            let n = p.len();
            let hops_ok = p.windows(2).enumerate().all(|(i, w)| {
                net.link_between(w[0], w[1]).is_some()
                    && seen.insert(((w[0], w[1]), (s + (i as u64 + 1) * latency) % period))
            });
            let last = p[n - 1];
            hops_ok
                && seen.insert(((p[0], usize::MAX), s % period))
                && seen.insert(((usize::MAX, last), (s + n as u64 * latency) % period))
        })
    }

    /// 4×4 and 6×6 tables one cycle above the port bound (15 and 35): at the bound itself
    /// rigid waves cannot fit, since with every injection and ejection cycle taken the
    /// ejections' sum minus the injections' (Σ hops + 1 over the waves: 47 and 143) would be
    /// 0 mod P; the search proves it by exhausting the tree.
    #[test]
    fn small_tori_tables_come_one_above_the_port_bound() {
        for (k, period) in [(4, 16), (6, 36)] {
            let (net, w) = waves(k, 1);
            assert_eq!(w.waves.len(), k * k - 1);
            let t = w.table(period, 1, u64::MAX, 1, 200_000).expect("a table");
            assert!(clear(&net, &t, period, 1), "{k}x{k}");
        }
        let (_, w) = waves(4, 1);
        assert!(w.table(15, 1, u64::MAX, 1, 20_000).is_none());
    }

    /// Paths are minimal and follow the links; messages that are not whole translations are
    /// left to the general search.
    #[test]
    fn paths_are_minimal_and_other_traffic_is_left_alone() {
        let (net, w) = waves(4, 1);
        let (_, paths) = w.table(17, 1, u64::MAX, 1, 100_000).expect("a table");
        for p in &paths {
            assert_eq!(p.len(), net.distance(p[0], p[p.len() - 1]) + 1);
        }
        let pairs = vec![(0, 1, 1), (1, 2, 1)];
        assert!(Waves::detect(&net, &pairs, 1).is_none());
        let mesh = Network::build(&"mesh:4x4".parse().expect("spec")).expect("net");
        assert!(Waves::detect(&mesh, &[(0, 1, 1)], 1).is_none());
    }
}
