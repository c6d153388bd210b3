//! SVG pictures: network snapshots with the messages routed in each interval (Minsky Figs 5-6,
//! 5-7: circles for nodes labelled with their tasks, arrows for messages), and a link-by-time
//! chart of the whole schedule. Written directly, no dependency.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::html::{colour_key, ColourKey};
use super::Plan;
use crate::schedule::Resource;

/// Tableau's 20 colours, dark ones first: the run report's palette (see `html.rs`).
const PALETTE: [&str; 20] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
    "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
];

/// The colour of category `c` under `key`: a palette entry, or a hue along the scale when the
/// categories are too many to tell apart.
fn colour(key: &ColourKey, c: usize) -> String {
    if key.continuous {
        let n = key.names.len().max(2) - 1;
        format!("hsl({:.0},70%,45%)", c as f64 / n as f64 * 280.0)
    } else {
        PALETTE[c % PALETTE.len()].to_string()
    }
}

fn msg_colour(key: &ColourKey, msg: usize) -> String {
    colour(key, key.of.get(msg).copied().unwrap_or(0))
}

/// One line of legend at `(x, y)`: what the colours mean and a swatch per category (or the two
/// ends of the hue scale); returns the SVG and its width.
fn legend(key: &ColourKey, x: f64, y: f64) -> (String, f64) {
    let mut o = String::new();
    let head = format!("colour: {}", key.key);
    let _ = write!(o, r#"<text x="{x:.1}" y="{y:.1}">{}</text>"#, esc(&head));
    let mut at = x + head.chars().count() as f64 * 6.2 + 12.0;
    if key.continuous {
        let (first, last) = (
            key.names.first().cloned().unwrap_or_default(),
            key.names.last().cloned().unwrap_or_default(),
        );
        let _ = write!(o, r#"<text x="{at:.1}" y="{y:.1}">{}</text>"#, esc(&first));
        at += first.chars().count() as f64 * 6.2 + 6.0;
        for k in 0..=20 {
            let _ = write!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="6" height="10" fill="hsl({:.0},70%,45%)"/>"#,
                at + k as f64 * 6.0,
                y - 9.0,
                k as f64 / 20.0 * 280.0
            );
        }
        at += 21.0 * 6.0 + 6.0;
        let _ = write!(o, r#"<text x="{at:.1}" y="{y:.1}">{}</text>"#, esc(&last));
        at += last.chars().count() as f64 * 6.2;
    } else {
        for (c, name) in key.names.iter().enumerate() {
            let _ = write!(
                o,
                r#"<rect x="{at:.1}" y="{:.1}" width="10" height="10" fill="{}"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
                y - 9.0,
                colour(key, c),
                at + 14.0,
                esc(name)
            );
            at += 14.0 + name.chars().count() as f64 * 6.2 + 12.0;
        }
    }
    (o, at - x)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Rows = links and ports in use, columns = cycles; one bar per hold.
pub fn timeline(p: &Plan) -> String {
    let s = p.schedule;
    let rows: BTreeSet<Resource> = s.holds.iter().map(|h| h.resource()).collect();
    let rows: Vec<Resource> = rows.into_iter().collect();
    let index: BTreeMap<Resource, usize> = rows.iter().enumerate().map(|(i, r)| (*r, i)).collect();
    let span = s.makespan.max(1) as f64;
    let (left, top, width, row_h) = (110.0, 46.0, 900.0, 14.0);
    let height = top + rows.len() as f64 * row_h + 30.0;
    let key = colour_key(p);
    let (legend, legend_w) = legend(&key, left, 32.0);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{height:.0}" font-family="monospace" font-size="10">"#,
        (left + width + 20.0).max(left + legend_w + 20.0)
    );
    o.push_str(&legend);
    o.push('\n');
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
        let i = index[&h.resource()];
        let x = left + h.start() as f64 / span * width;
        let w = ((h.end() - h.start()) as f64 / span * width).max(0.5);
        let y = top + i as f64 * row_h + 1.0;
        let _ = writeln!(
            o,
            r#"<rect x="{x:.2}" y="{y:.1}" width="{w:.2}" height="{:.1}" fill="{}"><title>M{} {} {}..{}</title></rect>"#,
            row_h - 2.0,
            msg_colour(&key, h.msg()),
            h.msg(),
            esc(&h.resource().to_string()),
            h.start(),
            h.end()
        );
    }
    // Time axis: about ten ticks at round cycles.
    let step = (crate::sim::plot::nice_step(s.makespan as f64, 10) as u64).max(1);
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
        .filter(|h| matches!(h.resource(), Resource::Link { .. }))
        .map(|h| h.start())
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

/// One panel per interval, in a grid. The cell shrinks with the network (nodes and fonts with
/// it) so a 16x16 mesh stays legible; a task label sits above and right of its node, clear of
/// the links, and one that would overlap another label or a node is left out (each node's tasks
/// stay in its tooltip); message names are written only when there is room.
pub fn snapshots(p: &Plan) -> String {
    let panels = intervals(p, 12);
    let nodes = p.network.nodes();
    let key = colour_key(p);
    let pos: Vec<(f64, f64)> = (0..nodes).map(|n| position(p, n)).collect();
    let maxx = pos.iter().map(|q| q.0).fold(0.0, f64::max);
    let maxy = pos.iter().map(|q| q.1).fold(0.0, f64::max);
    let big = maxx.max(maxy) + 1.0;
    // Three panels a row while they stay readable; one a row for large networks.
    let cols = if big > 8.0 { 1 } else { 3 }.min(panels.len().max(1));
    let cell = ((if cols == 1 { 1000.0 } else { 300.0 }) / big).clamp(8.0, 70.0);
    let r = (cell * 0.17).clamp(2.5, 12.0);
    let fs = (cell * 0.2).clamp(7.0, 11.0);
    let pw = (maxx + 1.0) * cell + 40.0;
    let ph = (maxy + 1.0) * cell + 60.0;
    let rows = panels.len().div_ceil(cols).max(1);
    let mut tasks_on: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for t in &p.traffic.tasks {
        if let Some(&n) = p.placement.node_of.get(t.id) {
            tasks_on.entry(n).or_default().push(t.name.clone());
        }
    }
    let label = |n: usize| match tasks_on.get(&n).map(Vec::as_slice) {
        Some([one]) => one.clone(),
        Some([first, rest @ ..]) => format!("{first}+{}", rest.len()),
        _ => String::new(),
    };
    // Which task labels to write: in node order, each above and right of its node unless it
    // would overlap a label already placed or another node (the same in every panel).
    let centre = |n: usize| {
        (
            pos[n].0 * cell + cell / 2.0,
            (maxy - pos[n].1) * cell + cell / 2.0,
        )
    };
    let mut placed: Vec<[f64; 4]> = Vec::new();
    let discs: Vec<[f64; 4]> = (0..nodes)
        .map(|n| {
            let (x, y) = centre(n);
            [x - r, y - r, x + r, y + r]
        })
        .collect();
    let overlaps =
        |a: &[f64; 4], b: &[f64; 4]| a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
    let show: Vec<bool> = (0..nodes)
        .map(|n| {
            let text = label(n);
            if text.is_empty() {
                return false;
            }
            let (x, y) = centre(n);
            let (x, y) = (x + r * 0.75, y - r * 0.75);
            let b = [
                x,
                y - fs,
                x + text.chars().count() as f64 * fs * 0.62,
                y + 2.0,
            ];
            let free = !placed.iter().any(|o| overlaps(&b, o))
                && !discs
                    .iter()
                    .enumerate()
                    .any(|(m, d)| m != n && overlaps(&b, d));
            if free {
                placed.push(b);
            }
            free
        })
        .collect();
    let (legend, legend_w) = legend(&key, 20.0, 16.0);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{:.0}" font-family="monospace" font-size="10">"#,
        (pw * cols as f64).max(legend_w + 40.0),
        ph * rows as f64 + 24.0
    );
    o.push_str(&legend);
    o.push('\n');
    o.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"4\" markerHeight=\"4\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>\n");
    for (k, &(a, b)) in panels.iter().enumerate() {
        let ox = (k % cols) as f64 * pw + 20.0;
        let oy = (k / cols) as f64 * ph + 54.0;
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
        let held: Vec<_> = p
            .schedule
            .holds
            .iter()
            .filter(|h| {
                matches!(h.resource(), Resource::Link { .. }) && h.start() < b && h.end() > a
            })
            .collect();
        // Names only where there is room: a plane grid (no folded third dimension), roomy
        // cells, few messages in the interval.
        let plane = pos.iter().all(|q| q.0 == q.0.round() && q.1 == q.1.round());
        let names = plane && cell >= 48.0 && held.len() <= 120;
        let side = (cell * 0.06).clamp(1.5, 3.0);
        let width = (cell / 30.0).clamp(1.0, 2.0);
        let mut labelled = BTreeSet::new();
        for h in held {
            let Resource::Link { from, to } = h.resource() else {
                continue;
            };
            let (x1, y1) = at(from as usize);
            let (x2, y2) = at(to as usize);
            // Offset each direction sideways so opposite messages do not overlap.
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (nx, ny) = (-dy / len * side, dx / len * side);
            let (sx, sy) = (
                x1 + dx / len * (r + 1.0) + nx,
                y1 + dy / len * (r + 1.0) + ny,
            );
            let (ex, ey) = (
                x2 - dx / len * (r + 1.0) + nx,
                y2 - dy / len * (r + 1.0) + ny,
            );
            let c = msg_colour(&key, h.msg());
            let _ = writeln!(
                o,
                r#"<line x1="{sx:.1}" y1="{sy:.1}" x2="{ex:.1}" y2="{ey:.1}" stroke="{c}" stroke-width="{width:.1}" marker-end="url(#arrow)"><title>M{} {}..{}</title></line>"#,
                h.msg(),
                h.start(),
                h.end()
            );
            // Below a horizontal link or left of a vertical one, a third of the way from the
            // source: clear of the task labels and of the other direction's name.
            if names && labelled.insert(h.msg()) {
                let (mx, my) = (sx + (ex - sx) * 0.35, sy + (ey - sy) * 0.35);
                let flat = (ex - sx).abs() >= (ey - sy).abs();
                let _ = writeln!(
                    o,
                    r#"<text x="{:.1}" y="{:.1}" fill="{c}" font-size="8" text-anchor="{}">M{}</text>"#,
                    if flat { mx } else { mx - nx - side - 4.0 },
                    if flat {
                        my - ny + side + 10.0
                    } else {
                        my + 3.0
                    },
                    if flat { "middle" } else { "end" },
                    h.msg()
                );
            }
        }
        for (n, &shown) in show.iter().enumerate() {
            let (x, y) = at(n);
            let all = tasks_on.get(&n).map(|v| v.join(",")).unwrap_or_default();
            let _ = writeln!(
                o,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\" fill=\"#fff\" stroke=\"#333\"><title>node {n}{}{}</title></circle>",
                if all.is_empty() { "" } else { ": " },
                esc(&all)
            );
            if shown {
                let _ = writeln!(
                    o,
                    "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{fs:.1}\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
                    x + r * 0.75,
                    y - r * 0.75,
                    esc(&label(n))
                );
            }
        }
    }
    o.push_str("</svg>\n");
    o
}
