//! `ttdl check`: evaluate a program and summarize its communication — tasks, messages, phases,
//! the critical path (Minsky Fig 4-3) and the period lower bound (SPEC §2) — or print the
//! diagnostics and exit 1.

use std::collections::BTreeMap;
use std::path::Path;

use clap::Args;
use serde_json::json;
use ttdl_backend::schedule::program;
use ttdl_backend::traffic::Traffic;
use ttdl_backend::{pipeline, tasks_file};

use ttdl::session::Session;

use super::{CliError, CliResult, Common, Format};

#[derive(Clone, Debug, Args)]
pub struct CheckArgs {
    /// The TTDL program
    pub file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &CheckArgs) -> CliResult {
    let file = required_file(args.file.as_deref(), "check")?;
    let (printed, mut traffic) = evaluate(file, &args.common)?;
    print!("{printed}");
    // Port-aware timing (the default) before placement: every task on a node of its own.
    let timing: pipeline::TimingModel = match &args.common.timing {
        Some(t) => t
            .parse()
            .map_err(|e: String| CliError::Usage(format!("--timing: {e}")))?,
        None => pipeline::Defaults::TIMING,
    };
    if timing == pipeline::TimingModel::Port && program::is_driven(&traffic) {
        let own: Vec<usize> = (0..traffic.tasks.len()).collect();
        program::apply_port_timing(&mut traffic, &own, pipeline::Defaults::PORTS)
            .map_err(|e| CliError::Input(e.to_string()))?;
    }
    let out = match args.common.format {
        Format::Text => summary(&traffic),
        Format::Json => {
            let doc = summary_json(&traffic);
            serde_json::to_string_pretty(&doc)
                .map(|s| s + "\n")
                .map_err(|e| CliError::Internal(e.to_string()))?
        }
    };
    print!("{out}");
    if let Some(dir) = &args.common.out {
        write_tasks_file(dir, file, &traffic)?;
    }
    Ok(())
}

/// `--out DIR`: the tasks file (Minsky Fig 5-5) for the backend, named after the program.
fn write_tasks_file(dir: &Path, program: &Path, traffic: &Traffic) -> Result<(), CliError> {
    let stem = program
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let path = dir.join(format!("{stem}.tasks"));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, tasks_file::write(traffic, None)))
        .map_err(|e| CliError::Input(format!("error: cannot write `{}`: {e}", path.display())))
}

/// The file argument, or a usage error naming the command.
pub(crate) fn required_file<'a>(
    file: Option<&'a Path>,
    command: &str,
) -> Result<&'a Path, CliError> {
    file.ok_or_else(|| {
        CliError::Usage(format!(
            "`ttdl {command}` needs a program to read: ttdl {command} FILE.ttdl"
        ))
    })
}

/// Reads and evaluates a program (after the standard library, unless `--no-stdlib`) and returns
/// what it printed and its matched, timed traffic; diagnostics come back rendered, as an input
/// error (exit 1).
pub(crate) fn evaluate(file: &Path, common: &Common) -> Result<(String, Traffic), CliError> {
    let mut session = if common.no_stdlib {
        Session::without_stdlib()
    } else {
        Session::new()
            .map_err(|e| CliError::Internal(format!("the standard library does not load:\n{e}")))?
    };
    session
        .load_file(file)
        .map_err(|e| CliError::Input(e.to_string()))?;
    let printed = session.take_output();
    let traffic = session
        .traffic(common.mapping.as_deref())
        .map_err(|d| CliError::Input(session.render(&d).trim_end().to_string()))?;
    Ok((printed, traffic))
}

