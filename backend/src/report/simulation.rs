//! What one run of a program on one hardware model measured, as `ttdl simulate` and the REPL's
//! `:simulate` print it.

use std::fmt::Write as _;

use crate::pipeline::Placed;
use crate::sim::drive::program::SimReport;

/// The run's summary: model, network, program, completion, latency, throughput, busiest links.
pub fn summary(prog: &Placed, r: &SimReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "model        {}", r.model);
    let _ = writeln!(
        s,
        "network      {} ({} nodes, {} links)",
        prog.network.spec,
        prog.network.nodes(),
        prog.network.links.len()
    );
    let _ = writeln!(
        s,
        "program      {} tasks, {} messages",
        r.tasks.len(),
        r.messages.len()
    );
    let _ = writeln!(s, "completion   {} cycles", r.completion);
    let l = &r.latency;
    let _ = writeln!(
        s,
        "latency      mean {:.2}, p50 {}, p95 {}, max {} cycles (send to full delivery)",
        l.mean, l.p50, l.p95, l.max
    );
    let _ = writeln!(
        s,
        "throughput   {:.3} words/cycle ({} words, {} packets through the network)",
        r.throughput, r.words, r.packets
    );
    let _ = writeln!(s, "peak link    {:.1}% busy", 100.0 * r.peak_utilization);
    let e = &r.energy;
    let _ = writeln!(
        s,
        "energy       {} ({} dynamic, {} static)",
        crate::sim::energy::format_pj(e.total_pj),
        crate::sim::energy::format_pj(e.dynamic_pj),
        crate::sim::energy::format_pj(e.static_pj)
    );
    if let Some(b) = r.buffered_max {
        let _ = writeln!(
            s,
            "buffers      at most {b} word(s) waiting at one switch input"
        );
    }
    // The busiest links, ties by link order, so the output is stable.
    let mut links: Vec<_> = r.links.iter().filter(|l| l.busy > 0).collect();
    links.sort_by_key(|l| std::cmp::Reverse(l.busy));
    if !links.is_empty() {
        let top: Vec<String> = links
            .iter()
            .take(5)
            .map(|l| format!("{}->{} {:.1}%", l.from, l.to, 100.0 * l.utilization))
            .collect();
        let _ = writeln!(s, "busiest      {}", top.join(", "));
    }
    s
}

/// Per task when it finished and per message when it was sent and delivered.
pub fn detail(r: &SimReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\ntask           node  finish");
    for t in &r.tasks {
        let _ = writeln!(s, "{:<14} {:>4}  {:>6}", t.name, t.node, t.finish);
    }
    let _ = writeln!(
        s,
        "\nmsg   src -> dst        size    sent  delivered  latency"
    );
    for m in &r.messages {
        let dst: Vec<String> = m.dst.iter().map(|d| d.to_string()).collect();
        let _ = writeln!(
            s,
            "{:<5} {:>3} -> {:<9} {:>5} {:>7} {:>10} {:>8}{}",
            m.msg,
            m.src,
            dst.join(","),
            m.size,
            m.sent,
            m.delivered,
            m.latency,
            if m.local { "  (local)" } else { "" }
        );
    }
    s
}
