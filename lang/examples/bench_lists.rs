//! Benchmark: list programs beside Guile 3. Four programs every Lisp user writes, spelled the
//! same in TTDL and Scheme: records consed by tail recursion and then read back with `car`,
//! `cadr`, `caddr`, `cdr` and `null?`; a quicksort of random integers (a tail-recursive
//! partition and a non-tail recursion); a binary tree built and folded (non-tail recursion,
//! `pair?`); and a loop building names with `string-append` and `number->string`. Each runs in
//! this process under TTDL (CPU seconds of the evaluation) and, when `guile` is installed, under
//! Guile 3 compiled (the same program's own run time, from `get-internal-run-time`).
//!
//! A fifth program maps and sums a list of 5,000 integers by non-tail recursion, 5,000 calls
//! deep (`map` and a fold as a Lisp user writes them by hand). Three more were written after the
//! five were tuned for: a merge sort, word counts in an association list, the eight queens.
//!
//! `cargo run --release -p ttdl-lang --example bench_lists [--closures] [--runs N] [SCALE]
//! [NAME…]` (SCALE multiplies every size; 1 by default; NAMEs pick programs, all by default;
//! `--closures` runs every procedure body as closures, without machine code; each program runs
//! N times in each language, 5 by default, alternating, and the table gives the medians, the
//! ratio of the medians and the range of the ratios run by run). `--emit DIR` writes each program as `NAME.ttdl` and `NAME.scm` instead,
//! to run through the CLI (`ttdl check --max-depth 100000 NAME.ttdl`, `guile NAME.scm`).

use std::time::Instant;

use ttdl_lang::{Interpreter, Limits};

/// A program: its name, the definitions (the same text in both languages), and the call whose
/// value it prints, with the sizes at scale 1.
struct Program {
    name: &'static str,
    body: &'static str,
    call: fn(f64) -> String,
}

// The definitions, the same text in both languages, in `lists/` (the machine-code tests run them
// too).

const RECORDS: &str = include_str!("lists/records.ttdl");

const QSORT: &str = include_str!("lists/qsort.ttdl");

const TREE: &str = include_str!("lists/tree.ttdl");

const STRINGS: &str = include_str!("lists/strings.ttdl");

const RECUR: &str = include_str!("lists/recur.ttdl");

// Three more, written for this table after the five above were tuned for: a merge sort (a
// non-tail merge 20,000 calls deep), word counts kept in an association list (`eq?` on
// symbols), and the eight queens by backtracking (integer comparisons under `not` and `and`).

const MSORT: &str = include_str!("lists/msort.ttdl");

const ASSOC: &str = include_str!("lists/assoc.ttdl");

const QUEENS: &str = include_str!("lists/queens.ttdl");

fn scaled(n: u64, scale: f64) -> u64 {
    ((n as f64 * scale).round() as u64).max(1)
}

fn programs() -> Vec<Program> {
    vec![
        Program {
            name: "records",
            body: RECORDS,
            call: |s| format!("(records-main {})", scaled(3_276_800, s)),
        },
        Program {
            name: "qsort",
            body: QSORT,
            call: |s| format!("(qsort-main {} 5)", scaled(200_000, s)),
        },
        Program {
            name: "tree",
            body: TREE,
            call: |s| format!("(tree-main 20 {})", scaled(8, s)),
        },
        Program {
            name: "recur",
            body: RECUR,
            call: |s| format!("(recur-main 5000 {})", scaled(200, s)),
        },
        Program {
            name: "strings",
            body: STRINGS,
            call: |s| format!("(strings-main {})", scaled(1_000_000, s)),
        },
        Program {
            name: "msort",
            body: MSORT,
            call: |s| format!("(msort-main 20000 {})", scaled(20, s)),
        },
        Program {
            name: "assoc",
            body: ASSOC,
            call: |s| format!("(assoc-main 100000 {})", scaled(10, s)),
        },
        Program {
            name: "queens",
            body: QUEENS,
            call: |s| format!("(queens-main 8 {})", scaled(300, s)),
        },
    ]
}

fn ttdl_program(p: &Program, scale: f64) -> String {
    format!("{}\n(println {})\n", p.body.trim(), (p.call)(scale))
}

/// The Scheme program times its own call, so Guile's start-up and compilation are left out.
fn scheme_program(p: &Program, scale: f64) -> String {
    format!(
        r#"{}
(define t0 (get-internal-run-time))
(define result {})
(define t1 (get-internal-run-time))
(display result) (newline)
(display (exact->inexact (/ (- t1 t0) internal-time-units-per-second))) (newline)
"#,
        p.body.trim(),
        (p.call)(scale)
    )
}