/// The text summary: one fact per line, aligned.
pub fn summary(t: &Traffic) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| {
        s.push_str(&format!("{k:<14} {v}\n"));
    };
    line(&mut s, "tasks", t.tasks.len().to_string());
    let words: u64 = t.messages.iter().map(|m| m.size).sum();
    let multicast = t.messages.iter().filter(|m| m.is_multicast()).count();
    let mut msg = format!("{} ({words} words", t.messages.len());
    if multicast > 0 {
        msg += &format!(", {multicast} multicast");
    }
    msg += ")";
    line(&mut s, "messages", msg);
    if let Some(p) = &t.period {
        if p.iterations > 0 {
            let mut per: BTreeMap<u64, (usize, BTreeMap<u64, usize>)> = BTreeMap::new();
            for m in &t.messages {
                let e = per.entry(m.iteration).or_default();
                e.0 += 1;
                *e.1.entry(m.size).or_default() += 1;
            }
            if let Some((_, (n, sizes))) = per.iter().next() {
                let sizes: Vec<String> = sizes
                    .iter()
                    .map(|(size, count)| format!("{count} of {size} words"))
                    .collect();
                line(
                    &mut s,
                    "per iteration",
                    format!("{n} messages ({}) in iteration 0", sizes.join(", ")),
                );
            }
        }
    }
    let phases: Vec<String> = t
        .phases
        .iter()
        .map(|p| {
            let n = t.messages.iter().filter(|m| m.phase == p.id).count();
            format!("{} (starts at {}, {n} messages)", p.name, p.start)
        })
        .collect();
    line(
        &mut s,
        "phases",
        format!("{}: {}", t.phases.len(), phases.join("; ")),
    );
    line(
        &mut s,
        "critical path",
        format!(
            "{} cycles (ideal: no contention, no per-hop latency)",
            t.critical_path
        ),
    );
    match &t.period {
        Some(p) => line(
            &mut s,
            "period",
            format!(
                "at least {} cycles per iteration ({} {}), set by {}; links are not counted before placement",
                p.lower_bound,
                p.iterations,
                if p.iterations == 1 { "iteration" } else { "iterations" },
                p.bound_by
            ),
        ),
        None => line(&mut s, "period", "none (the program does not repeat)".into()),
    }
    if let Some(l) = &t.logical {
        line(&mut s, "logical", l.to_string());
    }
    if let Some(tg) = &t.target {
        let mut parts = Vec::new();
        if let Some(n) = &tg.network {
            parts.push(n.to_string());
        }
        for (k, v) in [
            ("mapping", &tg.mapping),
            ("place", &tg.place),
            ("route", &tg.route),
            ("schedule", &tg.schedule),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k} {v}"));
            }
        }
        if let Some(seed) = tg.seed {
            parts.push(format!("seed {seed}"));
        }
        line(&mut s, "target", parts.join(", "));
    }
    s
}

/// The JSON summary (`--format json`): the counts and the full task and message lists.
pub fn summary_json(t: &Traffic) -> serde_json::Value {
    json!({
        "version": 1,
        "tasks": t.tasks.iter().map(|task| json!({
            "id": task.id,
            "name": task.name,
            "coords": task.coords,
            "mapped": task.mapped,
        })).collect::<Vec<_>>(),
        "messages": t.messages.iter().map(|m| json!({
            "id": m.id,
            "src": m.src,
            "dst": if m.is_multicast() { json!(m.dst) } else { json!(m.dst.first()) },
            "size": m.size,
            "release": m.release,
            "deadline": m.deadline,
            "phase": m.phase,
            "iteration": m.iteration,
            "label": m.label,
        })).collect::<Vec<_>>(),
        "phases": t.phases.iter().map(|p| json!({"id": p.id, "name": p.name, "start": p.start})).collect::<Vec<_>>(),
        "metrics": {
            "critical_path": t.critical_path,
            "period": t.period.as_ref().map(|p| json!({
                "lower_bound": p.lower_bound,
                "iterations": p.iterations,
                "bound_by": p.bound_by,
            })),
        },
        "logical": t.logical.as_ref().map(|l| l.to_string()),
        "target": t.target.as_ref().and_then(|tg| tg.network.as_ref()).map(|n| n.to_string()),
    })
}
