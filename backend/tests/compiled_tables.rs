//! Compiled communication connection scheduling against Yuan ch.5 (Fig 5.12, Table 5.6).

use expect_test::expect;
use ttdl_backend::sim::aapc::{AapcPhases, RingAapc, TorusAapc};
use ttdl_backend::sim::models::compiled::patterns;
use ttdl_backend::sim::models::compiled::sched::{self, Algorithm, Connection};
use ttdl_backend::topology::{Network, NetworkSpec};

fn net(spec: &str) -> Network {
    Network::build(&spec.parse::<NetworkSpec>().unwrap()).unwrap()
}

fn degrees(net: &Network, pairs: &[(usize, usize)]) -> Vec<usize> {
    let conns = patterns::connections(net, pairs).unwrap();
    let aapc = AapcPhases::for_network(net).unwrap();
    Algorithm::ALL
        .iter()
        .map(|&a| {
            let cfg = sched::schedule(&conns, a, Some(&aapc)).unwrap();
            cfg.verify(&conns).unwrap();
            cfg.degree()
        })
        .collect()
}

/// Yuan Fig 5.12: on a linear array, greedy in the order (0,2),(1,3),(3,4),(2,4) needs 3 slots,
/// coloring reorders the connections and needs the optimal 2.
#[test]
fn fig_5_12_linear_array() {
    let line = net("line:5");
    let conns = patterns::connections(&line, &[(0, 2), (1, 3), (3, 4), (2, 4)]).unwrap();
    let g = sched::greedy(&conns, &[0, 1, 2, 3]);
    assert_eq!(g.configs, vec![vec![0, 2], vec![1], vec![3]]);
    let c = sched::coloring(&conns);
    assert_eq!(c.configs, vec![vec![0, 3], vec![1, 2]]);
}

#[test]
fn ring_aapc_of_eight_meets_the_link_load_bound() {
    let ring = RingAapc::new(8);
    assert_eq!(ring.phases, 8);
    let torus = TorusAapc::new(&[8, 8]);
    assert_eq!(torus.phases(), 64);
}

/// Every AAPC phase is a configuration under our routing (no shared link, source or
/// destination), and all pairs are covered: the basis of Yuan's N³/8 bound (Fig 5.14). Checked
/// for the ring-product construction on 8×8, 4×8 and a 12-ring, and for the phases the scheduler
/// uses on 8×8.
#[test]
fn torus_aapc_phases_are_configurations() {
    for (spec, phases) in [("torus:8x8", 64), ("torus:4x8", 32), ("ring:12", 20)] {
        let t = net(spec);
        let n = t.nodes();
        let conns = patterns::connections(&t, &patterns::all_to_all(n)).unwrap();
        let product = AapcPhases::from_product(&TorusAapc::new(&t.spec.dims));
        let chosen = AapcPhases::for_network(&t).unwrap();
        for aapc in [product, chosen] {
            assert_eq!(aapc.phases(), phases, "{spec}");
            let mut configs = vec![Vec::new(); aapc.phases()];
            for (i, c) in conns.iter().enumerate() {
                configs[aapc.phase_of(c.src, c.dst)].push(i);
            }
            let cfg = sched::Configurations { configs };
            cfg.verify(&conns).unwrap();
        }
    }
}

