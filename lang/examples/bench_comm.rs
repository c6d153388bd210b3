//! Stream matching at scale: Jacobi 2D (Minsky Fig 5-2) on a 64x64 logical torus for 100
//! iterations — 4,096 tasks, 3,276,800 stream operations — timed through the `Comm` hooks alone.
//!
//! `cargo run --release -p ttdl-lang --example bench_comm [-- --match-only]`
//! (on a loaded machine, compare the process's user time with `time`, not the wall clock).

use std::time::Instant;

use ttdl_lang::comm::{Comm, CommLimits};
use ttdl_lang::Span;

fn main() {
    let w = 64usize;
    let iters = 100u64;
    let sp = Span::default();
    let mut c = Comm::new(CommLimits::default());
    let t: Vec<usize> = (0..w * w)
        .map(|i| c.task_numbered(i as i64, sp).unwrap_or(0))
        .collect();
    let at = |x: usize, y: usize| t[(y % w) * w + (x % w)];
    let start = Instant::now();
    for y in 0..w {
        for x in 0..w {
            let me = at(x, y);
            let (n, s, e, wst) = (
                at(x, y + 1),
                at(x, y + w - 1),
                at(x + 1, y),
                at(x + w - 1, y),
            );
            c.iterate_begin(me, iters, sp);
            for k in 0..iters {
                c.iterate_next(me, k);
                let ops = [
                    c.write(me, n, 8, Some("m0"), sp),
                    c.read(me, s, 8, Some("m0"), sp),
                    c.write(me, e, 8, Some("m0"), sp),
                    c.read(me, wst, 8, Some("m0"), sp),
                    c.write(me, wst, 8, Some("m0"), sp),
                    c.read(me, e, 8, Some("m0"), sp),
                    c.write(me, s, 8, Some("m0"), sp),
                    c.read(me, n, 8, Some("m0"), sp),
                    c.compute(me, 10, sp),
                ];
                if ops.iter().any(Result::is_err) {
                    eprintln!("stream operation failed");
                    return;
                }
            }
            c.iterate_end(me);
        }
    }
    let matched = start.elapsed();
    let ops = c.stream_ops();
    if std::env::args().any(|a| a == "--match-only") {
        println!(
            "{ops} stream operations matched in {:.3} s",
            matched.as_secs_f64()
        );
        return;
    }
    let start = Instant::now();
    match c.finish() {
        Ok(traffic) => {
            let finished = start.elapsed();
            println!(
                "{ops} stream operations matched in {:.3} s; finish (DAG, timing, period) {:.3} s",
                matched.as_secs_f64(),
                finished.as_secs_f64()
            );
            println!(
                "{} tasks, {} messages, critical path {}, period bound {:?}",
                traffic.tasks.len(),
                traffic.messages.len(),
                traffic.critical_path,
                traffic.period.map(|p| (p.lower_bound, p.bound_by))
            );
        }
        Err(d) => eprintln!("{} diagnostics, first: {:?}", d.len(), d.first()),
    }
}
