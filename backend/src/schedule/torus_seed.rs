//! A constructed start for the slot table of an all-to-all on a 2-D torus. The messages of one
//! iteration split into translations `(dx, dy)`: every node `(x, y)` sends to `(x+dx, y+dy)`.
//! Routed dimension by dimension on a minimal direction, a translation injected at `s` is a
//! rigid wave: hop `i` of every message at `s + i·latency`, each on a different link of one
//! class (X+, X−, Y+, Y−), so the whole class is held at once. The table is then a small
//! problem over the translations alone: an offset and a route per translation such that the
//! injections, ejections and each link class never hold one cycle twice modulo `P`. On a k×k
//! torus every link class sums to the busiest link's words, so at the bound each class is an
//! exact tiling (the TDM schedules of Argo, POSEIDON.md, are built from the same all-to-all
//! pattern).
//!
//! A translation may go X then Y or Y then X, and a half-ring shift either way round: up to
//! eight routes, all minimal. The offsets and routes are found by a depth-first search with
//! forward checking (every translation keeps the placements still clear; the one with the
//! fewest goes next; a link class or port with fewer free cells than the translations left
//! need cuts the branch), restarted with a new order of values when a run of nodes finds
//! nothing (randomised restarts, as in constraint solvers), deterministic for a seed. The
//! slot-table search then checks the table as any other.

use std::collections::BTreeMap;

use crate::topology::{Kind, Network, NodeId};

/// Classes: 0 inject, 1 eject, 2 X+, 3 X−, 4 Y+, 5 Y−.
const CLASSES: usize = 6;

/// One route of a translation.
#[derive(Clone, Debug)]
struct Variant {
    /// Cells held relative to the start, as (class, cycle), one per word.
    cells: Vec<(usize, u64)>,
    /// Words it puts on every link of each link class (X+, X−, Y+, Y−) per iteration.
    load: [u64; 4],
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
    /// Per slot: its source's coordinates.
    from: Vec<(i64, i64)>,
    dims: (i64, i64),
    /// Node at `x + kx·y`.
    at: Vec<NodeId>,
}

/// A table found: per slot its offset and its node path.
pub(super) type Seeded = (Vec<u64>, Vec<Vec<NodeId>>);

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
            // Each shift moves every node once, so its messages are a wave.
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
                        let cx = if sx > 0 { 2 } else { 3 };
                        let cy = if sy > 0 { 4 } else { 5 };
                        let legs = if y_first {
                            [(cy, b), (cx, a)]
                        } else {
                            [(cx, a), (cy, b)]
                        };
                        let mut hops = vec![0usize];
                        for (c, len) in legs {
                            hops.extend(std::iter::repeat_n(c, len as usize));
                        }
                        hops.push(1);
                        let cells = hops
                            .iter()
                            .enumerate()
                            .flat_map(|(i, &c)| {
                                (0..words).map(move |w| (c, i as u64 * latency + w))
                            })
                            .collect();
                        let mut load = [0u64; 4];
                        load[cx - 2] += words * a as u64;
                        load[cy - 2] += words * b as u64;
                        variants.push(Variant {
                            cells,
                            load,
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
        Some(Waves {
            waves,
            from,
            dims: (kx, ky),
            at,
        })
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
        let mut search = Search::new(self, period, ports, load_cap)?;
        let (wave_of, variant, offset) = search.run(seed, budget)?;
        let mut offsets = vec![0u64; self.from.len()];
        let mut paths = vec![Vec::new(); self.from.len()];
        for (t, w) in self.waves.iter().enumerate() {
            let p = wave_of[t];
            let v = &w.variants[variant[p] as usize];
            for &j in &w.slots {
                offsets[j] = u64::from(offset[p]);
                paths[j] = self.path(j, v);
            }
        }
        Some((offsets, paths))
    }
}

/// The depth-first search over (translation, route, offset) placements.
struct Search {
    period: usize,
    /// Capacity of a cell of each class.
    cap: [u8; CLASSES],
    load_cap: u64,
    /// Per placement: its wave, route, offset, and its cells `class·P + cycle` in
    /// `cells[start[p]..start[p + 1]]`; per wave its placements.
    wave: Vec<u32>,
    variant: Vec<u8>,
    offset: Vec<u32>,
    start: Vec<u32>,
    cells: Vec<u32>,
    load: Vec<[u64; 4]>,
    /// Cells of each class a placement holds.
    count: Vec<[u32; CLASSES]>,
    of_wave: Vec<Vec<u32>>,
    /// Per cell: the placements holding it.
    cover: Vec<Vec<u32>>,
    occ: Vec<u8>,
    loads: [u64; 4],
    chosen: Vec<u32>,
    nodes: usize,
    limit: usize,
    rng: u64,
}

