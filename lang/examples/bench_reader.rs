//! Reads a generated ~10 MB TTDL program and reports the throughput.
//! `cargo run --release -p ttdl-lang --example bench_reader [MEGABYTES]`

use std::time::Instant;

use ttdl_lang::syntax::read;

fn main() {
    let megabytes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    let chunk = r#"
;; Jacobi relaxation on a torus (Minsky §4.1)
(define-comm jacobi-step (self net n)
  #| one iteration: exchange with the four neighbours |#
  (sequence
    (compute 120)
    (dolist (dir '(east west north south))
      (write-stream 'edge (neighbor net self dir)))
    (iterate (read-stream edge (neighbor net self 'east)) n)
    `(done ,self ,@(list 1 2.5 -3e4 "str\n" :key #t #f nil))))
"#;
    let mut text = String::new();
    while text.len() < megabytes << 20 {
        text.push_str(chunk);
    }
    let cpu_start = thread_cpu_ns();
    let start = Instant::now();
    let (items, diags) = read(0, &text);
    let secs = start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, thread_cpu_ns()) {
        (Some(a), Some(b)) => format!(", {:.3} s on the CPU", (b - a) as f64 / 1e9),
        _ => String::new(),
    };
    println!(
        "read {:.1} MB: {} top-level forms, {} errors in {:.3} s wall ({:.0} MB/s){cpu}",
        text.len() as f64 / 1e6,
        items.len(),
        diags.len(),
        secs,
        text.len() as f64 / 1e6 / secs
    );
}

/// Time this thread has spent on a CPU (Linux), so a busy machine does not distort the figure.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}
