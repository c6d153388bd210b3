//! Routing and channel assignment (RCA) of logical topologies over a TDM torus (Yuan §4.1).
//!
//! A *channel* is one time slot of the frame; the connections given one channel must share no
//! directed link and no source or destination (Yuan §4.1.1.1, conditions 1–2). Every realization here
//! is returned as a list of channels ([`Phase`]s) and checked by [`check_phases`].
//!
//! - Hypercube on a linear array: `Assign_array` (Yuan Fig 4.6), ⌊2N/3⌋ channels (Thm 3).
//! - Hypercube on a ring: `Assign_ring` (Yuan Fig 4.9), ⌊N/3 + N/4⌋ channels (Thm 5), odd–even routing.
//! - allXY on a 16×16 torus: the grouped ring AAPC phases combined into N²/8 = 32 channels (Yuan's
//!   count), by the construction in [`allxy_from_groups`].
//! - Hypercube on an N×N torus, N = 2^k ≥ 8: Yuan's combination (Lemmas 8 and 10, Thm 6) in
//!   [`hypercube_torus`], Table 4.1's channel count.
//! - Other hypercubes and allXY on other sizes: ring channel sets of the rows and of the columns,
//!   applied line by line and packed into torus channels by colouring their conflict graph (DSatur,
//!   then Culberson's iterated greedy; rows and columns never share a link under XY routing, only
//!   nodes). This packing is ours; it meets Yuan's allXY count on 8×8 (14).
//! - Logical torus: 4 channels, one per direction (Yuan Fig 4.11).
//! - All-to-all: the AAPC phases of [`crate::sim::aapc`] (N³/8 on 8×8 and 16×16).

// `is_multiple_of` is newer than the workspace's minimum Rust version (1.85).
#![allow(clippy::manual_is_multiple_of)]

use crate::sim::aapc::{
    aapc_phases, check_phases, greedy_pairs, grouped_phases, ring_channels, ring_groups,
    Connection, Phase, RingPair,
};
use crate::sim::optical::torus::{Torus, Way};
use crate::sim::optical::OpticalError;
use crate::topology::NodeId;

/// A connection on a line of `n` nodes (array or ring): `src → dst` going `way` for `len` hops.
pub type LinePair = RingPair;

/// `Assign_array(N)` (Yuan Fig 4.6): channels realizing H_r on an N = 2^r node linear array.
/// `None` unless N is a power of two.
pub fn assign_array(n: usize) -> Option<Vec<Vec<LinePair>>> {
    if !n.is_power_of_two() {
        return None;
    }
    Some(assign_array_rec(n))
}

fn array_pair(src: usize, dst: usize) -> LinePair {
    if dst >= src {
        RingPair {
            src,
            way: Way::Plus,
            len: dst - src,
        }
    } else {
        RingPair {
            src,
            way: Way::Minus,
            len: src - dst,
        }
    }
}

fn assign_array_rec(n: usize) -> Vec<Vec<LinePair>> {
    let r = n.trailing_zeros();
    if r == 0 {
        return Vec::new();
    }
    let relabel = |chans: &[Vec<LinePair>], stride: usize, offset: usize| -> Vec<Vec<LinePair>> {
        chans
            .iter()
            .map(|c| {
                c.iter()
                    .map(|p| RingPair {
                        src: p.src * stride + offset,
                        way: p.way,
                        len: p.len * stride,
                    })
                    .collect()
            })
            .collect()
    };
    let mut out = Vec::new();
    if r % 2 == 1 {
        // Lemma 4: H_(r-1) on the even and on the odd nodes (they share links: disjoint channels),
        // then DIM_0 on one more channel.
        let sub = assign_array_rec(n / 2);
        out.extend(relabel(&sub, 2, 0));
        out.extend(relabel(&sub, 2, 1));
        out.push((0..n).map(|i| array_pair(i, i ^ 1)).collect());
    } else {
        // Lemma 5: H_(r-2) on the four subarrays {n mod 4 = i}, then DIM_0 ∪ DIM_1 on two channels
        // (Fig 4.5): {0→2, 3→1, 1→0, 2→3} and {1→3, 2→0, 0→1, 3→2} in every block of four.
        let sub = assign_array_rec(n / 4);
        for i in 0..4 {
            out.extend(relabel(&sub, 4, i));
        }
        let a = [(0, 2), (3, 1), (1, 0), (2, 3)];
        let b = [(1, 3), (2, 0), (0, 1), (3, 2)];
        for pattern in [a, b] {
            out.push(
                (0..n / 4)
                    .flat_map(|blk| {
                        pattern
                            .iter()
                            .map(move |&(s, d)| array_pair(4 * blk + s, 4 * blk + d))
                    })
                    .collect(),
            );
        }
    }
    out
}

