//! Yuan §4.1: routing and channel assignment of logical topologies over TDM.

use expect_test::expect;
use ttdl_backend::sim::optical::rca::{
    assign_array, assign_ring, check_line_channels, realize, LinePair, Logical,
};
use ttdl_backend::sim::optical::torus::Torus;

/// Every pair of H_r = ∪ DIM_l (i ↔ i XOR 2^l) carried exactly once.
fn covers_hypercube(n: usize, chans: &[Vec<LinePair>]) -> bool {
    let mut seen = vec![0; n * n];
    for c in chans {
        for p in c {
            seen[p.src * n + p.dst(n)] += 1;
        }
    }
    (0..n).all(|i| {
        (0..n).all(|j| {
            let want = usize::from(i != j && (i ^ j).is_power_of_two());
            seen[i * n + j] == want
        })
    })
}

#[test]
fn hypercube_channels_on_arrays_and_rings() {
    // Yuan Thm 3: w(ARRAY(N), H_r) = ⌊2N/3⌋; Thm 5: w(RING(N), H_r) = ⌊N/3 + N/4⌋.
    let mut out = String::new();
    for n in [8usize, 16, 32, 64] {
        let a = assign_array(n).unwrap();
        check_line_channels(n, false, &a).unwrap();
        assert!(covers_hypercube(n, &a));
        let r = assign_ring(n).unwrap();
        check_line_channels(n, true, &r).unwrap();
        assert!(covers_hypercube(n, &r));
        assert_eq!(a.len(), 2 * n / 3);
        assert_eq!(r.len(), (4 * n + 3 * n) / 12);
        out += &format!(
            "N={n:2}: array {:2} (⌊2N/3⌋ = {:2}), ring {:2} (⌊N/3+N/4⌋ = {:2})\n",
            a.len(),
            2 * n / 3,
            r.len(),
            (4 * n + 3 * n) / 12
        );
    }
    expect![[r#"
        N= 8: array  5 (⌊2N/3⌋ =  5), ring  4 (⌊N/3+N/4⌋ =  4)
        N=16: array 10 (⌊2N/3⌋ = 10), ring  9 (⌊N/3+N/4⌋ =  9)
        N=32: array 21 (⌊2N/3⌋ = 21), ring 18 (⌊N/3+N/4⌋ = 18)
        N=64: array 42 (⌊2N/3⌋ = 42), ring 37 (⌊N/3+N/4⌋ = 37)
    "#]]
    .assert_eq(&out);
}

/// The directed connections of a logical topology (Yuan §4.1.2), sorted.
fn logical_pairs(t: &Torus, l: Logical) -> Vec<(usize, usize)> {
    let n = t.nodes();
    let mut v = Vec::new();
    for s in 0..n {
        for d in 0..n {
            let (sx, sy) = t.xy(s);
            let (dx, dy) = t.xy(d);
            let ring = |k: usize, a: usize, b: usize| (b + k - a) % k;
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

#[test]
fn logical_topologies_on_tori_are_conflict_free() {
    let mut out = String::new();
    for n in [4usize, 8, 16] {
        let t = Torus::new(n, n);
        for l in Logical::ALL {
            let phases = realize(&t, l).unwrap();
            let conns: usize = phases.iter().map(Vec::len).sum();
            let mut got: Vec<(usize, usize)> =
                phases.iter().flatten().map(|c| (c.src, c.dst)).collect();
            got.sort_unstable();
            assert_eq!(got, logical_pairs(&t, l), "{n}x{n} {}", l.name());
            out += &format!(
                "{n}x{n} {:10}: {:3} channels, {:5} connections\n",
                l.name(),
                phases.len(),
                conns
            );
        }
    }
    // Yuan Table 4.1 / 4.2 on 32×32: hypercube d = ⌊32/3 + 32/4⌋ + 2 = 20.
    for l in [Logical::Hypercube, Logical::Torus] {
        let t = Torus::new(32, 32);
        let phases = realize(&t, l).unwrap();
        let mut got: Vec<(usize, usize)> =
            phases.iter().flatten().map(|c| (c.src, c.dst)).collect();
        got.sort_unstable();
        assert_eq!(got, logical_pairs(&t, l));
        out += &format!(
            "32x32 {:10}: {:3} channels, {:5} connections\n",
            l.name(),
            phases.len(),
            got.len()
        );
    }
    expect![[r#"
        4x4 all-to-all:  15 channels,   240 connections
        4x4 allxy     :   6 channels,    96 connections
        4x4 hypercube :   4 channels,    64 connections
        4x4 torus     :   4 channels,    64 connections
        8x8 all-to-all:  64 channels,  4032 connections
        8x8 allxy     :  14 channels,   896 connections
        8x8 hypercube :   6 channels,   384 connections
        8x8 torus     :   4 channels,   256 connections
        16x16 all-to-all: 512 channels, 65280 connections
        16x16 allxy     :  32 channels,  7680 connections
        16x16 hypercube :  10 channels,  2048 connections
        16x16 torus     :   4 channels,  1024 connections
        32x32 hypercube :  20 channels, 10240 connections
        32x32 torus     :   4 channels,  4096 connections
    "#]]
    .assert_eq(&out);
}
