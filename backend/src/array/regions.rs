//! Step schedules for regular and general transfers (Eberhart §3.2–3.3): base patterns grouped
//! into regions, regions sent in the diagonal order of sections.
//!
//! - **Regular** (Alg 2): regions of `C'×R` base patterns `R×C → R'×C'` (Eq 3.5); sections of
//!   `sec_ver × sec_hor` regions from Eqs 3.6–3.7 (the source-side quotients divided by the
//!   source region's size, the notes' correction; clamped to ≥ 1); a region sends in step
//!   `d = (region_row mod sec_ver) − (region_col mod sec_hor) + 1` (+M when ≤ 0), and its slot
//!   is filled by the region subroutine: one-to-one (Alg 3, `reg = R·C·R'·C'` steps, each pair
//!   its own step), local gather/scatter (Alg 4: the pattern gathers onto one node by
//!   recursive halving, one combined message per pattern in a one-step slot, the destination
//!   node scatters by recursive doubling), or the hybrid's choice (Alg 5,
//!   `hybrid::hybrid_choice`: groups of 2^g sources and 2^s destinations combine the same
//!   way) — as many gather and scatter steps as `hybrid::combining` counts. Without combining the length is at most `reg·M` (Theorem 2).
//! - **General** (Alg 6): the initial shifts (Eq 3.11, a source passes the data of a
//!   destination it shares with its left/upper neighbour to that neighbour), the base-pattern
//!   index (Eq 3.13) and the largest pattern sizes (Eq 3.14, one-to-one uses the larger), the
//!   offsets and sections in base patterns (Eqs 3.16–3.17; the offset raised to the patterns
//!   that share a channel, where Eq 3.16 undercounts: `Dim::crossed`), regions `base_pattern_row div C'`,
//!   `base_pattern_col div R` (the printed `base_pattern_row div R` is a typo) sent diagonally,
//!   each region's messages packed into its slot, then the final shifts (Eq 3.12, a destination
//!   passes on what belongs to its right/lower neighbour).
//!
//! Messages carry [`Piece`]s: which source's data for which destination they hold, so a
//! combined or forwarded message can be checked against the transfer ([`check_delivery`]).

use std::collections::{BTreeMap, BTreeSet};

use super::hybrid::hybrid_choice;
use super::section::{owner, ArrayTransfer, Range};
use super::{xy_path, Channel, Node, Transfer};

/// Data of the transfer from one source node to one destination node, carried by a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Piece {
    pub from: Node,
    pub to: Node,
    pub units: u64,
}

/// A message and the data it carries (its `units` are the pieces' sum).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Carried {
    pub msg: Transfer,
    pub pieces: Vec<Piece>,
}

impl Carried {
    fn new(src: Node, dst: Node, mut pieces: Vec<Piece>) -> Carried {
        pieces.sort();
        let units = pieces.iter().map(|p| p.units).sum();
        Carried {
            msg: Transfer { src, dst, units },
            pieces,
        }
    }

    /// A direct message: the data from its source to its destination.
    pub fn direct(t: Transfer) -> Carried {
        Carried {
            msg: t,
            pieces: vec![Piece {
                from: t.src,
                to: t.dst,
                units: t.units,
            }],
        }
    }
}

/// How a region's data crosses between source and destination patterns (§3.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subroutine {
    /// Alg 3: every (source, destination) pair its own message.
    OneToOne,
    /// Alg 4: gather onto one node per pattern, one message, scatter.
    GatherScatter,
    /// Alg 5: as many gather and scatter halvings as pay off with these α and β.
    Hybrid { alpha: u64, beta: u64 },
}

/// A region schedule, before it is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub steps: Vec<Vec<Carried>>,
    pub method: String,
    /// The thesis's length: `reg·M` plus the gather/scatter or shift steps.
    pub limit: usize,
    /// M: region steps (the larger section side).
    pub regions: usize,
}

/// Checks that the messages deliver the transfer: every message sends only data its source
/// holds at the start of the step, and at the end each destination holds exactly the units the
/// transfer sends it from each source.
pub fn check_delivery(required: &[Transfer], steps: &[Vec<Carried>]) -> Result<(), String> {
    let mut held: BTreeMap<Node, BTreeMap<(Node, Node), u64>> = BTreeMap::new();
    for m in required {
        *held
            .entry(m.src)
            .or_default()
            .entry((m.src, m.dst))
            .or_default() += m.units;
    }
    for (k, step) in steps.iter().enumerate() {
        let mut arriving = Vec::new();
        for c in step {
            let m = c.msg;
            if m.src == m.dst {
                return Err(format!(
                    "step {}: a message from {:?} to itself",
                    k + 1,
                    m.src
                ));
            }
            if c.pieces.iter().map(|p| p.units).sum::<u64>() != m.units || m.units == 0 {
                return Err(format!(
                    "step {}: {:?}->{:?} carries {} units but its pieces sum otherwise",
                    k + 1,
                    m.src,
                    m.dst,
                    m.units
                ));
            }
            for p in &c.pieces {
                let have = held
                    .get_mut(&m.src)
                    .and_then(|h| h.get_mut(&(p.from, p.to)));
                match have {
                    Some(u) if *u >= p.units => *u -= p.units,
                    _ => {
                        return Err(format!(
                            "step {}: {:?} sends {} units of {:?}->{:?} it does not hold",
                            k + 1,
                            m.src,
                            p.units,
                            p.from,
                            p.to
                        ))
                    }
                }
                arriving.push((m.dst, *p));
            }
        }
        for (node, p) in arriving {
            *held
                .entry(node)
                .or_default()
                .entry((p.from, p.to))
                .or_default() += p.units;
        }
    }
    for (node, h) in &held {
        for (&(from, to), &u) in h {
            if u > 0 && to != *node {
                return Err(format!(
                    "{u} units of {from:?}->{to:?} end at {node:?}, not delivered"
                ));
            }
        }
    }
    Ok(())
}

/// One dimension of the transfer: where each element of the section lives before and after,
/// and through which nodes it passes (relative to the source and destination grids).
#[derive(Clone, Debug)]
struct Dim {
    /// First node of the source and destination grids, and their sizes.
    src0: i64,
    dst0: i64,
    n_src: i64,
    n_dst: i64,
    /// `k/s ≥ k'/s'` (real values, §3.3 footnote 3): sources scatter.
    scatter: bool,
    /// Per element: its source and destination node.
    src: Vec<i64>,
    dst: Vec<i64>,
    /// Per element: the node holding it after the initial shift, the node receiving it before
    /// the final shift, and its base pattern (the holder for a scatter, the receiver for a
    /// gather: Eq 3.13).
    hold: Vec<i64>,
    recv: Vec<i64>,
    pattern: Vec<i64>,
    /// Base-pattern sources and destinations in this dimension (R and R', or C and C'):
    /// exact for a regular transfer, the larger size of Eq 3.14 for a general one.
    src_per: i64,
    dst_per: i64,
    /// Holder (relative) → its base pattern and its place among the pattern's holders.
    holder: BTreeMap<i64, (i64, i64)>,
    /// Receiver (relative) → its place among the pattern's receivers.
    receiver: BTreeMap<i64, i64>,
}