/// `Assign_ring(N)` (Yuan Fig 4.9): channels realizing H_r on an N = 2^r node ring (N ≥ 4).
pub fn assign_ring(n: usize) -> Option<Vec<Vec<LinePair>>> {
    if !n.is_power_of_two() || n < 4 {
        return None;
    }
    let half = n / 2;
    // Step 1: DIM_0..DIM_(r-2) on both halves at once (they are link-disjoint).
    let mut out: Vec<Vec<LinePair>> = assign_array_rec(half)
        .into_iter()
        .map(|c| {
            c.iter()
                .flat_map(|p| {
                    [
                        *p,
                        RingPair {
                            src: p.src + half,
                            ..*p
                        },
                    ]
                })
                .collect()
        })
        .collect();
    // Step 2: DIM_(r-1) in N/4 configurations, odd–even routed.
    for i in (0..half).step_by(2) {
        out.push(
            [i, i + half, i + 1, i + 1 + half]
                .iter()
                .map(|&s| RingPair {
                    src: s,
                    way: Torus::odd_even(s),
                    len: half,
                })
                .collect(),
        );
    }
    Some(out)
}

/// Checks channels on a line of `n` nodes (ring if `wrap`): no channel uses a directed link, a
/// source or a destination twice; an array path must not leave the array.
pub fn check_line_channels(
    n: usize,
    wrap: bool,
    chans: &[Vec<LinePair>],
) -> Result<(), OpticalError> {
    for (c, chan) in chans.iter().enumerate() {
        let mut link = vec![false; 2 * n];
        let mut tx = vec![false; n];
        let mut rx = vec![false; n];
        for p in chan {
            let dst = p.dst(n);
            if p.src >= n
                || (!wrap && p.way == Way::Plus && p.src + p.len >= n)
                || (!wrap && p.way == Way::Minus && p.len > p.src)
            {
                return Err(OpticalError::Broken(format!(
                    "channel {c}: {}→{dst} leaves the line",
                    p.src
                )));
            }
            if std::mem::replace(&mut tx[p.src], true) || std::mem::replace(&mut rx[dst], true) {
                return Err(OpticalError::Broken(format!(
                    "channel {c}: node conflict at {}→{dst}",
                    p.src
                )));
            }
            for h in 0..p.len {
                let l = match p.way {
                    Way::Plus => 2 * ((p.src + h) % n),
                    Way::Minus => 2 * ((p.src + n - h) % n) + 1,
                };
                if std::mem::replace(&mut link[l], true) {
                    return Err(OpticalError::Broken(format!(
                        "channel {c}: link conflict at {}→{dst}",
                        p.src
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The logical topologies of Yuan Ch.4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Logical {
    Torus,
    Hypercube,
    AllXY,
    AllToAll,
}

impl Logical {
    pub const ALL: [Logical; 4] = [
        Logical::AllToAll,
        Logical::AllXY,
        Logical::Hypercube,
        Logical::Torus,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Logical::Torus => "torus",
            Logical::Hypercube => "hypercube",
            Logical::AllXY => "allxy",
            Logical::AllToAll => "all-to-all",
        }
    }

    pub fn parse(s: &str) -> Result<Logical, OpticalError> {
        match s {
            "torus" => Ok(Logical::Torus),
            "hypercube" => Ok(Logical::Hypercube),
            "allxy" | "allXY" => Ok(Logical::AllXY),
            "all-to-all" | "alltoall" | "a2a" => Ok(Logical::AllToAll),
            _ => Err(OpticalError::Parameter(format!(
                "unknown logical topology `{s}`: expected torus, hypercube, allxy or all-to-all"
            ))),
        }
    }
}

/// Channels realizing `logical` on the physical torus `t`, checked conflict-free.
pub fn realize(t: &Torus, logical: Logical) -> Result<Vec<Phase>, OpticalError> {
    if !t.wrap {
        if logical == Logical::Hypercube && !t.nodes().is_power_of_two() {
            return Err(OpticalError::Network(format!(
                "a logical hypercube needs a power-of-two number of nodes (got {}x{})",
                t.nx, t.ny
            )));
        }
        if logical == Logical::AllToAll && t.nodes() > 256 {
            return Err(OpticalError::Network(format!(
                "a logical all-to-all on a {}x{} mesh is not built: packing {} connections greedily would take too long",
                t.nx,
                t.ny,
                t.nodes() * (t.nodes() - 1)
            )));
        }
        let phases = greedy_pairs(t, &logical_pairs(t, logical));
        check_phases(t, &phases)?;
        return Ok(phases);
    }
    let phases = match logical {
        Logical::AllToAll => match grouped_phases(t) {
            Some(p) => p,
            None if t.nodes() > 256 => {
                return Err(OpticalError::Network(format!(
                    "a logical all-to-all on {}x{} is not built: its AAPC phases exist for 8x8 and 16x16, and \
                     packing {} connections greedily would take too long",
                    t.nx,
                    t.ny,
                    t.nodes() * (t.nodes() - 1)
                )));
            }
            None => aapc_phases(t),
        },
        Logical::Torus => torus_channels(t),
        Logical::Hypercube => {
            let (Some(rows), Some(cols)) = (line_hypercube(t.nx), line_hypercube(t.ny)) else {
                return Err(OpticalError::Network(format!(
                    "a logical hypercube needs power-of-two torus sides (got {}x{})",
                    t.nx, t.ny
                )));
            };
            match hypercube_torus(t) {
                Some(p) => p,
                None => pack_lines(t, &rows, &cols),
            }
        }
        Logical::AllXY => match allxy_from_groups(t) {
            Some(p) => p,
            None => pack_lines(t, &ring_channels(t.nx), &ring_channels(t.ny)),
        },
    };
    check_phases(t, &phases)?;
    Ok(phases)
}

/// The connections of a logical topology on the nodes of `t` (x first, as the torus numbers
/// them): every ordered pair of all-to-all; the pairs in a row or a column of allXY; the pairs
/// whose ids differ in one bit of a hypercube; the four neighbours, with wrap-around, of a
/// logical torus.
pub fn logical_pairs(t: &Torus, l: Logical) -> Vec<(NodeId, NodeId)> {
    let n = t.nodes();
    let mut v = Vec::new();
    let ring = |k: usize, a: usize, b: usize| (b + k - a) % k;
    for s in 0..n {
        for d in 0..n {
            let (sx, sy) = t.xy(s);
            let (dx, dy) = t.xy(d);
            let keep = s != d
                && match l {
                    Logical::AllToAll => true,
                    Logical::AllXY => sx == dx || sy == dy,
                    Logical::Hypercube => (s ^ d).is_power_of_two(),
                    Logical::Torus => {
                        (sy == dy && (ring(t.nx, sx, dx) == 1 || ring(t.nx, dx, sx) == 1))
                            || (sx == dx && (ring(t.ny, sy, dy) == 1 || ring(t.ny, dy, sy) == 1))
                    }
                };
            if keep {
                v.push((s, d));
            }
        }
    }
    v
}

/// H on one torus dimension: `Assign_ring`, or the single DIM_0 channel of a 2-node ring.
fn line_hypercube(n: usize) -> Option<Vec<Vec<LinePair>>> {
    match n {
        1 => Some(Vec::new()),
        2 => Some(vec![vec![
            RingPair {
                src: 0,
                way: Way::Plus,
                len: 1,
            },
            RingPair {
                src: 1,
                way: Way::Plus,
                len: 1,
            },
        ]]),
        _ => assign_ring(n),
    }
}

/// Yuan's channel assignment of the hypercube on an N×N torus, N = 2^k ≥ 8 (§4.1.1.5, Thm 6):
/// ⌊N/3⌋ + (1 or 2) + N/4 channels, Table 4.1's ⌊N/3 + N/4⌋ + 1 for even k and + 2 for odd k
/// (6 on 8×8, 10 on 16×16, 20 on 32×32).
///
/// 1. DIM_0..DIM_(k−2) of rows and columns are hypercubes on the four N/2 × N/2 quadrants (node- and
///    link-disjoint, so they share channels), realized on a mesh by Lemma 8 from `Assign_array(N/2)`,
///    whose configurations use only even nodes (E), only odd nodes (O) or both (EO). The t-th E and
///    O configurations of rows and of columns fill two channels: (odd rows O, even rows E, odd
///    columns E, even columns O) and the swap — a row uses node (x, y) only when x ≡ y (mod 2), a
///    column only when x ≢ y. Every EO configuration gets a channel in all rows and one in all columns.
/// 2. DIM_(k−1) is the ring configurations row_i = {i, i+1} ↔ {i+N/2, i+1+N/2} (odd–even routed) for
///    even i < N/2, in rows and likewise in columns. Lemma 10 puts two of them, i1 and i2 with node
///    sets N1 and N2, in every row and every column in two channels: (row_i1 on rows ∉ N1, row_i2 on
///    rows ∈ N1, column_i1 on columns ∉ N2, column_i2 on columns ∈ N2) and the swap (∈ ↔ ∉). A row
///    using (x, y) and a column using (x, y) would need y in the row's forbidden set; the four cases
///    all reduce to N1 ∩ N2 = ∅. (The lemma's proof is omitted in the thesis; this is ours.)
fn hypercube_torus(t: &Torus) -> Option<Vec<Phase>> {
    let n = t.nx;
    if t.ny != n || n < 8 || !n.is_power_of_two() {
        return None;
    }
    let half = n / 2;
    let configs = assign_array_rec(half);
    let kind = |c: &[LinePair]| -> u8 {
        let mut par = 0u8;
        for p in c {
            par |= 1 << (p.src % 2);
            par |= 1 << (p.dst(half) % 2);
        }
        par // 1 = E, 2 = O, 3 = EO
    };
    let e: Vec<&Vec<LinePair>> = configs.iter().filter(|c| kind(c) == 1).collect();
    let o: Vec<&Vec<LinePair>> = configs.iter().filter(|c| kind(c) == 2).collect();
    let eo: Vec<&Vec<LinePair>> = configs.iter().filter(|c| kind(c) == 3).collect();
    if e.len() != o.len() {
        return None;
    }
    // A line configuration in row (dim 0) or column (dim 1) `line`, positions offset by `base`.
    let put = |phase: &mut Phase, dim: usize, line: usize, base: usize, c: &[LinePair]| {
        for p in c.iter().filter(|p| p.len > 0) {
            let pos = base + p.src;
            let src = if dim == 0 {
                t.node(pos, line)
            } else {
                t.node(line, pos)
            };
            let mut links = Vec::new();
            let dst = t.walk(src, dim, p.way, p.len, &mut links);
            phase.push(Connection { src, dst, links });
        }
    };
    // Both quadrant halves of a line get the array configuration.
    let put_halves = |phase: &mut Phase, dim: usize, line: usize, c: &[LinePair]| {
        put(phase, dim, line, 0, c);
        put(phase, dim, line, half, c);
    };
    let mut out: Vec<Phase> = Vec::new();
    for (et, ot) in e.iter().zip(&o) {
        for swap in [false, true] {
            let mut phase = Vec::new();
            for line in 0..n {
                let odd = line % 2 == 1;
                let row = if odd != swap { ot } else { et };
                put_halves(&mut phase, 0, line, row);
                let col = if odd != swap { et } else { ot };
                put_halves(&mut phase, 1, line, col);
            }
            out.push(phase);
        }
    }
    for c in &eo {
        for dim in 0..2 {
            let mut phase = Vec::new();
            for line in 0..n {
                put_halves(&mut phase, dim, line, c);
            }
            out.push(phase);
        }
    }
    let ring_config = |i: usize| -> Vec<LinePair> {
        [i, i + half, i + 1, i + 1 + half]
            .iter()
            .map(|&s| RingPair {
                src: s,
                way: Torus::odd_even(s),
                len: half,
            })
            .collect()
    };
    let starts: Vec<usize> = (0..half).step_by(2).collect();
    for pair in starts.chunks(2) {
        let [i1, i2] = pair else {
            return None;
        };
        let (c1, c2) = (ring_config(*i1), ring_config(*i2));
        let in1 = |y: usize| y % half == *i1 || y % half == i1 + 1;
        let in2 = |x: usize| x % half == *i2 || x % half == i2 + 1;
        for swap in [false, true] {
            let mut phase = Vec::new();
            for line in 0..n {
                let row = if in1(line) != swap { &c2 } else { &c1 };
                put(&mut phase, 0, line, 0, row);
                let col = if in2(line) != swap { &c2 } else { &c1 };
                put(&mut phase, 1, line, 0, col);
            }
            out.push(phase);
        }
    }
    for p in &mut out {
        p.sort_by_key(|c| (c.src, c.dst));
    }
    Some(out)
}

/// allXY in N²/8 channels (Yuan §4.1.2) for N×N tori whose ring AAPC phases come in groups of
/// k = N/8 ≥ 2 with node sets partitioning the ring ([`ring_groups`], N = 16).
///
/// Pair row group {G_a} with column group {H_j}. In channel σ (σ < k) row phase G_a is applied on
/// the rows S(H_(a+σ)) and column phase H_j on the columns S(G_(j−σ−1)), indices mod k, where S(·)
/// is a phase's node set. A node (x, y) with x ∈ S(G_a) is then used by its row iff
/// y ∈ S(H_(a+σ)) and by its column iff y ∈ S(H_(a+σ+1)): never both. Rows and columns never share
/// links, and within one line a ring phase is conflict-free, so the channel is; the k channels of a
/// pair apply every phase of both groups on every line. N pairs × k = N²/8 channels.
fn allxy_from_groups(t: &Torus) -> Option<Vec<Phase>> {
    if t.nx != t.ny {
        return None;
    }
    let groups = ring_groups(t.nx)?;
    let k = groups.first()?.len();
    if k < 2 {
        return None;
    }
    let nodes_of = |p: &[RingPair]| -> Vec<usize> {
        let mut v: Vec<usize> = p.iter().map(|q| q.src).collect();
        v.sort_unstable();
        v
    };
    let mut out = Vec::new();
    for g in &groups {
        // The same groups serve the columns; pair each row group with itself.
        let h = g;
        for sigma in 0..k {
            let mut phase = Vec::new();
            for (a, ga) in g.iter().enumerate() {
                for y in nodes_of(&h[(a + sigma) % k]) {
                    for p in ga.iter().filter(|p| p.len > 0) {
                        let src = t.node(p.src, y);
                        let mut links = Vec::new();
                        let dst = t.walk(src, 0, p.way, p.len, &mut links);
                        phase.push(Connection { src, dst, links });
                    }
                }
            }
            for (j, hj) in h.iter().enumerate() {
                for x in nodes_of(&g[(j + 2 * k - sigma - 1) % k]) {
                    for p in hj.iter().filter(|p| p.len > 0) {
                        let src = t.node(x, p.src);
                        let mut links = Vec::new();
                        let dst = t.walk(src, 1, p.way, p.len, &mut links);
                        phase.push(Connection { src, dst, links });
                    }
                }
            }
            phase.sort_by_key(|c| (c.src, c.dst));
            out.push(phase);
        }
    }
    Some(out)
}

/// Logical torus (Yuan Fig 4.11): all +x links on one channel, all −x, all +y, all −y.
fn torus_channels(t: &Torus) -> Vec<Phase> {
    let mut out = Vec::new();
    for (dim, k) in [(0, t.nx), (1, t.ny)] {
        if k < 2 {
            continue;
        }
        let ways: &[Way] = if k == 2 {
            &[Way::Plus]
        } else {
            &[Way::Plus, Way::Minus]
        };
        for &way in ways {
            out.push(
                (0..t.nodes())
                    .map(|src| {
                        let mut links = Vec::new();
                        let dst = t.walk(src, dim, way, 1, &mut links);
                        Connection { src, dst, links }
                    })
                    .collect(),
            );
        }
    }
    out
}

/// One line channel applied in one row (dim 0) or column (dim 1).
#[derive(Clone, Copy)]
struct Item {
    dim: usize,
    line: usize,
    chan: usize,
}

/// Packs row channels (applied in every row) and column channels (in every column) first-fit
/// into torus channels without node conflicts; items of one line never share a torus channel
/// (they may share links), and rows never share links with columns.
///
/// First-fit depends on the order of the items, so several orders are tried — the natural one
/// (channel by channel, even lines before odd ones, rows beside columns, the pairing behind Yuan's
/// Lemma 8) and [`PACKING_TRIES`] seeded shuffles — and the fewest channels kept.
fn pack_lines(t: &Torus, rows: &[Vec<LinePair>], cols: &[Vec<LinePair>]) -> Vec<Phase> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut items = Vec::new();
    let most = rows.len().max(cols.len());
    for chan in 0..most {
        for parity in 0..2 {
            for (dim, k, chans) in [(0, t.ny, rows), (1, t.nx, cols)] {
                if chan < chans.len() {
                    for line in (parity..k).step_by(2) {
                        items.push(Item { dim, line, chan });
                    }
                }
            }
        }
    }
    let mut best = dsatur(t, rows, cols, &items);
    let natural = first_fit(t, rows, cols, &items);
    if natural.len() < best.len() {
        best = natural;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    for _ in 0..PACKING_TRIES {
        items.shuffle(&mut rng);
        let trial = first_fit(t, rows, cols, &items);
        if trial.len() < best.len() {
            best = trial;
        }
    }
    best
}

/// The connections of one item on the torus.
fn item_connections(
    t: &Torus,
    it: &Item,
    rows: &[Vec<LinePair>],
    cols: &[Vec<LinePair>],
) -> Vec<Connection> {
    let chans = if it.dim == 0 { rows } else { cols };
    let Some(chan) = chans.get(it.chan) else {
        return Vec::new();
    };
    chan.iter()
        .filter(|p| p.len > 0)
        .map(|p| {
            let src = if it.dim == 0 {
                t.node(p.src, it.line)
            } else {
                t.node(it.line, p.src)
            };
            let mut links = Vec::new();
            let dst = t.walk(src, it.dim, p.way, p.len, &mut links);
            Connection { src, dst, links }
        })
        .collect()
}

/// Culberson's iterated greedy: recolour greedily with the vertices grouped by colour class, the
/// classes in a new order each round (largest first, reversed, by seeded shuffle). Greedy on such an
/// order never needs more colours than before, and often fewer.
fn iterated_greedy(adj: &[Vec<usize>], mut colour: Vec<usize>, rounds: usize) -> Vec<usize> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let m = adj.len();
    if colour.contains(&usize::MAX) {
        return colour;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xc01);
    for round in 0..rounds {
        let k = colour.iter().max().map_or(0, |c| c + 1);
        let mut classes: Vec<Vec<usize>> = vec![Vec::new(); k];
        for (v, &c) in colour.iter().enumerate() {
            classes[c].push(v);
        }
        match round % 3 {
            0 => classes.sort_by_key(|c| std::cmp::Reverse(c.len())),
            1 => classes.reverse(),
            _ => classes.shuffle(&mut rng),
        }
        let mut next = vec![usize::MAX; m];
        let mut used: Vec<bool> = Vec::new();
        for v in classes.into_iter().flatten() {
            used.clear();
            for &u in &adj[v] {
                let c = next[u];
                if c != usize::MAX {
                    if used.len() <= c {
                        used.resize(c + 1, false);
                    }
                    used[c] = true;
                }
            }
            next[v] = (0..)
                .find(|&c| !used.get(c).copied().unwrap_or(false))
                .unwrap_or(0);
        }
        colour = next;
    }
    colour
}

/// DSatur colouring of the item conflict graph (two items conflict when they are on the same line
/// or share a source or a destination): a colour is a torus channel.
fn dsatur(t: &Torus, rows: &[Vec<LinePair>], cols: &[Vec<LinePair>], items: &[Item]) -> Vec<Phase> {
    let n = t.nodes();
    let words = n.div_ceil(64);
    let conns: Vec<Vec<Connection>> = items
        .iter()
        .map(|it| item_connections(t, it, rows, cols))
        .collect();
    let masks: Vec<(Vec<u64>, Vec<u64>)> = conns
        .iter()
        .map(|cs| {
            let mut tx = vec![0u64; words];
            let mut rx = vec![0u64; words];
            for c in cs {
                tx[c.src / 64] |= 1 << (c.src % 64);
                rx[c.dst / 64] |= 1 << (c.dst % 64);
            }
            (tx, rx)
        })
        .collect();
    let m = items.len();
    let clash = |a: usize, b: usize| {
        (items[a].dim == items[b].dim && items[a].line == items[b].line)
            || masks[a].0.iter().zip(&masks[b].0).any(|(x, y)| x & y != 0)
            || masks[a].1.iter().zip(&masks[b].1).any(|(x, y)| x & y != 0)
    };
    let adj: Vec<Vec<usize>> = (0..m)
        .map(|a| (0..m).filter(|&b| b != a && clash(a, b)).collect())
        .collect();
    let mut colour = vec![usize::MAX; m];
    let mut seen: Vec<Vec<bool>> = vec![Vec::new(); m];
    let mut sat = vec![0usize; m];
    for _ in 0..m {
        let Some(v) = (0..m)
            .filter(|&v| colour[v] == usize::MAX)
            .max_by(|&a, &b| {
                sat[a]
                    .cmp(&sat[b])
                    .then(adj[a].len().cmp(&adj[b].len()))
                    .then(b.cmp(&a))
            })
        else {
            break;
        };
        let c = (0..)
            .find(|&c| !seen[v].get(c).copied().unwrap_or(false))
            .unwrap_or(0);
        colour[v] = c;
        for &u in &adj[v] {
            if seen[u].len() <= c {
                seen[u].resize(c + 1, false);
            }
            if !seen[u][c] {
                seen[u][c] = true;
                sat[u] += 1;
            }
        }
    }
    let colour = iterated_greedy(&adj, colour, 2000);
    let colours = colour
        .iter()
        .filter(|&&c| c != usize::MAX)
        .max()
        .map_or(0, |c| c + 1);
    let mut out: Vec<Phase> = vec![Vec::new(); colours];
    for (i, cs) in conns.into_iter().enumerate() {
        if let Some(p) = out.get_mut(colour[i]) {
            p.extend(cs);
        }
    }
    for p in &mut out {
        p.sort_by_key(|c| (c.src, c.dst));
    }
    out
}

/// Random item orders tried by [`pack_lines`] after the natural one.
pub const PACKING_TRIES: usize = 24;

fn first_fit(
    t: &Torus,
    rows: &[Vec<LinePair>],
    cols: &[Vec<LinePair>],
    items: &[Item],
) -> Vec<Phase> {
    struct Slot {
        tx: Vec<bool>,
        rx: Vec<bool>,
        lines: Vec<bool>,
        conns: Phase,
    }
    let mut slots: Vec<Slot> = Vec::new();
    for it in items {
        let chans = if it.dim == 0 { rows } else { cols };
        if chans.get(it.chan).is_none() {
            continue;
        }
        let conns = item_connections(t, it, rows, cols);
        let line_key = it.dim * t.nodes().max(1) + it.line;
        let fits =
            |s: &Slot| !s.lines[line_key] && conns.iter().all(|c| !s.tx[c.src] && !s.rx[c.dst]);
        let i = match slots.iter().position(fits) {
            Some(i) => i,
            None => {
                slots.push(Slot {
                    tx: vec![false; t.nodes()],
                    rx: vec![false; t.nodes()],
                    lines: vec![false; 2 * t.nodes().max(1)],
                    conns: Vec::new(),
                });
                slots.len() - 1
            }
        };
        let s = &mut slots[i];
        s.lines[line_key] = true;
        for c in conns {
            s.tx[c.src] = true;
            s.rx[c.dst] = true;
            s.conns.push(c);
        }
    }
    slots
        .into_iter()
        .map(|mut s| {
            s.conns.sort_by_key(|c| (c.src, c.dst));
            s.conns
        })
        .collect()
}

/// The logical neighbours of every node, i.e. the connections of the realized topology, with the
/// channel (slot) each uses.
pub fn channel_of(phases: &[Phase], nodes: usize) -> Vec<Vec<(NodeId, usize)>> {
    let mut out = vec![Vec::new(); nodes];
    for (slot, p) in phases.iter().enumerate() {
        for c in p {
            if let Some(v) = out.get_mut(c.src) {
                v.push((c.dst, slot));
            }
        }
    }
    for v in &mut out {
        v.sort();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h4_on_16_array_needs_10_channels() {
        // Yuan Fig 4.7.
        let chans = assign_array(16).unwrap();
        assert_eq!(chans.len(), 10);
        check_line_channels(16, false, &chans).unwrap();
    }
}