impl Search {
    fn new(waves: &Waves, period: u64, ports: u32, load_cap: u64) -> Option<Search> {
        let p = usize::try_from(period).ok()?;
        if p == 0 || p > (u32::MAX as usize) / CLASSES {
            return None;
        }
        let port_cap = u8::try_from(ports.clamp(1, 255)).ok()?;
        let mut s = Search {
            period: p,
            cap: [port_cap, port_cap, 1, 1, 1, 1],
            load_cap,
            wave: Vec::new(),
            variant: Vec::new(),
            offset: Vec::new(),
            start: vec![0],
            cells: Vec::new(),
            load: Vec::new(),
            count: Vec::new(),
            of_wave: vec![Vec::new(); waves.waves.len()],
            cover: vec![Vec::new(); CLASSES * p],
            occ: vec![0; CLASSES * p],
            loads: [0; 4],
            chosen: Vec::new(),
            nodes: 0,
            limit: 0,
            rng: 0,
        };
        let mut buf: Vec<u32> = Vec::new();
        for (t, w) in waves.waves.iter().enumerate() {
            for (v, var) in w.variants.iter().enumerate() {
                if var.load.iter().any(|&l| l > load_cap) {
                    continue;
                }
                for off in 0..p {
                    buf.clear();
                    let mut count = [0u32; CLASSES];
                    for &(c, rel) in &var.cells {
                        buf.push((c * p + ((off as u64 + rel) % period) as usize) as u32);
                        count[c] += 1;
                    }
                    // A route that holds one link cell twice fits no table of this period.
                    let mut sorted = buf.clone();
                    sorted.sort_unstable();
                    if sorted.windows(2).any(|x| x[0] == x[1]) {
                        break;
                    }
                    for &c in &buf {
                        s.cover[c as usize].push(s.wave.len() as u32);
                    }
                    s.of_wave[t].push(s.wave.len() as u32);
                    s.wave.push(t as u32);
                    s.variant.push(v as u8);
                    s.offset.push(off as u32);
                    s.cells.extend_from_slice(&buf);
                    s.start.push(s.cells.len() as u32);
                    s.load.push(var.load);
                    s.count.push(count);
                }
            }
            if s.of_wave[t].is_empty() {
                return None;
            }
        }
        Some(s)
    }

