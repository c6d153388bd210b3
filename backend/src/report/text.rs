//! The summary for people (SPEC §4): tasks, messages, phases, critical path, period, placement
//! cost, peak link utilization, makespan, lower bounds, deadlines.

use std::fmt;

use super::Plan;
use crate::schedule::feedback;

pub fn summary(p: &Plan) -> Summary {
    let t = p.traffic;
    let s = p.schedule;
    let mut o = Summary::default();
    let phases = t
        .messages
        .iter()
        .map(|m| m.phase + 1)
        .max()
        .unwrap_or(0)
        .max(t.phases.len());
    o.push("tasks", t.tasks.len().to_string());
    o.push(
        "messages",
        format!(
            "{} ({} words)",
            t.messages.len(),
            t.messages.iter().map(|m| m.size).sum::<u64>()
        ),
    );
    o.push("phases", phases.to_string());
    o.push(
        "critical path",
        format!("{} cycles (ideal, contention-free timing)", t.critical_path),
    );
    if let Some(pr) = &p.period {
        if pr.steady() {
            o.push(
                "period",
                format!(
                    "{} cycles over {} iterations (lower bound {}: {})",
                    pr.achieved, pr.iterations, pr.lower_bound, pr.bound_by
                ),
            );
        } else {
            o.push(
                "period",
                format!(
                    "no steady state in {} iterations (they end {} cycles apart, \
                 closer than any steady state allows: lower bound {}: {})",
                    pr.iterations, pr.achieved, pr.lower_bound, pr.bound_by
                ),
            );
        }
    }
    o.push(
        "network",
        format!(
            "{} ({} nodes, {} links)",
            p.network.spec,
            p.network.nodes(),
            p.network.links.len()
        ),
    );
    o.push("placement cost", format!("{} word-hops", p.placement_cost));
    match p.peak_utilization.1 {
        Some(r) => {
            o.push(
                "peak link use",
                format!("{:.1}% (link {r})", p.peak_utilization.0 * 100.0),
            );
        }
        None => {
            o.push(
                "peak link use",
                "0% (no message crosses a link)".to_string(),
            );
        }
    }
    let c = &p.contention;
    o.push("contention", format!("window utilization peak {:.2} (Minsky lu_j), channel load max {}, path contention max {} avg {:.2} (Chittor), dilation {}",
        c.peak_utilization, c.channel_load_max, c.path_contention_max, c.path_contention_avg, c.dilation));
    o.push(
        "schedule",
        format!(
            "{} scheduler, {} holds, switch latency {} cycle(s), {} port(s) per node{}",
            s.method.name(),
            p.fragments,
            s.hardware.hop_latency,
            s.hardware.ports,
            match s.hardware.setup {
                0 => String::new(),
                c => format!(", {c} set-up cycle(s) per message (counted in its size)"),
            }
        ),
    );
    o.push("buffers", p.buffers.summary(&s.hardware));
    if let Some(lp) = &s.lp {
        o.push("linear programs", format!("{} solved ({} variables, {} constraints, largest {} variables) in {} maximal subsets",
            lp.programs, lp.variables, lp.constraints, lp.largest_variables, lp.subsets));
    }
    o.push("makespan", format!("{} cycles", s.makespan));
    o.push(
        "lower bound",
        format!("{} cycles ({})", p.lower_bound.0, p.lower_bound.1),
    );
    if let Some(opt) = crate::schedule::Optimality::of(s, p.lower_bound.0) {
        let why = match s.optimum_bound {
            Some(b) if opt.optimal() && b >= s.makespan => "proven by the MILP".to_string(),
            Some(b) => format!("the MILP's bound: {b} cycles"),
            None => "meets the lower bound".to_string(),
        };
        o.push("optimality", format!("{} ({why})", opt.describe()));
    }
    if s.deadlines_met() {
        o.push("deadlines", "all met".to_string());
    } else {
        o.push(
            "deadlines",
            format!("{} of {} relaxed", s.relaxed.len(), t.messages.len()),
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
            o.detail(format!(
                "  message {} ({} -> {}): deadline {}{} moved to {}; {}",
                r.msg,
                name(m.src),
                dst.join(","),
                r.deadline,
                shift,
                r.new_deadline,
                r.cause()
            ));
        }
        if s.relaxed.len() > 20 {
            o.detail(format!(
                "  … and {} more (see the JSON output)",
                s.relaxed.len() - 20
            ));
        }
        let hot = feedback::hot_resources(s);
        if !hot.is_empty() {
            let list: Vec<String> = hot
                .iter()
                .take(5)
                .map(|(r, w)| format!("{r} ({w} cycles)"))
                .collect();
            o.detail(format!("  responsible:    {}", list.join(", ")));
        }
    }
    o
}

/// The summary as lines of `key: value` (and indented detail lines under the one before), so a
/// plan adds or replaces a line by its key rather than by searching the printed text.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    lines: Vec<(&'static str, String)>,
}

/// The column values start at.
const VALUE_COLUMN: usize = 18;

impl Summary {
    /// Appends `key: value`.
    pub fn push(&mut self, key: &'static str, value: String) {
        self.lines.push((key, value));
    }

    /// Appends a line printed as it is (indented detail of the line before).
    pub fn detail(&mut self, line: String) {
        self.lines.push(("", line));
    }

    /// Inserts `key: value` after the line `after` and its details, or at the end if there is no
    /// such line.
    pub fn insert_after(&mut self, after: &str, key: &'static str, value: String) {
        let at = match self.lines.iter().position(|(k, _)| *k == after) {
            Some(i) => {
                i + 1
                    + self.lines[i + 1..]
                        .iter()
                        .take_while(|(k, _)| k.is_empty())
                        .count()
            }
            None => self.lines.len(),
        };
        self.lines.insert(at, (key, value));
    }

    /// Replaces the value of the line `key`, if there is one.
    pub fn set(&mut self, key: &str, value: String) {
        if let Some((_, v)) = self.lines.iter_mut().find(|(k, _)| *k == key) {
            *v = value;
        }
    }

    /// The value of the line `key`.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (key, value) in &self.lines {
            if key.is_empty() {
                writeln!(f, "{value}")?;
            } else {
                writeln!(f, "{:<VALUE_COLUMN$}{value}", format!("{key}:"))?;
            }
        }
        Ok(())
    }
}
