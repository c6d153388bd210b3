//! The contention report, in the spirit of Chittor's Contention Analyzer (§3.7): contention
//! parameters, saturation node traffic for the average and the worst node and per node, the worst
//! paths and channels, and a verdict comparing them with the traffic the program applies.

use std::fmt::Write;

use super::{Contention, Metrics};
use crate::topology::Network;
use crate::traffic::{Placement, Routing, TaskId, Traffic};

/// Applied node traffic per sending task (words per cycle, i.e. a fraction of one link's
/// bandwidth): the words it sends over the time they are spread across — the period times the
/// iterations for a repeating program, the critical path otherwise.
fn applied_traffic(traffic: &Traffic) -> Vec<(TaskId, f64)> {
    let horizon = match &traffic.period {
        Some(p) if p.lower_bound > 0 => p.lower_bound.saturating_mul(p.iterations.max(1)),
        _ => traffic.critical_path.max(
            traffic
                .messages
                .iter()
                .map(|m| super::utilization::window(m).1)
                .max()
                .unwrap_or(1),
        ),
    }
    .max(1);
    let mut words: std::collections::BTreeMap<TaskId, u64> = Default::default();
    for m in &traffic.messages {
        *words.entry(m.src).or_default() += m.size;
    }
    words
        .into_iter()
        .map(|(t, w)| (t, w as f64 / horizon as f64))
        .collect()
}

fn task_name(traffic: &Traffic, t: TaskId) -> String {
    traffic
        .tasks
        .get(t)
        .map(|t| t.name.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("task {t}"))
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// Chittor-style contention report of a placed, routed traffic.
pub fn contention_report(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
) -> String {
    let m = Metrics::compute(traffic, network, placement, routing);
    let c = Contention::analyse(traffic, network, routing);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Contention analysis: {} distinct paths of {} messages on {}",
        m.paths,
        traffic.messages.len(),
        network.spec
    );
    let _ = writeln!(
        s,
        "  path length D          avg {:>7.2}  max {:>5}",
        m.path_length_avg, m.dilation
    );
    let _ = writeln!(
        s,
        "  logical path length d  avg {:>7.2}  max {:>5}",
        m.logical_path_length_avg, m.logical_path_length_max
    );
    let _ = writeln!(
        s,
        "  channel load χ         avg {:>7.2}  max {:>5}",
        m.channel_load_avg, m.channel_load_max
    );
    let _ = writeln!(
        s,
        "  path contention ν      avg {:>7.2}  max {:>5}",
        m.path_contention_avg, m.path_contention_max
    );
    let _ = writeln!(
        s,
        "  link utilization lu    peak {:.3}{}  aggregate {:.3}",
        m.peak_utilization,
        m.peak_link
            .map(|(a, b)| format!(" on {a}->{b}"))
            .unwrap_or_default(),
        m.aggregate_utilization
    );
    let _ = writeln!(
        s,
        "Saturation node traffic (δ_avg = {:.2}): average node {}, worst node {}",
        c.degree_avg,
        pct(m.saturation_avg_node),
        pct(m.saturation_worst_node)
    );

    let mut worst: Vec<_> = c.paths.iter().collect();
    worst.sort_by(|a, b| b.contention.cmp(&a.contention).then(a.msg.cmp(&b.msg)));
    let _ = writeln!(s, "Worst paths:");
    for p in worst.iter().take(5) {
        let dst: Vec<String> = p.dst.iter().map(|&d| task_name(traffic, d)).collect();
        let _ = writeln!(
            s,
            "  msg {:<5} {} -> {}  ν = {}, d = {}, D = {}",
            p.msg,
            task_name(traffic, p.src),
            dst.join(","),
            p.contention,
            p.logical_length,
            p.hops
        );
    }
    let mut chans: Vec<usize> = (0..c.channel_load.len())
        .filter(|&l| c.channel_load[l] > 0)
        .collect();
    chans.sort_by(|&a, &b| c.channel_load[b].cmp(&c.channel_load[a]).then(a.cmp(&b)));
    let _ = writeln!(s, "Worst channels:");
    for &l in chans.iter().take(5) {
        let link = network.links[l];
        let _ = writeln!(
            s,
            "  {:>5} -> {:<5} {:<6} χ = {}",
            link.from,
            link.to,
            link.port.name(),
            c.channel_load[l]
        );
    }

    let applied = applied_traffic(traffic);
    let bounds = c.node_bounds();
    let _ = writeln!(s, "Worst nodes (λ_n(v) ≤ δ(v)/(ν_m(v)+1)):");
    for &(t, deg, nu, bound) in bounds.iter().take(5) {
        let a = applied
            .iter()
            .find(|x| x.0 == t)
            .map(|x| x.1)
            .unwrap_or(0.0);
        let node = placement.node_of.get(t).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "  {} on node {}: δ = {}, ν_m = {}, bound {}, applied {}",
            task_name(traffic, t),
            node,
            deg,
            nu,
            pct(bound),
            pct(a)
        );
    }
    let avg_applied = if applied.is_empty() {
        0.0
    } else {
        applied.iter().map(|x| x.1).sum::<f64>() / applied.len() as f64
    };
    let max_applied = applied.iter().map(|x| x.1).fold(0.0, f64::max);
    let hurt: Vec<String> = bounds
        .iter()
        .filter(|b| applied.iter().any(|a| a.0 == b.0 && a.1 > b.3))
        .map(|b| task_name(traffic, b.0))
        .collect();
    let verdict = if max_applied < m.saturation_worst_node {
        "adequate: every node applies less traffic than the worst node's saturation level"
            .to_string()
    } else if avg_applied < m.saturation_avg_node {
        if hurt.is_empty() {
            "adequate on average; the busiest node exceeds the worst-node bound but stays within its own bound".to_string()
        } else {
            format!(
                "adequate on average, but {} node{} saturate{}: {}",
                hurt.len(),
                if hurt.len() == 1 { "" } else { "s" },
                if hurt.len() == 1 { "s" } else { "" },
                hurt.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
            )
        }
    } else {
        "inadequate: the average node applies more than its saturation traffic; improve the placement or routing".to_string()
    };
    let _ = writeln!(
        s,
        "Applied node traffic: average {}, maximum {}",
        pct(avg_applied),
        pct(max_applied)
    );
    let _ = writeln!(s, "Verdict: {verdict}");
    s
}