fn div_ceil(a: i64, b: i64) -> i64 {
    (a + b - 1).div_euclid(b)
}

impl Dim {
    fn new(a: Range, k: i64, b: Range, k2: i64) -> Dim {
        let n = a.count();
        let src_abs: Vec<i64> = (0..n).map(|e| owner(a.l + a.s * e, k)).collect();
        let dst_abs: Vec<i64> = (0..n).map(|e| owner(b.l + b.s * e, k2)).collect();
        let (src0, dst0) = (src_abs[0], dst_abs[0]);
        let src: Vec<i64> = src_abs.iter().map(|x| x - src0).collect();
        let dst: Vec<i64> = dst_abs.iter().map(|x| x - dst0).collect();
        let scatter = k * b.s >= k2 * a.s;
        // Owners are non-decreasing along the section: the first element of a node is its
        // first occurrence.
        let first_of = |v: &[i64]| -> BTreeMap<i64, usize> {
            let mut m = BTreeMap::new();
            for (e, x) in v.iter().enumerate() {
                m.entry(*x).or_insert(e);
            }
            m
        };
        let (dst_first, src_first) = (first_of(&dst), first_of(&src));
        let hold: Vec<i64> = (0..n as usize)
            .map(|e| {
                if scatter {
                    src[dst_first[&dst[e]]]
                } else {
                    src[e]
                }
            })
            .collect();
        let recv: Vec<i64> = (0..n as usize)
            .map(|e| {
                if scatter {
                    dst[e]
                } else {
                    dst[src_first[&src[e]]]
                }
            })
            .collect();
        let pattern = if scatter { hold.clone() } else { recv.clone() };
        // Eq 3.14: the larger base pattern; the gather case swaps s↔s', k↔k'.
        let larger = |k: i64, s: i64, k2: i64, s2: i64| div_ceil(div_ceil(k, s) * s2, k2);
        // Eq 3.14 assumes the section starts on a block boundary; a pattern can be one node
        // larger otherwise, so the larger of the formula and the patterns actually present.
        let widest = |of: &[i64], by: &[i64]| {
            let mut nodes: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
            for (p, x) in of.iter().zip(by) {
                nodes.entry(*p).or_default().insert(*x);
            }
            nodes.values().map(|v| v.len() as i64).max().unwrap_or(1)
        };
        let (src_per, dst_per) = if scatter {
            (1, larger(k, a.s, k2, b.s).max(widest(&hold, &recv)))
        } else {
            (larger(k2, b.s, k, a.s).max(widest(&recv, &hold)), 1)
        };
        let place = |of: &[i64]| {
            let mut first: BTreeMap<i64, i64> = BTreeMap::new();
            for (p, x) in pattern.iter().zip(of) {
                let f = first.entry(*p).or_insert(*x);
                *f = (*f).min(*x);
            }
            let mut out = BTreeMap::new();
            for (p, x) in pattern.iter().zip(of) {
                out.insert(*x, (*p, x - first[p]));
            }
            out
        };
        let holder = place(&hold);
        let receiver = place(&recv).into_iter().map(|(x, (_, i))| (x, i)).collect();
        Dim {
            holder,
            receiver,
            src0,
            dst0,
            n_src: src.last().unwrap() + 1,
            n_dst: dst.last().unwrap() + 1,
            scatter,
            src,
            dst,
            hold,
            recv,
            pattern,
            src_per,
            dst_per,
        }
    }

    /// Eq 3.7 on one side pair: sections of regions, `src_w`/`dst_w` the region's extent in
    /// this dimension at the source and at the destination.
    fn regular_sections(&self, src_w: i64, dst_w: i64) -> i64 {
        let side = |o: i64| {
            if o > 0 {
                div_ceil(o.min(self.n_dst), dst_w)
            } else {
                div_ceil((-o).min(self.n_src), src_w)
            }
        };
        let low = side(self.src0 - self.dst0);
        let high = side((self.dst0 + self.n_dst) - (self.src0 + self.n_src));
        low.max(high).max(1)
    }

    /// Base-pattern index of a source node (relative), `I` of Eq 3.13, extended linearly
    /// beyond the grid for Eq 3.16's neighbours.
    fn i_src(&self, n: i64) -> i64 {
        // A scatter's pattern is the source itself (`n − P(l)`), a gather's that of the
        // destination of its first element.
        let at = |n: i64| {
            let e = self.src.iter().position(|&x| x == n).unwrap();
            if self.scatter {
                n
            } else {
                self.pattern[e]
            }
        };
        extended(n, self.n_src, at)
    }

    /// `I'` of Eq 3.13 for a destination node (relative).
    fn i_dst(&self, n: i64) -> i64 {
        let at = |n: i64| {
            let e = self.dst.iter().position(|&x| x == n).unwrap();
            self.pattern[e]
        };
        extended(n, self.n_dst, at)
    }

    /// The offset in base patterns that Theorem 3 needs: Eq 3.16 as printed, raised to the
    /// patterns a message actually passes (see [`Dim::crossed`]), at most the number of
    /// patterns.
    fn offset(&self) -> i64 {
        let patterns = self.i_src(self.n_src - 1) - self.i_src(0) + 1;
        self.printed_offset().max(self.crossed()).min(patterns)
    }

    /// "The maximum number of base patterns a message traverses on its way" (§3.3.3), counted
    /// on the channels: over every directed channel of this dimension that the main phase
    /// uses (holder → receiver, after the initial and before the final shifts), the last
    /// pattern using it minus the first, plus one.
    ///
    /// Eq 3.16 measures from the first destination node next to the first source node (and
    /// the last source node next to the last destination): it counts the patterns between
    /// the *single* nodes. Theorem 3's proof (App. A.3) assumes that a message of pattern i
    /// never passes the single node of pattern i + offset, but a pattern's *cluster* can
    /// reach past it when the clusters are displaced towards the direction of travel and
    /// the end pattern is a node wider than the formula's count — a scatter whose
    /// destinations start one node after the sources (`A(0:6) k=2 → B(3:9) k'=2`: pattern
    /// 0 sends 0 → {1, 2}, pattern 1 sends 1 → {3}; both use channel 1→2 with offset 1), or a
    /// gather whose sources start one node after the destinations (`A(2:9) k=2 → B(1:8)
    /// k'=4`: rows {1, 2} → 0 and {3, 4} → 1 share 2→1). Counting on the channels gives 2
    /// for both, and the diagonal then keeps the two patterns apart.
    fn crossed(&self) -> i64 {
        let mut span: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
        for e in 0..self.src.len() {
            let (mut x, b) = (self.src0 + self.hold[e], self.dst0 + self.recv[e]);
            let p = self.pattern[e];
            while x != b {
                let y = x + (b - x).signum();
                let s = span.entry((x, y)).or_insert((p, p));
                *s = (s.0.min(p), s.1.max(p));
                x = y;
            }
        }
        span.values().map(|s| s.1 - s.0 + 1).max().unwrap_or(0)
    }

