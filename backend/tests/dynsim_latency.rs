//! With one message and no contention, every switching model's latency equals its formula
//! exactly (Chittor §1.3.1, eqs 1.1–1.3), over several networks, distances and sizes.

use std::fmt::Write;

use expect_test::expect;
use ttdl_backend::sim::drive::program::{simulate, SimOptions};
use ttdl_backend::sim::geometry::Geometry;
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::{Network, Placement, Traffic};

/// Task 0 computes `at` cycles, then sends `size` words to task 1.
fn one_message(size: u64, at: u64) -> Traffic {
    let mut b = Traffic::builder();
    let (a, c) = (b.task("a"), b.task("b"));
    b.compute(a, at);
    b.send(a, c, size);
    b.build()
}

fn latency(spec: &str, net: &Network, src: usize, dst: usize, size: u64) -> u64 {
    let traffic = one_message(size, 5);
    let placement = Placement {
        node_of: vec![src, dst],
    };
    let ctx = ModelContext::new(net).with_program(&traffic, &placement);
    let mut model = registry::build(spec, &ctx).unwrap();
    let r = simulate(
        &traffic,
        &placement,
        net,
        model.as_mut(),
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(r.messages[0].sent, 5);
    r.messages[0].latency
}

#[test]
fn single_message_latency_equals_formula() {
    let mut table = String::new();
    let cases: &[(&str, usize, usize)] = &[
        ("mesh:8x8", 0, 1),
        ("mesh:8x8", 0, 63),
        ("mesh:8x8", 27, 4),
        ("torus:6x6", 0, 5),
        ("torus:6x6", 2, 33),
        ("hypercube:5", 0, 31),
        ("mesh:3x3x3", 0, 26),
    ];
    for &(netspec, src, dst) in cases {
        let net = Network::build(&netspec.parse().unwrap()).unwrap();
        let d = Geometry::new(&net).unwrap().distance(src, dst) as u64;
        for l in [1u64, 8, 50] {
            // Store-and-forward, eq 1.1: D(a + bL), b = 1.
            for a in [0u64, 3] {
                let got = latency(&format!("store-forward a={a}"), &net, src, dst, l);
                assert_eq!(
                    got,
                    d * (a + l),
                    "store-forward a={a} {netspec} D={d} L={l}"
                );
            }
            // Circuit switching, eq 1.2: C1·D + a + bL.
            for (c1, a) in [(2u64, 0u64), (1, 0), (3, 10)] {
                let got = latency(
                    &format!("circuit setup={c1} overhead={a}"),
                    &net,
                    src,
                    dst,
                    l,
                );
                assert_eq!(
                    got,
                    c1 * d + a + l,
                    "circuit C1={c1} a={a} {netspec} D={d} L={l}"
                );
            }
            // Wormhole, eq 1.3: a + C2·D + b(L−1), a = 1 + r + overhead, C2 = 1 + r,
            // b = 1 (b = 2 with one-flit buffers).
            let vc = if netspec.starts_with("torus") { 2 } else { 1 };
            for (r, buf, ov) in [(0u64, 2u64, 0u64), (2, 4, 0), (0, 1, 0), (1, 2, 7)] {
                let spec = format!("wormhole vc={vc} buf={buf} delay={r} overhead={ov}");
                let got = latency(&spec, &net, src, dst, l);
                let b = if buf == 1 { 2 } else { 1 };
                let want = (1 + r + ov) + (1 + r) * d + b * (l - 1);
                assert_eq!(got, want, "{spec} {netspec} D={d} L={l}");
            }
            let sf = latency("store-forward", &net, src, dst, l);
            let cs = latency("circuit", &net, src, dst, l);
            let wh = latency(&format!("wormhole vc={vc}"), &net, src, dst, l);
            let _ = writeln!(
                table,
                "{netspec:<12} D={d:<2} L={l:<3} store-forward={sf:<4} circuit={cs:<4} wormhole={wh}"
            );
        }
    }
    expect![[r#"
        mesh:8x8     D=1  L=1   store-forward=1    circuit=3    wormhole=2
        mesh:8x8     D=1  L=8   store-forward=8    circuit=10   wormhole=9
        mesh:8x8     D=1  L=50  store-forward=50   circuit=52   wormhole=51
        mesh:8x8     D=14 L=1   store-forward=14   circuit=29   wormhole=15
        mesh:8x8     D=14 L=8   store-forward=112  circuit=36   wormhole=22
        mesh:8x8     D=14 L=50  store-forward=700  circuit=78   wormhole=64
        mesh:8x8     D=4  L=1   store-forward=4    circuit=9    wormhole=5
        mesh:8x8     D=4  L=8   store-forward=32   circuit=16   wormhole=12
        mesh:8x8     D=4  L=50  store-forward=200  circuit=58   wormhole=54
        torus:6x6    D=1  L=1   store-forward=1    circuit=3    wormhole=2
        torus:6x6    D=1  L=8   store-forward=8    circuit=10   wormhole=9
        torus:6x6    D=1  L=50  store-forward=50   circuit=52   wormhole=51
        torus:6x6    D=2  L=1   store-forward=2    circuit=5    wormhole=3
        torus:6x6    D=2  L=8   store-forward=16   circuit=12   wormhole=10
        torus:6x6    D=2  L=50  store-forward=100  circuit=54   wormhole=52
        hypercube:5  D=5  L=1   store-forward=5    circuit=11   wormhole=6
        hypercube:5  D=5  L=8   store-forward=40   circuit=18   wormhole=13
        hypercube:5  D=5  L=50  store-forward=250  circuit=60   wormhole=55
        mesh:3x3x3   D=6  L=1   store-forward=6    circuit=13   wormhole=7
        mesh:3x3x3   D=6  L=8   store-forward=48   circuit=20   wormhole=14
        mesh:3x3x3   D=6  L=50  store-forward=300  circuit=62   wormhole=56
    "#]]
    .assert_eq(&table);
}

#[test]
fn local_messages_take_size_cycles() {
    let net = Network::build(&"mesh:4x4".parse().unwrap()).unwrap();
    for spec in ["wormhole", "circuit", "store-forward"] {
        assert_eq!(latency(spec, &net, 3, 3, 40), 40, "{spec}");
    }
}

/// Without dimensions (crossbar, diamond lattice) circuit and store-and-forward follow shortest
/// paths, and the formulas still hold with D = the path's hop count.
#[test]
fn shortest_path_topologies_follow_the_formulas() {
    let xbar = Network::build(&"crossbar:8".parse().unwrap()).unwrap();
    assert_eq!(latency("store-forward", &xbar, 0, 5, 20), 20);
    assert_eq!(latency("circuit", &xbar, 0, 5, 20), 2 + 20);
    let diamond = Network::build(&"diamond:4x4".parse().unwrap()).unwrap();
    let sf = latency("store-forward", &diamond, 0, 15, 10);
    assert!(sf.is_multiple_of(10) && sf >= 10, "{sf}");
    let d = sf / 10;
    assert_eq!(latency("circuit", &diamond, 0, 15, 10), 2 * d + 10);
}
