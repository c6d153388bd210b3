//! The plan against the dynamic models on a program whose greedy order collides: a
//! nearest-neighbour exchange where every node sends to its four neighbours and then reads
//! from them (Chittor's AA-4NN, `examples/pr-channel.ttdl` made small). Every port is busy for
//! the whole run, so only an order in which each round is a permutation reaches the bound;
//! compiled communication finds one, the plan's own priorities did not (144 cycles against
//! compiled 131), and following the compiled run's sends the plan reaches its lower bound.

use crate::support::ttdl;

const EXCHANGE: &str = "
(define-comm send-then-receive (self peers n msg)
  (iterate (sequence (dolist (p peers) (write-stream msg p))
                     (dolist (p peers) (read-stream msg p)))
           n))
(defvar net (make-network :topology mesh :dims (list 4 4)))
(dolist (tk (network-tasks net))
  (send-then-receive tk (grid-neighbors net tk) 2 16))
(target net :mapping identity)
";

fn program(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ttdl-follow-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("exchange.ttdl");
    std::fs::write(&file, EXCHANGE).expect("write the program");
    file.to_string_lossy().into_owned()
}

fn number_after(text: &str, key: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no `{key}` line in\n{text}"));
    line[key.len()..]
        .split_whitespace()
        .find_map(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in `{line}`"))
}

#[test]
fn a_run_that_beats_the_plan_orders_it() {
    let file = program("run");
    let (code, out, err) = ttdl(&["run", &file]);
    assert_eq!(code, 0, "{err}");
    let makespan = number_after(&out, "makespan:");
    let bound = number_after(&out, "lower bound:");
    assert_eq!(makespan, bound, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("order:") && l.contains(" run (done at cycle ")),
        "{out}"
    );
    assert!(out.contains("every message delivered as planned"), "{out}");
}

#[test]
fn the_plan_is_the_best_row_of_compare() {
    let file = program("compare");
    let (code, out, err) = ttdl(&[
        "compare",
        &file,
        "--models",
        "scheduled,wormhole,circuit,store-forward,compiled,warp",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<(String, u64)> = out
        .lines()
        .skip(2)
        .filter_map(|l| {
            let (model, rest) = l.split_once("  ")?;
            let c = rest.split_whitespace().next()?.parse().ok()?;
            Some((model.trim().to_string(), c))
        })
        .collect();
    assert_eq!(rows.len(), 6, "{out}");
    let plan = rows
        .iter()
        .find(|(m, _)| m.starts_with("scheduled"))
        .map(|r| r.1)
        .expect("a scheduled row");
    for (m, c) in &rows {
        assert!(
            plan <= *c,
            "{m} finishes at {c}, before the plan's {plan}:\n{out}"
        );
    }
}

#[test]
fn simulate_reports_what_the_switches_held() {
    let (code, out, err) = ttdl(&[
        "simulate",
        "examples/jacobi-2d.ttdl",
        "--model",
        "scheduled",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("buffers      at most 0 word(s) waiting at one switch input"),
        "{out}"
    );
    let (code, out, err) = ttdl(&[
        "simulate",
        "examples/jacobi-2d.ttdl",
        "--model",
        "scheduled buffer=unbounded",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["simulation"]["buffered_max"].is_u64(), "{out}");
    // A dynamic model keeps its buffers by its own rules and reports none.
    let (code, out, err) = ttdl(&[
        "simulate",
        "examples/jacobi-2d.ttdl",
        "--model",
        "wormhole",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["simulation"].get("buffered_max").is_none(), "{out}");
}
