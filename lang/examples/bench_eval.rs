//! Benchmark: the thesis's Jacobi 2D pattern (Minsky Fig 5-2) on a 64×64 logical torus, 100
//! iterations: 4,096 tasks and about 3.3 million stream operations, evaluated, matched and timed.
//!
//! `cargo run --release -p ttdl-lang --example bench_eval [SIDE] [ITERATIONS]`

use std::time::Instant;

use ttdl_lang::{Interpreter, Limits};

fn program(side: usize, iterations: usize) -> String {
    format!(
        r#"
(defmessage m0 8)
(define-comm jacobi-2d (self t-north t-east t-west t-south n)
  (let ((compute-time 10))
    (sequence
      (synchronize 0)
      (iterate
        (sequence
          (write-stream m0 t-north)
          (read-stream m0 t-south)
          (write-stream m0 t-east)
          (read-stream m0 t-west)
          (write-stream m0 t-west)
          (read-stream m0 t-east)
          (write-stream m0 t-south)
          (read-stream m0 t-north)
          (compute compute-time))
        n))))
(define net (make-network :topology torus :dims (list {side} {side})))
(dolist (t (network-tasks net))
  (jacobi-2d t (neighbor net t 'north) (neighbor net t 'east)
               (neighbor net t 'west) (neighbor net t 'south) {iterations}))
"#
    )
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if let Some(path) = args.peek().filter(|a| a.ends_with(".ttdl")).cloned() {
        // Time any program: `bench_eval FILE.ttdl`.
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut interp = Interpreter::new(Limits::default());
        let t0 = Instant::now();
        let r = interp.eval_source(&path, &text);
        print!("{}", interp.take_output());
        println!("{path}: {:.3} s", t0.elapsed().as_secs_f64());
        match r {
            Ok(v) => println!("=> {v}"),
            Err(d) => eprintln!("{}", interp.render(&d, false)),
        }
        return;
    }
    let side: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let src = program(side, iterations);
    let mut interp = Interpreter::new(Limits::default());

    let t0 = Instant::now();
    if let Err(d) = interp.eval_source("bench.ttdl", &src) {
        eprintln!("{}", interp.render(&d, false));
        std::process::exit(1);
    }
    let eval_time = t0.elapsed();
    let tasks = interp.comm().task_count();
    println!("evaluation steps: {}", interp.machine().steps);
    let ops = side * side * iterations * 8;
    println!(
        "evaluated: {tasks} tasks, {ops} stream operations in {:.3} s ({:.0} ns/op)",
        eval_time.as_secs_f64(),
        eval_time.as_nanos() as f64 / ops as f64
    );

    if let Some((cpu, rss)) = cpu_and_peak_memory() {
        println!("  after evaluation: {cpu:.2} s CPU, peak resident {rss} MB");
    }
    let t1 = Instant::now();
    match interp.traffic(None) {
        Ok(traffic) => println!(
            "matched and timed: {} messages, critical path {} in {:.3} s",
            traffic.messages.len(),
            traffic.critical_path,
            t1.elapsed().as_secs_f64()
        ),
        Err(d) => println!(
            "matching/timing not available: {}",
            d.first().map(|d| d.message.as_str()).unwrap_or("?")
        ),
    }
    println!("total {:.3} s wall", t0.elapsed().as_secs_f64());
    if let Some((cpu, rss)) = cpu_and_peak_memory() {
        println!("process: {cpu:.2} s CPU (user + system), peak resident {rss} MB");
    }
}

/// CPU seconds and peak resident memory of this process, from `/proc` (Linux), so the figure
/// means something on a loaded machine too.
fn cpu_and_peak_memory() -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime), counted after the command name.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((ticks / 100.0, kb / 1024))
}
