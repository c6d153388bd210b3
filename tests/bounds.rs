//! Every bound is a true lower bound (SPEC §2 "Bounds hold under every setting"): over random
//! programs with multicast (`broadcast`), switch latency, set-up cycles, 1–2 ports and phases,
//! written with `iterate` and unrolled with `dotimes`, no scheduler (exact, lp, best) finishes
//! under the makespan bound, the run of every repeating phase is at least its iterations times
//! the period bound, and the two loop forms, whose unrolled messages are identical, get the same
//! makespan and makespan bound. `PROPTEST_CASES` scales the number of programs.

use proptest::prelude::*;
use ttdl::session::Session;
use ttdl_backend::pipeline::{self, Settings};
use ttdl_backend::schedule::{self, periodic, Problem};
use ttdl_backend::Traffic;

/// One task's iteration: writes (peers, words) — a unicast, or a `broadcast` when it names
/// several peers — then compute, then the reads of what was sent to it (in sender order), so
/// no set of tasks waits on each other forever.
#[derive(Clone, Debug)]
struct Body {
    writes: Vec<(Vec<usize>, u64)>,
    compute: u64,
}

/// The peers of a write other than the writer itself, each once, in order.
fn peers(t: usize, tasks: usize, to: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = to.iter().map(|p| p % tasks).filter(|&p| p != t).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The program, its loop written as `(iterate … n)` or unrolled as `(dotimes (i n) …)`.
fn source(tasks: usize, bodies: &[Body], n: u64, phases: bool, unrolled: bool) -> String {
    let mut s = String::from("(deftask");
    for t in 0..tasks {
        s += &format!(" t{t}");
    }
    s += ")\n";
    let block = |s: &mut String, name: &str| {
        for (t, b) in bodies.iter().enumerate() {
            let mut ops = String::new();
            for (to, w) in &b.writes {
                match peers(t, tasks, to).as_slice() {
                    [] => {}
                    [p] => ops += &format!("(write-stream {w} t{p}) "),
                    ps => {
                        let names: Vec<String> = ps.iter().map(|p| format!("t{p}")).collect();
                        ops += &format!("(broadcast {w} {}) ", names.join(" "));
                    }
                }
            }
            if b.compute > 0 {
                ops += &format!("(compute {}) ", b.compute);
            }
            for (u, other) in bodies.iter().enumerate() {
                for (to, w) in &other.writes {
                    if u != t && peers(u, tasks, to).contains(&t) {
                        ops += &format!("(read-stream {w} t{u}) ");
                    }
                }
            }
            if ops.is_empty() {
                ops = "(compute 1) ".into();
            }
            let body = if unrolled {
                format!("(dotimes (i {n}) {ops})")
            } else {
                format!("(iterate {ops}{n})")
            };
            *s += &format!("(define-comm {name}{t} (self) {body})\n({name}{t} t{t})\n");
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
    (
        prop::collection::vec((prop::collection::vec(0usize..6, 1..4), 1u64..9), 0..3),
        0u64..10,
    )
        .prop_map(|(writes, compute)| Body { writes, compute })
}

/// One plan's figures: makespan, makespan bound, and per repeating phase (iterations, the last
/// arrival less the first send, period bound).
type Figures = (u64, u64, Vec<(u64, u64, u64)>);

#[allow(clippy::too_many_arguments)]
fn figures(
    src: &str,
    network: &str,
    method: &str,
    ports: u32,
    latency: u64,
    setup: u64,
) -> Result<Figures, TestCaseError> {
    let traffic = traffic(src);
    let mut o = Settings::new();
    for (k, v) in [
        ("network", network.to_string()),
        ("place", "identity".into()),
        ("schedule", method.to_string()),
        ("ports", ports.to_string()),
        ("latency", latency.to_string()),
        ("setup", setup.to_string()),
        ("seed", "3".into()),
    ] {
        o.set(k, &v).unwrap();
    }
    let cfg = pipeline::resolve(&traffic, &o).unwrap();
    let plan = pipeline::plan(&traffic, &cfg)
        .map_err(|e| format!("{e}\n{src}"))
        .unwrap();
    let s = &plan.schedule;
    let problem = Problem::new(
        &plan.traffic,
        &plan.network,
        &plan.placement,
        &plan.routing,
        s.hardware,
    )
    .unwrap();
    let (lb, why) = schedule::lower_bound(&problem);
    prop_assert!(
        s.makespan >= lb,
        "{method}: makespan {} under its bound {lb} ({why})\n{src}",
        s.makespan
    );
    let mut phases = Vec::new();
    for ph in periodic::bounds(&problem) {
        let ms = plan.traffic.messages.iter().filter(|m| m.phase == ph.phase);
        let first = ms.clone().map(|m| s.sent[m.id]).min().unwrap_or(0);
        let last = ms.map(|m| s.arrival[m.id]).max().unwrap_or(0);
        let (n, v) = (ph.iterations, ph.bound.value);
        // Every iteration after the first takes the period at least: a recurrence holds
        // between consecutive iterations, a resource's words are all carried within the run
        // (rounded up per iteration: at most one cycle each), and a task's compute is done
        // whole before it ends.
        prop_assert!(
            s.makespan + (n - 1) >= (n - 1) * v,
            "{method}: {n} iterations of phase {} in {} cycles under the period bound {v} ({})\n{src}",
            ph.phase,
            s.makespan,
            ph.bound.by
        );
        phases.push((n, last.saturating_sub(first), v));
    }
    Ok((s.makespan, lb, phases))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]
    #[test]
    fn bounds_hold_under_every_setting(
        torus in any::<bool>(),
        w in 2usize..4,
        h in 1usize..3,
        tasks in 2usize..5,
        bodies in prop::collection::vec(body(), 4),
        iterations in prop::sample::select(vec![2u64, 3, 12, 20]),
        phases in any::<bool>(),
        ports in 1u32..3,
        latency in 0u64..3,
        setup in prop::sample::select(vec![0u64, 0, 2]),
    ) {
        let network = format!("{}:{w}x{h}", if torus { "torus" } else { "mesh" });
        let looped = source(tasks, &bodies[..tasks], iterations, phases, false);
        let unrolled = source(tasks, &bodies[..tasks], iterations, phases, true);
        // The LP splits messages into fragments, which a set-up would pay again: it refuses.
        let methods: &[&str] = if setup > 0 { &["exact", "best"] } else { &["exact", "lp", "best"] };
        for &method in methods {
            let a = figures(&looped, &network, method, ports, latency, setup)?;
            let b = figures(&unrolled, &network, method, ports, latency, setup)?;
            // The same messages: the same plan and makespan bound, however the loop is written.
            prop_assert_eq!((a.0, a.1), (b.0, b.1), "{}: {} vs {}", method, looped, unrolled);
        }
    }
}