/// The Scheme program as a user runs it: just the call and its printed value.
fn scheme_script(p: &Program, scale: f64) -> String {
    format!(
        "{}\n(display {}) (newline)\n",
        p.body.trim(),
        (p.call)(scale)
    )
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--closures`: procedure bodies run as closures only (no machine code), to measure the two
    // tiers side by side.
    if let Some(i) = args.iter().position(|a| a == "--closures") {
        args.remove(i);
        ttdl_lang::eval::code::set_native(false);
    }
    if let [flag, dir, rest @ ..] = args.as_slice() {
        if flag == "--emit" {
            let scale = rest.first().and_then(|a| a.parse().ok()).unwrap_or(1.0);
            for p in programs() {
                let base = std::path::Path::new(dir).join(p.name);
                let ok = std::fs::write(base.with_extension("ttdl"), ttdl_program(&p, scale))
                    .and_then(|()| {
                        std::fs::write(base.with_extension("scm"), scheme_script(&p, scale))
                    });
                if let Err(e) = ok {
                    eprintln!("cannot write {}: {e}", base.display());
                    std::process::exit(1);
                }
            }
            return;
        }
    }
    let mut runs = 5;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs = args
            .get(i + 1)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| {
                eprintln!("--runs takes a number of runs, at least 1");
                std::process::exit(2);
            });
        args.drain(i..i + 2);
    }
    // The scale, if the first argument is a number; the names of the programs to run after it.
    let given: Option<f64> = args.first().and_then(|a| a.parse().ok());
    let scale = given.unwrap_or(1.0);
    let only: Vec<&str> = args
        .iter()
        .skip(usize::from(given.is_some()))
        .map(String::as_str)
        .collect();
    let has_guile = std::process::Command::new("guile")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    println!(
        "{:<9} {:>10} {:>14} {:>8} {:>10} {:>8} {:>12}",
        "program", "ttdl s", "steps", "ns/step", "guile s", "ratio", "run by run"
    );
    for p in programs() {
        if !only.is_empty() && !only.contains(&p.name) {
            continue;
        }
        let program = ttdl_program(&p, scale);
        let scheme = std::env::temp_dir().join(format!(
            "ttdl-bench-lists-{}-{}.scm",
            std::process::id(),
            p.name
        ));
        if has_guile {
            if let Err(e) = std::fs::write(&scheme, scheme_program(&p, scale)) {
                eprintln!("cannot write {}: {e}", scheme.display());
                std::process::exit(1);
            }
            // The first run compiles the program into Guile's cache.
            let _ = guile_run(&scheme, 1);
        }
        let (mut ours, mut theirs, mut steps) = (Vec::new(), Vec::new(), 0);
        for _ in 0..runs {
            let (secs, printed, n) = ttdl_run(&p, &program);
            ours.push(secs);
            steps = n;
            if has_guile {
                let Some((value, secs)) = guile_run(&scheme, 1) else {
                    eprintln!("{}: guile failed", p.name);
                    std::process::exit(1);
                };
                if value.trim() != printed.trim() {
                    eprintln!(
                        "{}: ttdl printed {} but guile {}",
                        p.name,
                        printed.trim(),
                        value.trim()
                    );
                    std::process::exit(1);
                }
                theirs.push(secs);
            }
        }
        let _ = std::fs::remove_file(&scheme);
        let mine = median(&ours);
        let (gs, ratio, range) = if theirs.is_empty() {
            ("-".to_string(), "-".to_string(), "-".to_string())
        } else {
            let each: Vec<f64> = ours.iter().zip(&theirs).map(|(a, b)| a / b).collect();
            let (lo, hi) = each
                .iter()
                .fold((f64::MAX, 0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
            (
                format!("{:.3}", median(&theirs)),
                format!("{:.2}", mine / median(&theirs)),
                format!("{lo:.2}–{hi:.2}"),
            )
        };
        println!(
            "{:<9} {:>10.3} {:>14} {:>8.1} {:>10} {:>8} {:>12}",
            p.name,
            mine,
            steps,
            mine * 1e9 / steps.max(1) as f64,
            gs,
            ratio,
            range
        );
    }
    if !has_guile {
        println!("guile: not installed (apt-get install guile-3.0), no comparison");
    }
}

/// Runs a program in a fresh interpreter: its CPU seconds, what it printed and its steps.
fn ttdl_run(p: &Program, program: &str) -> (f64, String, u64) {
    // A budget far above what any of these needs: the benchmark measures speed, not limits.
    // The merge sort's merge nests 20,000 calls deep (`--max-depth 100000` through the CLI).
    let limits = Limits {
        steps: u64::MAX / 2,
        depth: 100_000,
        ..Limits::default()
    };
    let mut interp = Interpreter::new(limits);
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let result = interp.eval_source(&format!("{}.ttdl", p.name), program);
    let wall = t0.elapsed().as_secs_f64();
    // CPU time, as Guile's `get-internal-run-time` measures it: on a shared machine the wall
    // clock says more about the neighbours than about the interpreter.
    let secs = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    if let Err(d) = &result {
        eprintln!("{}", interp.render(d, false));
        std::process::exit(1);
    }
    let steps = interp.machine().steps;
    (secs, interp.take_output(), steps)
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs a Scheme file with `guile` `times` times and returns what the last run printed and its
/// own time.
fn guile_run(path: &std::path::Path, times: usize) -> Option<(String, f64)> {
    if !path.exists() {
        return None;
    }
    let mut last = None;
    for _ in 0..times {
        let out = std::process::Command::new("guile")
            .arg("--auto-compile")
            .arg(path)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let mut lines = text.lines();
        let value = lines.next().map(str::to_string);
        let secs = lines.next().and_then(|l| l.trim().parse::<f64>().ok());
        last = value.zip(secs);
    }
    last
}

/// CPU seconds (user + system) of this process so far, to the microsecond (`getrusage`).
fn cpu_seconds() -> Option<f64> {
    // SAFETY: `getrusage` fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(secs(u.ru_utime) + secs(u.ru_stime))
}