    fn next_rand(&mut self) -> u64 {
        // splitmix64
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn cells_of(&self, q: u32) -> &[u32] {
        &self.cells[self.start[q as usize] as usize..self.start[q as usize + 1] as usize]
    }

    fn fits(&self, q: u32) -> bool {
        let l = &self.load[q as usize];
        (0..4).all(|i| self.loads[i] + l[i] <= self.load_cap)
            && self
                .cells_of(q)
                .iter()
                .all(|&c| self.occ[c as usize] < self.cap[c as usize / self.period])
    }

    fn apply(&mut self, q: u32, add: bool) {
        let (a, b) = (
            self.start[q as usize] as usize,
            self.start[q as usize + 1] as usize,
        );
        for i in a..b {
            let c = self.cells[i] as usize;
            if add {
                self.occ[c] += 1;
            } else {
                self.occ[c] -= 1;
            }
        }
        for i in 0..4 {
            if add {
                self.loads[i] += self.load[q as usize][i];
            } else {
                self.loads[i] -= self.load[q as usize][i];
            }
        }
    }

    /// Free cells of each class.
    fn free(&self) -> [u64; CLASSES] {
        let mut f = [0u64; CLASSES];
        for (c, fc) in f.iter_mut().enumerate() {
            let cap = self.cap[c];
            *fc = self.occ[c * self.period..(c + 1) * self.period]
                .iter()
                .map(|&o| u64::from(cap.saturating_sub(o)))
                .sum();
        }
        f
    }

    /// Short runs, each with its own order of values, until a table is found or `budget`
    /// nodes are spent (a run that errs early rarely recovers by backtracking; a new order
    /// does). Per wave: its placement.
    fn run(&mut self, seed: u64, budget: usize) -> Option<(Vec<usize>, Vec<u8>, Vec<u32>)> {
        let n = self.of_wave.len();
        let mut spent = 0usize;
        let run_nodes = 2 * n + 256;
        let mut attempt = 0u64;
        while spent < budget {
            self.rng = seed ^ (self.period as u64).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ attempt;
            self.nodes = 0;
            self.limit = run_nodes.min(budget - spent);
            self.occ.iter_mut().for_each(|o| *o = 0);
            self.loads = [0; 4];
            self.chosen.clear();
            let domains: Vec<Vec<u32>> = self.of_wave.clone();
            let open: Vec<usize> = (0..n).collect();
            let done = self.dfs(&domains, &open);
            spent += self.nodes;
            if done == Some(false) {
                // The whole tree is exhausted: no table of this period.
                return None;
            }
            if done == Some(true) {
                let mut per_wave = vec![0usize; n];
                for &q in &self.chosen {
                    per_wave[self.wave[q as usize] as usize] = q as usize;
                }
                return Some((per_wave, self.variant.clone(), self.offset.clone()));
            }
            attempt += 1;
        }
        None
    }

    /// `Some(true)` when every wave in `open` is placed, `Some(false)` when the subtree holds
    /// no table, `None` when the run's nodes are spent. `domains[t]`: wave t's placements,
    /// some of which may no longer fit.
    ///
    /// The branch is taken on the first undecided cell of the class with the fewest ways to
    /// decide it (a wave covering it, or leaving it empty), as exact-cover search does, so a
    /// class fills from its first cell on and a gap is decided when it appears; a wave left
    /// with one placement takes it first.
    fn dfs(&mut self, domains: &[Vec<u32>], open: &[usize]) -> Option<bool> {
        if open.is_empty() {
            return Some(true);
        }
        self.nodes += 1;
        if self.nodes > self.limit {
            return None;
        }
        let mut next: Vec<Vec<u32>> = vec![Vec::new(); domains.len()];
        // The least each class (and each pair of directions) still needs.
        let mut need = [0u64; CLASSES + 2];
        let mut forced: Option<usize> = None;
        for &u in open {
            let d: Vec<u32> = domains[u]
                .iter()
                .copied()
                .filter(|&r| self.fits(r))
                .collect();
            if d.is_empty() {
                return Some(false);
            }
            let mut least = [u64::MAX; CLASSES + 2];
            for &r in &d {
                let c = &self.count[r as usize];
                for k in 0..CLASSES {
                    least[k] = least[k].min(u64::from(c[k]));
                }
                least[CLASSES] = least[CLASSES].min(u64::from(c[2] + c[3]));
                least[CLASSES + 1] = least[CLASSES + 1].min(u64::from(c[4] + c[5]));
            }
            for k in 0..CLASSES + 2 {
                need[k] += least[k];
            }
            if d.len() == 1 && forced.is_none() {
                forced = Some(u);
            }
            next[u] = d;
        }
        let f = self.free();
        let enough = (0..CLASSES).all(|k| need[k] <= f[k])
            && need[CLASSES] <= f[2] + f[3]
            && need[CLASSES + 1] <= f[4] + f[5];
        if !enough {
            return Some(false);
        }
        let assigned = |s: &Search, r: u32| !open.contains(&(s.wave[r as usize] as usize));
        // The options: placements, and `None` for leaving the cell empty.
        let mut options: Vec<Option<u32>> = Vec::new();
        let mut cell = usize::MAX;
        if let Some(u) = forced {
            options.push(Some(next[u][0]));
        } else {
            let p = self.period;
            for c in 0..CLASSES {
                let Some(t) = (0..p).find(|&t| self.occ[c * p + t] < self.cap[c]) else {
                    continue;
                };
                let at = c * p + t;
                let mut here: Vec<Option<u32>> = self.cover[at]
                    .iter()
                    .copied()
                    .filter(|&r| !assigned(self, r) && self.fits(r))
                    .map(Some)
                    .collect();
                here.push(None);
                if cell == usize::MAX || here.len() < options.len() {
                    options = here;
                    cell = at;
                }
            }
            if cell == usize::MAX {
                return Some(false);
            }
            // Placements in an order of the run's own; leaving the cell empty last.
            let k = options.len() - 1;
            for i in (1..k).rev() {
                let j = (self.next_rand() % (i as u64 + 1)) as usize;
                options.swap(i, j);
            }
        }
        for o in options {
            match o {
                Some(q) => {
                    self.apply(q, true);
                    let t = self.wave[q as usize] as usize;
                    let rest: Vec<usize> = open.iter().copied().filter(|&u| u != t).collect();
                    self.chosen.push(q);
                    let r = self.dfs(&next, &rest);
                    if r == Some(true) {
                        return r;
                    }
                    self.chosen.pop();
                    self.apply(q, false);
                    r?;
                }
                None => {
                    let was = self.occ[cell];
                    self.occ[cell] = self.cap[cell / self.period];
                    let r = self.dfs(&next, open);
                    self.occ[cell] = was;
                    if r? {
                        return Some(true);
                    }
                }
            }
        }
        Some(false)
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
