//! Periodic schedules and folded iterations (SPEC §2): a long repeating program is evaluated
//! once per distinct iteration, scheduled on a sample, and its kernel repeated; the figures are
//! the whole program's and never under their bounds. Also: what must not fold does not.

use crate::support::ttdl;
use std::path::PathBuf;

fn program(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ttdl-periodic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write program");
    path
}

fn fft(n: u64) -> PathBuf {
    program(
        &format!("fft{n}.ttdl"),
        &format!(
            "(define tasks (make-tasks \"t\" 16))\n(pipelined-fft tasks {n})\n\
             (target (make-network :topology mesh :dims (list 4 4)))\n"
        ),
    )
}

/// The value after `key:` (or `key `) on the line that starts with it.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(key))
        .map(|l| l[key.len()..].trim_start_matches(':').trim())
        .unwrap_or_else(|| panic!("no `{key}` in\n{text}"))
}

fn leading_number(s: &str) -> u64 {
    s.split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number at the start of `{s}`"))
}

/// Minsky §5.2: the FFT invoked a million times runs at period 12. The program is folded (four
/// iterations evaluated), its schedule made on a sample and repeated, its figures the whole
/// program's: makespan 12 × 10⁶ + 60, its bound the compute of one task over every iteration.
#[test]
fn a_million_fft_iterations_fold_and_repeat_a_kernel_of_period_12() {
    let path = fft(1_000_000);
    let p = path.to_str().unwrap();
    let (code, check, err) = ttdl(&["check", p]);
    assert_eq!(code, 0, "{err}");
    assert!(
        field(&check, "folded").contains("runs 1000000 times"),
        "{check}"
    );
    assert_eq!(field(&check, "messages"), "20000000 (96000000 words)");
    assert_eq!(leading_number(field(&check, "critical path")), 12_000_060);
    let (code, run, err) = ttdl(&["run", p]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(field(&run, "messages"), "20000000 (96000000 words)");
    assert!(
        field(&run, "period").starts_with("12 cycles over 1000000 iterations"),
        "{run}"
    );
    let makespan = leading_number(field(&run, "makespan"));
    let bound = leading_number(field(&run, "lower bound"));
    assert_eq!(makespan, 12_000_060, "{run}");
    assert!(
        bound <= makespan && bound * 100_000 >= makespan * 99_999,
        "{run}"
    );
    assert!(field(&run, "periodic").contains("every 12 cycles"), "{run}");
    assert_eq!(field(&run, "deadlines"), "all met");
}

/// Below the row limit the periodic plan is written out whole, verified and replayed whole:
/// the same figures as the unfolded program planned the ordinary way would have — here the
/// bound, which nothing beats.
#[test]
fn a_periodic_plan_of_a_few_hundred_iterations_is_the_whole_program() {
    for n in [64, 100, 301] {
        let path = fft(n);
        let (code, run, err) = ttdl(&["run", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(leading_number(field(&run, "messages")), 20 * n);
        let makespan = leading_number(field(&run, "makespan"));
        assert_eq!(makespan, 12 * n + 60, "{run}");
        assert_eq!(
            leading_number(field(&run, "lower bound")),
            makespan,
            "{run}"
        );
        assert!(field(&run, "periodic").contains("whole program"), "{run}");
        assert!(
            field(&run, "replay")
                .starts_with("every message delivered as planned; program done at cycle"),
            "{run}"
        );
    }
}

/// An `iterate` whose body changes state (`set!`) is evaluated every time, so iterations that
/// differ late (the sizes change after 70) are counted right; a reader that folds beside a
/// writer that cannot is evaluated again unfolded.
#[test]
fn iterations_that_change_state_are_not_folded() {
    let path = program(
        "impure.ttdl",
        "(defvar *n* 0)
(define-comm grow (me next)
  (iterate (sequence (set! *n* (+ *n* 1)) (write-stream (if (> *n* 70) 9 3) next)) 80))
(deftask a b)
(grow a b)
(with-task b (iterate (read-stream 3 a) 70) (iterate (read-stream 9 a) 10))
",
    );
    let (code, check, err) = ttdl(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!check.contains("folded"), "{check}");
    assert_eq!(field(&check, "messages"), "80 (300 words)");
    let (code, run, err) = ttdl(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(field(&run, "messages"), "80 (300 words)");
}

/// SPEC §4 for a periodic plan too long to write out: the JSON lists the sample's rows with the
/// `periodic` form, its metrics are the whole program's, and it plans back to the same figures;
/// the switch programs are the kernel plus a loop count.
#[test]
fn a_long_periodic_plan_writes_its_kernel_and_loops() {
    let path = fft(1_000_000);
    let dir = std::env::temp_dir().join(format!("ttdl-periodic-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, json, err) = ttdl(&["run", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let p = &doc["periodic"];
    assert_eq!(p["period"], 12);
    assert_eq!(p["iterations"], 1_000_000);
    assert_eq!(p["whole"], false);
    assert_eq!(
        p["kernel_end"].as_u64(),
        p["kernel_start"].as_u64().map(|s| s + 12)
    );
    let rows = doc["schedule"].as_array().expect("rows").len();
    assert!(rows < 10_000, "{rows} rows");
    assert_eq!(doc["metrics"]["makespan"], 12_000_060);
    let plan = dir.with_extension("json");
    std::fs::write(&plan, &json).unwrap();
    let (code, again, err) = ttdl(&["run", plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        leading_number(field(&again, "makespan")),
        12_000_060,
        "{again}"
    );
    let (code, _, err) = ttdl(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let switch = std::fs::read_to_string(dir.join("fft1000000.switch")).unwrap();
    assert!(switch.contains("#Instruction# LOOP Count: "), "{switch}");
    assert!(switch.lines().count() < 5_000);
    // Every node's loop runs as many times as the kernel repeats, give or take the few
    // repetitions its prologue and epilogue hold.
    for line in switch.lines().filter(|l| l.contains("LOOP Count:")) {
        let count = leading_number(line.split("Count: ").nth(1).unwrap());
        assert!((999_970..1_000_000).contains(&count), "{line}");
    }
}

/// `--unfold` evaluates every iteration; the figures `check` shows are the folded program's.
#[test]
fn unfolding_changes_no_figure_of_check() {
    let path = fft(300);
    let p = path.to_str().unwrap();
    let (code, folded, err) = ttdl(&["check", p]);
    assert_eq!(code, 0, "{err}");
    let (code, unfolded, err) = ttdl(&["check", p, "--unfold"]);
    assert_eq!(code, 0, "{err}");
    assert!(folded.contains("folded"), "{folded}");
    assert!(!unfolded.contains("folded"), "{unfolded}");
    for key in ["messages", "critical path"] {
        assert_eq!(field(&folded, key), field(&unfolded, key), "{key}");
    }
    assert_eq!(
        leading_number(field(&folded, "critical path")),
        12 * 300 + 60
    );
}

/// A Traffic document may say how often its iterations repeat: fewer than it records is an
/// error, not a panic; a count too small to sample is timed whole.
#[test]
fn a_documents_repeat_count_is_checked_and_small_counts_are_timed_whole() {
    let path = fft(10);
    let (code, plan, err) = ttdl(&["run", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let mut program =
        serde_json::from_str::<serde_json::Value>(&plan).expect("json")["program"].clone();
    let write = |program: &serde_json::Value, name: &str| {
        let p = path.with_file_name(name);
        std::fs::write(&p, program.to_string()).expect("write");
        p
    };
    program["repeat"] = 3.into();
    let p = write(&program, "repeat3.json");
    let (code, _, err) = ttdl(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("`repeat` is 3, but the program records 10 iterations"),
        "{err}"
    );
    program["repeat"] = 11.into();
    let p = write(&program, "repeat11.json");
    let (code, out, err) = ttdl(&["check", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(leading_number(field(&out, "critical path")), 12 * 11 + 60);
}
