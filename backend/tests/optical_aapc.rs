//! AAPC phases on the torus (Yuan §4.1.2 and §5.4 rely on N³/8 conflict-free phases, the link-load
//! optimum).

use expect_test::expect;
use ttdl_backend::sim::aapc::{aapc_phases, check_phases};
use ttdl_backend::sim::optical::torus::Torus;

fn summary(t: &Torus) -> String {
    let phases = aapc_phases(t);
    check_phases(t, &phases).expect("conflict-free");
    let n = t.nodes();
    let mut seen = vec![0u32; n * n];
    let mut hops_ok = true;
    for p in &phases {
        for c in p {
            seen[c.src * n + c.dst] += 1;
            hops_ok &= c.links.len() == t.distance(c.src, c.dst);
        }
    }
    let covered_once = (0..n)
        .flat_map(|s| (0..n).map(move |d| (s, d)))
        .all(|(s, d)| seen[s * n + d] == u32::from(s != d));
    let pairs: usize = phases.iter().map(Vec::len).sum();
    let full = phases
        .iter()
        .filter(|p| p.iter().map(|c| c.links.len()).sum::<usize>() == t.link_count())
        .count();
    format!(
        "{}x{}: {} phases, {} pairs, every pair once: {}, shortest: {}, phases using every link: {}",
        t.nx,
        t.ny,
        phases.len(),
        pairs,
        covered_once,
        hops_ok,
        full
    )
}

#[test]
fn aapc_8x8_has_64_phases_covering_4032_pairs() {
    expect!["8x8: 64 phases, 4032 pairs, every pair once: true, shortest: true, phases using every link: 64"]
        .assert_eq(&summary(&Torus::new(8, 8)));
}

#[test]
fn aapc_16x16_has_512_phases() {
    expect!["16x16: 512 phases, 65280 pairs, every pair once: true, shortest: true, phases using every link: 512"].assert_eq(&summary(&Torus::new(16, 16)));
}

#[test]
fn aapc_other_sizes_are_conflict_free() {
    expect!["4x4: 15 phases, 240 pairs, every pair once: true, shortest: true, phases using every link: 1"].assert_eq(&summary(&Torus::new(4, 4)));
    expect!["6x4: 27 phases, 552 pairs, every pair once: true, shortest: true, phases using every link: 1"].assert_eq(&summary(&Torus::new(6, 4)));
}
