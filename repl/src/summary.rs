//! The `:check` summary of the traffic built so far.

use std::fmt::Write as _;

use ttdl_ir::traffic::Traffic;

/// Tasks, messages, phases, critical path and period, one per line (SPEC §3, `ttdl check`).
pub fn traffic_summary(t: &Traffic) -> String {
    let mut out = String::new();
    let words: u64 = t.messages.iter().map(|m| m.size).sum();
    let multicasts = t.messages.iter().filter(|m| m.dst.len() > 1).count();
    let _ = writeln!(out, "tasks:         {}", t.tasks.len());
    let _ = write!(out, "messages:      {} ({words} words", t.messages.len());
    if multicasts > 0 {
        let _ = write!(out, ", {multicasts} multicast");
    }
    let _ = writeln!(out, ")");
    let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(
        out,
        "phases:        {} ({})",
        t.phases.len(),
        names.join(", ")
    );
    let _ = writeln!(out, "critical path: {} cycles", t.critical_path);
    match &t.period {
        Some(p) => {
            let _ = writeln!(
                out,
                "period:        {} cycles per iteration over {} iterations (bound by {})",
                p.lower_bound, p.iterations, p.bound_by
            );
        }
        None => {
            let _ = writeln!(out, "period:        none (the program does not repeat)");
        }
    }
    out
}
