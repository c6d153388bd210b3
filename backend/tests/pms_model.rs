//! The PMS crossbar as a network model: set-up latency, slot sharing, predictors, preloading,
//! parameter errors and the §5 workloads; and PMS on meshes and tori (TDM circuits over links).

use proptest::prelude::*;
use ttdl_backend::sim::drive::command_file::{commands, drive, Pattern};
use ttdl_backend::sim::models::compiled::patterns;
use ttdl_backend::sim::models::pms::{
    crossbar_configurations, lone_latency, network_configurations, PmsModel, PmsParams, Predictor,
};
use ttdl_backend::sim::{Delivery, NetworkModel, Packet};
use ttdl_backend::Network;

/// Injects `(at, src, dst, size)` in order and runs to the end; returns (id, arrival) pairs.
fn run(model: &mut PmsModel, sends: &[(u64, usize, usize, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut buf: Vec<Delivery> = Vec::new();
    let mut now = 0;
    let mut next = 0;
    loop {
        while let Some(&(at, src, dst, size)) = sends.get(next) {
            if at > now {
                break;
            }
            model.inject(
                now,
                Packet {
                    id: next as u64,
                    src,
                    dst,
                    size,
                    created: at,
                },
            );
            next += 1;
        }
        let ev = model.next_event(now);
        let t = match (ev, sends.get(next)) {
            (Some(e), Some(s)) => e.min(s.0),
            (Some(e), None) => e,
            (None, Some(s)) => s.0,
            (None, None) => break,
        };
        if sends.get(next).is_some_and(|s| s.0 == t) && ev.is_none_or(|e| e > t) {
            now = t;
            continue;
        }
        model.step(t, &mut buf);
        model.check().unwrap();
        out.extend(buf.drain(..).map(|d| (d.packet, d.at)));
        now = t + 1;
        assert!(now < 1_000_000, "run does not end");
    }
    out.sort();
    out
}

/// First use pays request (8) + scheduling (8) + grant (8) and waits for a slot boundary; the
/// 10-word slot then carries the message and the pipe adds 10 cycles (Ding §5 timings at 10 ns
/// per cycle).
#[test]
fn first_use_latency() {
    let mut m = PmsModel::new(8, PmsParams::default()).unwrap();
    assert_eq!(run(&mut m, &[(0, 0, 1, 10)]), vec![(0, 50)]);
    let mut m = PmsModel::new(8, PmsParams::default()).unwrap();
    // 40 words: four consecutive slots, as the counter skips the three empty tables.
    assert_eq!(run(&mut m, &[(0, 0, 1, 40)]), vec![(0, 80)]);
}

/// Two connections from one input cannot share a slot: the second goes to the next slot table,
/// and each then gets every other slot.
#[test]
fn one_input_two_slots() {
    let mut m = PmsModel::new(8, PmsParams::default()).unwrap();
    let got = run(&mut m, &[(0, 0, 1, 40), (0, 0, 2, 40)]);
    // Slot tables 0 and 1 alternate from cycle 30: 0→1 in cycles 30, 50, 70, 90; 0→2 in
    // 40, 60, 80, 100 (plus the 10-cycle pipe).
    assert_eq!(got, vec![(0, 110), (1, 120)]);
    assert_eq!(m.setups, 2);
}

/// Without a predictor the connection is released when the request drops and the next message
/// pays the set-up again; the time-out predictor keeps it (a hit).
#[test]
fn predictors_keep_or_release() {
    let sends = [(0, 0, 1, 10), (200, 0, 1, 10)];
    let mut none = PmsModel::new(
        8,
        PmsParams {
            predictor: Predictor::None,
            ..PmsParams::default()
        },
    )
    .unwrap();
    let a = run(&mut none, &sends);
    let long = PmsParams {
        predictor: Predictor::Timeout(500),
        ..PmsParams::default()
    };
    let mut timeout = PmsModel::new(8, long).unwrap();
    let b = run(&mut timeout, &sends);
    // The default time-out (80 cycles) has let go of it by cycle 200.
    let mut short = PmsModel::new(8, PmsParams::default()).unwrap();
    run(&mut short, &sends);
    assert_eq!(short.setups, 2);
    assert_eq!(none.setups, 2);
    assert_eq!(timeout.setups, 1);
    assert_eq!(a[1].1 - 200, 50);
    assert_eq!(
        b[1].1 - 200,
        10 + 10,
        "leaves at the slot boundary, then the pipe"
    );
    let mut counter = PmsModel::new(
        8,
        PmsParams {
            predictor: Predictor::Counter(1),
            ..PmsParams::default()
        },
    )
    .unwrap();
    // 0→2 is used in between, so 0→1 ages past the threshold and is evicted.
    run(
        &mut counter,
        &[(0, 0, 1, 10), (100, 0, 2, 10), (400, 0, 1, 10)],
    );
    assert_eq!(counter.setups, 3);
}

/// A preloaded connection needs no set-up: the message leaves at the first slot boundary.
#[test]
fn preloaded_connection() {
    let params = PmsParams {
        preload: 4,
        ..PmsParams::default()
    };
    assert_eq!(
        crossbar_configurations(&[(0, 1), (0, 2), (3, 1)], 4).len(),
        2
    );
    let cfgs = crossbar_configurations(&[(0, 1), (3, 2)], 4);
    assert_eq!(cfgs.len(), 1);
    let mut m = PmsModel::with_preload(8, params, cfgs).unwrap();
    assert_eq!(run(&mut m, &[(0, 0, 1, 10)]), vec![(0, 20)]);
    assert_eq!(m.setups, 0);
}

#[test]
fn bad_parameters_are_errors() {
    let mut p = PmsParams::default();
    assert!(p.set("slots", "0").is_err());
    assert!(p.set("slots", "x").is_err());
    assert!(p.set("predictor", "oracle").is_err());
    assert!(p.set("colour", "1").is_err());
    let mut p = PmsParams::default();
    assert!(p.set("preload", "9").is_err());
    assert!(PmsModel::new(0, PmsParams::default()).is_err());
    let bad = vec![vec![(0, 1), (0, 2)]];
    let params = PmsParams {
        preload: 1,
        ..PmsParams::default()
    };
    assert!(PmsModel::with_preload(4, params, bad).is_err());
}

/// Every §5 pattern runs to completion, deterministically, on a 32-port crossbar.
#[test]
fn workloads_complete_deterministically() {
    let patterns = [
        Pattern::Scatter,
        Pattern::RandomMesh,
        Pattern::OrderedMesh,
        Pattern::TwoPhase,
        Pattern::Hybrid { percent: 85 },
    ];
    for p in patterns {
        let files = commands(p, 32, 16, 2, 7);
        let total: usize = files.iter().map(|f| f.len()).sum();
        let a = drive(
            &mut PmsModel::new(32, PmsParams::default()).unwrap(),
            &files,
            1,
            10_000_000,
        );
        let b = drive(
            &mut PmsModel::new(32, PmsParams::default()).unwrap(),
            &files,
            1,
            10_000_000,
        );
        assert_eq!(a, b, "{}", p.name());
        assert_eq!(a.stuck, 0, "{}", p.name());
        assert_eq!(a.messages as usize, total, "{}", p.name());
    }
}

/// The crossbar configurations of a d-regular pattern number d (König), and are partial
/// permutations covering every pair once.
#[test]
fn bipartite_colouring_is_optimal() {
    use ttdl_backend::sim::drive::command_file::mesh_neighbours;
    use ttdl_backend::sim::models::pms::bipartite_edge_coloring;
    let mut pairs: Vec<(usize, usize)> = (0..128)
        .flat_map(|i| mesh_neighbours(128, 16, i).into_iter().map(move |d| (i, d)))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let all: Vec<(usize, usize)> = (0..16)
        .flat_map(|i| (0..16).filter(move |&j| j != i).map(move |j| (i, j)))
        .collect();
    for (set, want) in [(pairs, 4), (all, 15)] {
        let cfgs = bipartite_edge_coloring(&set);
        assert_eq!(cfgs.len(), want);
        let mut seen: Vec<(usize, usize)> = cfgs.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, set);
        for c in &cfgs {
            let mut ins: Vec<usize> = c.iter().map(|p| p.0).collect();
            let mut outs: Vec<usize> = c.iter().map(|p| p.1).collect();
            ins.sort_unstable();
            outs.sort_unstable();
            ins.dedup();
            outs.dedup();
            assert_eq!((ins.len(), outs.len()), (c.len(), c.len()));
        }
    }
}

fn net(spec: &str) -> Network {
    Network::build(&spec.parse().unwrap()).unwrap()
}

/// A lone message on a mesh or torus arrives when the documented formula says: set-up with one
/// cycle per link, slot alignment, the crossbar's pipe plus two cycles of wire per link.
#[test]
fn mesh_lone_latency_is_the_formula() {
    let variants = [
        PmsParams::default(),
        PmsParams {
            guard: 3,
            slot_words: 8,
            hop_wire: 3,
            hop_setup: 2,
            ..PmsParams::default()
        },
    ];
    for spec in ["mesh:16x8", "torus:16x8", "mesh:3x3x3", "ring:6"] {
        let g = net(spec);
        let n = g.nodes();
        for params in &variants {
            for (src, dst, words) in [(0, 1, 1), (0, n - 1, 10), (n / 2, 1, 25), (3, n - 2, 40)] {
                let hops = patterns::route(&g, src, dst).unwrap().len() as u64;
                let mut m = PmsModel::on_network(&g, params.clone(), Vec::new()).unwrap();
                let got = run(&mut m, &[(0, src, dst, words)]);
                let want = lone_latency(params, words, hops);
                assert_eq!(
                    got,
                    vec![(0, want)],
                    "{spec} {src}→{dst} {words} words {params:?}"
                );
            }
        }
    }
    // Defaults: 30 + L + 10 + 2h while the set-up (24 + h) fits before cycle 30.
    let p = PmsParams::default();
    assert_eq!(lone_latency(&p, 10, 0), 50);
    assert_eq!(lone_latency(&p, 4, 3), 30 + 4 + 10 + 6);
    // On the crossbar the formula is the existing first-use latency.
    assert_eq!(lone_latency(&p, 40, 0), 80);
}

/// Two circuits that share a link cannot share a slot, even with distinct ports: 0→2 and 1→3 on
/// a line of 4 both use link 1→2, so the second waits for the other slot table.
#[test]
fn mesh_circuits_sharing_a_link_take_different_slots() {
    let g = net("mesh:4");
    let mut m = PmsModel::on_network(&g, PmsParams::default(), Vec::new()).unwrap();
    let got = run(&mut m, &[(0, 0, 2, 40), (0, 1, 3, 40)]);
    assert_eq!(m.setups, 2);
    // Alternating slots from cycle 30 (as two connections of one crossbar input).
    assert_eq!(got, vec![(0, 110 + 4), (1, 120 + 4)]);
    // On the crossbar they share every slot.
    let mut x = PmsModel::new(4, PmsParams::default()).unwrap();
    let got = run(&mut x, &[(0, 0, 2, 40), (0, 1, 3, 40)]);
    assert_eq!(got, vec![(0, 80), (1, 80)]);
}

/// Preloaded configurations on a torus are link-conflict free, and a preloaded circuit needs no
/// set-up; a configuration with two circuits on one link is refused.
#[test]
fn mesh_preload() {
    let g = net("torus:4x4");
    let pairs: Vec<(usize, usize)> = (0..16).map(|i| (i, (i + 2) % 16)).collect();
    let cfgs = network_configurations(&g, &pairs, 4).unwrap();
    assert!(cfgs.len() <= 4, "{cfgs:?}");
    let params = PmsParams {
        preload: 4,
        ..PmsParams::default()
    };
    let mut m = PmsModel::on_network(&g, params.clone(), cfgs).unwrap();
    m.check().unwrap();
    let got = run(&mut m, &[(0, 0, 2, 10)]);
    assert_eq!(got, vec![(0, 10 + 10 + 2 * 2)]);
    assert_eq!(m.setups, 0);
    let line = net("mesh:4");
    assert!(PmsModel::on_network(&line, params, vec![vec![(0, 2), (1, 3)]]).is_err());
}

/// Random traffic on meshes and tori, reactive, hybrid and preloaded, with either predictor:
/// every packet arrives, `check` (no link or port held twice in a slot) holds after every step,
/// and the same seed gives the same run.
fn random_run(spec: &str, seed: u64, preload: usize, counter: bool) -> (Vec<(u64, u64)>, PmsModel) {
    use rand::{Rng, SeedableRng};
    let g = net(spec);
    let n = g.nodes();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut sends: Vec<(u64, usize, usize, u64)> = (0..120)
        .map(|_| {
            (
                rng.random_range(0..400),
                rng.random_range(0..n),
                rng.random_range(0..n),
                rng.random_range(1..30),
            )
        })
        .collect();
    sends.sort();
    let params = PmsParams {
        preload,
        seed,
        predictor: if counter {
            Predictor::Counter(3)
        } else {
            Predictor::Timeout(40)
        },
        ..PmsParams::default()
    };
    let pairs: Vec<(usize, usize)> = sends.iter().map(|s| (s.1, s.2)).collect();
    let cfgs = if preload > 0 {
        network_configurations(&g, &pairs, preload).unwrap()
    } else {
        Vec::new()
    };
    let mut m = PmsModel::on_network(&g, params, cfgs).unwrap();
    let out = run(&mut m, &sends);
    assert_eq!(
        out.len(),
        sends.len(),
        "{spec} seed {seed}: every packet arrives"
    );
    (out, m)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn mesh_runs_are_conflict_free_complete_and_deterministic(
        seed in 0u64..1000,
        spec in prop::sample::select(vec!["mesh:4x4", "torus:4x4", "mesh:2x2x3", "ring:5"]),
        preload in 0usize..=4,
        counter in any::<bool>(),
    ) {
        let (a, _) = random_run(spec, seed, preload, counter);
        let (b, _) = random_run(spec, seed, preload, counter);
        prop_assert_eq!(a, b);
    }
}

/// Fig 5's hybrid at small scale (32-port crossbar, K = 3, 64-byte messages, one message in
/// flight per processor, time-out 10 cycles; the deterministic part is each processor's E and W
/// neighbours, two configurations, the first k preloaded statically): 1-preload/2-dynamic beats
/// all-dynamic at 50 % determinism, and 2-preload/1-dynamic beats 1-preload/2-dynamic by more
/// than 10 % at 85 % and 100 % (the parameters `examples/pms_sweep.rs` finds on 128 ports).
#[test]
fn fig5_hybrid_orderings_at_small_scale() {
    use rand::{Rng, SeedableRng};
    use ttdl_backend::sim::drive::command_file::grid_neighbours;
    const N: usize = 32;
    let specific: Vec<Vec<usize>> = (0..N)
        .map(|i| grid_neighbours(N, 8, i, true)[..2].to_vec())
        .collect();
    let known: Vec<(usize, usize)> = specific
        .iter()
        .enumerate()
        .flat_map(|(i, nb)| nb.iter().map(move |&d| (i, d)))
        .collect();
    let cfgs = crossbar_configurations(&known, 8);
    assert_eq!(cfgs.len(), 2);
    let eff = |percent: u32, k: usize| {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let files: Vec<Vec<(usize, u64)>> = specific
            .iter()
            .enumerate()
            .map(|(i, nb)| {
                (0..16)
                    .filter_map(|j| {
                        let d = if rng.random_range(0..100) < percent {
                            nb[j % 2]
                        } else {
                            rng.random_range(0..N)
                        };
                        (d != i).then_some((d, 8))
                    })
                    .collect()
            })
            .collect();
        let params = PmsParams {
            slots: 3,
            preload: k,
            predictor: Predictor::Timeout(10),
            ..PmsParams::default()
        };
        let mut m = PmsModel::with_preload(N, params, cfgs[..k].to_vec()).unwrap();
        let s = drive(&mut m, &files, 1, 1 << 30);
        assert_eq!(s.stuck, 0);
        let mut port = vec![0u64; 2 * N];
        for (src, f) in files.iter().enumerate() {
            for &(d, w) in f {
                port[src] += w;
                port[N + d] += w;
            }
        }
        *port.iter().max().unwrap() as f64 / s.completion as f64
    };
    let at50 = [eff(50, 0), eff(50, 1)];
    assert!(
        at50[1] > at50[0],
        "50 %: k=1 {} vs k=0 {}",
        at50[1],
        at50[0]
    );
    for percent in [85, 100] {
        let (k1, k2) = (eff(percent, 1), eff(percent, 2));
        assert!(k2 > 1.1 * k1, "{percent} %: k=2 {k2} vs k=1 {k1}");
    }
}