    /// Eq 3.16 as printed: the offset in base patterns, at most the number of patterns.
    fn printed_offset(&self) -> i64 {
        let (pl, ql) = (self.src0, self.dst0);
        let (ph, qh) = (self.src0 + self.n_src - 1, self.dst0 + self.n_dst - 1);
        let first = match pl.cmp(&ql) {
            std::cmp::Ordering::Greater => self.i_dst(pl - 1 - self.dst0) + 1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Less => self.i_src(ql - 1 - self.src0) + 1,
        };
        let last = match ph.cmp(&qh) {
            std::cmp::Ordering::Less => {
                self.i_dst(qh - self.dst0) - self.i_dst(ph + 1 - self.dst0) + 1
            }
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => {
                self.i_src(ph - self.src0) - self.i_src(qh + 1 - self.src0) + 1
            }
        };
        let patterns = self.i_src(self.n_src - 1) - self.i_src(0) + 1;
        first.max(last).min(patterns)
    }
}

/// Alg 1/2/6's diagonal: the region step (1-based) of region (row, col).
fn diagonal(sec_ver: i64, sec_hor: i64, row: i64, col: i64) -> i64 {
    let m = sec_ver.max(sec_hor);
    let mut d = row.rem_euclid(sec_ver) - col.rem_euclid(sec_hor) + 1;
    if d <= 0 {
        d += m;
    }
    d
}

/// Every element's journey, in both dimensions.
struct Elements {
    rows: Dim,
    cols: Dim,
}

/// Where an element is at each stage: source, after the vertical and horizontal initial
/// shifts, before the horizontal and vertical final shifts, destination (absolute nodes).
struct Journey {
    stages: [Node; 6],
    /// Base pattern (row, column).
    pattern: (i64, i64),
}

impl Elements {
    fn new(t: &ArrayTransfer) -> Elements {
        Elements {
            rows: Dim::new(t.from.rows, t.fd.kr, t.to.rows, t.td.kr),
            cols: Dim::new(t.from.cols, t.fd.kc, t.to.cols, t.td.kc),
        }
    }

    /// The journeys of the elements that change node.
    fn journeys(&self) -> Vec<Journey> {
        let (r, c) = (&self.rows, &self.cols);
        let mut out = Vec::new();
        for i in 0..r.src.len() {
            for j in 0..c.src.len() {
                let s = |d: &Dim, v: i64| d.src0 + v;
                let q = |d: &Dim, v: i64| d.dst0 + v;
                let src = (s(r, r.src[i]), s(c, c.src[j]));
                let dst = (q(r, r.dst[i]), q(c, c.dst[j]));
                if src == dst {
                    continue;
                }
                out.push(Journey {
                    stages: [
                        src,
                        (s(r, r.hold[i]), src.1),
                        (s(r, r.hold[i]), s(c, c.hold[j])),
                        (q(r, r.recv[i]), q(c, c.recv[j])),
                        (q(r, r.recv[i]), dst.1),
                        dst,
                    ],
                    pattern: (r.pattern[i], c.pattern[j]),
                });
            }
        }
        out
    }
}

/// Pieces moving from one node to another, summed per (message, source, destination).
#[derive(Default)]
struct Moves(BTreeMap<(Node, Node), BTreeMap<(Node, Node), u64>>);

impl Moves {
    fn add(&mut self, at: Node, to: Node, j: &Journey) {
        if at != to {
            *self
                .0
                .entry((at, to))
                .or_default()
                .entry((j.stages[0], j.stages[5]))
                .or_default() += 1;
        }
    }

    fn messages(self) -> Vec<Carried> {
        self.0
            .into_iter()
            .map(|((a, b), p)| {
                Carried::new(
                    a,
                    b,
                    p.into_iter()
                        .map(|((from, to), units)| Piece { from, to, units })
                        .collect(),
                )
            })
            .collect()
    }
}

/// First fit: each message into the first step whose channels it does not use.
fn pack(messages: Vec<Carried>) -> Vec<Vec<Carried>> {
    let mut steps: Vec<Vec<Carried>> = Vec::new();
    let mut used: Vec<BTreeSet<Channel>> = Vec::new();
    for m in messages {
        let path = xy_path(m.msg.src, m.msg.dst);
        let k = (0..steps.len())
            .find(|&k| path.iter().all(|ch| !used[k].contains(ch)))
            .unwrap_or_else(|| {
                steps.push(Vec::new());
                used.push(BTreeSet::new());
                steps.len() - 1
            });
        used[k].extend(path);
        steps[k].push(m);
    }
    steps
}

/// Messages into the given steps (0-based), empty steps dropped.
fn by_index(messages: Vec<(usize, Carried)>) -> Vec<Vec<Carried>> {
    let mut steps: BTreeMap<usize, Vec<Carried>> = BTreeMap::new();
    for (k, m) in messages {
        steps.entry(k).or_default().push(m);
    }
    steps.into_values().collect()
}

/// Alg 3's place of a message holder → receiver: its region's diagonal step (0-based) and its
/// step inside the region's `R·C·R'·C'` (0-based). Group `g` of `C'×C` nodes (diagonal inside
/// the region), rotation over the `C'` destination columns (`(local_row mod C' + j) mod C'`),
/// then the `C` sources of a pattern row × `R'` destination rows in sequence. For a general
/// transfer the sizes are the largest and the local indices count base patterns (§3.3.4).
fn one_to_one(rd: &Dim, cd: &Dim, msg: &Carried, sec_ver: i64, sec_hor: i64) -> (usize, usize) {
    let (r, r2, c, c2) = (rd.src_per, rd.dst_per, cd.src_per, cd.dst_per);
    let (pr, ir) = rd.holder[&(msg.msg.src.0 - rd.src0)];
    let (pc, ic) = cd.holder[&(msg.msg.src.1 - cd.src0)];
    let dr = rd.receiver[&(msg.msg.dst.0 - rd.dst0)];
    let dc = cd.receiver[&(msg.msg.dst.1 - cd.dst0)];
    let slot = diagonal(sec_ver, sec_hor, pr / c2, pc / r) as usize - 1;
    let (lr, lc) = ((pr % c2) * r + ir, (pc % r) * c + ic);
    let g = (lr / c2 - lc / c).rem_euclid(r);
    let rot = (dc - lr % c2).rem_euclid(c2);
    let seq = (lc % c) * r2 + dr;
    (slot, (g * c2 * c * r2 + rot * c * r2 + seq) as usize)
}

