//! Views of a plan as plain tables, one per question a user asks of it (the REPL's `:show`):
//! when each message holds each resource, the route each takes, its window against its
//! delivery, and the bounds the plan is judged by.

use std::fmt::Write as _;
use ttdl_ir::limits::Limits;

use crate::pipeline::Plan;
use crate::schedule::{self, periodic};
use crate::traffic::Route;

fn cut(s: &mut String, shown: usize, total: usize) {
    if total > shown {
        let _ = writeln!(s, "… {} more rows", total - shown);
    }
}

/// `msg resource start end`, by message then start.
pub fn schedule(plan: &Plan) -> String {
    let mut s = String::from("msg    resource          start      end\n");
    for h in plan.schedule.holds.iter().take(Limits::TABLE_ROWS) {
        let _ = writeln!(
            s,
            "{:<6} {:<14} {:>8} {:>8}",
            h.msg(),
            h.resource().to_string(),
            h.start(),
            h.end()
        );
    }
    cut(&mut s, Limits::TABLE_ROWS, plan.schedule.holds.len());
    s
}

/// Each message's route as nodes (a multicast as its tree's edges).
pub fn routes(plan: &Plan) -> String {
    let mut s = String::from("msg    src -> dst       hops  route\n");
    let name = |t: usize| plan.traffic.tasks.get(t).map_or("?", |x| x.name.as_str());
    for (m, r) in plan
        .routing
        .routes
        .iter()
        .enumerate()
        .take(Limits::TABLE_ROWS)
    {
        let msg = &plan.traffic.messages[m];
        let dst: Vec<&str> = msg.dst.iter().map(|&d| name(d)).collect();
        let (hops, text) = match r {
            Route::Path(p) => (
                p.len().saturating_sub(1),
                p.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Route::Tree(edges) => (
                edges.len(),
                edges
                    .iter()
                    .map(|(a, b)| format!("{a}->{b}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        };
        let ends = format!("{} -> {}", name(msg.src), dst.join(","));
        let _ = writeln!(s, "{m:<6} {ends:<16} {hops:>4}  {text}");
    }
    cut(&mut s, Limits::TABLE_ROWS, plan.routing.routes.len());
    s
}

/// Each message's release, program deadline, the deadline the schedule meets, and its arrival;
/// late messages marked with their cause.
pub fn deadlines(plan: &Plan) -> String {
    let sch = &plan.schedule;
    let mut s = String::from("msg     release  deadline  effective   arrival\n");
    let late: std::collections::BTreeMap<usize, String> =
        sch.relaxed.iter().map(|r| (r.msg, r.cause())).collect();
    for m in plan.traffic.messages.iter().take(Limits::TABLE_ROWS) {
        let _ = write!(
            s,
            "{:<6} {:>8} {:>9} {:>10} {:>9}",
            m.id, m.release, m.deadline, sch.deadline[m.id], sch.arrival[m.id]
        );
        match late.get(&m.id) {
            Some(cause) => {
                let _ = writeln!(s, "  late: {cause}");
            }
            None => s.push('\n'),
        }
    }
    cut(&mut s, Limits::TABLE_ROWS, plan.traffic.messages.len());
    let _ = writeln!(
        s,
        "{} of {} messages late",
        sch.relaxed.len(),
        plan.traffic.messages.len()
    );
    s
}

/// The makespan against its lower bound, and the period against its bound, each with what binds.
pub fn bounds(plan: &Plan) -> Result<String, crate::pipeline::PipelineError> {
    let problem = plan.problem()?;
    let (lb, by) = schedule::lower_bound(&problem);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "makespan {} ≥ lower bound {lb} ({by}){}",
        plan.schedule.makespan,
        if plan.schedule.makespan == lb {
            ": optimal"
        } else {
            ""
        }
    );
    match periodic::analyze(&problem, &plan.schedule) {
        Some(p) if p.steady() => {
            let _ = writeln!(
                s,
                "period {} ≥ lower bound {} ({}), over {} iterations",
                p.achieved, p.lower_bound, p.bound_by, p.iterations
            );
        }
        Some(p) => {
            let _ = writeln!(
                s,
                "period: no steady state in {} iterations (lower bound {}: {})",
                p.iterations, p.lower_bound, p.bound_by
            );
        }
        None => s.push_str("period: the program does not repeat\n"),
    }
    Ok(s)
}
