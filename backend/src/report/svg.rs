//! SVG pictures: network snapshots with the messages routed in each interval (Minsky Figs 5-6,
//! 5-7: circles for nodes labelled with their tasks, arrows for messages), and a link-by-time
//! chart of the whole schedule. Written directly, no dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::Plan;
use crate::schedule::Resource;

fn colour(msg: usize) -> String {
    let hue = (msg as f64 * 137.508) % 360.0;
    format!("hsl({hue:.0},70%,45%)")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Rows = links and ports in use, columns = cycles; one bar per hold.
pub fn timeline(p: &Plan) -> String {
    let s = p.schedule;
    let rows: BTreeSet<Resource> = s.holds.iter().map(|h| h.resource).collect();
    let rows: Vec<Resource> = rows.into_iter().collect();
    let index: BTreeMap<Resource, usize> = rows.iter().enumerate().map(|(i, r)| (*r, i)).collect();
    let span = s.makespan.max(1) as f64;
    let (left, top, width, row_h) = (110.0, 30.0, 900.0, 14.0);
    let height = top + rows.len() as f64 * row_h + 30.0;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height:.0}" font-family="monospace" font-size="10">"#,
        left + width + 20.0
    );
    let _ = writeln!(
        o,
        r#"<text x="{left}" y="16">{} schedule on {}: makespan {} cycles</text>"#,
        s.method.name(),
        p.network.spec,
        s.makespan
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h;
        let _ = writeln!(
            o,
            r#"<text x="4" y="{:.1}">{}</text>"#,
            y + row_h - 3.0,
            esc(&r.to_string())
        );
        let _ = writeln!(
            o,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>",
            left + width
        );
    }
    for h in &s.holds {
        let i = index[&h.resource];
        let x = left + h.start as f64 / span * width;
        let w = ((h.end - h.start) as f64 / span * width).max(0.5);
        let y = top + i as f64 * row_h + 1.0;
        let _ = writeln!(
            o,
            r#"<rect x="{x:.2}" y="{y:.1}" width="{w:.2}" height="{:.1}" fill="{}"><title>M{} {} {}..{}</title></rect>"#,
            row_h - 2.0,
            colour(h.msg),
            h.msg,
            esc(&h.resource.to_string()),
            h.start,
            h.end
        );
    }
    // Time axis: about ten ticks.
    let step = (s.makespan / 10).max(1);
    let mut t = 0;
    let y = top + rows.len() as f64 * row_h + 14.0;
    while t <= s.makespan {
        let x = left + t as f64 / span * width;
        let _ = writeln!(o, r#"<text x="{x:.1}" y="{y:.1}">{t}</text>"#);
        t += step;
    }
    o.push_str("</svg>\n");
    o
}