/// Alg 2 with the chosen region subroutine, for a regular transfer (identical alignment).
pub fn regular(t: &ArrayTransfer, sub: Subroutine) -> Result<Built, String> {
    let el = Elements::new(t);
    let (rd, cd) = (&el.rows, &el.cols);
    let (r, r2, c, c2) = (rd.src_per, rd.dst_per, cd.src_per, cd.dst_per);
    // Regions: C' patterns high, R wide: R·C' × C·R source nodes, R'·C' × C'·R destinations.
    let sec_ver = rd.regular_sections(r * c2, r2 * c2);
    let sec_hor = cd.regular_sections(c * r, c2 * r);
    let m = sec_ver.max(sec_hor);
    let journeys = el.journeys();
    let slot_of = |p: (i64, i64)| diagonal(sec_ver, sec_hor, p.0 / c2, p.1 / r) as usize - 1;
    let (sources, dests) = ((r * c) as u64, (r2 * c2) as u64);
    let full = (sources.trailing_zeros(), dests.trailing_zeros());
    let (gathers, scatters, name) = match sub {
        Subroutine::OneToOne => (0, 0, "one-to-one, Alg 3".to_string()),
        Subroutine::GatherScatter => (u32::MAX, u32::MAX, "local gather/scatter, Alg 4".into()),
        Subroutine::Hybrid { alpha, beta } => {
            if sources.is_power_of_two() && dests.is_power_of_two() {
                let order = hybrid_choice(m as u64, sources, dests, alpha, beta);
                let g = order.iter().filter(|&&x| x).count() as u32;
                let s = order.len() as u32 - g;
                (
                    g,
                    s,
                    format!("hybrid, Alg 5: {g} gather(s), {s} scatter(s)"),
                )
            } else {
                (
                    0,
                    0,
                    "one-to-one, Alg 3 (the hybrid needs powers of two)".into(),
                )
            }
        }
    };
    let all = gathers == u32::MAX || (gathers, scatters) == full && (gathers, scatters) != (0, 0);
    let head = format!(
        "Alg 2 (extended diagonal scheduling), {name}; base pattern {r}x{c} -> {r2}x{c2}, sections {sec_ver}x{sec_hor} regions"
    );
    if gathers == 0 && scatters == 0 {
        // Alg 3: group g of C'×C nodes (diagonal inside the region), rotation j over the C'
        // destination columns, then the C sources of a pattern row × R' destination rows in
        // sequence.
        let reg = (r * c * r2 * c2) as usize;
        let mut msgs = Vec::new();
        let mut moves = Moves::default();
        for j in &journeys {
            moves.add(j.stages[0], j.stages[5], j);
        }
        for msg in moves.messages() {
            let (slot, sub) = one_to_one(rd, cd, &msg, sec_ver, sec_hor);
            msgs.push((slot * reg + sub, msg));
        }
        return Ok(Built {
            steps: by_index(msgs),
            method: head,
            limit: reg * m as usize,
            regions: m as usize,
        });
    }
    // Combining by recursive halving and doubling (Alg 4, Eq 3.10). Complete combining
    // (Alg 4) gathers each pattern onto Alg 4's root, source (local_col div C, 0), first
    // along the rows (step t moves what a node holds from distance d to the root to
    // d − 2^t when bit t is the lowest set bit of d), then down the root's column, in
    // ⌈log2 C⌉ + ⌈log2 R⌉ steps; the destination root (0, local_row div R) scatters the same
    // way backwards, down its column and then along the rows, in ⌈log2 R'⌉ + ⌈log2 C'⌉ steps.
    // Partial combining (Alg 5) halves groups of 2^g sources (row-major index) onto index 0
    // of each group in g steps and doubles from the destination leaders in s steps. Each
    // step's messages stay inside aligned blocks of distances, one per block and side, so
    // they share no channel, and the step counts are the cost model's
    // (`hybrid::combining`) whenever the pattern sizes are powers of two.
    let (g, s) = if all { full } else { (gathers, scatters) };
    let src_node =
        |p: (i64, i64), idx: i64| (rd.src0 + p.0 * r + idx / c, cd.src0 + p.1 * c + idx % c);
    let dst_node =
        |p: (i64, i64), idx: i64| (rd.dst0 + p.0 * r2 + idx / c2, cd.dst0 + p.1 * c2 + idx % c2);
    let local = |n: Node, p: (i64, i64), src: bool| {
        if src {
            (n.0 - rd.src0 - p.0 * r, n.1 - cd.src0 - p.1 * c)
        } else {
            (n.0 - rd.dst0 - p.0 * r2, n.1 - cd.dst0 - p.1 * c2)
        }
    };
    let clog = |n: i64| 64 - ((n - 1) as u64).leading_zeros();
    let toward = |x: i64, root: i64, bits: u32| {
        let d = x - root;
        root + d.signum() * ((d.abs() >> bits) << bits)
    };
    let (gather_steps, scatter_steps) = if all {
        (clog(c) + clog(r), clog(r2) + clog(c2))
    } else {
        (g, s)
    };
    // Where a piece starting at `n` is after k gather steps.
    let gathered = |n: Node, p: (i64, i64), k: u32| {
        let (lr, lc) = local(n, p, true);
        if all {
            let (root_r, tc) = (p.1 % r, clog(c));
            let (row, col) = if k <= tc {
                (lr, toward(lc, 0, k))
            } else {
                (toward(lr, root_r, k - tc), 0)
            };
            src_node(p, row * c + col)
        } else {
            src_node(p, (lr * c + lc) >> k << k)
        }
    };
    // Where a piece bound for `n` is after u scatter steps.
    let scattered = |n: Node, p: (i64, i64), u: u32| {
        let (lr, lc) = local(n, p, false);
        if all {
            let (root_c, tr, tc) = (p.0 % c2, clog(r2), clog(c2));
            let (row, col) = if u <= tr {
                (toward(lr, 0, tr - u), root_c)
            } else {
                (lr, toward(lc, root_c, tc - (u - tr)))
            };
            dst_node(p, row * c2 + col)
        } else {
            let bits = s - u;
            dst_node(p, (lr * c2 + lc) >> bits << bits)
        }
    };
    let mut pre: Vec<Moves> = (0..gather_steps).map(|_| Moves::default()).collect();
    let mut post: Vec<Moves> = (0..scatter_steps).map(|_| Moves::default()).collect();
    let mut main = Moves::default();
    for j in &journeys {
        let (from, to, p) = (j.stages[0], j.stages[5], j.pattern);
        for (t, step) in pre.iter_mut().enumerate() {
            step.add(
                gathered(from, p, t as u32),
                gathered(from, p, t as u32 + 1),
                j,
            );
        }
        main.add(gathered(from, p, gather_steps), scattered(to, p, 0), j);
        for (u, step) in post.iter_mut().enumerate() {
            step.add(
                scattered(to, p, u as u32),
                scattered(to, p, u as u32 + 1),
                j,
            );
        }
    }
    let nonempty = |v: Vec<Moves>| -> Vec<Vec<Carried>> {
        v.into_iter()
            .map(Moves::messages)
            .filter(|m| !m.is_empty())
            .collect()
    };
    let (pre, post) = (nonempty(pre), nonempty(post));
    let mut slots: Vec<Vec<Carried>> = vec![Vec::new(); m as usize];
    for msg in main.messages() {
        let p = (
            rd.pattern[rd
                .src
                .iter()
                .position(|&x| x == msg.msg.src.0 - rd.src0)
                .unwrap()],
            cd.pattern[cd
                .src
                .iter()
                .position(|&x| x == msg.msg.src.1 - cd.src0)
                .unwrap()],
        );
        slots[slot_of(p)].push(msg);
    }
    let mut steps = Vec::new();
    let mut reg = 1;
    steps.extend(pre.iter().cloned());
    let pre_len = pre.len();
    for slot in slots {
        if all {
            // Alg 4: the whole slot is one step.
            if !slot.is_empty() {
                steps.push(slot);
            }
        } else {
            let packed = pack(slot);
            reg = reg.max(packed.len());
            steps.extend(packed);
        }
    }
    let post_len = post.len();
    steps.extend(post);
    Ok(Built {
        steps,
        method: format!("{head}; {pre_len} gather and {post_len} scatter step(s)"),
        limit: pre_len + reg * m as usize + post_len,
        regions: m as usize,
    })
}

