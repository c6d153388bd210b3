//! Invariants between features, over random programs written in TTDL (meshes and tori, 1–2
//! ports, switch latency 0–1, phases, `iterate`): the makespan is at least its bound, the
//! replay equals the plan, `best` is never worse than `exact` or `lp`, and no message is late
//! without being listed in `relaxed`. `PROPTEST_CASES` scales the number of programs.

use proptest::prelude::*;
use ttdl::session::Session;
use ttdl_backend::pipeline::{self, Overrides};
use ttdl_backend::schedule::{self, periodic, Problem};
use ttdl_backend::Traffic;

/// One task's iteration: writes (peer, words), then compute, then the reads of what was sent to
/// it (in sender order), so no set of tasks waits on each other forever.
#[derive(Clone, Debug)]
struct Body {
    writes: Vec<(usize, u64)>,
    compute: u64,
}

fn source(tasks: usize, bodies: &[Body], iterations: u64, phases: bool) -> String {
    let mut s = String::from("(deftask");
    for t in 0..tasks {
        s += &format!(" t{t}");
    }
    s += ")\n";
    let block = |s: &mut String, name: &str| {
        for (t, b) in bodies.iter().enumerate() {
            let mut ops = String::new();
            for &(p, w) in &b.writes {
                if p % tasks != t {
                    ops += &format!("(write-stream {w} t{}) ", p % tasks);
                }
            }
            if b.compute > 0 {
                ops += &format!("(compute {}) ", b.compute);
            }
            for (u, other) in bodies.iter().enumerate() {
                for &(p, w) in &other.writes {
                    if p % tasks == t && u != t {
                        ops += &format!("(read-stream {w} t{u}) ");
                    }
                }
            }
            if ops.is_empty() {
                ops = "(compute 1) ".into();
            }
            *s += &format!(
                "(define-comm {name}{t} (self) (iterate {ops}{iterations}))\n({name}{t} t{t})\n"
            );
        }
    };
    block(&mut s, "a");
    if phases {
        for t in 0..tasks {
            s += &format!("(with-task t{t} (synchronize 'second))\n");
        }
        block(&mut s, "b");
    }
    s
}

fn traffic(src: &str) -> Traffic {
    let mut s = Session::new().expect("stdlib");
    s.eval_source("random.ttdl", src)
        .map_err(|d| s.render(&d))
        .expect("the random program evaluates");
    s.traffic(None)
        .map_err(|d| s.render(&d))
        .expect("the random program matches")
}

fn body() -> impl Strategy<Value = Body> {
    (prop::collection::vec((0usize..8, 1u64..9), 0..4), 0u64..12)
        .prop_map(|(writes, compute)| Body { writes, compute })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(40)
    ))]
    #[test]
    fn figures_meet_their_bounds(
        torus in any::<bool>(),
        w in 2usize..4,
        h in 1usize..4,
        tasks in 2usize..6,
        bodies in prop::collection::vec(body(), 6),
        iterations in 1u64..4,
        phases in any::<bool>(),
        ports in 1u32..3,
        latency in 0u64..2,
        place in prop::sample::select(vec!["identity", "random"]),
    ) {
        let src = source(tasks, &bodies[..tasks], iterations, phases);
        let traffic = traffic(&src);
        let kind = if torus { "torus" } else { "mesh" };
        let mut keys = Vec::new();
        for method in ["exact", "lp", "best"] {
            let o = Overrides {
                network: Some(format!("{kind}:{w}x{h}")),
                place: Some(place.to_string()),
                schedule: Some(method.into()),
                ports: Some(ports),
                latency: Some(latency),
                seed: Some(3),
                ..Overrides::default()
            };
            let cfg = pipeline::resolve(&traffic, &o).unwrap();
            let plan = pipeline::plan(&traffic, &cfg).map_err(|e| format!("{e}\n{src}")).unwrap();
            let s = &plan.schedule;
            let problem = Problem::new(&plan.traffic, &plan.network, &plan.placement, &plan.routing, s.hardware).unwrap();
            // The replay of the switch programs ends when the plan says.
            prop_assert_eq!(plan.replay.completion, s.makespan, "{}", src);
            // Every figure is at least its bound.
            let (lb, why) = schedule::lower_bound(&problem);
            prop_assert!(s.makespan >= lb, "{method}: makespan {} under its bound {lb} ({why})\n{src}", s.makespan);
            let period = periodic::analyze(&problem, s);
            // The period bound is a steady-state bound; a run of a few iterations whose writers
            // never wait can drain faster than it (checked on the examples, not here).
            // `relaxed` is complete and exact.
            let listed: std::collections::BTreeSet<usize> = s.relaxed.iter().map(|r| r.msg).collect();
            for m in &plan.traffic.messages {
                prop_assert_eq!(s.arrival[m.id] > m.deadline, listed.contains(&m.id), "message {}\n{}", m.id, src);
            }
            prop_assert_eq!(s.deadlines_met(), listed.is_empty());
            keys.push((period.map_or(0, |p| p.achieved.max(p.lower_bound)), s.makespan));
        }
        // `best` is never worse than either scheduler by the real objective.
        prop_assert!(keys[2] <= keys[0] && keys[2] <= keys[1], "{keys:?}\n{src}");
    }
}