/// The intervals to draw: between consecutive distinct cycles at which some message starts on a
/// link, at most `max` of them (the shortest merged into their predecessor).
fn intervals(p: &Plan, max: usize) -> Vec<(u64, u64)> {
    let s = p.schedule;
    let mut starts: BTreeSet<u64> = s
        .holds
        .iter()
        .filter(|h| matches!(h.resource, Resource::Link { .. }))
        .map(|h| h.start)
        .collect();
    starts.insert(s.makespan);
    let mut cuts: Vec<u64> = starts.into_iter().collect();
    while cuts.len() > max + 1 {
        // Drop the cut that closes the shortest interval.
        let (i, _) = cuts
            .windows(2)
            .enumerate()
            .skip(1)
            .min_by_key(|(i, w)| (w[1] - w[0], *i))
            .unwrap_or((1, &cuts[..2]));
        cuts.remove(i);
    }
    cuts.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Position of a node in the picture: x and y coordinates, z as a diagonal offset; other
/// dimensions (hypercubes) folded into x and y alternately.
fn position(p: &Plan, node: usize) -> (f64, f64) {
    let c = p.network.coords.get(node).cloned().unwrap_or_default();
    let mut x = 0.0;
    let mut y = 0.0;
    let mut sx = 1.0;
    let mut sy = 1.0;
    for (d, v) in c.iter().enumerate() {
        let dim = p.network.spec.dims.get(d).copied().unwrap_or(2).max(2) as f64;
        let dim = if matches!(p.network.spec.kind, crate::topology::Kind::Hypercube) {
            2.0
        } else {
            dim
        };
        if d == 2 {
            x += *v as f64 * 0.3;
            y += *v as f64 * 0.3;
            continue;
        }
        if d % 2 == 0 {
            x += *v as f64 * sx;
            sx *= dim + 0.5;
        } else {
            y += *v as f64 * sy;
            sy *= dim + 0.5;
        }
    }
    (x, y)
}

/// One panel per interval, in a grid.
pub fn snapshots(p: &Plan) -> String {
    let panels = intervals(p, 12);
    let nodes = p.network.nodes();
    let pos: Vec<(f64, f64)> = (0..nodes).map(|n| position(p, n)).collect();
    let maxx = pos.iter().map(|q| q.0).fold(0.0, f64::max);
    let maxy = pos.iter().map(|q| q.1).fold(0.0, f64::max);
    let cell = (260.0 / (maxx.max(maxy) + 1.0)).clamp(20.0, 70.0);
    let pw = (maxx + 1.0) * cell + 40.0;
    let ph = (maxy + 1.0) * cell + 60.0;
    let cols = 3usize.min(panels.len().max(1));
    let rows = panels.len().div_ceil(cols).max(1);
    let mut tasks_on: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for t in &p.traffic.tasks {
        if let Some(&n) = p.placement.node_of.get(t.id) {
            tasks_on.entry(n).or_default().push(t.id.to_string());
        }
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{:.0}" font-family="sans-serif" font-size="10">"#,
        pw * cols as f64,
        ph * rows as f64
    );
    o.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"5\" markerHeight=\"5\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>\n");
    for (k, &(a, b)) in panels.iter().enumerate() {
        let ox = (k % cols) as f64 * pw + 20.0;
        let oy = (k / cols) as f64 * ph + 30.0;
        let at = |n: usize| {
            (
                ox + pos[n].0 * cell + cell / 2.0,
                oy + (maxy - pos[n].1) * cell + cell / 2.0,
            )
        };
        let _ = writeln!(
            o,
            r#"<text x="{ox:.0}" y="{:.0}">Interval {a} -&gt; {b}</text>"#,
            oy - 12.0
        );
        for l in &p.network.links {
            if l.from < l.to {
                let (x1, y1) = at(l.from);
                let (x2, y2) = at(l.to);
                let _ = writeln!(o, "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"#ccc\"/>");
            }
        }
        // Messages holding links in this interval: one arrow per link, labelled once per message.
        let mut labelled = BTreeSet::new();
        for h in &p.schedule.holds {
            let Resource::Link { from, to } = h.resource else {
                continue;
            };
            if h.start >= b || h.end <= a {
                continue;
            }
            let (x1, y1) = at(from);
            let (x2, y2) = at(to);
            // Offset each direction sideways so opposite messages do not overlap.
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (nx, ny) = (-dy / len * 3.0, dx / len * 3.0);
            let r = cell * 0.22;
            let (sx, sy) = (x1 + dx / len * r + nx, y1 + dy / len * r + ny);
            let (ex, ey) = (x2 - dx / len * r + nx, y2 - dy / len * r + ny);
            let _ = writeln!(
                o,
                r#"<line x1="{sx:.1}" y1="{sy:.1}" x2="{ex:.1}" y2="{ey:.1}" stroke="{}" stroke-width="2" marker-end="url(#arrow)"><title>M{} {}..{}</title></line>"#,
                colour(h.msg),
                h.msg,
                h.start,
                h.end
            );
            if labelled.insert(h.msg) {
                let _ = writeln!(
                    o,
                    r#"<text x="{:.1}" y="{:.1}" fill="{}" font-size="8">M{}</text>"#,
                    (sx + ex) / 2.0 + nx * 2.0,
                    (sy + ey) / 2.0 + ny * 2.0,
                    colour(h.msg),
                    h.msg
                );
            }
        }
        for n in 0..nodes {
            let (x, y) = at(n);
            let label = tasks_on.get(&n).map(|v| v.join(",")).unwrap_or_default();
            let _ = writeln!(
                o,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{:.1}\" fill=\"#fff\" stroke=\"#333\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                cell * 0.22,
                y + 3.0,
                esc(&label)
            );
        }
    }
    o.push_str("</svg>\n");
    o
}
