//! Every plan setting of the settings table, through every door (SPEC §3): the command line's
//! flags of `run`, `simulate` and `compare`, the REPL's `:set`, a script's `(target …)`, the
//! `scheduled` model's options and the plan document's `config` take the same names, show the
//! same default and refuse a bad value with the same words.

use ttdl_ir::settings::{DefaultValue, Kind, Setting, SETTINGS};
use ttdl_repl::{Repl, ReplOptions};

use crate::support::ttdl;

/// A value the row refuses, when it has one a user could type.
fn bad_value(row: &Setting) -> Option<String> {
    match row.kind {
        Kind::Network => Some("blob:3".into()),
        Kind::Name => None,
        Kind::Flag => Some("maybe".into()),
        Kind::Choice(_) | Kind::Level(_) => Some("zzz".into()),
        Kind::Int { max, .. } if max < u64::MAX => Some((max + 1).to_string()),
        Kind::Int { .. } | Kind::IntOrUnbounded { .. } => Some("x".into()),
    }
}

const PROGRAM: &str = "examples/fft.ttdl";

#[test]
fn every_door_takes_every_setting_and_refuses_alike() {
    let mut repl = Repl::new(ReplOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let shown = repl.handle(":set").text;
    for cmd in ["run", "simulate", "compare"] {
        let (code, help, _) = ttdl(&[cmd, "--help"]);
        assert_eq!(code, 0);
        for row in SETTINGS {
            assert!(
                help.contains(&format!("--{} ", row.name))
                    || help.contains(&format!("--{}\n", row.name))
                    || help.contains(&format!("--{}[=", row.name)),
                "`{cmd} --help` lacks --{}",
                row.name
            );
        }
    }
    let (code, doc, err) = ttdl(&["run", PROGRAM, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap_or_default();
    for row in SETTINGS {
        // `:set` lists the setting with the table's default.
        assert!(
            shown.contains(row.name) && shown.contains(row.default_text()),
            "`:set` does not show {} with its default:\n{shown}",
            row.name
        );
        // The plan document records every setting but the mapping (the placement it made is
        // recorded task by task), with the table's default where nothing chose it.
        if row.name != "mapping" {
            let written = &doc["config"][row.key];
            assert!(!written.is_null(), "config lacks {}", row.key);
            if let (DefaultValue::Is(d), "route" | "schedule" | "ports" | "buffer" | "effort") =
                (row.default, row.name)
            {
                let text = written
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| written.to_string());
                assert_eq!(text, d, "config.{} is not the table's default", row.key);
            }
        }
        let Some(bad) = bad_value(row) else { continue };
        let refusal = match row.parse(&bad) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{} takes {bad}", row.name),
        };
        // The command line, for each command that plans.
        if row.name != "mapping" {
            for cmd in ["run", "simulate", "compare"] {
                let mut args = vec![cmd, PROGRAM];
                if cmd == "simulate" {
                    args.extend(["--model", "scheduled"]);
                }
                // `--name=value`, the form every setting takes (an on/off one only so).
                let flag = format!("--{}={bad}", row.name);
                args.push(flag.as_str());
                let (code, _, err) = ttdl(&args);
                assert_eq!(code, 2, "{cmd} {flag}: {err}");
                assert!(err.contains(&refusal), "{cmd} {flag}: {err}");
            }
        }
        // The REPL.
        let out = repl.handle(&format!(":set {} {bad}", row.name));
        assert!(
            out.error.contains(&refusal),
            ":set {}: {}",
            row.name,
            out.error
        );
        // A script's target.
        if row.target && row.name != "mapping" && row.kind != Kind::Network {
            let dir = std::env::temp_dir().join(format!("ttdl-settings-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("{}.ttdl", row.key));
            std::fs::write(
                &file,
                format!(
                    "(deftask a b)\n(with-task a (write-stream 4 b))\n(with-task b (read-stream 4 a))\n\
                     (target (make-network :topology mesh :dims (list 2 1)) :{} {bad})\n",
                    row.name
                ),
            )
            .expect("write");
            let (code, _, err) = ttdl(&["check", &file.to_string_lossy()]);
            assert_eq!(code, 1, ":{} {bad}: {err}", row.name);
            assert!(err.contains(&refusal), ":{} {bad}: {err}", row.name);
            let _ = std::fs::remove_dir_all(&dir);
        }
        // The scheduled model's options.
        if row.model {
            let spec = format!("scheduled {}={bad}", row.key);
            let (code, _, err) = ttdl(&["simulate", PROGRAM, "--model", &spec]);
            assert_eq!(code, 2, "{spec}: {err}");
            assert!(err.contains(&refusal), "{spec}: {err}");
        }
    }
}

/// A setting given by any door gives the same plan: `run --ports 2`, `simulate --ports 2` and
/// `simulate --model "scheduled ports=2"` on a program with no mapping (fifteen producers, one
/// collector), and the plan document planned again.
#[test]
fn the_same_setting_gives_the_same_figure_from_every_door() {
    let dir = std::env::temp_dir().join(format!("ttdl-hotspot-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("hotspot.ttdl");
    std::fs::write(
        &file,
        "(deftask c p1 p2 p3 p4 p5 p6 p7 p8 p9 p10 p11 p12 p13 p14 p15)\n\
         (define ps (list p1 p2 p3 p4 p5 p6 p7 p8 p9 p10 p11 p12 p13 p14 p15))\n\
         (define-comm prod (self) (write-stream 24 c))\n\
         (dolist (p ps) (prod p))\n\
         (define-comm coll (self) (dolist (p ps) (read-stream 24 p)))\n\
         (coll c)\n",
    )
    .expect("write");
    let f = file.to_string_lossy().to_string();
    let net = ["--network", "mesh:4x4"];
    let figure = |out: &str, key: &str| -> Option<u64> {
        out.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
    };
    let (_, run, err) = ttdl(&[&["run", &f, "--ports", "2"][..], &net[..]].concat());
    let planned = figure(&run, "makespan:").unwrap_or_else(|| panic!("{run}{err}"));
    let (_, sim, err) = ttdl(
        &[
            &["simulate", &f, "--ports", "2", "--model", "scheduled"][..],
            &net[..],
        ]
        .concat(),
    );
    assert_eq!(figure(&sim, "completion"), Some(planned), "{sim}{err}");
    let (_, sim, err) = ttdl(
        &[
            &["simulate", &f, "--model", "scheduled ports=2"][..],
            &net[..],
        ]
        .concat(),
    );
    assert_eq!(figure(&sim, "completion"), Some(planned), "{sim}{err}");
    // The plan document holds every setting and plans again identically.
    let (_, doc, _) = ttdl(
        &[
            &["run", &f, "--ports", "2", "--format", "json"][..],
            &net[..],
        ]
        .concat(),
    );
    let json = dir.join("plan.json");
    std::fs::write(&json, doc).expect("write");
    let (_, again, err) = ttdl(&["run", &json.to_string_lossy()]);
    assert_eq!(figure(&again, "makespan:"), Some(planned), "{again}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
