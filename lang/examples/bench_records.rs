//! Benchmark: a pure allocation loop. Every node of a 64×64 torus, for 100 iterations, conses a
//! `(src dst 8)` record to and from each of its four neighbours onto one list: 3,276,800 records,
//! about 13 million cons cells, no communication forms at all. This is the evaluator's own speed
//! (dispatch, variable lookup, arithmetic, allocation), measured against Guile 3 running the same
//! program compiled, when `guile` is installed.
//!
//! `cargo run --release -p ttdl-lang --example bench_records [SIDE] [ITERATIONS]`

use std::time::Instant;

use ttdl_lang::{Interpreter, Limits};

/// The loop body, shared by both programs: TTDL and Scheme spell it the same, apart from `nil`.
fn records_body(empty: &str) -> String {
    format!(
        r#"
(define (torus-records side iters)
  (let ((acc {empty}))
    (dotimes (it iters)
      (dotimes (y side)
        (dotimes (x side)
          (let ((me (+ (* y side) x))
                (north (+ (* (modulo (+ y 1) side) side) x))
                (south (+ (* (modulo (- y 1) side) side) x))
                (east (+ (* y side) (modulo (+ x 1) side)))
                (west (+ (* y side) (modulo (- x 1) side))))
            (set! acc (cons (list me north 8) acc))
            (set! acc (cons (list north me 8) acc))
            (set! acc (cons (list me south 8) acc))
            (set! acc (cons (list south me 8) acc))
            (set! acc (cons (list me east 8) acc))
            (set! acc (cons (list east me 8) acc))
            (set! acc (cons (list me west 8) acc))
            (set! acc (cons (list west me 8) acc))))))
    acc))
"#
    )
}

fn ttdl_program(side: usize, iterations: usize) -> String {
    format!(
        "{}(length (torus-records {side} {iterations}))\n",
        records_body("nil")
    )
}

/// Scheme has `do` rather than `dotimes`; the macro keeps the body text identical.
fn scheme_program(side: usize, iterations: usize) -> String {
    format!(
        r#"
(define-syntax dotimes
  (syntax-rules ()
    ((_ (var n) body ...)
     (let ((limit n))
       (do ((var 0 (+ var 1))) ((= var limit)) body ...)))))
{}
(define t0 (get-internal-run-time))
(define n (length (torus-records {side} {iterations})))
(define t1 (get-internal-run-time))
(display n) (newline)
(display (exact->inexact (/ (- t1 t0) internal-time-units-per-second))) (newline)
"#,
        records_body("'()")
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let side: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let records = side * side * iterations * 8;

    let mut interp = Interpreter::new(Limits::default());
    let program = ttdl_program(side, iterations);
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let result = interp.eval_source("records.ttdl", &program);
    let wall = t0.elapsed().as_secs_f64();
    // CPU time, as Guile's `get-internal-run-time` measures it: on a shared machine the wall
    // clock says more about the neighbours than about the interpreter.
    let ours = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    let steps = interp.machine().steps;
    match result {
        Ok(v) => println!("ttdl:  {v} records in {ours:.3} s CPU ({wall:.3} s wall)"),
        Err(d) => {
            eprintln!("{}", interp.render(&d, false));
            std::process::exit(1);
        }
    }
    println!(
        "       {steps} steps, {:.1} ns per step, {:.0} ns per record",
        ours * 1e9 / steps.max(1) as f64,
        ours * 1e9 / records.max(1) as f64
    );
    if let Some(rss) = peak_memory_mb() {
        println!("       peak resident {rss} MB");
    }

    match guile_seconds(&scheme_program(side, iterations)) {
        Some(g) => println!(
            "guile: {records} records in {g:.3} s CPU (compiled); ttdl / guile = {:.2}",
            ours / g
        ),
        None => println!("guile: not installed (apt-get install guile-3.0), no comparison"),
    }
}

/// Runs the Scheme program with `guile` twice — the first run compiles it into Guile's cache,
/// the second runs the compiled code — and returns the loop's own time as Guile measured it.
fn guile_seconds(program: &str) -> Option<f64> {
    let path = std::env::temp_dir().join(format!("ttdl-bench-records-{}.scm", std::process::id()));
    std::fs::write(&path, program).ok()?;
    let mut last = None;
    for _ in 0..2 {
        let out = std::process::Command::new("guile")
            .arg("--auto-compile")
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        last = text
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse::<f64>().ok());
    }
    let _ = std::fs::remove_file(&path);
    last
}

/// CPU seconds (user + system) of this process so far, from `/proc` (Linux).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime), counted after the command name.
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Peak resident memory of this process, from `/proc` (Linux).
fn peak_memory_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024)
}
