//! `ttdl run` end to end through the binary: every example's summary against its golden copy
//! (`UPDATE_EXPECT=1 cargo test --test all run_cli::` refreshes them), the JSON contract of SPEC §4,
//! the artifacts of `--out`, tasks files as input, and the pipelined FFT at period 12 (Minsky
//! §5.2).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::ttdl;
use expect_test::expect_file;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ttdl-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn examples_run_as_golden() {
    for name in [
        "jacobi-2d",
        "jacobi-3d",
        "fft",
        "fft-pipelined",
        "reader-writer",
        "viterbi",
    ] {
        let file = format!("examples/{name}.ttdl");
        let (code, out, err) = ttdl(&["run", &file]);
        assert_eq!(code, 0, "{name}: {err}");
        expect_file![format!("run_golden/{name}.txt")].assert_eq(&out);
    }
}

/// What a script prints goes to stderr under `--format json`, so stdout stays one document, for
/// `check` as for `run`.
#[test]
fn json_leaves_what_the_script_prints_to_stderr() {
    let dir = scratch("printing");
    let file = dir.join("printing.ttdl");
    std::fs::write(
        &file,
        "(println \"hello from the script\")\n\
         (defvar *net* (make-network :topology mesh :dims (list 2 1)))\n\
         (defvar *a* (nth 0 (network-tasks *net*)))\n\
         (defvar *b* (nth 1 (network-tasks *net*)))\n\
         (with-task *a* (write-stream 4 *b*))\n\
         (with-task *b* (read-stream 4 *a*))\n\
         (target *net* :mapping identity)\n",
    )
    .expect("write");
    let file = file.to_string_lossy().to_string();
    for command in ["check", "run"] {
        let (code, out, err) = ttdl(&[command, &file, "--format", "json"]);
        assert_eq!(code, 0, "{command}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
        assert_eq!(v["version"], 1, "{command}");
        assert!(err.contains("hello from the script"), "{command}: {err}");
    }
    let (code, out, _) = ttdl(&["check", &file]);
    assert_eq!(code, 0);
    assert!(out.starts_with("hello from the script\n"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_follows_the_contract() {
    let (code, out, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(v["version"], 1);
    assert_eq!(v["network"]["topology"], "mesh");
    assert_eq!(v["network"]["dims"], serde_json::json!([4, 4]));
    assert_eq!(v["network"]["nodes"], 16);
    assert_eq!(v["network"]["links"].as_array().map(Vec::len), Some(48));
    let tasks = v["tasks"].as_array().expect("tasks");
    assert!(tasks
        .iter()
        .all(|t| t["id"].is_u64() && t["name"].is_string() && t["node"].is_u64()));
    let msgs = v["messages"].as_array().expect("messages");
    for m in msgs {
        for key in ["id", "src", "dst", "size", "release", "deadline", "phase"] {
            assert!(m[key].is_u64(), "{key} in {m}");
        }
        let route = m["route"].as_array().expect("route");
        assert!(!route.is_empty());
    }
    let rows = v["schedule"].as_array().expect("schedule");
    let kinds = |k: &str| rows.iter().filter(|r| r["link"][0] == k).count();
    assert_eq!(kinds("inject"), msgs.len());
    assert_eq!(kinds("eject"), msgs.len());
    assert!(rows.iter().all(|r| r["start"].as_u64() < r["end"].as_u64()));
    let metrics = &v["metrics"];
    for key in ["makespan", "critical_path", "lower_bound"] {
        assert!(metrics[key].is_u64(), "{key}");
    }
    assert!(metrics["peak_utilization"].is_f64());
    assert_eq!(metrics["deadlines_met"], true);
    assert_eq!(metrics["relaxed"], serde_json::json!([]));
    // Deterministic: byte-identical on a second run.
    let (_, again, _) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--format", "json"]);
    assert_eq!(out, again);
}

#[test]
fn out_writes_artifacts_and_guards_foreign_files() {
    let dir = scratch("out");
    let d = dir.to_string_lossy().to_string();
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--out", &d]);
    assert_eq!(code, 0, "{err}");
    for f in [
        "jacobi-2d.tasks",
        "jacobi-2d.switch",
        "jacobi-2d.json",
        "jacobi-2d.txt",
        "jacobi-2d.schedule.svg",
        "jacobi-2d.snapshots.svg",
    ] {
        let p = dir.join(f);
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(!text.is_empty(), "{f} missing or empty");
    }
    let switch = std::fs::read_to_string(dir.join("jacobi-2d.switch")).unwrap_or_default();
    assert!(switch.starts_with("[Schedule for node: 0]\n#Instruction# WAIT-FOR-VALID-BIT\n"));
    assert!(switch.contains("#Instruction# SWITCH Msg:"));
    // Our own files are replaced on a second run.
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--out", &d]);
    assert_eq!(code, 0, "{err}");
    // The tasks file runs on its own (the backend without the language).
    let tasks = dir.join("jacobi-2d.tasks");
    let (code, out, err) = ttdl(&["run", &tasks.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("deadlines:"), "{out}");
    // A user's file is never overwritten silently.
    let other = scratch("foreign");
    std::fs::write(other.join("jacobi-2d.json"), "mine").expect("write");
    let o = other.to_string_lossy().to_string();
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--out", &o]);
    assert_eq!(code, 1);
    assert!(err.contains("refusing to overwrite"), "{err}");
    assert_eq!(
        std::fs::read_to_string(other.join("jacobi-2d.json")).unwrap_or_default(),
        "mine"
    );
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(other);
}

/// `--out` writes the plan's long lists as CSV tables: one row per row of the JSON document, in
/// its order, under its field names.
#[test]
fn out_writes_one_csv_row_per_json_row() {
    let dir = scratch("out-csv");
    let d = dir.to_string_lossy().to_string();
    let (code, _, err) = ttdl(&["run", "examples/all-to-all-4x4.ttdl", "--out", &d]);
    assert_eq!(code, 0, "{err}");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let doc: serde_json::Value =
        serde_json::from_str(&read("all-to-all-4x4.json")).expect("the document parses");
    let rows = |v: &serde_json::Value| v.as_array().map_or(0, Vec::len);
    let cases = [
        ("schedule.csv", "msg,link,start,end", rows(&doc["schedule"])),
        (
            "messages.csv",
            "id,src,dst,size,release,deadline,phase,iteration,route,effective_deadline,sent,arrival",
            rows(&doc["messages"]),
        ),
        ("links.csv", "from,to", rows(&doc["network"]["links"])),
    ];
    for (file, header, n) in cases {
        let text = read(file);
        assert_eq!(text.lines().next(), Some(header), "{file}");
        assert!(n > 0, "{file}: the document lists rows");
        assert_eq!(text.lines().count(), n + 1, "{file}");
    }
    // The first schedule row is the document's.
    let h = &doc["schedule"][0];
    let link = match (h["link"][0].as_str(), &h["link"][1]) {
        (Some(port), n) => format!("{port}@{n}"),
        (None, to) => format!("{}->{to}", h["link"][0]),
    };
    let want = format!("{},{link},{},{}", h["msg"], h["start"], h["end"]);
    assert_eq!(read("schedule.csv").lines().nth(1), Some(want.as_str()));
    let m = &doc["messages"][0];
    let route: Vec<String> = m["route"]
        .as_array()
        .map(|r| r.iter().map(|n| n.to_string()).collect())
        .unwrap_or_default();
    let want = format!(
        "{},{},{},{},{},{},{},{},{},{},{},{}",
        m["id"],
        m["src"],
        m["dst"],
        m["size"],
        m["release"],
        m["deadline"],
        m["phase"],
        m["iteration"],
        route.join(" "),
        m["effective_deadline"],
        m["sent"],
        m["arrival"]
    );
    assert_eq!(read("messages.csv").lines().nth(1), Some(want.as_str()));
    let _ = std::fs::remove_dir_all(dir);
}

/// `--html FILE` replaces a page TTDL wrote, keeps any other file unless `--force`, and says
/// why (SPEC §3: no command overwrites a file it did not write).
#[test]
fn html_keeps_a_file_ttdl_did_not_write() {
    let dir = scratch("html-force");
    let page = dir.join("report.html");
    let p = page.to_string_lossy().to_string();
    std::fs::write(&page, "my notes").expect("write");
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--html", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("refusing to overwrite") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&page).unwrap_or_default(),
        "my notes"
    );
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--html", &p, "--force"]);
    assert_eq!(code, 0, "{err}");
    // Now the page is TTDL's: another run replaces it without --force.
    let (code, _, err) = ttdl(&[
        "compare",
        "examples/jacobi-2d.ttdl",
        "--models",
        "wormhole",
        "--html",
        &p,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&page)
        .unwrap_or_default()
        .contains("<meta name=\"generator\" content=\"TTDL\">"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--schedule", "magic"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`schedule` takes one of lp, exact, milp, best"),
        "{err}"
    );
    let (code, _, _) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--network", "blob:3"]);
    assert_eq!(code, 2);
}

/// A writer far ahead of its reader (it reads nothing, its messages are all released at once)
/// builds a backlog that grows with the count. Nothing may grow with its square: `best` plans it
/// close to its bound, the LP scheduler refuses it with a reason instead of solving for hours,
/// and `check` times it unrolled rather than extrapolate samples that never settle.
#[test]
fn a_writer_far_ahead_of_its_reader_is_planned_and_refused_plainly() {
    let dir = scratch("backlog");
    let file = dir.join("backlog.ttdl");
    std::fs::write(
        &file,
        "(deftask t0 t1 t2)\n\
         (define-comm a0 (self) (iterate (write-stream 2 t2) (compute 11) 2000))\n(a0 t0)\n\
         (define-comm a1 (self) (iterate (write-stream 4 t2) 2000))\n(a1 t1)\n\
         (define-comm a2 (self) (iterate (compute 10) (read-stream 2 t0) (read-stream 4 t1) 2000))\n\
         (a2 t2)\n",
    )
    .expect("write");
    let f = file.to_string_lossy();
    let (code, out, err) = ttdl(&["run", &f]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("makespan:         22000 cycles"), "{out}");
    assert!(out.contains("lower bound:      22000 cycles"), "{out}");
    let (code, _, err) = ttdl(&["run", &f, "--schedule", "lp"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("use --schedule exact or best"), "{err}");
    let (_, folded, _) = ttdl(&["check", &f]);
    let (_, unfolded, _) = ttdl(&["check", &f, "--unfold"]);
    let cp = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("critical path"))
            .map(str::to_string)
    };
    assert_eq!(cp(&folded), cp(&unfolded));
    assert!(folded.contains("folded"), "{folded}");
}

#[test]
fn pipelined_fft_runs_at_period_12() {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fft.ttdl"))
            .expect("fft example");
    assert!(src.contains("(defvar n 1)"));
    let dir = scratch("fft");
    let file = dir.join("fft16.ttdl");
    std::fs::write(&file, src.replace("(defvar n 1)", "(defvar n 16)")).expect("write");
    for method in ["exact", "best"] {
        let (code, out, err) = ttdl(&["run", &file.to_string_lossy(), "--schedule", method]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("period:           12 cycles over 16 iterations (lower bound 12: compute"),
            "{method}: {out}"
        );
    }
    // The LP, solved level by level, keeps within two cycles of it on this placement.
    let (code, out, err) = ttdl(&["run", &file.to_string_lossy(), "--schedule", "lp"]);
    assert_eq!(code, 0, "{err}");
    let period: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("period:"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    assert!((12..=14).contains(&period), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn thesis_tasks_file_runs_on_fixed_windows() {
    // Fig 5-5's layout (the thesis elides most lines; the counts here match what is listed):
    // messages with fixed release/deadline windows and no programs.
    for method in ["exact", "lp"] {
        let (code, out, err) = ttdl(&[
            "run",
            "tests/run_golden/fig-5-5.tasks",
            "--schedule",
            method,
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("messages:         3 (12 words)"), "{out}");
        assert!(out.contains("deadlines:        all met"), "{out}");
    }
}

#[test]
fn small_plan_json_golden() {
    let (code, out, err) = ttdl(&[
        "run",
        "tests/run_golden/fig-5-5.tasks",
        "--schedule",
        "exact",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    expect_file!["run_golden/fig-5-5.json"].assert_eq(&out);
}

/// Minsky §5.2: routed for throughput (deadlines relaxed to the period of 12), the FFT's link
/// windows are no longer over-full; without relaxation its zero-slack windows make lu_j 2.
#[test]
fn throughput_routing_relaxes_windows_to_the_period() {
    let peak = |out: &str| -> f64 {
        let line = out
            .lines()
            .find(|l| l.starts_with("contention:"))
            .expect("contention line");
        let v = line
            .split("peak ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .expect("peak value");
        v.parse().expect("a number")
    };
    let (code, plain, err) = ttdl(&[
        "run",
        "examples/fft.ttdl",
        "--route",
        "reroute",
        "--timing",
        "thesis",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(peak(&plain) > 1.0, "{plain}");
    let (code, relaxed, err) = ttdl(&[
        "run",
        "examples/fft.ttdl",
        "--route",
        "reroute",
        "--timing",
        "thesis",
        "--throughput",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(peak(&relaxed) <= 1.0, "{relaxed}");
    assert!(relaxed.contains("throughput:"), "{relaxed}");

    let dir = scratch("throughput");
    let file = dir.join("once.ttdl");
    std::fs::write(
        &file,
        "(deftask a b)\n(define-comm w (s p) (write-stream 4 p))\n(define-comm r (s p) (read-stream 4 p))\n(w a b)\n(r b a)\n",
    )
    .expect("write scratch program");
    let (code, _, err) = ttdl(&["run", file.to_str().expect("utf-8 path"), "--throughput"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("iterate"), "{err}");
}

/// The embedding API plans exactly what `ttdl run` plans: the same JSON, byte for byte
/// (what `examples/embed.rs` prints).
#[test]
fn the_session_plans_what_run_prints() {
    let mut s = ttdl::session::Session::new().expect("stdlib");
    s.load_file(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jacobi-2d.ttdl"))
        .expect("the example evaluates");
    let plan = s
        .plan(&ttdl_backend::pipeline::Settings::default())
        .expect("it plans");
    let (code, cli, _) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--format", "json"]);
    assert_eq!(code, 0);
    assert_eq!(plan.to_json().expect("json"), cli);
}

fn makespan(summary: &str) -> String {
    summary
        .lines()
        .find(|l| l.starts_with("makespan:"))
        .unwrap_or_default()
        .to_string()
}

/// The JSON `run` writes is read back by `run`, `simulate` and `compare`, and planned the way
/// it was planned (placement, scheduler and settings included).
#[test]
fn plan_json_round_trips() {
    let dir = scratch("roundtrip");
    let json = dir.join("p.json");
    let flags = ["--place", "anneal", "--schedule", "exact", "--seed", "7"];
    let mut args = vec!["run", "examples/jacobi-2d.ttdl"];
    args.extend(flags);
    let (code, text, _) = ttdl(&args);
    assert_eq!(code, 0);
    args.extend(["--format", "json"]);
    let (code, doc, _) = ttdl(&args);
    assert_eq!(code, 0);
    std::fs::write(&json, doc).unwrap();
    let path = json.to_str().unwrap();
    let (code, again, err) = ttdl(&["run", path]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(makespan(&again), makespan(&text));
    assert!(again.contains("exact scheduler"), "{again}");
    let placement = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("placement cost:"))
            .map(str::to_string)
    };
    assert_eq!(placement(&again), placement(&text));
    let (code, sim, err) = ttdl(&["simulate", path, "--model", "wormhole"]);
    assert_eq!(code, 0, "{err}");
    assert!(sim.contains("completion"), "{sim}");
    let (code, table, err) = ttdl(&["compare", path, "--models", "scheduled"]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("scheduled exact"), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every command reads a tasks file (Minsky Fig 5-5).
#[test]
fn every_command_reads_a_tasks_file() {
    for args in [
        vec!["check", "examples/fft.tasks"],
        vec!["dag", "examples/fft.tasks"],
        vec!["run", "examples/fft.tasks"],
        vec!["simulate", "examples/fft.tasks", "--model", "circuit"],
        vec![
            "compare",
            "examples/fft.tasks",
            "--models",
            "scheduled,wormhole",
        ],
    ] {
        let (code, out, err) = ttdl(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(!out.is_empty(), "{args:?}");
    }
}

/// Values out of range are usage errors (exit 2) before any work.
#[test]
fn out_of_range_values_are_usage_errors() {
    for args in [
        vec!["run", "examples/fft.ttdl", "--ports", "0"],
        vec!["run", "examples/fft.ttdl", "--latency", "70000"],
        vec!["dag", "examples/fft.ttdl", "--format", "text"],
        vec!["check", "examples/fft.ttdl", "--route", "dor"],
        vec![
            "simulate",
            "examples/fft.ttdl",
            "--model",
            "wormhole",
            "vc=0",
        ],
    ] {
        let (code, _, err) = ttdl(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
}

/// A program that broadcasts gets the like-for-like pair in `compare`: the plan with its broadcasts
/// sent as unicasts, as the dynamic models send them (SPEC §5), named so and said so under the
/// table; it is never better than the plan that multicasts in the network.
#[test]
fn compare_pairs_a_broadcast_with_its_unicasts() {
    let dir = scratch("unicast");
    let file = dir.join("frames.ttdl");
    std::fs::write(
        &file,
        "(defmessage frame 24)
(defmessage ack 2)
(deftask p c1 c2 c3 c4)
(defvar *cs* (list c1 c2 c3 c4))
(define-comm producer (self)
  (iterate (sequence (apply broadcast frame *cs*) (dolist (c *cs*) (read-stream ack c)) (compute 5)) 3))
(define-comm consumer (self)
  (iterate (sequence (read-stream frame p) (compute 10) (write-stream ack p)) 3))
(producer p)
(dolist (c *cs*) (consumer c))
(target (make-network :topology mesh :dims (list 3 2)))
",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (code, out, err) = ttdl(&["compare", f, "--models", "scheduled,wormhole"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("unicast per reader (the"), "{out}");
    let (code, out, err) = ttdl(&["compare", f, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["compare"]
        .as_array()
        .or_else(|| v["models"].as_array())
        .expect("rows");
    let completion = |name: &str| {
        rows.iter()
            .find(|r| r["model"].as_str().is_some_and(|m| m.starts_with(name)))
            .and_then(|r| r["completion"].as_u64())
            .unwrap_or_else(|| panic!("no `{name}` row in {out}"))
    };
    let (tree, unicast) = (
        completion("scheduled exact"),
        completion("scheduled exact unicast"),
    );
    assert!(unicast >= tree, "tree {tree}, unicast {unicast}");
    let (_, text, _) = ttdl(&["compare", f]);
    assert!(text.contains("scheduled exact unicast"), "{text}");
    assert!(text.contains("like for like"), "{text}");
    // The option is the scheduled model's own, refused elsewhere with its choices.
    let (code, _, err) = ttdl(&["simulate", f, "--model", "scheduled multicast=star"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tree") && err.contains("unicast"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `compare --out DIR` writes the table as CSV and a bar chart.
#[test]
fn compare_writes_csv_and_svg() {
    let dir = scratch("compare-out");
    let (code, _, err) = ttdl(&[
        "compare",
        "examples/jacobi-2d.ttdl",
        "--models",
        "scheduled,wormhole,pms,compiled algorithm=aapc",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let csv = std::fs::read_to_string(dir.join("compare.csv")).unwrap();
    assert_eq!(
        csv.lines().next(),
        Some("model,completion,mean_latency,max_latency,energy_pj,energy_dynamic_pj,energy_static_pj,status")
    );
    assert!(csv.contains("\"scheduled exact\",84,"), "{csv}");
    assert!(
        csv.contains("\"pms K=4 dynamic predictor=timeout=80\",562,"),
        "{csv}"
    );
    assert!(
        csv.contains("\"compiled algorithm=aapc\",,,,,,,cannot run"),
        "{csv}"
    );
    // The energy columns are the JSON's `energy` figures, total = dynamic + static.
    let (code, json, err) = ttdl(&[
        "compare",
        "examples/jacobi-2d.ttdl",
        "--models",
        "scheduled,wormhole,pms,compiled algorithm=aapc",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = doc["compare"].as_array().unwrap();
    for (line, row) in csv.lines().skip(1).zip(rows) {
        let f: Vec<&str> = line.rsplitn(5, ',').collect();
        if row.get("energy").is_none() {
            assert_eq!(f[1..4], ["", "", ""], "{line}");
            continue;
        }
        let num = |s: &str| s.parse::<f64>().unwrap();
        let (total, dynamic, fixed) = (num(f[3]), num(f[2]), num(f[1]));
        let e = &row["energy"];
        assert!(
            (total - e["total_pj"].as_f64().unwrap()).abs() < 0.06,
            "{line}"
        );
        assert!(
            (dynamic - e["dynamic_pj"].as_f64().unwrap()).abs() < 0.06,
            "{line}"
        );
        assert!(
            (fixed - e["static_pj"].as_f64().unwrap()).abs() < 0.06,
            "{line}"
        );
    }
    let svg = std::fs::read_to_string(dir.join("compare.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("scheduled exact"),
        "{svg}"
    );
    // Completion and energy side by side, the bound across the time bars.
    assert!(svg.contains("class=\"bound\""), "{svg}");
    assert!(svg.contains("class=\"energy best\""), "{svg}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Loads `page` in headless Chromium; returns the DOM after the scripts ran and every console
/// message (the page is expected to print none). `None` when Chromium is not installed.
fn chromium_dom(page: &Path, profile: &Path) -> Option<(String, Vec<String>)> {
    let bin = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok())?;
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .output()
        .expect("chromium runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), console))
}

/// The HTML reports of `run`, `compare` and `sweep` load in a real browser without a console
/// error and hold what they promise (`.ci/run` installs Chromium; elsewhere the test is skipped
/// without it unless `TTDL_REQUIRE_CHROMIUM` is set).
#[test]
fn html_reports_load_in_a_browser() {
    let dir = scratch("html");
    let page = |n: &str| dir.join(n);
    let (code, _, err) = ttdl(&[
        "run",
        "examples/jacobi-2d.ttdl",
        "--html",
        page("run.html").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = ttdl(&[
        "compare",
        "examples/fft.ttdl",
        "--html",
        page("compare.html").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = ttdl(&[
        "sweep",
        "--model",
        "wormhole,circuit",
        "--network",
        "mesh:4x4",
        "--steps",
        "3",
        "--measure",
        "1000",
        "--drain",
        "2000",
        "--html",
        page("sweep.html").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // Self-contained: nothing is fetched from anywhere.
    for n in ["run.html", "compare.html", "sweep.html"] {
        let html = std::fs::read_to_string(page(n)).unwrap();
        for link in ["src=\"http", "href=\"http", "https://", "url(http"] {
            assert!(!html.contains(link), "{n} reaches the network: {link}");
        }
    }
    let profile = dir.join("profile");
    let Some((dom, console)) = chromium_dom(&page("run.html"), &profile) else {
        assert!(
            std::env::var_os("TTDL_REQUIRE_CHROMIUM").is_none(),
            "Chromium is not installed (apt-get install chromium)"
        );
        eprintln!("skipped: Chromium is not installed");
        return;
    };
    assert!(console.is_empty(), "run.html: {console:?}");
    let count = |dom: &str, what: &str| dom.matches(what).count();
    // Every message fragment of jacobi-2d's 448 holds is a bar; the other views are drawn.
    assert_eq!(count(&dom, "class=\"hold\""), 448, "the link-by-time chart");
    assert!(count(&dom, "class=\"route\"") > 0, "the network snapshots");
    assert_eq!(count(&dom, "class=\"subtask\""), 32, "the task graph");
    assert_eq!(count(&dom, "class=\"window\""), 128, "the message windows");
    assert!(dom.contains("interval 1 of"), "the snapshot stepper");
    // The colours have a legend: jacobi-2d's 16 tasks all send, so the key is the source task,
    // one swatch each above the chart and above the snapshots.
    assert!(dom.contains("colour: source task"), "the colour key");
    assert_eq!(
        count(&dom, "class=\"legend-item\""),
        32,
        "a swatch per sender"
    );
    // The heat map colours each of the 4x4 mesh's 48 directed links, with a colour bar.
    assert_eq!(count(&dom, "class=\"busy\""), 48, "the utilisation map");
    assert_eq!(count(&dom, "class=\"heat-bar\""), 1, "its colour bar");
    let (dom, console) = chromium_dom(&page("compare.html"), &profile).unwrap();
    assert!(console.is_empty(), "compare.html: {console:?}");
    assert!(
        dom.contains("id=\"compare\"") && dom.contains("scheduled"),
        "{dom}"
    );
    let (dom, console) = chromium_dom(&page("sweep.html"), &profile).unwrap();
    assert!(console.is_empty(), "sweep.html: {console:?}");
    assert_eq!(count(&dom, "class=\"curve\""), 2, "{dom}");
    // 256 nodes: every task label drawn is clear of every other (the labels are thinned or the
    // cells grow until they are), and the page is as readable as the 16-node one.
    let big = dir.join("jacobi-16x16.ttdl");
    let source = std::fs::read_to_string("examples/jacobi-2d-8x8.ttdl")
        .unwrap()
        .replace("(list 8 8)", "(list 16 16)")
        .replace(":n 64 :ndim 2 :nx 8 :ny 8", ":n 256 :ndim 2 :nx 16 :ny 16");
    std::fs::write(&big, source).unwrap();
    let (code, _, err) = ttdl(&[
        "run",
        big.to_str().unwrap(),
        "--html",
        page("run256.html").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (dom, console) = chromium_dom(&page("run256.html"), &profile).unwrap();
    assert!(console.is_empty(), "run256.html: {console:?}");
    let labels = node_labels(&dom);
    assert!(labels.len() >= 64, "{} task labels", labels.len());
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            let apart =
                a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 <= b.1 - b.3 || b.1 <= a.1 - a.3;
            assert!(apart, "task labels overlap: {a:?} and {b:?}");
        }
    }
    assert_eq!(count(&dom, "class=\"busy\""), 960, "16x16 mesh links");
    // Same input, same page, byte for byte.
    let again = dir.join("again.html");
    let (code, _, err) = ttdl(&[
        "run",
        big.to_str().unwrap(),
        "--html",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(page("run256.html")).unwrap(),
        std::fs::read(&again).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The task labels the network view drew, as (x, baseline y, width, height) boxes: the font is
/// monospaced, 0.62 em a character.
fn node_labels(dom: &str) -> Vec<(f64, f64, f64, f64, String)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let key = format!(" {name}=\"");
        tag.find(&key)
            .and_then(|i| tag[i + key.len()..].split('"').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    // The snapshot and the heat map draw the same labels: the first drawing is enough.
    let end = dom.find("id=\"heat\"").unwrap_or(dom.len());
    dom[..end]
        .match_indices("<text ")
        .filter_map(|(i, _)| {
            let rest = &dom[i..];
            let close = rest.find('>')?;
            let tag = &rest[..close];
            if !tag.contains("class=\"node-label\"") {
                return None;
            }
            let text = &rest[close + 1..rest.find("</text>")?];
            let fs = attr(tag, "font-size");
            let w = text.chars().count() as f64 * fs * 0.62;
            Some((attr(tag, "x"), attr(tag, "y"), w, fs, text.to_string()))
        })
        .collect()
}

/// A sweep emitted as a job list, run with plain `bash` and merged, gives the local sweep's
/// table byte for byte; several seeds give a confidence interval.
#[test]
fn emitted_sweep_merges_to_the_local_table() {
    let dir = scratch("sweep-emit");
    let sweep = [
        "sweep",
        "--model",
        "wormhole,circuit",
        "--pattern",
        "uniform,transpose",
        "--network",
        "mesh:3x3",
        "--steps",
        "2",
        "--seeds",
        "2",
        "--measure",
        "500",
        "--drain",
        "1000",
    ];
    let (code, local, err) = ttdl(&sweep);
    assert_eq!(code, 0, "{err}");
    assert_eq!(local.lines().count(), 1 + 2 * 2 * 2, "{local}");
    assert!(local.starts_with(
        "model,pattern,rate,seeds,offered_flits,accepted_flits,mean_latency,latency_ci95,p99,saturated\n"
    ));
    let jobs = dir.join("jobs");
    let mut emit = sweep.to_vec();
    emit.extend(["--emit", "parallel", jobs.to_str().unwrap()]);
    let (code, _, err) = ttdl(&emit);
    assert_eq!(code, 0, "{err}");
    let status = Command::new("bash")
        .arg(jobs.join("jobs.txt"))
        .status()
        .expect("bash runs");
    assert!(status.success());
    let (code, merged, err) = ttdl(&["sweep", "merge", jobs.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged, local);
    // A missing point is reported, not silently left out.
    std::fs::remove_file(jobs.join("points").join("3.csv")).unwrap();
    let (code, _, err) = ttdl(&["sweep", "merge", jobs.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("points 3"), "{err}");
    let mut slurm = sweep.to_vec();
    let cluster = dir.join("slurm");
    slurm.extend(["--emit", "slurm", cluster.to_str().unwrap()]);
    assert_eq!(ttdl(&slurm).0, 0);
    let script = std::fs::read_to_string(cluster.join("sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-15"), "{script}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-` reads the program from standard input, as TTDL source, a tasks file or JSON by its first
/// characters, and gives what the file gives.
#[test]
fn a_dash_reads_standard_input() {
    use std::io::Write;
    let piped = |args: &[&str], input: &[u8]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ttdl"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the ttdl binary runs");
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for file in ["examples/fft.ttdl", "examples/fft.tasks"] {
        let text = std::fs::read(file).unwrap();
        let (code, from_file, err) = ttdl(&["run", file]);
        assert_eq!(code, 0, "{err}");
        let (code, from_stdin, err) = piped(&["run", "-"], &text);
        assert_eq!(code, 0, "{file}: {err}");
        assert_eq!(from_stdin, from_file, "{file}");
    }
    // A plan document (JSON) is planned again the way it was planned, from a file or a pipe.
    let dir = scratch("stdin");
    let (_, plan, _) = ttdl(&["run", "examples/fft.ttdl", "--format", "json"]);
    let document = dir.join("fft.json");
    std::fs::write(&document, &plan).unwrap();
    let (_, from_file, _) = ttdl(&["run", document.to_str().unwrap()]);
    let (code, from_stdin, err) = piped(&["run", "-"], plan.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        from_stdin == from_file,
        "a plan document read from a pipe plans differently"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // A mistake on standard input is located there.
    let (code, _, err) = piped(&["check", "-"], b"(defmessage m 8)\n(write-stream m)\n");
    assert_eq!(code, 1);
    assert!(err.contains("<stdin>:2:"), "{err}");
}

/// A sweep's TOML takes `seeds` as a count, as `--seeds` does, or as a list; job lists emitted to
/// a relative directory name every file absolutely, so they run from anywhere.
#[test]
fn sweep_seeds_and_emitted_paths_agree_with_the_flags() {
    let dir = scratch("sweep-seeds");
    let common = "network = \"mesh:3x3\"\nmodels = [\"wormhole\"]\nrates = [0.02]\nmeasure = 300\ndrain = 600\n";
    let count = dir.join("count.toml");
    let list = dir.join("list.toml");
    std::fs::write(&count, format!("{common}seeds = 2\n")).unwrap();
    std::fs::write(&list, format!("{common}seeds = [1, 2]\n")).unwrap();
    let (code, by_count, err) = ttdl(&["sweep", "--config", count.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, by_list, _) = ttdl(&["sweep", "--config", list.to_str().unwrap()]);
    let (_, by_flags, _) = ttdl(&[
        "sweep",
        "--network",
        "mesh:3x3",
        "--rates",
        "0.02",
        "--seeds",
        "2",
        "--measure",
        "300",
        "--drain",
        "600",
    ]);
    assert_eq!(by_count, by_list);
    assert_eq!(by_count, by_flags);
    assert!(by_count.contains(",2,"), "two seeds: {by_count}");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, format!("{common}seeds = \"two\"\n")).unwrap();
    let (code, _, err) = ttdl(&["sweep", "--config", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("seeds is a count"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_ttdl"))
        .args([
            "sweep",
            "--network",
            "mesh:3x3",
            "--rates",
            "0.02",
            "--emit",
            "parallel",
            "jobs",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jobs = std::fs::read_to_string(dir.join("jobs").join("jobs.txt")).unwrap();
    let absolute = std::fs::canonicalize(&dir).unwrap().join("jobs");
    assert!(
        jobs.contains(&format!("'{}", absolute.join("sweep.toml").display())),
        "{jobs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The optical models run on meshes too (Yuan's `Assign_array` case: routes never use a wrap link):
/// a ring of four tasks on a 2×2 mesh under path reservation and every multi-hop logical topology.
#[test]
fn optical_models_run_on_a_2x2_mesh() {
    let dir = scratch("mesh-2x2");
    let file = dir.join("ring.ttdl");
    std::fs::write(
        &file,
        "(defmessage m 16)
(define-comm pass (me next prev)
  (iterate (sequence (write-stream m next) (read-stream m prev) (compute 5)) 3))
(defvar *ring* (make-network :topology torus :dims (list 4)))
(dolist (t0 (network-tasks *ring*))
  (pass t0 (neighbor *ring* t0 east) (neighbor *ring* t0 west)))
(target (make-network :topology \"2d-mesh\" :nx 2 :ny 2))
",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let mut runs = vec![vec!["simulate", path, "--model", "path-reservation"]];
    for logical in [
        "logical=torus",
        "logical=hypercube",
        "logical=allxy",
        "logical=all-to-all",
    ] {
        runs.push(vec!["simulate", path, "--model", "multi-hop", logical]);
    }
    for args in runs {
        let (code, out, err) = ttdl(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("network      mesh:2x2"), "{args:?}: {out}");
        assert!(
            out.contains("program      4 tasks, 12 messages"),
            "{args:?}: {out}"
        );
        assert!(out.contains("completion"), "{args:?}: {out}");
        assert!(!out.contains("did not finish"), "{args:?}: {out}");
    }
}

/// The 4×4 Jacobi exchange (Minsky Fig 5-2 order, compute 10) with no mapping named: annealed with
/// the fine cost, it schedules in 42 cycles, its critical path, from every seed (the coarse cost
/// alone found layouts of equal word-hops that schedule in 58–66); the default `best` keeps the
/// better of identity and annealing and says so.
#[test]
fn annealed_jacobi_exchange_schedules_at_its_critical_path() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/jacobi-2d.ttdl"),
    )
    .expect("jacobi example");
    let src = src
        .replace(
            "(target *med-2d* :mapping torus->mesh)",
            "(target *med-2d*)",
        )
        .replace("             2))", "             1))");
    let dir = scratch("jacobi-anneal");
    let file = dir.join("jacobi1.ttdl");
    std::fs::write(&file, src).expect("write");
    let f = file.to_string_lossy();
    for seed in ["1", "2", "3"] {
        let (code, out, err) = ttdl(&["run", &f, "--place", "anneal", "--seed", seed]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("makespan:         42 cycles"),
            "seed {seed}: {out}"
        );
        assert!(out.contains("critical path:    42 cycles"), "{out}");
    }
    let (code, out, err) = ttdl(&["run", &f]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "placed by:        identity (makespans, scheduled exact: identity 42, anneal 42;"
        ),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `--buffer` takes a number of words or `unbounded`, reaches the plan JSON's `config` and
/// `metrics`, and a document read back plans with it again; a document written before the
/// setting existed (no `config.buffer`) plans unbounded, as it was planned.
#[test]
fn buffers_are_set_written_and_read_back() {
    let (code, _, err) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--buffer", "two"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--buffer") && err.contains("unbounded"),
        "{err}"
    );
    let dir = scratch("buffers");
    for (flag, config, line) in [
        ("0", "0", "0 words per switch input (most used: 0)"),
        (
            "unbounded",
            "\"unbounded\"",
            "unbounded (idealisation; most used: 0)",
        ),
    ] {
        let (code, json, err) = ttdl(&[
            "run",
            "examples/jacobi-2d.ttdl",
            "--buffer",
            flag,
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["config"]["buffer"].to_string(), config);
        assert_eq!(doc["metrics"]["buffered_max"], 0);
        let file = dir.join(format!("plan-{flag}.json"));
        std::fs::write(&file, &json).unwrap();
        let (code, out, err) = ttdl(&["run", &file.to_string_lossy()]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&format!("buffers:          {line}")), "{out}");
    }
    let (_, json, _) = ttdl(&["run", "examples/jacobi-2d.ttdl", "--format", "json"]);
    let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["config"]["buffer"], 2);
    doc["config"].as_object_mut().unwrap().remove("buffer");
    let file = dir.join("older.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let (code, out, err) = ttdl(&["run", &file.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("buffers:          unbounded (idealisation"),
        "{out}"
    );
}

/// Energy beside time (SPEC §5): every row of `compare --format json` carries
/// `energy: {total_pj, dynamic_pj, static_pj, by_component}` whose parts add up; a run that moves
/// the same words over more hops and buffers costs more; `simulate` prints it.
#[test]
fn compare_rows_carry_energy() {
    let (code, out, err) = ttdl(&[
        "compare",
        "examples/fft.ttdl",
        "--models",
        "router,wormhole,circuit,scheduled",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows = doc["compare"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    let mut total = std::collections::BTreeMap::new();
    for r in rows {
        let e = &r["energy"];
        let t = e["total_pj"].as_f64().expect("total_pj");
        let (d, s) = (
            e["dynamic_pj"].as_f64().unwrap_or(-1.0),
            e["static_pj"].as_f64().unwrap_or(-1.0),
        );
        assert!(t > 0.0 && d > 0.0 && s > 0.0, "{r}");
        assert!((d + s - t).abs() <= 1e-9 * t, "{r}");
        let parts: f64 = e["by_component"]
            .as_object()
            .expect("by_component")
            .values()
            .filter_map(|v| v.as_f64())
            .sum();
        assert!((parts - t).abs() <= 1e-9 * t, "{r}");
        let name = r["model"].as_str().unwrap_or("").split(' ').next();
        total.insert(name.unwrap_or("").to_string(), e.clone());
    }
    // The buffered router writes and reads every word at every router; the circuit never does;
    // the scheduled plan loads switch programs and allocates nothing.
    assert!(total["router"]["by_component"]["buffer_write"].as_f64() > Some(0.0));
    assert_eq!(
        total["circuit"]["by_component"]["buffer_write"].as_f64(),
        Some(0.0)
    );
    assert!(total["scheduled"]["by_component"]["switch_step"].as_f64() > Some(0.0));
    assert_eq!(
        total["scheduled"]["by_component"]["allocation"].as_f64(),
        Some(0.0)
    );
    let (code, text, err) = ttdl(&["compare", "examples/fft.ttdl", "--models", "router"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.lines().nth(1).is_some_and(|l| l.ends_with("energy")),
        "{text}"
    );
    let (code, sim, err) = ttdl(&["simulate", "examples/fft.ttdl", "--model", "router"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        sim.contains("energy       ") && sim.contains(" dynamic, "),
        "{sim}"
    );
}

/// `packet=N` (SPEC §5): a message longer than N flits travels as ⌈size/N⌉ packets on every
/// packet-switched model, and `simulation.packets` counts them; without the option each message
/// copy through the network is one packet.
#[test]
fn packet_limit_cuts_messages_into_packets() {
    for model in ["wormhole", "router", "circuit", "store-forward"] {
        for (opt, n) in [("", 0u64), (" packet=3", 3), (" packet=1000", 1000)] {
            let spec = format!("{model}{opt}");
            let (code, out, err) = ttdl(&[
                "simulate",
                "examples/fft.ttdl",
                "--model",
                &spec,
                "--format",
                "json",
            ]);
            assert_eq!(code, 0, "{spec}: {err}");
            let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
            let sim = &doc["simulation"];
            let node = |t: &serde_json::Value| {
                doc["tasks"]
                    .as_array()
                    .and_then(|ts| ts.iter().find(|x| x["id"] == *t))
                    .map(|x| x["node"].clone())
            };
            let mut want = 0;
            for m in sim["messages"].as_array().expect("messages") {
                let size = m["size"].as_u64().unwrap_or(0);
                for d in m["dst"].as_array().expect("dst") {
                    if node(d) != node(&m["src"]) {
                        want += if n == 0 { 1 } else { size.div_ceil(n).max(1) };
                    }
                }
            }
            assert_eq!(sim["packets"].as_u64(), Some(want), "{spec}");
            if n > 0 {
                assert!(sim["model"]
                    .as_str()
                    .is_some_and(|s| s.ends_with(&opt[1..])));
            }
        }
    }
}

/// A reader that goes away (`ttdl run … | head -1`) ends the output quietly: no panic, no
/// error, exit 0, in text and JSON, for every command that prints.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::process::Stdio;
    for args in [
        &["run", "examples/jacobi-2d.ttdl"][..],
        &["run", "examples/jacobi-2d.ttdl", "--format", "json"],
        &["check", "examples/jacobi-2d.ttdl"],
        &["dag", "examples/jacobi-2d.ttdl"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ttdl"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ttdl runs");
        // Close the reading end before anything is read.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("ttdl ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// What a program printed before it failed is shown ahead of the diagnostic, on standard error,
/// so that `--format json` keeps standard output empty (no half document).
#[test]
fn what_a_failing_program_printed_is_kept() {
    let dir = scratch("printed-then-failed");
    let file = dir.join("fails.ttdl");
    std::fs::write(
        &file,
        "(print \"partial sum \")\n(println (+ 1 2))\n(print 'no-newline)\n(car 5)\n",
    )
    .expect("write");
    let path = file.to_str().expect("utf-8 path");
    for args in [&["check", path][..], &["run", path, "--format", "json"]] {
        let (code, out, err) = ttdl(args);
        assert_ne!(code, 0, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        let printed = err
            .find("partial sum 3\nno-newline\n")
            .expect("printed text kept");
        let error = err.find("error[type]").expect("the diagnostic");
        assert!(printed < error, "{args:?}: {err}");
    }
}
