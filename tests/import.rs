//! `ttdl import tgff`: the TGFF fixture `examples/sensor-fusion.tgff` imported as the program
//! `examples/sensor-fusion.ttdl` (a golden copy; `UPDATE_EXPECT=1 cargo test --test all import::`
//! refreshes it), which `ttdl check` and `ttdl run` then take; `-o` refusing to overwrite without
//! `--force`; and bad TGFF input reported with its file, line and column.

use crate::support::ttdl;
use expect_test::{expect, expect_file};

const FIXTURE: &str = "examples/sensor-fusion.tgff";

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ttdl-import-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn tgff_fixture_imports_checks_and_runs() {
    let (code, program, err) = ttdl(&["import", "tgff", FIXTURE, "--size-scale", "0.25"]);
    assert_eq!(code, 0, "{err}");
    expect_file!["../examples/sensor-fusion.ttdl"].assert_eq(&program);

    let dir = scratch("run");
    let file = dir.join("sensor-fusion.ttdl");
    let file = file.to_string_lossy();
    let (code, _, err) = ttdl(&[
        "import",
        "tgff",
        FIXTURE,
        "--size-scale",
        "0.25",
        "-o",
        &file,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&*file).expect("written"), program);

    let (code, out, err) = ttdl(&["check", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("tasks          10\nmessages       8 (72 words)\n"),
        "{out}"
    );
    let (code, out, err) = ttdl(&["run", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("deadlines:        all met"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_file_is_not_overwritten_without_force() {
    let dir = scratch("force");
    let file = dir.join("out.ttdl");
    std::fs::write(&file, "; mine\n").expect("write");
    let file = file.to_string_lossy();
    let (code, _, err) = ttdl(&["import", "tgff", FIXTURE, "-o", &file]);
    assert_eq!(code, 2);
    assert!(err.contains("refusing to overwrite"), "{err}");
    assert_eq!(std::fs::read_to_string(&*file).expect("kept"), "; mine\n");
    let (code, _, err) = ttdl(&["import", "tgff", FIXTURE, "-o", &file, "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&*file)
        .expect("replaced")
        .contains("(tgff-task"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_tgff_points_at_file_line_and_column() {
    let dir = scratch("bad");
    let file = dir.join("bad.tgff");
    std::fs::write(
        &file,
        "@TASK_GRAPH 0 {\n  TASK a TYPE 0\n  ARC x FROM a TO b TYPE 0\n}\n",
    )
    .expect("write");
    let (code, out, err) = ttdl(&["import", "tgff", &file.to_string_lossy()]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    let err = err.replace(&*dir.to_string_lossy(), "DIR");
    expect![[r#"
        error[tgff]: task graph 0 has no task `b`
           ╭─[ DIR/bad.tgff:3:19 ]
           │
         3 │   ARC x FROM a TO b TYPE 0
           │                   ┬  
           │                   ╰── not a task of this graph
        ───╯
    "#]]
    .assert_eq(&err);
    let _ = std::fs::remove_dir_all(&dir);
}
