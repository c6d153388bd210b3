//! Scheduling benchmark: how each stage grows with the program. Jacobi 2D (Minsky Fig 5-2) on an
//! n×n logical torus, `iters` iterations (4n² messages of 8 words per iteration, compute 10),
//! placed on an n×n mesh (folded or seeded-random), timed, routed (dimension order), scheduled,
//! verified and replayed; each stage timed, and the peak resident memory (VmHWM) printed.
//!
//! `cargo run --release -p ttdl-backend --example bench_schedule -- [CASE…]`, each case
//! `SIDExITERS:PLACE:METHOD` (PLACE fold|random, METHOD exact|lp|best), e.g. `64x6:random:exact`
//! or `8x1000:fold:best`. Default: a small growth series of both. Run one case per process when
//! the peak memory matters (VmHWM only grows).

use std::time::Instant;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use ttdl_backend::pipeline::{self, PlanConfig, TimingModel};
use ttdl_backend::place::PlaceMethod;
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::schedule::{self, verify, Hardware, Method, Problem};
use ttdl_backend::sim::models::scheduled::replay;
use ttdl_backend::traffic::{Message, Op, Phase, Task};
use ttdl_backend::{Network, NetworkSpec, Placement, Traffic};

/// Jacobi 2D on an n×n torus for `iters` iterations: each task writes north, reads from the south,
/// then east/west, west/east, south/north, then computes (the thesis's program order).
fn jacobi(n: usize, iters: usize) -> Traffic {
    let tasks = n * n;
    let dirs: [(isize, isize); 4] = [(0, 1), (1, 0), (-1, 0), (0, -1)];
    let nb = |t: usize, (dx, dy): (isize, isize)| {
        let (x, y) = ((t % n) as isize, (t / n) as isize);
        let x = (x + dx).rem_euclid(n as isize) as usize;
        let y = (y + dy).rem_euclid(n as isize) as usize;
        y * n + x
    };
    let mut traffic = Traffic::default();
    for t in 0..tasks {
        traffic.tasks.push(Task {
            id: t,
            name: format!("j{t}"),
            coords: Some(vec![(t % n) as i64, (t / n) as i64]),
            ops: vec![Op::Sync(0)],
            ..Task::default()
        });
    }
    let id = |i: usize, s: usize, t: usize| (i * 4 + s) * tasks + t;
    for i in 0..iters {
        for (s, &d) in dirs.iter().enumerate() {
            for t in 0..tasks {
                traffic.messages.push(Message {
                    id: id(i, s, t),
                    src: t,
                    dst: vec![nb(t, d)].into(),
                    size: 8,
                    ..Message::default()
                });
            }
        }
        for t in 0..tasks {
            for (s, &(dx, dy)) in dirs.iter().enumerate() {
                let from = nb(t, (-dx, -dy));
                traffic.tasks[t].ops.push(Op::Send(id(i, s, t)));
                traffic.tasks[t].ops.push(Op::Recv(id(i, s, from)));
            }
            traffic.tasks[t].ops.push(Op::Compute(10));
        }
    }
    traffic.phases.push(Phase {
        id: 0,
        name: "0".into(),
        start: 0,
    });
    traffic
}

fn fold(i: usize, n: usize) -> usize {
    if i < n.div_ceil(2) {
        2 * i
    } else {
        2 * (n - 1 - i) + 1
    }
}

fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn case(spec: &str) -> Result<(), Box<dyn std::error::Error>> {
    let parts: Vec<&str> = spec.split(':').collect();
    let (side, iters) = parts[0]
        .split_once('x')
        .ok_or("case: SIDExITERS:PLACE:METHOD")?;
    let (n, iters): (usize, usize) = (side.parse()?, iters.parse()?);
    let how = parts.get(1).copied().unwrap_or("fold");
    let method: Method = parts.get(2).copied().unwrap_or("exact").parse()?;
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    let traffic = jacobi(n, iters);
    let eval_ms = ms(t);

    let t = Instant::now();
    let network = Network::build(&format!("mesh:{n}x{n}").parse::<NetworkSpec>()?)?;
    let node_of: Vec<usize> = match how {
        "random" => {
            let mut v: Vec<usize> = (0..n * n).collect();
            v.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
            v
        }
        _ => (0..n * n)
            .map(|t| fold(t / n, n) * n + fold(t % n, n))
            .collect(),
    };
    let placement = Placement { node_of };
    // A fourth field sets the switch buffers: `64x6:random:exact:0` or `…:unbounded`.
    let hardware = Hardware {
        buffer: match parts.get(3) {
            Some(b) => match ttdl_backend::pipeline::Setting::find("buffer")
                .and_then(|row| row.parse(b))
                .map_err(|e| e.to_string())?
            {
                ttdl_ir::settings::Value::Int(w) => Some(w as u32),
                _ => None,
            },
            None => Hardware::BUFFER,
        },
        ..Hardware::default()
    };
    let cfg = PlanConfig {
        network: network.spec.clone(),
        place: PlaceMethod::Mapping,
        route: RouteMethod::Dor,
        schedule: method,
        lp_solver: Default::default(),
        hardware,
        timing: TimingModel::Port,
        seed: 1,
        throughput: false,
        follow: false,
        effort: Default::default(),
    };
    let traffic = pipeline::timed(&traffic, &placement, &cfg)?;
    let place_ms = ms(t);

    let t = Instant::now();
    let routing = route::route(&traffic, &network, &placement, RouteMethod::Dor, 1)?;
    let route_ms = ms(t);

    let t = Instant::now();
    let s = schedule::schedule(&traffic, &network, &placement, &routing, method, hardware)?;
    let sched_ms = ms(t);

    let t = Instant::now();
    let problem = Problem::new(&traffic, &network, &placement, &routing, hardware)?;
    verify::verify(&problem, &s).map_err(|e| e.to_string())?;
    let (bound, _) = schedule::lower_bound(&problem);
    drop(problem);
    let verify_ms = ms(t);

    let t = Instant::now();
    let r = replay::replay(&traffic, &network, &placement, &routing, &s)?;
    let replay_ms = ms(t);

    println!(
        "{:<20} {:>8} {:>7} {:>8} {:>7.3} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>8.0}  {}",
        spec,
        traffic.messages.len(),
        s.makespan,
        bound,
        s.makespan as f64 / bound.max(1) as f64,
        eval_ms,
        place_ms,
        route_ms,
        sched_ms,
        verify_ms,
        replay_ms,
        peak_mb(),
        match r.completion == s.makespan || r.completion > 0 {
            true => s.method.name(),
            false => "?",
        }
    );
    Ok(())
}

fn main() {
    let cases: Vec<String> = std::env::args().skip(1).collect();
    let cases = if cases.is_empty() {
        [
            "16x6:random:exact",
            "32x6:random:exact",
            "8x10:fold:best",
            "8x100:fold:best",
        ]
        .map(String::from)
        .to_vec()
    } else {
        cases
    };
    println!(
        "{:<20} {:>8} {:>7} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  method",
        "case",
        "msgs",
        "span",
        "bound",
        "ratio",
        "eval_ms",
        "place_ms",
        "route_ms",
        "sched_ms",
        "verify_ms",
        "replay_ms",
        "peak_MB"
    );
    for c in cases {
        if let Err(e) = case(&c) {
            println!("{c}: {e}");
        }
    }
}
