//! The `compare` table (Yuan's Tables 6.2–6.3 style): completion time and message latency of one
//! program under every model, each also normalized to the best model (best = 1.0). A model that
//! cannot run on the network gets a note saying why; one that cannot finish gets a row saying
//! after how many cycles it stopped and whether it deadlocked or livelocked.

use std::fmt::Write as _;

use serde_json::json;

use crate::pipeline::{ModelRun, Placed};
use crate::sim::drive::program::SimError;
use crate::sim::energy::format_pj;

fn ratio(x: f64, best: f64) -> f64 {
    if best > 0.0 {
        x / best
    } else if x > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

/// The best completion, mean latency and max latency among the rows that finished.
fn best(rows: &[ModelRun]) -> (f64, f64, f64) {
    let ok = || rows.iter().filter_map(|r| r.result.as_ref().ok());
    (
        ok().map(|r| r.completion).min().unwrap_or(0) as f64,
        ok().map(|r| r.latency.mean).fold(f64::INFINITY, f64::min),
        ok().map(|r| r.latency.max).min().unwrap_or(0) as f64,
    )
}

/// The table as text; `title` names the program (a file name, or empty).
pub fn text(title: &str, program: &Placed, rows: &[ModelRun]) -> String {
    let (best_completion, best_mean, best_max) = best(rows);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{title} on {} ({} tasks, {} messages); normalized columns: best = 1.0",
        program.network.spec,
        program.traffic.tasks.len(),
        program.traffic.messages.len()
    );
    let width = rows
        .iter()
        .map(|r| match &r.result {
            Ok(x) => x.model.len(),
            Err(_) => r.spec.len(),
        })
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        s,
        "{:<width$}  {:>10} {:>6}  {:>10} {:>6}  {:>8} {:>6}  {:>10}",
        "model", "completion", "norm", "mean lat", "norm", "max lat", "norm", "energy"
    );
    let mut notes = Vec::new();
    for r in rows {
        match &r.result {
            Ok(x) => {
                let _ = writeln!(
                    s,
                    "{:<width$}  {:>10} {:>6.2}  {:>10.2} {:>6.2}  {:>8} {:>6.2}  {:>10}",
                    x.model,
                    x.completion,
                    ratio(x.completion as f64, best_completion),
                    x.latency.mean,
                    ratio(x.latency.mean, best_mean),
                    x.latency.max,
                    ratio(x.latency.max as f64, best_max),
                    format_pj(x.energy.total_pj)
                );
            }
            Err(e @ SimError::Unfinished { cycles, stall, .. }) => {
                let _ = writeln!(
                    s,
                    "{:<width$}  did not finish after {cycles} cycles ({})",
                    r.spec,
                    stall.name()
                );
                notes.push(format!("{}: {e}", r.spec));
            }
            Err(e) => {
                let _ = writeln!(s, "{:<width$}  {:>10}", r.spec, "cannot run");
                notes.push(format!("{}: {e}", r.spec));
            }
        }
    }
    notes.extend(storage_notes(program, rows));
    for n in notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// What is not like for like between the plan and the dynamic rows, said under the table: ports
