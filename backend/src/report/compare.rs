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
    if let Some(b) = lower_bound(program) {
        let _ = writeln!(
            s,
            "lower bound: {b} cycles (no model finishes sooner: the critical path of the programs \
             under the port model on this placement)"
        );
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

/// The table as CSV: `model,completion,mean_latency,max_latency,energy_pj,energy_dynamic_pj,
/// energy_static_pj,status` (energy as the JSON's `energy.total_pj`, `dynamic_pj`, `static_pj`;
/// status `ok`, `deadlock`/`livelock`/`cycle-cap` with the cycle it stopped at, or `cannot run`).
pub fn csv(rows: &[ModelRun]) -> String {
    let mut s = String::from(
        "model,completion,mean_latency,max_latency,energy_pj,energy_dynamic_pj,energy_static_pj,status\n",
    );
    let quote = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for r in rows {
        match &r.result {
            Ok(x) => {
                let _ = writeln!(
                    s,
                    "{},{},{:.3},{},{:.1},{:.1},{:.1},ok",
                    quote(&x.model),
                    x.completion,
                    x.latency.mean,
                    x.latency.max,
                    x.energy.total_pj,
                    x.energy.dynamic_pj,
                    x.energy.static_pj
                );
            }
            Err(SimError::Unfinished { cycles, stall, .. }) => {
                let _ = writeln!(
                    s,
                    "{},,,,,,,{} after {cycles} cycles",
                    quote(&r.spec),
                    stall.name()
                );
            }
            Err(_) => {
                let _ = writeln!(s, "{},,,,,,,cannot run", quote(&r.spec));
            }
        }
    }
    s
}

/// A completion time no model can beat on this placement: the critical path of the programs
/// under the port model (each read waits until the reader's ejection ports can have drained the
/// words it read), every message taking at least its length in cycles and no switch latency
/// (SPEC §2's makespan bound without its routing-dependent terms, so it holds for every model
/// whatever its routes: Minsky's scheduled plan and every dynamic one). `None` when the
/// programs cannot run.
pub fn lower_bound(program: &Placed) -> Option<u64> {
    let setting = crate::schedule::bounds::Setting {
        traffic: &program.traffic,
        node_of: Some(&program.placement.node_of),
        ports: program.config.hardware.ports,
        latency: None,
    };
    crate::schedule::bounds::lower_timing(&setting)
        .ok()
        .map(|t| t.critical_path)
}

/// The rows that finished with the least of `key` (ties all count), for highlighting.
pub fn best_rows<T: PartialOrd + Copy>(
    rows: &[ModelRun],
    key: impl Fn(&crate::sim::drive::program::SimReport) -> T,
) -> Vec<bool> {
    let mut best: Option<T> = None;
    for x in rows.iter().filter_map(|r| r.result.as_ref().ok()) {
        let v = key(x);
        if best.is_none_or(|b| v < b) {
            best = Some(v);
        }
    }
    rows.iter()
        .map(|r| match (&r.result, best) {
            (Ok(x), Some(b)) => key(x) <= b,
            _ => false,
        })
        .collect()
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Width of a character of the chart's 12-pixel monospaced font (0.602 em and a margin), so
/// label columns fit their longest label without a browser to measure it.
const CHAR_W: f64 = 7.5;

/// Two horizontal bar charts side by side, one row per model in table order: completion time,
/// with the lower bound no model can beat drawn as a dashed line across the bars, and energy.
/// In each, the best bar (least completion, least energy; ties all) is drawn in colour and its
/// label in bold; models that did not finish or could not run say so across both.
pub fn svg(title: &str, program: &Placed, rows: &[ModelRun]) -> String {
    let (row_h, top) = (22.0, 58.0);
    let label_w = 16.0
        + CHAR_W
            * rows
                .iter()
                .map(|r| match &r.result {
                    Ok(x) => x.model.chars().count(),
                    Err(_) => r.spec.chars().count(),
                })
                .max()
                .unwrap_or(5) as f64;
    let (time_w, energy_w, gap) = (380.0, 260.0, 90.0);
    let energy_x = label_w + time_w + gap;
    let ok = || rows.iter().filter_map(|r| r.result.as_ref().ok());
    let bound = lower_bound(program);
    let max_time = ok()
        .map(|x| x.completion)
        .chain(bound)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let max_energy = ok().map(|x| x.energy.total_pj).fold(0.0f64, f64::max);
    let best_time = best_rows(rows, |x| x.completion);
    let best_energy = best_rows(rows, |x| x.energy.total_pj);
    let h = top + row_h * rows.len() as f64 + 40.0;
    let w = (energy_x + energy_w + gap).max(16.0 + CHAR_W * title.chars().count() as f64);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"12\" class=\"compare-chart\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{label_w:.1}\" y=\"{:.1}\" font-weight=\"bold\">completion (cycles, shorter is better)</text>\n\
         <text x=\"{energy_x:.1}\" y=\"{:.1}\" font-weight=\"bold\">energy (less is better)</text>\n",
        escape(title),
        top - 14.0,
        top - 14.0
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let label = match &r.result {
            Ok(x) => x.model.clone(),
            Err(_) => r.spec.clone(),
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"{}>{}</text>",
            label_w - 8.0,
            y + 15.0,
            if best_time[i] || best_energy[i] {
                " font-weight=\"bold\""
            } else {
                ""
            },
            escape(&label)
        );
        match &r.result {
            Ok(x) => {
                let len = time_w * x.completion as f64 / max_time;
                let (fill, class) = if best_time[i] {
                    ("#2b6cb0", "bar best")
                } else {
                    ("#a0aec0", "bar")
                };
                let _ = writeln!(
                    s,
                    "<rect class=\"{class}\" x=\"{label_w:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{}: {} cycles</title></rect>\n<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    y + 3.0,
                    row_h - 6.0,
                    escape(&x.model),
                    x.completion,
                    label_w + len + 6.0,
                    y + 15.0,
                    x.completion
                );
                let len = if max_energy > 0.0 {
                    energy_w * x.energy.total_pj / max_energy
                } else {
                    0.0
                };
                let (fill, class) = if best_energy[i] {
                    ("#2f855a", "energy best")
                } else {
                    ("#a0aec0", "energy")
                };
                let _ = writeln!(
                    s,
                    "<rect class=\"{class}\" x=\"{energy_x:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{}: {} ({} dynamic, {} static)</title></rect>\n<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    y + 3.0,
                    row_h - 6.0,
                    escape(&x.model),
                    format_pj(x.energy.total_pj),
                    format_pj(x.energy.dynamic_pj),
                    format_pj(x.energy.static_pj),
                    energy_x + len + 6.0,
                    y + 15.0,
                    format_pj(x.energy.total_pj)
                );
            }
            Err(SimError::Unfinished { cycles, stall, .. }) => {
                let _ = writeln!(
                    s,
                    "<text x=\"{label_w:.1}\" y=\"{:.1}\" fill=\"#c53030\">did not finish after {cycles} cycles ({})</text>",
                    y + 15.0,
                    stall.name()
                );
            }
            Err(_) => {
                let _ = writeln!(
                    s,
                    "<text x=\"{label_w:.1}\" y=\"{:.1}\" fill=\"#718096\">cannot run on this network</text>",
                    y + 15.0
                );
            }
        }
    }
    let bottom = top + row_h * rows.len() as f64;
    if let Some(b) = bound {
        let x = label_w + time_w * b as f64 / max_time;
        let _ = writeln!(
            s,
            "<line class=\"bound\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#c53030\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"><title>lower bound: {b} cycles</title></line>\n<text x=\"{x:.1}\" y=\"{:.1}\" fill=\"#c53030\" text-anchor=\"middle\">lower bound {b}</text>",
            top - 2.0,
            bottom + 2.0,
            bottom + 16.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"{:.1}\" fill=\"#4a5568\">colour: the best of each chart{}</text>\n</svg>",
        h - 8.0,
        if bound.is_some() {
            "; dashed: the completion no model can beat (critical path under the port model)"
        } else {
            ""
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{self, Settings};
    use crate::traffic::Traffic;

    /// a sends 4 words to c and 3 to d; c, once it has read, sends 2 words to d.
    fn program() -> Placed {
        let mut b = Traffic::builder();
        let (a, c, d) = (b.task("a"), b.task("c"), b.task("d"));
        b.send(a, c, 4);
        b.send(c, d, 2);
        b.send(a, d, 3);
        let mut settings = Settings::new();
        settings.set("network", "mesh:2x2").expect("a network");
        pipeline::placed(&b.build(), &settings).expect("placed")
    }

    fn runs(p: &Placed) -> Vec<ModelRun> {
        let specs: Vec<String> = ["scheduled", "wormhole", "circuit", "store-forward"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        p.compare(&specs, None, |_| {})
    }

    /// The bound is the chain a → c → d (4 + 2 words; d's port takes m2's 3 words meanwhile):
    /// no model beats it, and its line is drawn where 6 cycles fall on the time axis.
    #[test]
    fn the_bound_line_is_the_critical_path_at_its_cycle() {
        let p = program();
        assert_eq!(lower_bound(&p), Some(6));
        let rows = runs(&p);
        let done: Vec<_> = rows.iter().filter_map(|r| r.result.as_ref().ok()).collect();
        assert_eq!(done.len(), rows.len());
        for x in &done {
            assert!(
                x.completion >= 6,
                "{} finished at {}",
                x.model,
                x.completion
            );
        }
        let svg = svg("t", &p, &rows);
        let longest = done
            .iter()
            .map(|x| x.model.chars().count())
            .max()
            .unwrap_or(0);
        let label_w = 16.0 + CHAR_W * longest as f64;
        let max = done.iter().map(|x| x.completion).max().unwrap_or(1) as f64;
        let x = label_w + 380.0 * 6.0 / max;
        assert!(
            svg.contains(&format!("<line class=\"bound\" x1=\"{x:.1}\" y1=")),
            "bound at {x:.1}: {svg}"
        );
        // Each bar's length is its completion on the same scale.
        for r in &done {
            let len = 380.0 * r.completion as f64 / max;
            assert!(svg.contains(&format!("width=\"{len:.1}\"")), "{}", r.model);
        }
    }

    /// The highlight follows the least completion and the least energy, whichever rows they are.
    #[test]
    fn the_best_rows_are_highlighted_whichever_they_are() {
        let p = program();
        let mut rows = runs(&p);
        let base = rows[0].result.as_ref().map(|x| x.completion).unwrap_or(0);
        for (i, r) in rows.iter_mut().enumerate() {
            if let Ok(x) = r.result.as_mut() {
                // The circuit row (third) finishes first; the store-forward row spends least.
                x.completion = if i == 2 { base } else { base + 10 + i as u64 };
                x.energy.total_pj = if i == 3 { 100.0 } else { 200.0 + i as f64 };
            }
        }
        let name = |i: usize| rows[i].result.as_ref().map(|x| x.model.clone()).unwrap();
        let svg = svg("t", &p, &rows);
        assert_eq!(svg.matches("class=\"bar best\"").count(), 1, "{svg}");
        let best = svg.find("class=\"bar best\"").unwrap();
        assert!(
            svg[best..].contains(&format!("<title>{}: {base} cycles", name(2))),
            "{svg}"
        );
        assert_eq!(svg.matches("class=\"energy best\"").count(), 1, "{svg}");
        let best = svg.find("class=\"energy best\"").unwrap();
        assert!(
            svg[best..].contains(&format!("<title>{}: ", name(3))),
            "{svg}"
        );
        let page = crate::report::html::compare("t", &p, &rows);
        assert_eq!(page.matches("<tr class=\"best\">").count(), 1);
        assert!(
            page.contains(&format!("<tr class=\"best\"><td>{}</td>", name(2))),
            "{page}"
        );
        // Ties are all best.
        if let Ok(x) = rows[1].result.as_mut() {
            x.completion = base;
        }
        assert_eq!(
            best_rows(&rows, |x| x.completion),
            [false, true, true, false]
        );
    }

    #[test]
    fn the_csv_has_the_energy_columns() {
        let p = program();
        let rows = runs(&p);
        let text = csv(&rows);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("model,completion,mean_latency,max_latency,energy_pj,energy_dynamic_pj,energy_static_pj,status")
        );
        for (line, r) in lines.zip(&rows) {
            let x = r.result.as_ref().expect("finished");
            let f: Vec<&str> = line.rsplitn(5, ',').collect();
            assert_eq!(f[0], "ok");
            assert_eq!(f[3], format!("{:.1}", x.energy.total_pj));
            assert_eq!(f[2], format!("{:.1}", x.energy.dynamic_pj));
            assert_eq!(f[1], format!("{:.1}", x.energy.static_pj));
        }
    }
}
