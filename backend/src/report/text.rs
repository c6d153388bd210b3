//! The summary for people (SPEC §4): tasks, messages, phases, critical path, period, placement
//! cost, peak link utilization, makespan, lower bounds, deadlines.

use std::fmt::Write;

use super::Plan;
use crate::schedule::feedback;

pub fn summary(p: &Plan) -> String {
    let t = p.traffic;
    let s = p.schedule;
    let mut o = String::new();
    let phases = t
        .messages
        .iter()
        .map(|m| m.phase + 1)
        .max()
        .unwrap_or(0)
        .max(t.phases.len());
    let _ = writeln!(o, "tasks:            {}", t.tasks.len());
    let _ = writeln!(
        o,
        "messages:         {} ({} words)",
        t.messages.len(),
        t.messages.iter().map(|m| m.size).sum::<u64>()
    );
    let _ = writeln!(o, "phases:           {phases}");
    let _ = writeln!(
        o,
        "critical path:    {} cycles (ideal, contention-free timing)",
        t.critical_path
    );
    if let Some(pr) = &p.period {
        if pr.steady() {
            let _ = writeln!(
                o,
                "period:           {} cycles over {} iterations (lower bound {}: {})",
                pr.achieved, pr.iterations, pr.lower_bound, pr.bound_by
            );
        } else {
            let _ = writeln!(
                o,
                "period:           no steady state in {} iterations (they end {} cycles apart, \
                 closer than any steady state allows: lower bound {}: {})",
                pr.iterations, pr.achieved, pr.lower_bound, pr.bound_by
            );
        }
    }
    let _ = writeln!(
        o,
        "network:          {} ({} nodes, {} links)",
        p.network.spec,
        p.network.nodes(),
        p.network.links.len()
    );
    let _ = writeln!(o, "placement cost:   {} word-hops", p.placement_cost);
    match p.peak_utilization.1 {
        Some(r) => {
            let _ = writeln!(
                o,
                "peak link use:    {:.1}% (link {r})",
                p.peak_utilization.0 * 100.0
            );
        }
        None => {
            let _ = writeln!(o, "peak link use:    0% (no message crosses a link)");
        }
    }
    let c = &p.contention;
    let _ = writeln!(
        o,
        "contention:       window utilization peak {:.2} (Minsky lu_j), channel load max {}, path contention max {} avg {:.2} (Chittor), dilation {}",
        c.peak_utilization, c.channel_load_max, c.path_contention_max, c.path_contention_avg, c.dilation
    );
    let _ = writeln!(
        o,
        "schedule:         {} scheduler, {} holds, switch latency {} cycle(s), {} port(s) per node{}",
        s.method.name(),
        p.fragments,
        s.hardware.hop_latency,
        s.hardware.ports,
        match s.hardware.setup {
            0 => String::new(),
            c => format!(", {c} set-up cycle(s) per message (counted in its size)"),
        }
    );
    let _ = writeln!(o, "buffers:          {}", p.buffers.summary(&s.hardware));
    if let Some(lp) = &s.lp {
        let _ = writeln!(
            o,
            "linear programs:  {} solved ({} variables, {} constraints, largest {} variables) in {} maximal subsets",
            lp.programs, lp.variables, lp.constraints, lp.largest_variables, lp.subsets
        );
    }
    let _ = writeln!(o, "makespan:         {} cycles", s.makespan);
    let _ = writeln!(
        o,
        "lower bound:      {} cycles ({})",
        p.lower_bound.0, p.lower_bound.1
    );
    if let Some(opt) = crate::schedule::Optimality::of(s, p.lower_bound.0) {
        let why = match s.optimum_bound {
            Some(b) if opt.optimal() && b >= s.makespan => "proven by the MILP".to_string(),
            Some(b) => format!("the MILP's bound: {b} cycles"),
            None => "meets the lower bound".to_string(),
        };
        let _ = writeln!(o, "optimality:       {} ({why})", opt.describe());
    }
    if s.deadlines_met() {
        let _ = writeln!(o, "deadlines:        all met");
    } else {
        let _ = writeln!(
            o,
            "deadlines:        {} of {} relaxed",
            s.relaxed.len(),
            t.messages.len()
        );
        let name = |task: usize| {
            t.tasks
                .get(task)
                .map_or("?".to_string(), |x| x.name.clone())
        };
        for r in s.relaxed.iter().take(20) {
            let m = &t.messages[r.msg];
            let dst: Vec<String> = m.dst.iter().map(|&d| name(d)).collect();
            let shift = if r.upstream > 0 {
                format!(" (+{} from upstream)", r.upstream)
            } else {
                String::new()
            };
            let _ = write!(
                o,
                "  message {} ({} -> {}): deadline {}{} moved to {}",
                r.msg,
                name(m.src),
                dst.join(","),
                r.deadline,
                shift,
                r.new_deadline
            );
            let _ = writeln!(o, "; {}", r.cause());
        }
        if s.relaxed.len() > 20 {
            let _ = writeln!(
                o,
                "  … and {} more (see the JSON output)",
                s.relaxed.len() - 20
            );
        }
        let hot = feedback::hot_resources(s);
        if !hot.is_empty() {
            let list: Vec<String> = hot
                .iter()
                .take(5)
                .map(|(r, w)| format!("{r} ({w} cycles)"))
                .collect();
            let _ = writeln!(o, "  responsible:    {}", list.join(", "));
        }
    }
    o
}
