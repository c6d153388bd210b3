//! Chittor's contention numbers (seed 001, ch. 3; reading notes §2.4 and §7).

use expect_test::expect;
use ttdl_backend::metrics::{contention_report, Metrics};
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::traffic::{Message, Task, Traffic};
use ttdl_backend::{Network, NetworkSpec};

fn traffic(tasks: usize, pairs: &[(usize, usize)]) -> Traffic {
    Traffic {
        tasks: (0..tasks)
            .map(|i| Task {
                id: i,
                name: format!("t{i}"),
                ..Task::default()
            })
            .collect(),
        messages: pairs
            .iter()
            .enumerate()
            .map(|(id, &(s, d))| Message {
                id,
                src: s,
                dst: vec![d].into(),
                size: 1,
                release: 0,
                deadline: 100,
                ..Message::default()
            })
            .collect(),
        critical_path: 100,
        ..Traffic::default()
    }
}

fn measure(t: &Traffic, spec: &str) -> (Network, Metrics) {
    let net = Network::build(&spec.parse::<NetworkSpec>().unwrap()).unwrap();
    let p = place::place(t, &net, PlaceMethod::Identity, 0).unwrap();
    let r = route::route(t, &net, &p, RouteMethod::Dor, 0).unwrap();
    let m = Metrics::compute(t, &net, &p, &r);
    (net, m)
}

/// Matrix transpose on a k×k mesh: node (i, j) sends to (j, i); rows first.
fn transpose(k: usize) -> Traffic {
    let mut pairs = Vec::new();
    for y in 0..k {
        for x in 0..k {
            if x != y {
                pairs.push((x + k * y, y + k * x));
            }
        }
    }
    traffic(k * k, &pairs)
}

#[test]
fn matrix_transpose_on_12x12_mesh() {
    // Chittor §4.2.3/§5.4: ν_max = k − 2 = 10, ν_avg = 2(k − 2)/3 = 20/3, χ_max = k − 1 = 11,
    // worst node 1/11 = 9.1 %, average node 3/23 ≈ 13 %.
    let (_, m) = measure(&transpose(12), "mesh:12x12");
    assert_eq!(m.path_contention_max, 10);
    assert!(
        (m.path_contention_avg - 20.0 / 3.0).abs() < 1e-9,
        "{}",
        m.path_contention_avg
    );
    assert_eq!(m.channel_load_max, 11);
    assert_eq!(m.logical_path_length_max, 10);
    assert!((m.saturation_worst_node - 1.0 / 11.0).abs() < 1e-9);
    assert!((m.saturation_avg_node - 3.0 / 23.0).abs() < 1e-9);
    for k in [4, 8, 16] {
        let (_, m) = measure(&transpose(k), &format!("mesh:{k}x{k}"));
        assert_eq!(m.path_contention_max, k - 2);
        assert!((m.path_contention_avg - 2.0 * (k as f64 - 2.0) / 3.0).abs() < 1e-9);
        assert_eq!(m.channel_load_max, k - 1);
    }
}

#[test]
fn hypercube_row_major_on_meshes() {
    // Chittor §3.5.3: χ_max = ⌊2√N/3⌋ = 2, 5, 10, 21 for 4×4 … 32×32. The reading notes' §7
    // cross-check adds ν_avg = 1.5 / 5 / 12.5 / 28 and ν_max = 2 / 8 / 22 / 55.
    for (n, side, chi, nu_avg, nu_max) in [
        (4u32, 4usize, 2usize, 1.5, 2usize),
        (6, 8, 5, 5.0, 8),
        (8, 16, 10, 12.5, 22),
        (10, 32, 21, 28.0, 55),
    ] {
        let nodes = 1usize << n;
        let mut pairs = Vec::new();
        for t in 0..nodes {
            for b in 0..n {
                pairs.push((t, t ^ (1 << b)));
            }
        }
        let (_, m) = measure(&traffic(nodes, &pairs), &format!("mesh:{side}x{side}"));
        assert_eq!(m.channel_load_max, chi, "hypercube {n} on {side}x{side}");
        assert!(
            (m.path_contention_avg - nu_avg).abs() < 1e-9,
            "{}",
            m.path_contention_avg
        );
        assert_eq!(m.path_contention_max, nu_max);
    }
}

#[test]
fn contention_report_for_transpose_4x4() {
    let t = transpose(4);
    let net = Network::build(&"mesh:4x4".parse::<NetworkSpec>().unwrap()).unwrap();
    let p = place::place(&t, &net, PlaceMethod::Identity, 0).unwrap();
    let r = route::route(&t, &net, &p, RouteMethod::Dor, 0).unwrap();
    expect![[r#"
        Contention analysis: 12 distinct paths of 12 messages on mesh:4x4
          path length D          avg    3.33  max     6
          logical path length d  avg    1.17  max     2
          channel load χ         avg    0.83  max     3
          path contention ν      avg    1.33  max     2
          link utilization lu    peak 0.030 on 0->4  aggregate 0.017
        Saturation node traffic (δ_avg = 1.00): average node 42.9%, worst node 33.3%
        Worst paths:
          msg 0     t1 -> t4  ν = 2, d = 1, D = 2
          msg 1     t2 -> t8  ν = 2, d = 2, D = 4
          msg 2     t3 -> t12  ν = 2, d = 2, D = 6
          msg 9     t12 -> t3  ν = 2, d = 2, D = 6
          msg 10    t13 -> t7  ν = 2, d = 2, D = 4
        Worst channels:
              0 -> 4     North  χ = 3
              1 -> 0     West   χ = 3
             14 -> 15    East   χ = 3
             15 -> 11    South  χ = 3
              2 -> 1     West   χ = 2
        Worst nodes (λ_n(v) ≤ δ(v)/(ν_m(v)+1)):
          t1 on node 1: δ = 1, ν_m = 2, bound 33.3%, applied 1.0%
          t2 on node 2: δ = 1, ν_m = 2, bound 33.3%, applied 1.0%
          t3 on node 3: δ = 1, ν_m = 2, bound 33.3%, applied 1.0%
          t12 on node 12: δ = 1, ν_m = 2, bound 33.3%, applied 1.0%
          t13 on node 13: δ = 1, ν_m = 2, bound 33.3%, applied 1.0%
        Applied node traffic: average 1.0%, maximum 1.0%
        Verdict: adequate: every node applies less traffic than the worst node's saturation level
    "#]]
    .assert_eq(&contention_report(&t, &net, &p, &r));
}