/// beyond the one node interface the dynamic models have, and broadcasts, which the plan sends
/// once through the network as a tree and the dynamic models as one unicast per reader (SPEC §5).
fn storage_notes(program: &Placed, rows: &[ModelRun]) -> Vec<String> {
    let dynamic = rows
        .iter()
        .any(|r| r.spec.split([' ', ':']).next() != Some("scheduled"));
    if !dynamic {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let ports = program.config.hardware.ports;
    if ports > 1 {
        notes.push(format!(
            "the plan has {ports} ports per node each way; the dynamic models have one"
        ));
    }
    let casts = program
        .traffic
        .messages
        .iter()
        .filter(|m| m.dst.len() > 1)
        .count();
    if casts > 0 {
        let pair = if rows.iter().any(|r| r.spec.contains("multicast=unicast")) {
            " (the `scheduled … unicast` row is the plan sending them so too: like for like)"
        } else {
            " (`scheduled multicast=unicast` is the plan sending them so too: like for like)"
        };
        notes.push(format!(
            "{casts} messages are broadcasts: the plan sends each once through the network, as a \
             tree; the dynamic models send one unicast per reader{pair}"
        ));
    }
    notes
}

/// The table as the `compare` entries of the JSON document.
pub fn json(rows: &[ModelRun]) -> serde_json::Value {
    let (best_completion, best_mean, best_max) = best(rows);
    let models: Vec<_> = rows
        .iter()
        .map(|r| match &r.result {
            Ok(x) => json!({
                "model": x.model,
                "completion": x.completion,
                "completion_norm": ratio(x.completion as f64, best_completion),
                "mean_latency": x.latency.mean,
                "mean_latency_norm": ratio(x.latency.mean, best_mean),
                "max_latency": x.latency.max,
                "max_latency_norm": ratio(x.latency.max as f64, best_max),
                "energy": x.energy,
            }),
            Err(
                e @ SimError::Unfinished {
                    cycles,
                    stall,
                    detail,
                },
            ) => json!({
                "model": r.spec,
                "unfinished": {"cycles": cycles, "stall": stall, "detail": detail},
                "error": e.to_string(),
            }),
            Err(e) => json!({"model": r.spec, "error": e.to_string()}),
        })
        .collect();
    serde_json::Value::Array(models)
}

/// The table as CSV: `model,completion,mean_latency,max_latency,status` (status `ok`,
/// `deadlock`/`livelock`/`cycle-cap` with the cycle it stopped at, or `cannot run`).
pub fn csv(rows: &[ModelRun]) -> String {
    let mut s = String::from("model,completion,mean_latency,max_latency,status\n");
    let quote = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for r in rows {
        match &r.result {
            Ok(x) => {
                let _ = writeln!(
                    s,
                    "{},{},{:.3},{},ok",
                    quote(&x.model),
                    x.completion,
                    x.latency.mean,
                    x.latency.max
                );
            }
            Err(SimError::Unfinished { cycles, stall, .. }) => {
                let _ = writeln!(
                    s,
                    "{},,,,{} after {cycles} cycles",
                    quote(&r.spec),
                    stall.name()
                );
            }
            Err(_) => {
                let _ = writeln!(s, "{},,,,cannot run", quote(&r.spec));
            }
        }
    }
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A horizontal bar chart of completion times, one labelled bar per model (shortest first in
/// table order); models that did not finish or could not run are listed with the reason.
pub fn svg(title: &str, rows: &[ModelRun]) -> String {
    let (label_w, bar_w, row_h, top) = (300.0, 420.0, 22.0, 40.0);
    let max = rows
        .iter()
        .filter_map(|r| r.result.as_ref().ok())
        .map(|x| x.completion)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let h = top + row_h * rows.len() as f64 + 30.0;
    let w = label_w + bar_w + 90.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        escape(title)
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let label = match &r.result {
            Ok(x) => x.model.clone(),
            Err(_) => r.spec.clone(),
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            label_w - 8.0,
            y + 15.0,
            escape(&label)
        );
        match &r.result {
            Ok(x) => {
                let len = bar_w * x.completion as f64 / max;
                let fill = if x.model.starts_with("scheduled") {
                    "#2b6cb0"
                } else {
                    "#a0aec0"
                };
                let _ = writeln!(
                    s,
                    "<rect x=\"{label_w}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{} cycles</title></rect>\n<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    y + 3.0,
                    row_h - 6.0,
                    x.completion,
                    label_w + len + 6.0,
                    y + 15.0,
                    x.completion
                );
            }
            Err(SimError::Unfinished { cycles, stall, .. }) => {
                let _ = writeln!(
                    s,
                    "<text x=\"{label_w}\" y=\"{:.1}\" fill=\"#c53030\">did not finish after {cycles} cycles ({})</text>",
                    y + 15.0,
                    stall.name()
                );
            }
            Err(_) => {
                let _ = writeln!(
                    s,
                    "<text x=\"{label_w}\" y=\"{:.1}\" fill=\"#718096\">cannot run on this network</text>",
                    y + 15.0
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "<text x=\"{label_w}\" y=\"{:.1}\" fill=\"#4a5568\">completion time in cycles (shorter is better)</text>\n</svg>",
        h - 10.0
    );
    s
}
