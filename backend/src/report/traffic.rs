//! What `ttdl check`, the REPL's `:check` and embedders show of a program before it is placed:
//! its tasks, messages, phases, critical path and period bound (SPEC §3).

use std::collections::BTreeMap;

use serde_json::json;

use crate::traffic::Traffic;

/// The text summary: one fact per line, aligned.
pub fn text(t: &Traffic) -> String {
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: String| {
        s.push_str(&format!("{k:<14} {v}\n"));
    };
    line(&mut s, "tasks", t.tasks.len().to_string());
    // A folded program: counts of the whole program, from the iterations recorded.
    let (count, words, multicast) = match (t.repeat, ttdl_ir::iterations::Shape::of(t)) {
        (Some(n), Some(shape)) => {
            let places = shape.places(t).unwrap_or_default();
            let weight = |m: &crate::traffic::Message| match places.get(m.id) {
                Some(ttdl_ir::iterations::Place::Iteration { iteration, .. })
                    if *iteration + 1 == shape.count =>
                {
                    n - shape.count + 1
                }
                _ => 1,
            };
            let count: u64 = t.messages.iter().map(weight).sum();
            let words: u64 = t.messages.iter().map(|m| weight(m) * m.size).sum();
            let multicast: u64 = t
                .messages
                .iter()
                .filter(|m| m.is_multicast())
                .map(weight)
                .sum();
            line(
                &mut s,
                "folded",
                format!(
                    "the outermost `iterate` runs {n} times: {} iterations evaluated and found alike, the rest recorded as a count",
                    shape.count
                ),
            );
            (count, words, multicast)
        }
        _ => (
            t.messages.len() as u64,
            t.messages.iter().map(|m| m.size).sum(),
            t.messages.iter().filter(|m| m.is_multicast()).count() as u64,
        ),
    };
    let mut msg = format!("{count} ({words} words");
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
        if let Some(m) = &tg.mapping {
            parts.push(format!("mapping {m}"));
        }
        for (setting, v) in tg.settings.iter() {
            parts.push(format!("{} {v}", setting.name));
        }
        line(&mut s, "target", parts.join(", "));
    }
    s
}

/// The JSON summary (`--format json`): the counts and the full task and message lists.
pub fn json(t: &Traffic) -> serde_json::Value {
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
