//! The benchmark core graphs of the standard library (`stdlib/src/ttdl/benchmarks.ttdl`: VOPD,
//! the MPEG-4 decoder, MWD, PIP) planned end to end through `ttdl run`: each example's period,
//! makespan and lower-bound lines against a golden copy (`UPDATE_EXPECT=1 cargo test --test all
//! benchmarks::` refreshes them), and the makespan never under the bound. One test per graph, so
//! each stays within a few seconds in a debug build and they run in parallel.

use std::process::Command;

use expect_test::expect_file;

/// `ttdl run examples/NAME.ttdl`, its summary lines that say how good the plan is, and the
/// makespan checked against the lower bound.
fn plan(name: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ttdl"))
        .args(["run", &format!("examples/{name}.ttdl")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the ttdl binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |key: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{name}: no `{key}` line in\n{stdout}"))
            .to_string()
    };
    let cycles = |l: &str| -> u64 {
        l.split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no number in `{l}`"))
    };
    let (makespan, bound) = (line("makespan:"), line("lower bound:"));
    assert!(
        cycles(&makespan) >= cycles(&bound),
        "{name}: {makespan} is under its {bound}"
    );
    [
        line("tasks:"),
        line("messages:"),
        line("period:"),
        makespan,
        bound,
        line("deadlines:"),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn vopd() {
    expect_file!["run_golden/vopd.txt"].assert_eq(&plan("vopd"));
}

#[test]
fn mpeg4_decoder() {
    expect_file!["run_golden/mpeg4-decoder.txt"].assert_eq(&plan("mpeg4-decoder"));
}

#[test]
fn mwd() {
    expect_file!["run_golden/mwd.txt"].assert_eq(&plan("mwd"));
}

#[test]
fn pip() {
    expect_file!["run_golden/pip.txt"].assert_eq(&plan("pip"));
}