/// Alg 6: initial shifts, diagonal scheduling of regions of base patterns, final shifts.
pub fn general(t: &ArrayTransfer) -> Result<Built, String> {
    let el = Elements::new(t);
    let (rd, cd) = (&el.rows, &el.cols);
    let (r, r2, c, c2) = (rd.src_per, rd.dst_per, cd.src_per, cd.dst_per);
    // Eq 3.17: offsets in patterns over patterns per region (C' high, R wide).
    let sec_ver = div_ceil(rd.offset(), c2).max(1);
    let sec_hor = div_ceil(cd.offset(), r).max(1);
    let m = sec_ver.max(sec_hor);
    let journeys = el.journeys();
    let mut phases: Vec<Moves> = (0..5).map(|_| Moves::default()).collect();
    for j in &journeys {
        for (k, phase) in phases.iter_mut().enumerate() {
            phase.add(j.stages[k], j.stages[k + 1], j);
        }
    }
    let mut steps = Vec::new();
    let mut shifts = 0;
    let mut one = |steps: &mut Vec<Vec<Carried>>, moves: Moves| {
        let msgs = moves.messages();
        if !msgs.is_empty() {
            // Neighbour messages, one per node: a single step.
            steps.push(msgs);
            shifts += 1;
        }
    };
    let [p0, p1, p2, p3, p4] = <[Moves; 5]>::try_from(phases).ok().unwrap();
    one(&mut steps, p0);
    one(&mut steps, p1);
    let reg = (r * c * r2 * c2) as usize;
    let main: Vec<(usize, Carried)> = p2
        .messages()
        .into_iter()
        .map(|msg| {
            let (slot, sub) = one_to_one(rd, cd, &msg, sec_ver, sec_hor);
            (slot * reg + sub, msg)
        })
        .collect();
    steps.extend(by_index(main));
    one(&mut steps, p3);
    one(&mut steps, p4);
    let kind = |d: &Dim| if d.scatter { "scatter" } else { "gather" };
    Ok(Built {
        steps,
        method: format!(
            "Alg 6 (initial and final shifts with diagonal scheduling), one-to-one; {}/{} base patterns up to {r}x{c} -> {r2}x{c2}, sections {sec_ver}x{sec_hor} regions, {shifts} shift step(s)",
            kind(rd),
            kind(cd)
        ),
        limit: shifts + reg * m as usize,
        regions: m as usize,
    })
}