/// Yuan Table 5.6 (8×8 torus, p.107): multiplexing degree per pattern as
/// greedy / coloring / AAPC / combined. Printed: ring 3/2/2/2, nearest neighbour 6/4/4/4,
/// hypercube 9/7/8/7, shuffle-exchange 6/4/5/4, all-to-all 92/83/64/64. Asserted: AAPC and
/// combined reach the lower bounds (ring 2, NN 4: node degree; all-to-all 64: link load), as
/// printed. The combined column matches the table in every row. Greedy and coloring depend on the
/// connection order and tie-breaking the thesis does not give; ours are recorded below (greedy in
/// source order; coloring's row-crossing ring connections have the higher priority and cost it a
/// third colour).
#[test]
fn table_5_6_standard_patterns() {
    let t = net("torus:8x8");
    let rows = [
        ("ring", patterns::ring(64)),
        ("nearest neighbor", patterns::nearest_neighbor(8, 8)),
        ("hypercube", patterns::hypercube(6)),
        ("shuffle-exchange", patterns::shuffle_exchange(6)),
        ("all-to-all", patterns::all_to_all(64)),
    ];
    let mut out = String::new();
    for (name, pairs) in &rows {
        let d = degrees(&t, pairs);
        out.push_str(&format!("{name:<17} {:>4} {:?}\n", pairs.len(), d));
    }
    expect![[r#"
        ring               128 [2, 3, 2, 2]
        nearest neighbor   256 [4, 4, 4, 4]
        hypercube          384 [10, 8, 7, 7]
        shuffle-exchange   126 [5, 4, 5, 4]
        all-to-all        4032 [115, 88, 64, 64]
    "#]]
    .assert_eq(&out);
    let ring = degrees(&t, &rows[0].1);
    assert_eq!(&ring[2..], &[2, 2]);
    let nn = degrees(&t, &rows[1].1);
    assert_eq!(&nn[1..], &[4, 4, 4]);
    let a2a = degrees(&t, &rows[4].1);
    assert_eq!(&a2a[2..], &[64, 64]);
}

#[test]
fn aapc_on_a_mesh_is_an_error() {
    let m = net("mesh:4x4");
    let conns: Vec<Connection> = patterns::connections(&m, &patterns::ring(16)).unwrap();
    assert!(sched::schedule(&conns, Algorithm::OrderedAapc, None).is_err());
    assert!(sched::schedule(&conns, Algorithm::Combined, None).is_ok());
}

/// The readings of Fig 5.13 and Fig 5.11 the thesis leaves open, on Table 5.6: coloring with
/// static priorities (greedy in the order of `path length / degree` over the whole conflict
/// graph) gives all-to-all's printed 83; greedy in a seeded random order lands on the printed
/// greedy column (3, 6, 9, 6, 92) within one configuration except shuffle-exchange. Every
/// answer is a valid configuration set, and a seed gives the same answer every time.
#[test]
fn table_5_6_open_readings() {
    let t = net("torus:8x8");
    let rows = [
        patterns::ring(64),
        patterns::nearest_neighbor(8, 8),
        patterns::hypercube(6),
        patterns::shuffle_exchange(6),
        patterns::all_to_all(64),
    ];
    let mut static_col = Vec::new();
    let mut random_col = Vec::new();
    for pairs in &rows {
        let conns = patterns::connections(&t, pairs).unwrap();
        let s = sched::coloring_static(&conns);
        s.verify(&conns).unwrap();
        static_col.push(s.degree());
        let r = sched::greedy_random(&conns, 7);
        r.verify(&conns).unwrap();
        assert_eq!(r, sched::greedy_random(&conns, 7));
        random_col.push(r.degree());
    }
    assert_eq!(static_col, [3, 4, 8, 4, 83]);
    for (ours, printed) in random_col.iter().zip([3, 6, 9, 6, 92]) {
        assert!(ours.abs_diff(printed) <= 3, "{random_col:?}");
    }
}

/// A redistribution's connections: every (old owner, new owner) pair of some element, no
/// processor to itself; the same distribution twice moves nothing, blocks to cyclic over two
/// processors swap halves, and moving 64 processors from one dimension to another is
/// all-to-all.
#[test]
fn redistribution_patterns() {
    let d = [(4, 2), (4, 1), (4, 16)];
    assert!(patterns::redistribution(64, &d, &d).is_empty());
    // Two processors per dimension-0 half: blocks of 32 to cyclic moves half of each block.
    let halves = [(2, 32), (1, 1), (1, 1)];
    let cyclic = [(2, 1), (1, 1), (1, 1)];
    assert_eq!(
        patterns::redistribution(64, &halves, &cyclic),
        [(0, 1), (1, 0)]
    );
    let block = [(64, 1), (1, 1), (1, 1)];
    let whole = [(1, 1), (64, 1), (1, 1)];
    let pairs = patterns::redistribution(64, &block, &whole);
    assert_eq!(pairs.len(), 64 * 63);
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for _ in 0..50 {
        let d = patterns::random_distribution(64, 64, &mut rng);
        assert_eq!(d.iter().map(|x| x.0).product::<usize>(), 64);
        assert!(d.iter().all(|&(p, s)| p * s <= 64));
    }
}
