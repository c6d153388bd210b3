//! Writing files the user named, without silent loss (SPEC §3: no command overwrites a file it
//! did not write; `--force` says to). A directory given with `--out` keeps a list of what TTDL
//! wrote there ([`ttdl_session::artifacts::write_with`]); a single file (`--html FILE`,
//! `--csv FILE`, `--svg FILE`) is replaced only when it is missing, when it is a page TTDL made
//! (its HTML carries TTDL's generator mark), or with `--force`.

use std::path::Path;

use ttdl_session::artifacts::Contents;

use super::CliError;

/// The mark every HTML page TTDL writes carries in its head
/// (`ttdl_backend::report::html`): a page with it may be replaced by another run.
const HTML_MARK: &str = "<meta name=\"generator\" content=\"TTDL\">";

/// Writes `text` to `path`, creating its directory, unless that would replace a file TTDL did
/// not write and `force` is off.
pub fn file(path: &Path, text: &str, force: bool) -> Result<(), CliError> {
    if !force && path.exists() && !written_by_ttdl(path) {
        return Err(CliError::Usage(format!(
            "refusing to overwrite `{}`: it exists and TTDL did not write it; move it away, \
             choose another name, or pass --force to replace it",
            path.display()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Input(format!("cannot create `{}`: {e}", dir.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| CliError::Input(format!("cannot write `{}`: {e}", path.display())))
}

/// Writes `files` into the `--out` directory `dir` (see the module doc); returns how many.
pub fn dir(dir: &Path, files: &[(String, String)], force: bool) -> Result<usize, CliError> {
    let files: Vec<(String, Contents)> = files
        .iter()
        .map(|(name, text)| (name.clone(), Contents::Text(text.clone())))
        .collect();
    contents(dir, &files, force)
}

/// [`dir`], with files that may be written as they are made (a plan's document and tables).
pub fn contents(dir: &Path, files: &[(String, Contents)], force: bool) -> Result<usize, CliError> {
    ttdl_session::artifacts::write_with(dir, files, force).map_err(CliError::Input)
}

/// Whether the file at `path` is an HTML page TTDL wrote: its mark sits in the first
/// kilobyte (the head), so a large file is not read whole to find out.
fn written_by_ttdl(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(1024);
    let read = std::fs::File::open(path).and_then(|f| f.take(1024).read_to_end(&mut head));
    read.is_ok() && String::from_utf8_lossy(&head).contains(HTML_MARK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ttdl-write-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn a_file_ttdl_did_not_write_is_kept_unless_forced() {
        let dir = scratch("keep");
        let path = dir.join("notes.html");
        std::fs::write(&path, "<p>my notes</p>").expect("write");
        let e = file(&path, "<html>", false).expect_err("refused");
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("<p>my notes</p>")
        );
        file(&path, "<html>", true).expect("forced");
        assert_eq!(
            std::fs::read_to_string(&path).ok().as_deref(),
            Some("<html>")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_page_ttdl_wrote_is_replaced() {
        let dir = scratch("replace");
        let path = dir.join("sub").join("report.html");
        let page = format!("<!DOCTYPE html>\n<head>\n{HTML_MARK}\n</head>\n");
        file(&path, &page, false).expect("new file");
        file(&path, &(page.clone() + "again"), false).expect("its own page");
        assert!(std::fs::read_to_string(&path)
            .unwrap_or_default()
            .ends_with("again"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
