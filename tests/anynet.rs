//! `--network anynet:FILE` (BookSim2's irregular networks) through the binary: `run` plans and
//! verifies on it, `simulate --model router` and `--model wormhole` and `compare` run on it, the
//! plan's JSON plans again from its own config, and a bad file is an error located in the file.

use std::collections::BTreeMap;

use crate::support::ttdl;

const NET: &str = "anynet:examples/irregular.anynet";

/// The plan on the irregular network: routes follow its links, no two fragments hold one
/// link in the same cycle, and every message is sent.
#[test]
fn run_plans_a_valid_schedule_on_an_irregular_network() {
    let (code, out, err) = ttdl(&["run", "examples/irregular.ttdl", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["network"]["topology"], "anynet");
    assert_eq!(v["network"]["nodes"], 13);
    assert_eq!(v["config"]["network"], NET);
    let links: Vec<(u64, u64)> = v["network"]["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| (l[0].as_u64().unwrap(), l[1].as_u64().unwrap()))
        .collect();
    assert_eq!(links.len(), 28);
    let msgs = v["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 56);
    for m in msgs {
        let route: Vec<u64> = m["route"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        // Tasks sit on the terminals 0..8 (identity); routes go through routers 8..13.
        assert!(route[0] < 8 && route[route.len() - 1] < 8, "{route:?}");
        for w in route.windows(2) {
            assert!(links.contains(&(w[0], w[1])), "{route:?}");
        }
    }
    let mut held: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for row in v["schedule"].as_array().expect("schedule") {
        let (s, e) = (row["start"].as_u64().unwrap(), row["end"].as_u64().unwrap());
        held.entry(row["link"].to_string())
            .or_default()
            .push((s, e));
    }
    for (link, mut spans) in held {
        spans.sort_unstable();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "{link}: {:?} overlaps {:?}", w[0], w[1]);
        }
    }
    let makespan = v["metrics"]["makespan"].as_u64().unwrap();
    assert!(makespan >= v["metrics"]["lower_bound"].as_u64().unwrap());
}

/// Every placement puts tasks on the terminals (nodes 0..8), never on a router.
#[test]
fn placements_use_the_terminals_only() {
    for place in ["best", "anneal", "random"] {
        let (code, out, err) = ttdl(&[
            "run",
            "examples/irregular.ttdl",
            "--place",
            place,
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{place}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        for t in v["tasks"].as_array().expect("tasks") {
            assert!(t["node"].as_u64().unwrap() < 8, "{place}: {t}");
        }
    }
}

#[test]
fn router_wormhole_and_compare_run_on_it() {
    for model in ["router", "wormhole"] {
        let (code, out, err) = ttdl(&["simulate", "examples/irregular.ttdl", "--model", model]);
        assert_eq!(code, 0, "{model}: {err}");
        assert!(out.contains(NET), "{out}");
        assert!(out.contains("56 messages"), "{out}");
    }
    let (code, out, err) = ttdl(&["compare", "examples/irregular.ttdl"]);
    assert_eq!(code, 0, "{err}");
    for row in ["scheduled", "wormhole", "router", "store-forward"] {
        let line = out.lines().find(|l| l.starts_with(row)).expect(row);
        assert!(!line.contains("cannot run"), "{line}");
    }
    // The optical models say why they cannot run here, not silently use another network.
    assert!(
        out.contains("optical TDM models need a 2-D torus or mesh"),
        "{out}"
    );
    // `--network` on another program, and the plan's JSON read back by simulate.
    let (code, out, err) = ttdl(&[
        "run",
        "examples/reader-writer.ttdl",
        "--network",
        NET,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let file = std::env::temp_dir().join(format!("ttdl-anynet-{}.json", std::process::id()));
    std::fs::write(&file, out).unwrap();
    let path = file.to_string_lossy().into_owned();
    let (code, out, err) = ttdl(&["simulate", &path, "--model", "router"]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(NET), "{out}");
}

#[test]
fn bad_files_are_located_errors() {
    let dir = std::env::temp_dir().join(format!("ttdl-anynet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.anynet");
    std::fs::write(
        &file,
        "router 0 node 0 router 1\nrouter 1 node 1 rooter 2\n",
    )
    .unwrap();
    let spec = format!("anynet:{}", file.display());
    let (code, _, err) = ttdl(&["run", "examples/irregular.ttdl", "--network", &spec]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}:2:17: expected `router` or `node`, found `rooter`",
            file.display()
        )),
        "{err}"
    );
    let (code, _, err) = ttdl(&["run", "examples/irregular.ttdl", "--network", "graph:4"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs its edges"), "{err}");
    let (code, _, err) = ttdl(&["run", "examples/irregular.ttdl", "--network", "anynett:x"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `anynet`?"), "{err}");
}
