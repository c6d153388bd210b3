//! Bad programs and the errors `ttdl check` renders for them (golden files beside each script in
//! `tests/diagnostics/`; `UPDATE_EXPECT=1 cargo test --test all diagnostics::` refreshes them). Each must
//! exit with status 1, never panic.

use std::path::Path;
use std::process::Command;

use expect_test::expect_file;

#[test]
fn bad_scripts_render_their_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("tests/diagnostics"))
        .expect("tests/diagnostics exists")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".ttdl").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    for name in names {
        let file = format!("tests/diagnostics/{name}.ttdl");
        let out = Command::new(env!("CARGO_BIN_EXE_ttdl"))
            .args(["check", &file])
            .current_dir(root)
            .output()
            .expect("the ttdl binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{file}: {stderr}");
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(out.stdout.is_empty(), "{file}: nothing on stdout");
        expect_file![format!("diagnostics/{name}.stderr")].assert_eq(&stderr);
    }
}