/// §4.2: a regular or general transfer between transposed sections (B's rows on processor
/// columns). Array rows of A pair with array columns of B (dimension X: source rows,
/// destination columns) and A's columns with B's rows (dimension Y: source columns,
/// destination rows), each with the base patterns, initial and final shifts of §3.3; base
/// pattern (px, py) of `R×C` holders sends to `C'×R'` receivers at pattern (py, px).
///
/// With X-Y routing every message of pattern row px runs along px's holder rows and down
/// px's receiver columns, so pattern rows never meet (§4.2.1: patterns are grouped only
/// within a row), and inside a row the patterns are Alg 7's nodes: the holders' columns and
/// the receivers' rows grow with py while the intersection (px's receiver columns, holder
/// rows) is shared, so the patterns on a channel moving right or up are a prefix of the row
/// and those moving left or down a suffix. Sections: Eq 4.2 counts these patterns on each side
/// of the intersection (reading its divisors as c = C, the holder columns per pattern, and
/// c' = C', the receiver rows per pattern); here they are counted on the channels, per row,
/// the largest over all rows, S. Pattern q (1-based in its row) sends in slot q when q ≤ S,
/// else in slot N + 1 − q (the right sender): no prefix of length ≤ S holds N + 1 − q > S and
/// no suffix of length ≤ S holds q, so the two patterns of a slot share no channel (Theorem
/// 4's argument). Each pattern sends its messages one per step inside the slot (one-to-one),
/// so the slot lasts `reg`, the most messages of one pattern. Eq 4.2's halving by
/// `min(R, 2)` would need two patterns on one side to keep to different holder rows
/// step by step; it is not applied, so the length is `shifts + S·reg`.
pub fn transposed(t: &ArrayTransfer) -> Result<Built, String> {
    let xd = Dim::new(t.from.rows, t.fd.kr, t.to.cols, t.td.kc);
    let yd = Dim::new(t.from.cols, t.fd.kc, t.to.rows, t.td.kr);
    let mut journeys = Vec::new();
    for i in 0..xd.src.len() {
        for j in 0..yd.src.len() {
            let src = (xd.src0 + xd.src[i], yd.src0 + yd.src[j]);
            let dst = (yd.dst0 + yd.dst[j], xd.dst0 + xd.dst[i]);
            if src == dst {
                continue;
            }
            let recv = (yd.dst0 + yd.recv[j], xd.dst0 + xd.recv[i]);
            journeys.push(Journey {
                stages: [
                    src,
                    (xd.src0 + xd.hold[i], src.1),
                    (xd.src0 + xd.hold[i], yd.src0 + yd.hold[j]),
                    recv,
                    (recv.0, dst.1),
                    dst,
                ],
                pattern: (xd.pattern[i], yd.pattern[j]),
            });
        }
    }
    let mut phases: Vec<Moves> = (0..5).map(|_| Moves::default()).collect();
    for j in &journeys {
        for (k, phase) in phases.iter_mut().enumerate() {
            phase.add(j.stages[k], j.stages[k + 1], j);
        }
    }
    let [p0, p1, p2, p3, p4] = <[Moves; 5]>::try_from(phases).ok().unwrap();
    // The main messages by pattern (px, q), q the 1-based place of py in the row.
    let py0 = *yd.pattern.iter().min().unwrap();
    let n = *yd.pattern.iter().max().unwrap() - py0 + 1;
    let mut by_pattern: BTreeMap<(i64, i64), Vec<Carried>> = BTreeMap::new();
    for msg in p2.messages() {
        let (px, _) = xd.holder[&(msg.msg.src.0 - xd.src0)];
        let (py, _) = yd.holder[&(msg.msg.src.1 - yd.src0)];
        by_pattern.entry((px, py - py0 + 1)).or_default().push(msg);
    }
    // S: over every channel, the prefix (right, up) or suffix (left, down) of the row that
    // holds the patterns using it.
    let mut s_max = 0;
    for (&(_, q), msgs) in &by_pattern {
        for m in msgs {
            for (a, b) in xy_path(m.msg.src, m.msg.dst) {
                let prefix = b.1 > a.1 || b.0 < a.0;
                s_max = s_max.max(if prefix { q } else { n + 1 - q });
            }
        }
    }
    let s_max = s_max.max(1);
    let reg = by_pattern.values().map(Vec::len).max().unwrap_or(0);
    let mut main = Vec::new();
    for ((_, q), msgs) in by_pattern {
        let slot = if q <= s_max { q } else { n + 1 - q };
        if slot > s_max || slot < 1 {
            return Err(format!(
                "§4.2: pattern {q} of {n} is beyond both ends' {s_max} sections"
            ));
        }
        for (sub, m) in msgs.into_iter().enumerate() {
            main.push(((slot - 1) as usize * reg + sub, m));
        }
    }
    let mut steps = Vec::new();
    let mut shifts = 0;
    let mut one = |steps: &mut Vec<Vec<Carried>>, moves: Moves| {
        let msgs = moves.messages();
        if !msgs.is_empty() {
            steps.push(msgs);
            shifts += 1;
        }
    };
    one(&mut steps, p0);
    one(&mut steps, p1);
    steps.extend(by_index(main));
    one(&mut steps, p3);
    one(&mut steps, p4);
    // Eq 4.2 as printed, with c = C and c' = C', for comparison.
    let side = |x: i64, nn: i64, per: i64, two: i64| div_ceil(x.clamp(0, nn), per) / two.min(2);
    let (xh, yh) = (xd.dst0 + xd.n_dst - 1, yd.dst0 + yd.n_dst - 1);
    let eq42 = [
        side(xh - yd.src0, yd.n_src, yd.src_per, xd.src_per),
        side(
            yd.src0 + yd.n_src - 1 - xd.dst0,
            yd.n_src,
            yd.src_per,
            xd.src_per,
        ),
        side(
            xd.src0 + xd.n_src - 1 - yd.dst0,
            xd.n_src,
            yd.dst_per,
            xd.dst_per,
        ),
        side(yh - xd.src0, xd.n_src, yd.dst_per, xd.dst_per),
    ]
    .into_iter()
    .max()
    .unwrap();
    let kind = |d: &Dim| if d.scatter { "scatter" } else { "gather" };
    Ok(Built {
        steps,
        method: format!(
            "§4.2 (Alg 7 on base patterns grouped by row), one-to-one; {}/{} base patterns up to {}x{} -> {}x{}, {s_max} of {n} patterns per row from each end (Eq 4.2 as printed: {eq42}), {reg} step(s) per pattern, {shifts} shift step(s)",
            kind(&xd),
            kind(&yd),
            xd.src_per,
            yd.src_per,
            yd.dst_per,
            xd.dst_per,
        ),
        limit: shifts + reg * s_max as usize,
        regions: s_max as usize,
    })
}

