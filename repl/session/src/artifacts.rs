//! What `ttdl run --out DIR` and the REPL's `:save DIR` write: every artifact of a plan (the
//! summary, the SPEC §4 JSON and its long lists as CSV tables, the tasks file of Minsky Fig 5-5,
//! the switch programs of Fig 5-9, the task graph as DOT, the schedule and snapshot pictures),
//! into a directory that is never allowed to lose a file TTDL did not write.

use std::io::Write;
use std::path::Path;

use ttdl_backend::pipeline::Plan;
use ttdl_backend::report::json::Rows;
use ttdl_backend::{report, switch, tasks_file};

/// A file's contents: text in hand, or written straight into the file as it is made (the plan
/// document and its tables, which for a large plan run to hundreds of megabytes).
pub enum Contents<'a> {
    Text(String),
    Stream(Writer<'a>),
}

/// Writes a file's contents into it.
pub type Writer<'a> = Box<dyn Fn(&mut dyn Write) -> Result<(), String> + 'a>;

impl From<String> for Contents<'_> {
    fn from(s: String) -> Self {
        Contents::Text(s)
    }
}

/// A CSV table of the plan's rows ([`report::csv`]).
fn table<'a>(
    plan: &'a Plan,
    write: fn(&Rows, &mut dyn Write) -> std::io::Result<()>,
) -> Contents<'a> {
    Contents::Stream(Box::new(move |w| {
        let rows = Rows::new(
            &plan.traffic,
            &plan.network,
            &plan.placement.node_of,
            &plan.routing,
            &plan.schedule,
        );
        write(&rows, w).map_err(|e| e.to_string())
    }))
}

/// The artifacts of `plan`, named after `name`, as (file name, contents); `summary` is passed
/// in when the caller has it already (empty: built here).
pub fn files<'a>(
    plan: &'a Plan,
    name: &str,
    summary: &str,
) -> Result<Vec<(String, Contents<'a>)>, String> {
    let problem = plan.problem().map_err(|e| e.to_string())?;
    let windows = plan.routed_as.as_ref().unwrap_or(&plan.traffic);
    let pictures = report::Plan::new(&problem, &plan.schedule, windows);
    let summary = match summary {
        "" => plan.summary().map_err(|e| e.to_string())?,
        s => s.to_string(),
    };
    let json = Contents::Stream(Box::new(move |w| {
        plan.write_json(w).map_err(|e| e.to_string())
    }));
    let texts = vec![
        (
            format!("{name}.tasks"),
            tasks_file::write(&plan.traffic, Some((&plan.network, &plan.placement))),
        ),
        (
            format!("{name}.dag.dot"),
            crate::dag::dot_of(&plan.traffic)?,
        ),
        (format!("{name}.txt"), summary.clone()),
        (
            format!("{name}.schedule.svg"),
            report::svg::timeline(&pictures),
        ),
        (
            format!("{name}.snapshots.svg"),
            report::svg::snapshots(&pictures),
        ),
        (
            "report.html".to_string(),
            report::html::plan(name, &pictures, &summary),
        ),
    ];
    let mut files: Vec<(String, Contents)> =
        texts.into_iter().map(|(n, t)| (n, t.into())).collect();
    // The switch programs are as many lines as the plan has rows: made when the file is
    // written, and written node by node rather than as one string.
    files.push((
        format!("{name}.switch"),
        Contents::Stream(Box::new(move |w| {
            let written = match plan.periodic.as_ref().and_then(|p| p.loops.as_ref()) {
                Some(loops) => write!(w, "{loops}"),
                None => {
                    let problem = plan.problem().map_err(|e| e.to_string())?;
                    let programs = switch::build(&problem, &plan.schedule);
                    programs.nodes.iter().try_for_each(|np| write!(w, "{np}"))
                }
            };
            written.map_err(|e| e.to_string())
        })),
    ));
    files.push((format!("{name}.json"), json));
    files.push((
        "schedule.csv".to_string(),
        table(plan, |r, w| report::csv::schedule(r, w)),
    ));
    files.push((
        "messages.csv".to_string(),
        table(plan, |r, w| report::csv::messages(r, w)),
    ));
    files.push((
        "links.csv".to_string(),
        table(plan, |r, w| report::csv::links(r, w)),
    ));
    Ok(files)
}

/// The file in an `--out` directory that lists what TTDL wrote there.
const MANIFEST: &str = ".ttdl-out";

/// Writes the artifacts into `dir`, refusing to replace a file TTDL did not write there before
/// (the directory's manifest lists what it wrote).
pub fn write(dir: &Path, files: &[(String, Contents)]) -> Result<usize, String> {
    write_with(dir, files, false)
}

/// [`write`]; with `force`, files TTDL did not write are replaced too (`--force`).
pub fn write_with(dir: &Path, files: &[(String, Contents)], force: bool) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let manifest = dir.join(MANIFEST);
    let ours: Vec<String> = std::fs::read_to_string(&manifest)
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default();
    for (name, _) in files {
        let path = dir.join(name);
        if !force && path.exists() && !ours.contains(name) {
            return Err(format!(
                "refusing to overwrite `{}`: TTDL did not write it; move it away, choose another --out directory, or pass --force to replace it",
                path.display()
            ));
        }
    }
    let mut listed: Vec<String> = ours;
    for (name, _) in files {
        if !listed.contains(name) {
            listed.push(name.clone());
        }
    }
    listed.sort();
    std::fs::write(&manifest, listed.join("\n") + "\n")
        .map_err(|e| format!("cannot write `{}`: {e}", manifest.display()))?;
    for (name, contents) in files {
        let path = dir.join(name);
        let failed = |e: String| format!("cannot write `{}`: {e}", path.display());
        match contents {
            Contents::Text(text) => {
                std::fs::write(&path, text).map_err(|e| failed(e.to_string()))?
            }
            Contents::Stream(write) => {
                let file = std::fs::File::create(&path).map_err(|e| failed(e.to_string()))?;
                let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
                write(&mut w).map_err(failed)?;
                w.flush().map_err(|e| failed(e.to_string()))?;
            }
        }
    }
    Ok(files.len())
}
