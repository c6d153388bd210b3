//! Every program in `examples/` through the `ttdl` binary, compared with its golden outputs
//! (`UPDATE_EXPECT=1 cargo test --test all examples::` refreshes them): the `check` summary of each, and
//! the task graph of the small ones. The figures the thesis prints are asserted on their own.

use std::path::Path;
use std::process::Command;

use crate::support::ttdl;
use expect_test::expect_file;

fn examples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("examples/ exists")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".ttdl").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn every_example_checks() {
    let names = examples();
    assert!(names.len() >= 6, "{names:?}");
    for name in names {
        let file = format!("examples/{name}.ttdl");
        let (code, out, err) = ttdl(&["check", &file]);
        assert_eq!(code, 0, "{file}: {err}");
        expect_file![format!("../examples/{name}.check.txt")].assert_eq(&out);
    }
}

#[test]
fn small_examples_dag() {
    for name in ["reader-writer", "fft"] {
        let file = format!("examples/{name}.ttdl");
        let (code, out, err) = ttdl(&["dag", &file, "--format", "dot"]);
        assert_eq!(code, 0, "{file}: {err}");
        expect_file![format!("../examples/{name}.dag.dot")].assert_eq(&out);
    }
    let (code, out, _) = ttdl(&["dag", "examples/reader-writer.ttdl", "--format", "json"]);
    assert_eq!(code, 0);
    expect_file!["../examples/reader-writer.dag.json"].assert_eq(&out);
}

/// The tasks file `ttdl check --out` writes for the FFT (Minsky Fig 5-5's layout).
#[test]
fn fft_tasks_file() {
    let dir = std::env::temp_dir().join(format!("ttdl-examples-{}", std::process::id()));
    let out = dir.to_string_lossy().into_owned();
    let (code, _, err) = ttdl(&["check", "examples/fft.ttdl", "--out", &out]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(dir.join("fft.tasks")).expect("fft.tasks written");
    let _ = std::fs::remove_dir_all(&dir);
    expect_file!["../examples/fft.tasks"].assert_eq(&text);
}

/// Minsky §5.2: 16 tasks, the twenty messages of Fig 5-10, a period of 12.
#[test]
fn fft_matches_the_thesis() {
    let (_, out, _) = ttdl(&["check", "examples/fft.ttdl", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(doc["tasks"].as_array().map(Vec::len), Some(16));
    assert_eq!(doc["messages"].as_array().map(Vec::len), Some(20));
    assert_eq!(doc["metrics"]["period"]["lower_bound"], 12);
}

/// Minsky §5.1.2: sixty-four 8-word messages per iteration on the 4x4 torus.
#[test]
fn jacobi_2d_matches_the_thesis() {
    let (_, out, _) = ttdl(&["check", "examples/jacobi-2d.ttdl", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(doc["tasks"].as_array().map(Vec::len), Some(16));
    let msgs = doc["messages"].as_array().expect("messages");
    let first: Vec<_> = msgs.iter().filter(|m| m["iteration"] == 0).collect();
    assert_eq!(first.len(), 64);
    assert!(first.iter().all(|m| m["size"] == 8));
    // The torus->mesh mapping puts every task on its own node of the 4x4 mesh.
    let mut nodes: Vec<String> = doc["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["mapped"].to_string())
        .collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 16);
}

#[test]
fn output_is_deterministic() {
    let a = ttdl(&["dag", "examples/jacobi-2d.ttdl", "--format", "json"]);
    let b = ttdl(&["dag", "examples/jacobi-2d.ttdl", "--format", "json"]);
    assert_eq!(a, b);
}

#[test]
fn usage_errors() {
    let (code, _, err) = ttdl(&["check"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = ttdl(&["check", "examples/no-such-file.ttdl"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no-such-file.ttdl"), "{err}");
}

/// Graphviz renders every example's task graph, and the task-level graph of a program too big
/// to draw subtask by subtask, each within 30 seconds. `.ci/run` installs Graphviz; elsewhere
/// the test is skipped without it unless `TTDL_REQUIRE_DOT` is set.
#[test]
fn graphviz_renders_every_dag() {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    if Command::new("dot").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("TTDL_REQUIRE_DOT").is_none(),
            "Graphviz `dot` is not installed (apt-get install graphviz)"
        );
        eprintln!("skipped: Graphviz `dot` is not installed");
        return;
    }
    let big = std::env::temp_dir().join(format!("ttdl-dot-{}.ttdl", std::process::id()));
    std::fs::write(
        &big,
        "(define net (make-network :topology 'torus :dims (list 4 4 4)))
         (define-comm exch (self)
           (iterate
             (dolist (d (list 'east 'west 'north 'south 'up 'down)) (write-stream 6 (neighbor net self d)))
             (dolist (d (list 'west 'east 'south 'north 'down 'up)) (read-stream 6 (neighbor net self d)))
             (compute 20) 3))
         (dolist (t (network-tasks net)) (exch t))",
    )
    .unwrap();
    let mut files: Vec<String> = examples()
        .into_iter()
        .map(|n| format!("examples/{n}.ttdl"))
        .collect();
    files.push(big.display().to_string());
    for file in files {
        let (code, dot, err) = ttdl(&["dag", &file]);
        assert_eq!(code, 0, "{file}: {err}");
        let mut child = Command::new("dot")
            .args(["-Tsvg", "-o", "/dev/null"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dot starts");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(dot.as_bytes())
            .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("{file}: dot did not finish in 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        use std::io::Read;
        let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
        assert!(status.success(), "{file}: dot failed: {stderr}");
    }
    let _ = std::fs::remove_file(&big);
}