/// `at(n)` for a node `n` of a grid of `len` nodes, continued one pattern per node beyond either
/// end (Eq 3.16 looks at the neighbours of the end nodes).
fn extended(n: i64, len: i64, at: impl Fn(i64) -> i64) -> i64 {
    if n < 0 {
        at(0) + n
    } else if n >= len {
        at(len - 1) + n - (len - 1)
    } else {
        at(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::max_link_load;
    use crate::array::section::{Alignment, Dist, Kind, Section};
    use crate::array::transfer::plan_with;
    use proptest::prelude::*;

    fn transfer(from: &str, fd: (i64, i64), to: &str, td: (i64, i64)) -> ArrayTransfer {
        ArrayTransfer::new(
            from.parse().unwrap(),
            Dist { kr: fd.0, kc: fd.1 },
            to.parse().unwrap(),
            Dist { kr: td.0, kc: td.1 },
            Alignment::Identical,
        )
        .unwrap()
    }

    const SUBS: [Subroutine; 3] = [
        Subroutine::OneToOne,
        Subroutine::GatherScatter,
        Subroutine::Hybrid { alpha: 1, beta: 1 },
    ];

    #[test]
    fn fig_3_5_scatter_one_to_four_in_reg_times_m_steps() {
        // A(0:7), k = 4 → B(6:20:2), k' = 2: a 1 → 4 pattern (Eq 3.4); two sources, the
        // destinations 3 nodes to the right: sections of 2 regions, reg = 4, M = 2: 8 steps,
        // the most messages on one channel (Theorem 2, the quotient exact).
        let t = transfer("A(0:0,0:7)", (1, 4), "B(0:0,6:20:2)", (1, 2));
        assert_eq!(t.kind(), Kind::Regular);
        let p = plan_with(&t, Subroutine::OneToOne);
        assert!(p.method.contains("base pattern 1x1 -> 1x4"), "{}", p.method);
        assert_eq!((p.schedule.len(), p.bound, p.limit), (8, 8, Some(8)));
        p.check(&t).unwrap();
        // Alg 4: each source sends one combined message of its 4 units and the first
        // destination of each pattern scatters by recursive doubling: 2 region steps, then
        // log2 4 = 2 scatter steps (2 units to the third destination, then 1 to the second
        // and the fourth), as `hybrid::combining` counts.
        let p = plan_with(&t, Subroutine::GatherScatter);
        p.check(&t).unwrap();
        let combined: Vec<_> = p.schedule.transfers().filter(|m| m.units == 4).collect();
        assert_eq!(combined.len(), 2);
        assert_eq!(p.schedule.len(), 4);
        assert!(
            p.method.ends_with("; 0 gather and 2 scatter step(s)"),
            "{}",
            p.method
        );
        let units: Vec<Vec<u64>> = p.schedule.steps[2..]
            .iter()
            .map(|s| s.iter().map(|m| m.units).collect())
            .collect();
        assert_eq!(units, vec![vec![2, 2], vec![1, 1, 1, 1]]);
    }

    #[test]
    fn alg_3_fills_a_region_with_rotated_columns() {
        // 2×1 → 1×1 gather in rows, 1 → 2 scatter in columns: R = 2, C' = 2, regions of 2×2
        // patterns (4×2 sources), reg = R·C·R'·C' = 4 steps per region slot.
        let t = transfer("A(0:7,0:7)", (1, 4), "B(0:7,0:7)", (2, 2));
        assert_eq!(t.kind(), Kind::Regular);
        let p = plan_with(&t, Subroutine::OneToOne);
        assert!(p.method.contains("2x1 -> 1x2"), "{}", p.method);
        p.check(&t).unwrap();
        assert!(p.schedule.len() <= p.limit.unwrap());
        assert!(p.schedule.len() >= p.bound);
    }

    #[test]
    fn hybrid_and_gather_scatter_deliver_the_same_data() {
        let t = transfer("A(0:7,0:7)", (4, 1), "B(8:15,8:15)", (1, 2));
        assert_eq!(t.kind(), Kind::Regular);
        for sub in SUBS {
            let p = plan_with(&t, sub);
            p.check(&t).unwrap();
            assert!(!p.method.starts_with("first fit"), "{}", p.method);
            assert!(p.schedule.len() <= p.limit.unwrap(), "{}", p.method);
        }
    }

    #[test]
    fn fig_3_18c_scatter_scatter_nine_messages_become_four() {
        // Each source holds 4×4 elements; the destinations hold 2×2 shifted by one element,
        // so an inner source's data meets 3×3 destinations (Fig 3.18c, top). After the two initial
        // shifts (Eq 3.11) every source sends a regular 1 → 2×2 (bottom): 9 → 4 messages.
        let t = transfer("A(0:11,0:11)", (4, 4), "B(11:22,11:22)", (2, 2));
        assert_eq!(t.kind(), Kind::General);
        let before = t.messages().iter().filter(|m| m.src == (1, 1)).count();
        let p = plan_with(&t, Subroutine::OneToOne);
        p.check(&t).unwrap();
        assert!(p.method.starts_with("Alg 6"), "{}", p.method);
        assert!(p.method.contains("scatter/scatter"), "{}", p.method);
        let far = |m: &&Transfer| m.src == (1, 1) && m.dst.0 >= 5;
        let after = p.schedule.transfers().filter(far).count();
        assert_eq!((before, after), (9, 4));
        assert!(p.schedule.len() <= p.limit.unwrap());
    }

    #[test]
    fn fig_3_18b_gather_scatter_patterns_of_one_two_two_four_messages() {
        // Rows gather (sources hold 3, destinations 4.5: k' = 9, s' = 2), columns scatter
        // (3 → 2): before the shifts the sources send 1–4 messages of varying sizes; after the
        // column initial shift and with the row final shift, the four base patterns send 1,
        // 2, 2 and 4 messages (Fig 3.18b): 2.25 on average.
        let t = transfer("A(0:8,0:5)", (3, 3), "B(0:16:2,12:17)", (9, 2));
        assert_eq!(t.kind(), Kind::General);
        let p = plan_with(&t, Subroutine::OneToOne);
        p.check(&t).unwrap();
        assert!(p.method.contains("gather/scatter"), "{}", p.method);
        // Main-phase messages reach the destination columns (≥ 6); count them per base
        // pattern: row pattern = receiving row, column pattern = sending column.
        let mut per: BTreeMap<(i64, i64), usize> = BTreeMap::new();
        for m in p
            .schedule
            .transfers()
            .filter(|m| m.dst.1 >= 6 && m.src.1 < 2)
        {
            *per.entry((m.dst.0, m.src.1)).or_default() += 1;
        }
        let mut counts: Vec<usize> = per.values().copied().collect();
        counts.sort();
        assert_eq!(counts, vec![1, 2, 2, 4]);
    }

    #[test]
    fn alg_6_offset_counts_the_patterns_a_message_crosses() {
        // Rows gather: sources {1, 2} → 0 and {3, 4} → 1 share channel 2→1, while Eq 3.16 as
        // printed gives an offset of 1 (one section), which put both in one step.
        let t = transfer("A(2:9,2:8:2)", (2, 4), "B(1:8,3:6)", (4, 4));
        let el = Elements::new(&t);
        assert_eq!((el.rows.printed_offset(), el.rows.offset()), (1, 2));
        // Columns scatter: 0 → {1, 2} and 1 → {3} share channel 1→2.
        let u = transfer("A(0:0,0:6)", (1, 2), "B(0:0,3:9)", (1, 2));
        let el = Elements::new(&u);
        assert_eq!((el.cols.printed_offset(), el.cols.offset()), (1, 2));
        for t in [t, u] {
            assert_eq!(t.kind(), Kind::General);
            let p = plan_with(&t, Subroutine::OneToOne);
            assert!(p.method.starts_with("Alg 6"), "{}", p.method);
            p.check(&t).unwrap();
            assert!(p.schedule.len() <= p.limit.unwrap());
        }
    }

    /// Block size, stride and first element of one dimension of a regular section holding
    /// `per` = k/s elements per node.
    fn regular_dim() -> impl Strategy<Value = (i64, i64, i64)> {
        (prop::sample::select(vec![1i64, 2, 4]), 1i64..=2, 0i64..3).prop_flat_map(|(per, s, q)| {
            (
                Just(per * s),
                Just(s),
                (0..s).prop_map(move |r| q * per * s + r),
            )
        })
    }

    /// Block size, stride ≤ block and first element of one dimension of any section.
    fn any_dim() -> impl Strategy<Value = (i64, i64, i64)> {
        (1i64..=4).prop_flat_map(|k| (Just(k), 1..=k, 0i64..4))
    }

    fn check_plan(t: &ArrayTransfer, sub: Subroutine) -> Result<bool, TestCaseError> {
        let p = plan_with(t, sub);
        prop_assert_eq!(p.check(t), Ok(()), "{}", p.method);
        let own = max_link_load(p.schedule.transfers());
        prop_assert!(p.schedule.len() >= own);
        let region = !p.method.starts_with("first fit");
        if region {
            prop_assert!(p.schedule.len() <= p.limit.unwrap(), "{}", p.method);
        }
        if sub == Subroutine::OneToOne && t.kind() == Kind::Regular {
            // The same messages as the transfer: the conflicting-set bound holds.
            prop_assert!(p.schedule.len() >= p.bound);
        }
        Ok(region)
    }

    proptest! {
        #![proptest_config(ProptestConfig { max_global_rejects: 10_000, ..ProptestConfig::with_cases(300) })]

        #[test]
        fn regular_transfers_run_alg_2(
            rows in regular_dim(), cols in regular_dim(),
            rows2 in regular_dim(), cols2 in regular_dim(),
            m in 1i64..=2, sub in prop::sample::select(SUBS.to_vec()),
        ) {
            let lcm = |a: i64, b: i64| a.max(b);
            let nr = lcm(rows.0 / rows.1, rows2.0 / rows2.1) * m;
            let nc = lcm(cols.0 / cols.1, cols2.0 / cols2.1) * m;
            let range = |(k, s, l): (i64, i64, i64), n: i64| (k, Range::new(l, l + (n - 1) * s, s).unwrap());
            let ((kr, rr), (kc, rc)) = (range(rows, nr), range(cols, nc));
            let ((kr2, rr2), (kc2, rc2)) = (range(rows2, nr), range(cols2, nc));
            prop_assume!(owner(rr.h, kr) < 8 && owner(rc.h, kc) < 8 && owner(rr2.h, kr2) < 8 && owner(rc2.h, kc2) < 8);
            let t = ArrayTransfer::new(
                Section { name: "A".into(), rows: rr, cols: rc }, Dist { kr, kc },
                Section { name: "B".into(), rows: rr2, cols: rc2 }, Dist { kr: kr2, kc: kc2 },
                Alignment::Identical,
            ).unwrap();
            prop_assume!(t.kind() == Kind::Regular);
            prop_assert!(check_plan(&t, sub)?, "regular transfers never fall back");
            // Recursive halving and doubling: as many gather and scatter steps as the cost
            // model (`hybrid::combining`) counts.
            let el = Elements::new(&t);
            let sources = (el.rows.src_per * el.cols.src_per) as u64;
            let dests = (el.rows.dst_per * el.cols.dst_per) as u64;
            let p = plan_with(&t, sub);
            let order = match sub {
                Subroutine::OneToOne => None,
                Subroutine::GatherScatter => {
                    let mut o = vec![true; sources.trailing_zeros() as usize];
                    o.extend(vec![false; dests.trailing_zeros() as usize]);
                    Some(o)
                }
                Subroutine::Hybrid { alpha, beta } => Some(hybrid_choice(p.regions.unwrap() as u64, sources, dests, alpha, beta)),
            };
            if let Some(order) = order.filter(|o| !o.is_empty()) {
                let cost = crate::array::hybrid::combining(sources, dests, 1, &order);
                // A step is left out only when it has nothing to move: every node that would
                // send in it keeps its data (its destination is itself). With the grids apart
                // no node does.
                let (gs, ds) = (t.source_grid(), t.dest_grid());
                let apart = gs.row + gs.rows <= ds.row || ds.row + ds.rows <= gs.row
                    || gs.col + gs.cols <= ds.col || ds.col + ds.cols <= gs.col;
                let tail = p.method.rsplit("; ").next().unwrap();
                let counts: Vec<u32> = tail.split(' ').filter_map(|w| w.parse().ok()).collect();
                prop_assert_eq!(counts.len(), 2, "{}", p.method);
                prop_assert!(counts[0] <= cost.gathers && counts[1] <= cost.scatters, "{}", p.method);
                if apart {
                    prop_assert_eq!((counts[0], counts[1]), (cost.gathers, cost.scatters), "{}", p.method);
                }
            }
        }

        #[test]
        fn transposed_transfers_run_alg_7_on_patterns(
            a in (any_dim(), any_dim()), b in (any_dim(), any_dim()), n in (1i64..=8, 1i64..=8),
        ) {
            // A's rows pair with B's columns and A's columns with B's rows.
            let fit = |(k, s, l): (i64, i64, i64)| (8 * k - 1 - l) / s + 1;
            let nr = n.0.min(fit(a.0)).min(fit(b.1));
            let nc = n.1.min(fit(a.1)).min(fit(b.0));
            let range = |(_, s, l): (i64, i64, i64), n: i64| Range::new(l, l + (n - 1) * s, s).unwrap();
            let t = ArrayTransfer::new(
                Section { name: "A".into(), rows: range(a.0, nr), cols: range(a.1, nc) },
                Dist { kr: a.0 .0, kc: a.1 .0 },
                Section { name: "B".into(), rows: range(b.0, nc), cols: range(b.1, nr) },
                Dist { kr: b.0 .0, kc: b.1 .0 },
                Alignment::Transposed,
            ).unwrap();
            prop_assume!(t.kind() != Kind::Shift);
            prop_assert!(check_plan(&t, Subroutine::OneToOne)?, "transposed transfers never fall back");
        }

        #[test]
        fn general_transfers_run_alg_6(
            a in (any_dim(), any_dim()), b in (any_dim(), any_dim()), n in (1i64..=8, 1i64..=8),
        ) {
            // As many elements as the mesh holds on both sides, up to n.
            let fit = |(k, s, l): (i64, i64, i64)| (10 * k - 1 - l) / s + 1;
            let nr = n.0.min(fit(a.0)).min(fit(b.0));
            let nc = n.1.min(fit(a.1)).min(fit(b.1));
            let range = |(_, s, l): (i64, i64, i64), n: i64| Range::new(l, l + (n - 1) * s, s).unwrap();
            let (rr, rc, rr2, rc2) = (range(a.0, nr), range(a.1, nc), range(b.0, nr), range(b.1, nc));
            let k = (a.0 .0, a.1 .0, b.0 .0, b.1 .0);
            let t = ArrayTransfer::new(
                Section { name: "A".into(), rows: rr, cols: rc }, Dist { kr: k.0, kc: k.1 },
                Section { name: "B".into(), rows: rr2, cols: rc2 }, Dist { kr: k.2, kc: k.3 },
                Alignment::Identical,
            ).unwrap();
            prop_assume!(t.kind() == Kind::General);
            prop_assert!(check_plan(&t, Subroutine::OneToOne)?, "general transfers never fall back");
        }
    }
}
