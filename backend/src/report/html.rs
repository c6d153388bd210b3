//! One self-contained HTML file a browser opens (`ttdl run --html`, `compare --html`,
//! `sweep --html`): inline CSS, inline SVG and a little script, no network access. The plan
//! report holds the summary and bounds, the link-by-time chart (zoom and scroll instead of a
//! page thousands of pixels tall, message labels, phase markers, cycle ticks), the network
//! snapshots of Minsky Figs 5-6/5-7 to step through, a link-utilisation heat map with its colour
//! bar, the task graph laid out by the tool (one lane per task, subtasks at the cycle they start,
//! messages as arrows), and each message's release–deadline window against its schedule. Message
//! colours mean one stated thing (message type, source task or phase) with a legend; the network
//! views scale their cells, nodes and fonts with the network and thin task labels that would
//! overlap, so a 16x16 mesh reads as well as a 4x4 one.
//!
//! The data is embedded once as JSON and drawn by the script, so the page stays small and the
//! chart can be redrawn at any zoom.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use ttdl_ir::limits::Limits;

use serde_json::{json, Value};

use super::Plan;
use crate::pipeline::{ModelRun, Placed};
use crate::schedule::Resource;
use crate::sim::plot::{line_chart, Series};
use crate::sim::sweep::Summary;
use crate::traffic::Op;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON safe inside a `<script>` element.
fn script_json(v: &Value) -> String {
    v.to_string()
        .replace("</", "<\\/")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

const CSS: &str = r#"
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 1em 2em; color: #1a202c; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #e2e8f0; }
table.facts td { padding: 2px 12px 2px 0; vertical-align: top; } table.facts td:first-child { color: #4a5568; white-space: nowrap; }
table.grid { border-collapse: collapse; } table.grid td, table.grid th { border: 1px solid #e2e8f0; padding: 3px 8px; text-align: right; }
table.grid td:first-child, table.grid th:first-child { text-align: left; }
.scroll { overflow: auto; border: 1px solid #e2e8f0; max-height: 560px; }
.controls { margin: 6px 0; } .controls button { margin-right: 4px; }
.wide { overflow: auto; border: 1px solid #e2e8f0; } #chart { overflow-x: auto; }
.legend { margin: 4px 0 8px; font-size: 0.85em; line-height: 1.8; } .legend-title { color: #4a5568; margin-right: 10px; }
.legend-item { display: inline-block; margin-right: 12px; white-space: nowrap; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
.colour-bar { display: inline-block; width: 220px; height: 12px; margin: 0 8px; vertical-align: -1px; }
tr.best td { background: #ebf8ff; } td.best { font-weight: bold; }
.note { color: #718096; font-size: 0.9em; } .late { color: #c53030; } .ok { color: #2f855a; }
svg text { font-family: ui-monospace, monospace; }
"#;

fn page(title: &str, body: &str, data: Option<&Value>, script: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"generator\" content=\"TTDL\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n",
        esc(title)
    );
    if let Some(d) = data {
        let _ = writeln!(
            s,
            "<script type=\"application/json\" id=\"ttdl-data\">{}</script>",
            script_json(d)
        );
    }
    if !script.is_empty() {
        let _ = writeln!(s, "<script>\n{script}\n</script>");
    }
    s.push_str("</body>\n</html>\n");
    s
}

fn facts(rows: &[(&str, String)]) -> String {
    let mut s = String::from("<table class=\"facts\" id=\"summary\">\n");
    for (k, v) in rows {
        let _ = writeln!(s, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    s.push_str("</table>\n");
    s
}

/// Where a node is drawn: x and y from its first two coordinates (a third as a diagonal
/// offset; hypercube bits folded alternately into x and y).
fn node_xy(p: &Plan, node: usize) -> (f64, f64) {
    let c = p.network.coords.get(node).cloned().unwrap_or_default();
    let hyper = matches!(p.network.spec.kind, crate::topology::Kind::Hypercube);
    let (mut x, mut y, mut sx, mut sy) = (0.0, 0.0, 1.0, 1.0);
    for (d, v) in c.iter().enumerate() {
        let dim = if hyper {
            2.0
        } else {
            p.network.spec.dims.get(d).copied().unwrap_or(2).max(2) as f64
        };
        if d == 2 && !hyper {
            x += *v as f64 * 0.3;
            y += *v as f64 * 0.3;
        } else if d % 2 == 0 {
            x += *v as f64 * sx;
            sx *= dim + 0.5;
        } else {
            y += *v as f64 * sy;
            sy *= dim + 0.5;
        }
    }
    (x, y)
}

/// Cuts between the cycles at which some message starts on a link, merged down to `max`.
fn intervals(p: &Plan, max: usize) -> Vec<(u64, u64)> {
    let s = p.schedule;
    let mut starts: BTreeSet<u64> = s
        .holds
        .iter()
        .filter(|h| matches!(h.resource(), Resource::Link { .. }))
        .map(|h| h.start())
        .collect();
    starts.insert(0);
    starts.insert(s.makespan);
    let mut cuts: Vec<u64> = starts.into_iter().collect();
    while cuts.len() > max + 1 {
        let i = cuts
            .windows(2)
            .enumerate()
            .skip(1)
            .min_by_key(|(i, w)| (w[1] - w[0], *i))
            .map_or(1, |(i, _)| i);
        cuts.remove(i);
    }
    cuts.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The most categories drawn in distinct colours with a swatch each; beyond it the colours run
/// along a scale with a colour bar (a palette of hundreds of hues tells nothing apart).
pub(super) const DISTINCT_COLOURS: usize = 20;

/// What the message colours mean: message type when the program names several (`defmessage`),
/// else the source task when few tasks send, else the phase when there are a few, else the
/// source task along a colour scale. `of[m]` is message `m`'s category in `names`.
pub(super) struct ColourKey {
    pub key: &'static str,
    pub names: Vec<String>,
    pub of: Vec<usize>,
    pub continuous: bool,
}

pub(super) fn colour_key(p: &Plan) -> ColourKey {
    let msgs = &p.traffic.messages;
    let index = |names: &[String], name: &str| names.binary_search_by(|n| n.as_str().cmp(name));
    let types: BTreeSet<String> = msgs
        .iter()
        .map(|m| m.label.as_deref().unwrap_or("(unnamed)").to_string())
        .collect();
    if types.len() >= 2 && types.len() <= DISTINCT_COLOURS {
        let names: Vec<String> = types.into_iter().collect();
        let of = msgs
            .iter()
            .map(|m| index(&names, m.label.as_deref().unwrap_or("(unnamed)")).unwrap_or(0))
            .collect();
        return ColourKey {
            key: "message type",
            names,
            of,
            continuous: false,
        };
    }
    let senders: BTreeSet<usize> = msgs.iter().map(|m| m.src).collect();
    let phases: BTreeSet<usize> = msgs.iter().map(|m| m.phase).collect();
    if senders.len() > DISTINCT_COLOURS && (2..=DISTINCT_COLOURS).contains(&phases.len()) {
        let ids: Vec<usize> = phases.into_iter().collect();
        let names = ids
            .iter()
            .map(|&ph| {
                p.traffic
                    .phases
                    .iter()
                    .find(|x| x.id == ph)
                    .map_or(format!("phase {ph}"), |x| format!("phase {}", x.name))
            })
            .collect();
        let of = msgs
            .iter()
            .map(|m| ids.binary_search(&m.phase).unwrap_or(0))
            .collect();
        return ColourKey {
            key: "phase",
            names,
            of,
            continuous: false,
        };
    }
    let ids: Vec<usize> = senders.into_iter().collect();
    let names = ids
        .iter()
        .map(|&t| {
            p.traffic
                .tasks
                .get(t)
                .map_or(format!("task {t}"), |x| x.name.clone())
        })
        .collect();
    let of = msgs
        .iter()
        .map(|m| ids.binary_search(&m.src).unwrap_or(0))
        .collect();
    ColourKey {
        key: "source task",
        names,
        of,
        continuous: ids.len() > DISTINCT_COLOURS,
    }
}

/// Per directed link of the network, the cycles messages hold it, as `[from, to, busy]` (the
/// busy fraction is `busy / makespan`, as the summary's peak link use counts it).
fn link_busy(p: &Plan) -> Vec<Value> {
    let mut busy: BTreeMap<(usize, usize), u64> = p
        .network
        .links
        .iter()
        .map(|l| ((l.from, l.to), 0))
        .collect();
    for h in &p.schedule.holds {
        if let Resource::Link { from, to } = h.resource() {
            *busy.entry((from as usize, to as usize)).or_default() += h.end() - h.start();
        }
    }
    busy.into_iter()
        .map(|((from, to), b)| json!([from, to, b]))
        .collect()
}

/// The plan's data for the script.
fn plan_data(p: &Plan) -> Value {
    let s = p.schedule;
    let resources: Vec<Resource> = s
        .holds
        .iter()
        .map(|h| h.resource())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let row: BTreeMap<Resource, usize> =
        resources.iter().enumerate().map(|(i, r)| (*r, i)).collect();
    let colours = colour_key(p);
    let cat = |m: usize| colours.of.get(m).copied().unwrap_or(0);
    let holds: Vec<Value> = s
        .holds
        .iter()
        .take(Limits::HTML_HOLDS)
        .map(|h| {
            json!([
                h.msg(),
                row[&h.resource()],
                h.start(),
                h.end(),
                cat(h.msg())
            ])
        })
        .collect();
    let rows: Vec<Value> = resources
        .iter()
        .map(|r| match *r {
            Resource::Link { from, to } => json!([r.to_string(), from, to]),
            _ => json!([r.to_string(), null, null]),
        })
        .collect();
    // Phases start where their first message is released in this schedule.
    let mut phase_start: BTreeMap<usize, u64> = BTreeMap::new();
    for m in &p.traffic.messages {
        let r = s.released.get(m.id).copied().unwrap_or(m.release);
        let e = phase_start.entry(m.phase).or_insert(r);
        *e = (*e).min(r);
    }
    let phases: Vec<Value> = phase_start
        .iter()
        .map(|(&ph, &at)| {
            let name = p
                .traffic
                .phases
                .iter()
                .find(|x| x.id == ph)
                .map_or(ph.to_string(), |x| x.name.clone());
            json!([name, at])
        })
        .collect();
    let mut on_node: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for t in &p.traffic.tasks {
        if let Some(&n) = p.placement.node_of.get(t.id) {
            on_node.entry(n).or_default().push(&t.name);
        }
    }
    let nodes: Vec<Value> = (0..p.network.nodes())
        .map(|n| {
            let (x, y) = node_xy(p, n);
            json!([
                x,
                y,
                on_node.get(&n).map(|v| v.join(",")).unwrap_or_default()
            ])
        })
        .collect();
    let links: Vec<Value> = p
        .network
        .links
        .iter()
        .filter(|l| l.from < l.to)
        .map(|l| json!([l.from, l.to]))
        .collect();
    let windows: Vec<Value> = p
        .traffic
        .messages
        .iter()
        .take(Limits::HTML_WINDOWS)
        .map(|m| {
            json!([
                m.id,
                s.released.get(m.id).copied().unwrap_or(m.release),
                m.deadline.min(u64::MAX / 2),
                s.sent.get(m.id).copied().unwrap_or(0),
                s.arrival.get(m.id).copied().unwrap_or(0),
                s.arrival.get(m.id).copied().unwrap_or(0) > m.deadline,
                p.traffic.tasks.get(m.src).map_or("?", |t| t.name.as_str()),
                cat(m.id),
            ])
        })
        .collect();
    let (lanes, boxes, mut arrows) = task_graph(p);
    for a in &mut arrows {
        let m = a.get(0).and_then(Value::as_u64).unwrap_or(0) as usize;
        if let Some(v) = a.as_array_mut() {
            v.push(cat(m).into());
        }
    }
    json!({
        "makespan": s.makespan,
        "rows": rows,
        "holds": holds,
        "holdsTotal": s.holds.len(),
        "phases": phases,
        "nodes": nodes,
        "links": links,
        "intervals": intervals(p, Limits::HTML_INTERVALS),
        "windows": windows,
        "messagesTotal": p.traffic.messages.len(),
        "lanes": lanes,
        "boxes": boxes,
        "arrows": arrows,
        "colourKey": colours.key,
        "colourNames": colours.names,
        "colourScale": colours.continuous,
        "busy": link_busy(p),
    })
}

/// The task graph as lanes (one per task), boxes (subtasks: lane, start, end, label) and arrows
/// (messages: from lane and cycle to lane and cycle), timed by the schedule: a task's clock
/// runs through its ops, sends at the cycle the schedule released the message, and a run of
/// reads starts when the last of them has arrived (Minsky Fig 4-3).
fn task_graph(p: &Plan) -> (Vec<String>, Vec<Value>, Vec<Value>) {
    let s = p.schedule;
    let lanes: Vec<String> = p.traffic.tasks.iter().map(|t| t.name.clone()).collect();
    let mut boxes = Vec::new();
    let mut sent_at: BTreeMap<usize, (usize, u64)> = BTreeMap::new();
    let mut read_at: Vec<(usize, usize, u64)> = Vec::new();
    for t in &p.traffic.tasks {
        let mut clock = 0u64;
        let mut i = 0;
        while i < t.ops.len() && boxes.len() < Limits::HTML_SUBTASKS {
            match t.ops[i] {
                Op::Compute(c) => {
                    if c > 0 {
                        boxes.push(json!([t.id, clock, clock + c, format!("compute {c}")]));
                    }
                    clock += c;
                    i += 1;
                }
                Op::Send(m) => {
                    clock = clock.max(s.released.get(m).copied().unwrap_or(clock));
                    sent_at.insert(m, (t.id, clock));
                    i += 1;
                }
                Op::Recv(_) => {
                    let mut start = clock;
                    let mut ms = Vec::new();
                    while let Some(Op::Recv(m)) = t.ops.get(i) {
                        start = start.max(s.arrival.get(*m).copied().unwrap_or(start));
                        ms.push(*m);
                        i += 1;
                    }
                    for m in ms {
                        read_at.push((m, t.id, start));
                    }
                    clock = start;
                }
                Op::Sync(_) => i += 1,
            }
        }
    }
    let arrows = read_at
        .into_iter()
        .filter_map(|(m, to, at)| {
            let &(from, sent) = sent_at.get(&m)?;
            Some(json!([m, from, sent, to, at]))
        })
        .take(Limits::HTML_SUBTASKS)
        .collect();
    (lanes, boxes, arrows)
}

const PLAN_JS: &str = r#"
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('ttdl-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = el('text', Object.assign({x: x, y: y}, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function ticks(span, px) {
    var target = Math.max(2, Math.floor(px / 80));
    var raw = Math.max(1, span / target);
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) { if (steps[i] * p >= raw) return steps[i] * p; }
    return 10 * p;
  }

  // Message colours mean one thing, said by the legend: D.colourKey (message type, source task
  // or phase). Up to 20 categories get distinct colours (Tableau's 20: dark ones first); more
  // run along a hue scale with a colour bar.
  var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf',
                 '#aec7e8', '#ffbb78', '#98df8a', '#ff9896', '#c5b0d5', '#c49c94', '#f7b6d2', '#c7c7c7', '#dbdb8d', '#9edae5'];
  var N = Math.max(1, D.colourNames.length);
  function hue(c) { return N > 1 ? c / (N - 1) * 280 : 0; }
  function colour(c) { return D.colourScale ? 'hsl(' + hue(c).toFixed(0) + ',70%,45%)' : PALETTE[c % PALETTE.length]; }
  function ink(c) { return !D.colourScale && (c % PALETTE.length) >= 10 ? '#1a202c' : 'white'; }
  function legend(host) {
    host.textContent = '';
    var title = document.createElement('span');
    title.className = 'legend-title';
    title.textContent = 'colour: ' + D.colourKey;
    host.appendChild(title);
    if (D.colourScale) {
      var stops = [];
      for (var i = 0; i <= 8; i++) stops.push('hsl(' + (i / 8 * 280).toFixed(0) + ',70%,45%)');
      var first = document.createElement('span');
      first.textContent = D.colourNames[0];
      var bar = document.createElement('span');
      bar.className = 'colour-bar';
      bar.style.background = 'linear-gradient(to right,' + stops.join(',') + ')';
      var last = document.createElement('span');
      last.textContent = D.colourNames[N - 1] + ' (' + N + ' in all, in task order)';
      host.appendChild(first); host.appendChild(bar); host.appendChild(last);
      return;
    }
    D.colourNames.forEach(function (name, c) {
      var item = document.createElement('span');
      item.className = 'legend-item';
      var sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = colour(c);
      item.appendChild(sw);
      item.appendChild(document.createTextNode(name));
      host.appendChild(item);
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll('.legend'), legend);

  // Link-by-time chart.
  var zoom = 1;
  function drawTimeline() {
    var host = document.getElementById('timeline');
    host.textContent = '';
    var left = 90, top = 24, rowH = 14;
    var span = Math.max(1, D.makespan);
    var width = Math.max(600, Math.min(200000, 900 * zoom));
    var h = top + D.rows.length * rowH + 24;
    var svg = el('svg', {width: left + width + 20, height: h, 'font-size': 10}, host);
    var x = function (t) { return left + t / span * width; };
    var step = ticks(span, width);
    for (var t = 0; t <= span; t += step) {
      el('line', {x1: x(t), y1: top - 4, x2: x(t), y2: h - 20, stroke: '#edf2f7'}, svg);
      text(svg, x(t) + 2, top - 8, String(t));
    }
    D.phases.forEach(function (ph) {
      el('line', {x1: x(ph[1]), y1: top - 4, x2: x(ph[1]), y2: h - 20, stroke: '#805ad5', 'stroke-dasharray': '4 3'}, svg);
      text(svg, x(ph[1]) + 3, h - 8, 'phase ' + ph[0], {fill: '#805ad5'});
    });
    D.rows.forEach(function (r, i) { text(svg, 4, top + i * rowH + rowH - 3, r[0]); });
    D.holds.forEach(function (hd) {
      var x0 = x(hd[2]), w = Math.max(0.5, x(hd[3]) - x0), y = top + hd[1] * rowH + 1;
      var r = el('rect', {x: x0, y: y, width: w, height: rowH - 2, fill: colour(hd[4]), class: 'hold'}, svg);
      var tip = el('title', {}, r);
      tip.textContent = 'M' + hd[0] + ' (' + D.colourNames[hd[4]] + ') ' + D.rows[hd[1]][0] + ' cycles ' + hd[2] + '..' + hd[3];
      if (w > 22) text(svg, x0 + 2, y + rowH - 4, 'M' + hd[0], {fill: ink(hd[4]), 'font-size': 9});
    });
    document.getElementById('zoom-level').textContent = zoom.toFixed(2) + '×';
  }
  document.getElementById('zoom-in').addEventListener('click', function () { zoom = Math.min(zoom * 2, 200); drawTimeline(); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoom = Math.max(zoom / 2, 0.25); drawTimeline(); });
  document.getElementById('zoom-fit').addEventListener('click', function () { zoom = 1; drawTimeline(); });

  // The network, drawn at a size that stays readable from 4 to hundreds of nodes: the cell
  // shrinks with the grid, nodes and fonts with the cell, and task labels that would not fit
  // their cell are thinned to every k-th row and column (all of them stay in the tooltips).
  var L = (function () {
    var maxx = 0, maxy = 0;
    D.nodes.forEach(function (n) { maxx = Math.max(maxx, n[0]); maxy = Math.max(maxy, n[1]); });
    var cell = Math.max(8, Math.min(80, Math.floor(1040 / (Math.max(maxx, maxy) + 1))));
    var fs = Math.max(7, Math.min(11, cell * 0.2)), r = Math.max(2.5, Math.min(12, cell * 0.17));
    var labels = D.nodes.map(function (n) {
      var t = n[2] ? n[2].split(',') : [];
      return t.length > 1 ? t[0] + '+' + (t.length - 1) : (t[0] || '');
    });
    return {maxx: maxx, maxy: maxy, cell: cell, fs: fs, r: r, labels: labels,
            width: (maxx + 1) * cell + 40, height: (maxy + 1) * cell + 40};
  })();
  function at(n) { return [20 + D.nodes[n][0] * L.cell + L.cell / 2, 20 + (L.maxy - D.nodes[n][1]) * L.cell + L.cell / 2]; }
  // A label sits above and right of its node, clear of a mesh's links; labels are placed in node
  // order and one that would overlap a label already placed, or a node, is left to the tooltip.
  L.show = (function () {
    var show = [], boxes = {}, B = 24;
    function add(b) {
      for (var x = Math.floor(b[0] / B); x <= Math.floor(b[2] / B); x++) {
        for (var y = Math.floor(b[1] / B); y <= Math.floor(b[3] / B); y++) { (boxes[x + ',' + y] = boxes[x + ',' + y] || []).push(b); }
      }
    }
    function clear(b, self) {
      for (var x = Math.floor(b[0] / B); x <= Math.floor(b[2] / B); x++) {
        for (var y = Math.floor(b[1] / B); y <= Math.floor(b[3] / B); y++) {
          var near = boxes[x + ',' + y] || [];
          for (var i = 0; i < near.length; i++) {
            var o = near[i];
            if (o[4] !== self && b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3]) return false;
          }
        }
      }
      return true;
    }
    D.nodes.forEach(function (n, i) { var p = at(i); add([p[0] - L.r, p[1] - L.r, p[0] + L.r, p[1] + L.r, i]); });
    L.labels.forEach(function (s, i) {
      if (!s) { show.push(false); return; }
      var p = at(i), x = p[0] + L.r * 0.75, y = p[1] - L.r * 0.75;
      var b = [x, y - L.fs, x + s.length * L.fs * 0.62, y + 2, -1];
      var ok = clear(b, i);
      if (ok) add(b);
      show.push(ok);
    });
    return show;
  })();
  L.hidden = L.show.filter(function (v, i) { return !v && L.labels[i]; }).length;
  // A directed link's segment between the node circles, shifted to its own side of the pair.
  function segment(a, b, side) {
    var p = at(a), q = at(b);
    var dx = q[0] - p[0], dy = q[1] - p[1], len = Math.max(1, Math.sqrt(dx * dx + dy * dy));
    var nx = -dy / len * side, ny = dx / len * side, r = L.r + 1;
    return [p[0] + dx / len * r + nx, p[1] + dy / len * r + ny, q[0] - dx / len * r + nx, q[1] - dy / len * r + ny, nx, ny];
  }
  function drawLinks(svg) {
    D.links.forEach(function (l) { var a = at(l[0]), b = at(l[1]); el('line', {x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: '#cbd5e0'}, svg); });
  }
  function drawNodes(svg) {
    D.nodes.forEach(function (n, i) {
      var p = at(i);
      var c = el('circle', {cx: p[0], cy: p[1], r: L.r, fill: 'white', stroke: '#2d3748', class: 'node'}, svg);
      el('title', {}, c).textContent = 'node ' + i + (n[2] ? ': ' + n[2] : '');
      if (L.show[i]) {
        text(svg, p[0] + L.r * 0.75, p[1] - L.r * 0.75, L.labels[i], {'font-size': L.fs.toFixed(1), class: 'node-label',
             stroke: 'white', 'stroke-width': 3, 'paint-order': 'stroke'});
      }
    });
  }
  function networkNote(id) {
    var note = document.getElementById(id);
    if (note) note.textContent = L.hidden > 0 ? L.hidden + ' task labels left out where they would overlap; hover a node for its tasks.' : '';
  }

  // Network snapshots, one interval at a time.
  var snap = 0;
  function drawSnapshot() {
    var host = document.getElementById('snapshot');
    host.textContent = '';
    if (D.intervals.length === 0) { host.textContent = 'no message crosses a link'; return; }
    var iv = D.intervals[snap];
    var svg = el('svg', {width: L.width, height: L.height, 'font-size': 10}, host);
    // An arrowhead per colour in use, so each head matches its message.
    var defs = el('defs', {}, svg), heads = {};
    function head(c) {
      if (!heads[c]) {
        heads[c] = 'arrow-' + c;
        var mk = el('marker', {id: heads[c], viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 4, markerHeight: 4, orient: 'auto-start-reverse'}, defs);
        el('path', {d: 'M 0 0 L 10 5 L 0 10 z', fill: colour(c)}, mk);
      }
      return 'url(#' + heads[c] + ')';
    }
    drawLinks(svg);
    var side = Math.max(1.5, Math.min(3, L.cell * 0.06)), sw = Math.max(1, Math.min(2, L.cell / 30));
    var inView = D.holds.filter(function (hd) { var row = D.rows[hd[1]]; return row[1] !== null && hd[2] < iv[1] && hd[3] > iv[0]; });
    // Message names only where there is room: a plane grid (no folded third dimension) with
    // roomy cells and few messages in the interval.
    var plane = D.nodes.every(function (n) { return n[0] === Math.round(n[0]) && n[1] === Math.round(n[1]); });
    var labelled = {}, names = plane && L.cell >= 48 && inView.length <= 120;
    inView.forEach(function (hd) {
      var row = D.rows[hd[1]];
      var s = segment(row[1], row[2], side);
      var line = el('line', {x1: s[0], y1: s[1], x2: s[2], y2: s[3], stroke: colour(hd[4]), 'stroke-width': sw, 'marker-end': head(hd[4]), class: 'route'}, svg);
      el('title', {}, line).textContent = 'M' + hd[0] + ' (' + D.colourNames[hd[4]] + ') ' + row[0] + ' cycles ' + hd[2] + '..' + hd[3];
      // A message's name goes below a horizontal link or left of a vertical one (task labels sit
      // above and right of the nodes), a third of the way from its source so the two directions'
      // names stay apart.
      if (names && !labelled[hd[0]]) {
        labelled[hd[0]] = true;
        var mx = s[0] + (s[2] - s[0]) * 0.35, my = s[1] + (s[3] - s[1]) * 0.35;
        var flat = Math.abs(s[2] - s[0]) >= Math.abs(s[3] - s[1]);
        text(svg, flat ? mx : mx - s[4] - side - 4, flat ? my - s[5] + side + 10 : my + 3, 'M' + hd[0], {fill: colour(hd[4]), 'font-size': 8, 'text-anchor': flat ? 'middle' : 'end', class: 'route-name'});
      }
    });
    drawNodes(svg);
    document.getElementById('snap-label').textContent = 'interval ' + (snap + 1) + ' of ' + D.intervals.length + ': cycles ' + iv[0] + ' to ' + iv[1];
  }
  document.getElementById('snap-prev').addEventListener('click', function () { snap = (snap + D.intervals.length - 1) % Math.max(1, D.intervals.length); drawSnapshot(); });
  document.getElementById('snap-next').addEventListener('click', function () { snap = (snap + 1) % Math.max(1, D.intervals.length); drawSnapshot(); });

  // Link utilisation: each directed link coloured by the fraction of the makespan messages hold
  // it, on a scale from 0 to a round number at or above the busiest (viridis, idle links grey).
  var VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function viridis(f) {
    f = Math.max(0, Math.min(1, f)) * (VIRIDIS.length - 1);
    var i = Math.min(VIRIDIS.length - 2, Math.floor(f)), u = f - i, a = VIRIDIS[i], b = VIRIDIS[i + 1];
    return 'rgb(' + [0, 1, 2].map(function (k) { return Math.round(a[k] + (b[k] - a[k]) * u); }).join(',') + ')';
  }
  function drawHeat() {
    var host = document.getElementById('heat');
    host.textContent = '';
    var span = Math.max(1, D.makespan), peak = 0;
    D.busy.forEach(function (b) { peak = Math.max(peak, b[2] / span); });
    var stepPct = peak <= 0.2 ? 5 : peak <= 0.5 ? 10 : 20;
    var topPct = Math.max(stepPct, Math.ceil(peak * 100 / stepPct - 1e-9) * stepPct);
    var barX = L.width + 20, barH = Math.min(260, Math.max(120, L.height - 60));
    var svg = el('svg', {width: barX + 110, height: Math.max(L.height, barH + 60), 'font-size': 10}, host);
    var defs = el('defs', {}, svg);
    var grad = el('linearGradient', {id: 'heat-scale', x1: 0, y1: 1, x2: 0, y2: 0}, defs);
    for (var i = 0; i <= 8; i++) el('stop', {offset: (i / 8).toFixed(3), 'stop-color': viridis(i / 8)}, grad);
    var side = Math.max(1.5, Math.min(3.5, L.cell * 0.07)), sw = Math.max(1.5, Math.min(5, L.cell * 0.08));
    D.busy.forEach(function (b) {
      var s = segment(b[0], b[1], side), f = b[2] / span;
      var line = el('line', {x1: s[0], y1: s[1], x2: s[2], y2: s[3], stroke: b[2] > 0 ? viridis(f * 100 / topPct) : '#e2e8f0', 'stroke-width': sw, 'stroke-linecap': 'round', class: 'busy'}, svg);
      el('title', {}, line).textContent = b[0] + '->' + b[1] + ': ' + (100 * f).toFixed(1) + '% busy (' + b[2] + ' of ' + span + ' cycles)';
    });
    drawNodes(svg);
    var y0 = 30;
    text(svg, barX, y0 - 12, 'busy', {'font-weight': 'bold'});
    el('rect', {x: barX, y: y0, width: 16, height: barH, fill: 'url(#heat-scale)', stroke: '#4a5568', class: 'heat-bar'}, svg);
    for (var p = 0; p <= topPct + 1e-9; p += stepPct) {
      var y = y0 + barH - barH * p / topPct;
      el('line', {x1: barX + 16, y1: y, x2: barX + 20, y2: y, stroke: '#4a5568'}, svg);
      text(svg, barX + 23, y + 3.5, p + '%', {class: 'heat-tick'});
    }
    el('rect', {x: barX, y: y0 + barH + 14, width: 16, height: 8, fill: '#e2e8f0'}, svg);
    text(svg, barX + 23, y0 + barH + 22, 'idle');
  }

  // The task graph: a lane per task, subtasks where they run, messages as arrows.
  function drawDag() {
    var host = document.getElementById('dag');
    host.textContent = '';
    var left = 110, top = 20, laneH = 26, width = 900;
    var span = Math.max(1, D.makespan);
    var svg = el('svg', {width: left + width + 30, height: top + D.lanes.length * laneH + 20, 'font-size': 10}, host);
    var x = function (t) { return left + t / span * width; };
    var y = function (lane) { return top + lane * laneH; };
    D.lanes.forEach(function (name, i) {
      text(svg, 4, y(i) + laneH / 2 + 3, name);
      el('line', {x1: left, y1: y(i) + laneH / 2, x2: left + width, y2: y(i) + laneH / 2, stroke: '#edf2f7'}, svg);
    });
    D.boxes.forEach(function (b) {
      var r = el('rect', {x: x(b[1]), y: y(b[0]) + 5, width: Math.max(1, x(b[2]) - x(b[1])), height: laneH - 10, fill: '#bee3f8', stroke: '#2b6cb0', class: 'subtask'}, svg);
      el('title', {}, r).textContent = D.lanes[b[0]] + ': ' + b[3] + ' (' + b[1] + '..' + b[2] + ')';
    });
    D.arrows.forEach(function (a) {
      var l = el('line', {x1: x(a[2]), y1: y(a[1]) + laneH / 2, x2: x(a[4]), y2: y(a[3]) + laneH / 2, stroke: colour(a[5]), 'stroke-width': 1.2, 'marker-end': 'url(#dag-arrow)', class: 'message'}, svg);
      el('title', {}, l).textContent = 'M' + a[0] + ' (' + D.colourNames[a[5]] + '): ' + D.lanes[a[1]] + ' @' + a[2] + ' -> ' + D.lanes[a[3]] + ' @' + a[4];
    });
    var defs = el('defs', {}, svg);
    var mk = el('marker', {id: 'dag-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto'}, defs);
    el('path', {d: 'M 0 0 L 10 5 L 0 10 z', fill: '#4a5568'}, mk);
  }

  // Each message's release-deadline window against when the schedule moved it.
  function drawWindows() {
    var host = document.getElementById('windows');
    host.textContent = '';
    var left = 150, top = 20, rowH = 12, width = 880;
    var span = Math.max(1, D.makespan);
    D.windows.forEach(function (w) { if (w[2] < 1e15) span = Math.max(span, w[2]); });
    var svg = el('svg', {width: left + width + 20, height: top + D.windows.length * rowH + 10, 'font-size': 9}, host);
    var x = function (t) { return left + Math.min(t, span) / span * width; };
    D.windows.forEach(function (w, i) {
      var y = top + i * rowH;
      text(svg, 4, y + rowH - 2, 'M' + w[0] + ' from ' + w[6], {fill: w[5] ? '#c53030' : '#1a202c'});
      el('rect', {x: x(w[1]), y: y + 1, width: Math.max(1, x(w[2]) - x(w[1])), height: rowH - 2, fill: '#e2e8f0', class: 'window'}, svg);
      var r = el('rect', {x: x(w[3]), y: y + 3, width: Math.max(1, x(w[4]) - x(w[3])), height: rowH - 6, fill: w[5] ? '#c53030' : '#2f855a'}, svg);
      el('title', {}, r).textContent = 'M' + w[0] + ': window ' + w[1] + '..' + w[2] + ', sent ' + w[3] + ', delivered ' + w[4] + (w[5] ? ' (late)' : '');
    });
  }

  drawTimeline();
  drawSnapshot();
  networkNote('snapshot-note');
  drawHeat();
  networkNote('heat-note');
  drawDag();
  drawWindows();
})();
"#;

/// The plan report of `ttdl run --html`; `summary` is the text summary `run` prints.
pub fn plan(title: &str, p: &Plan, summary: &str) -> String {
    let s = p.schedule;
    let mut rows: Vec<(&str, String)> = vec![
        ("network", p.network.spec.to_string()),
        (
            "program",
            format!(
                "{} tasks, {} messages",
                p.traffic.tasks.len(),
                p.traffic.messages.len()
            ),
        ),
        ("scheduler", s.method.name().to_string()),
        (
            "makespan",
            format!(
                "{} cycles ≥ lower bound {} ({})",
                s.makespan, p.lower_bound.0, p.lower_bound.1
            ),
        ),
    ];
    if let Some(pr) = &p.period {
        rows.push((
            "period",
            if pr.steady() {
                format!(
                    "{} cycles ≥ lower bound {} ({}), over {} iterations",
                    pr.achieved, pr.lower_bound, pr.bound_by, pr.iterations
                )
            } else {
                format!(
                    "no steady state in {} iterations (lower bound {}: {})",
                    pr.iterations, pr.lower_bound, pr.bound_by
                )
            },
        ));
    }
    rows.push((
        "deadlines",
        if s.relaxed.is_empty() {
            "all met".into()
        } else {
            format!("{} messages late (see the windows below)", s.relaxed.len())
        },
    ));
    rows.push((
        "peak link use",
        format!("{:.1}%", 100.0 * p.peak_utilization.0),
    ));
    rows.push(("placement cost", format!("{} word-hops", p.placement_cost)));
    let cut = |shown: usize, total: usize, what: &str| {
        if total > shown {
            format!("<p class=\"note\">The first {shown} of {total} {what} are drawn.</p>")
        } else {
            String::new()
        }
    };
    let body = format!(
        "<h1>{}</h1>\n{}\
         <details><summary>the text summary</summary><pre>{}</pre></details>\n\
         <h2 id=\"schedule\">Links and ports over time</h2>\n\
         <p class=\"note\">One row per link or port in use, one bar per message fragment (hover for the cycles); dashed lines mark where phases start.</p>\n\
         <div class=\"controls\"><button id=\"zoom-out\">−</button><button id=\"zoom-in\">+</button><button id=\"zoom-fit\">fit</button> <span id=\"zoom-level\"></span></div>\n\
         <div class=\"legend\"></div>\n\
         {}<div class=\"scroll\" id=\"timeline\"></div>\n\
         <h2 id=\"snapshots\">The network, interval by interval</h2>\n\
         <p class=\"note\">Nodes with their tasks; arrows are the messages on each link in the interval (Minsky Figs 5-6/5-7). <span id=\"snapshot-note\"></span></p>\n\
         <div class=\"controls\"><button id=\"snap-prev\">◀ previous</button><button id=\"snap-next\">next ▶</button> <span id=\"snap-label\"></span></div>\n\
         <div class=\"legend\"></div>\n\
         <div class=\"wide\" id=\"snapshot\"></div>\n\
         <h2 id=\"utilisation\">Link utilisation</h2>\n\
         <p class=\"note\">Each direction of each link coloured by the fraction of the makespan messages hold it (hover for the cycles). <span id=\"heat-note\"></span></p>\n\
         <div class=\"wide\" id=\"heat\"></div>\n\
         <h2 id=\"task-graph\">The task graph</h2>\n\
         <p class=\"note\">One lane per task: compute where it runs in the schedule, messages as arrows from send to read.</p>\n\
         <div class=\"scroll\" id=\"dag\"></div>\n\
         <h2 id=\"deadlines\">Release–deadline windows</h2>\n\
         <p class=\"note\">Grey: the window from release to deadline; green: sent to delivered within it; red: late.</p>\n\
         {}<div class=\"scroll\" id=\"windows\"></div>\n",
        esc(title),
        facts(&rows),
        esc(summary),
        cut(Limits::HTML_HOLDS, s.holds.len(), "message fragments"),
        cut(Limits::HTML_WINDOWS, p.traffic.messages.len(), "messages"),
    );
    page(title, &body, Some(&plan_data(p)), PLAN_JS)
}

/// The `compare --html` page: the table (the best row, least completion, highlighted whichever
/// model it is; the best of every column in bold) and completion time and energy side by side,
/// with the lower bound no model can beat across the time bars.
pub fn compare(title: &str, program: &Placed, rows: &[ModelRun]) -> String {
    use super::compare::best_rows;
    let best_time = best_rows(rows, |x| x.completion);
    let best_mean = best_rows(rows, |x| x.latency.mean);
    let best_max = best_rows(rows, |x| x.latency.max);
    let best_energy = best_rows(rows, |x| x.energy.total_pj);
    let cell = |best: bool, v: String| {
        if best {
            format!("<td class=\"best\">{v}</td>")
        } else {
            format!("<td>{v}</td>")
        }
    };
    let mut table = String::from(
        "<table class=\"grid\" id=\"compare\"><tr><th>model</th><th>completion</th><th>mean latency</th><th>max latency</th><th>energy</th></tr>\n",
    );
    for (i, r) in rows.iter().enumerate() {
        match &r.result {
            Ok(x) => {
                let _ = writeln!(
                    table,
                    "<tr{}><td>{}</td>{}{}{}{}</tr>",
                    if best_time[i] { " class=\"best\"" } else { "" },
                    esc(&x.model),
                    cell(best_time[i], x.completion.to_string()),
                    cell(best_mean[i], format!("{:.2}", x.latency.mean)),
                    cell(best_max[i], x.latency.max.to_string()),
                    cell(
                        best_energy[i],
                        crate::sim::energy::format_pj(x.energy.total_pj)
                    ),
                );
            }
            Err(e) => {
                let _ = writeln!(
                    table,
                    "<tr><td>{}</td><td colspan=\"4\" class=\"late\">{}</td></tr>",
                    esc(&r.spec),
                    esc(&e.to_string())
                );
            }
        }
    }
    table.push_str("</table>\n");
    let bound = match super::compare::lower_bound(program) {
        Some(b) => format!(
            "<p class=\"note\" id=\"bound\">No model can finish before cycle {b}: the critical path of the programs under the port model on this placement, each message taking at least its length in cycles (the dashed line).</p>\n"
        ),
        None => String::new(),
    };
    let chart = super::compare::svg(title, program, rows);
    let body = format!(
        "<h1>{}</h1>\n<p>{} on {} ({} tasks, {} messages): every model runs the same program under the same rules. The highlighted row finished first; bold marks the best of each column.</p>\n{table}<h2>Completion time and energy</h2>\n{bound}<div id=\"chart\">{chart}</div>\n",
        esc(title),
        esc(title),
        esc(&program.network.spec.to_string()),
        program.traffic.tasks.len(),
        program.traffic.messages.len()
    );
    page(title, &body, None, "")
}

/// The `sweep --html` page: latency against offered load (one curve per model and pattern, 95%
/// confidence intervals as error bars, saturation marked; see [`crate::sim::plot`]) and the
/// table of points.
pub fn sweep(
    title: &str,
    x_label: &str,
    curves: &[Series],
    table: &[Summary],
    csv: &str,
) -> String {
    let chart = line_chart(title, x_label, "mean latency (cycles)", curves);
    let seeds = table.iter().map(|r| r.seeds).max().unwrap_or(1);
    let mut rows = String::from(
        "<table class=\"grid\" id=\"points\"><tr><th>model</th><th>pattern</th><th>offered</th><th>accepted</th><th>mean latency</th><th>± 95% CI</th><th>p99</th><th>state</th></tr>\n",
    );
    for r in table {
        let _ = writeln!(
            rows,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.1}</td><td>{}</td></tr>",
            if r.saturated { " class=\"late\"" } else { "" },
            esc(&r.model),
            esc(&r.pattern),
            format_load(r.offered_flits),
            format_load(r.accepted_flits),
            r.mean_latency,
            if r.seeds > 1 {
                format!("{:.2}", r.latency_ci95)
            } else {
                "–".to_string()
            },
            r.p99,
            if r.saturated { "saturated" } else { "steady" }
        );
    }
    rows.push_str("</table>\n");
    let body = format!(
        "<h1>{}</h1>\n<p class=\"note\">Mean latency over {seeds} seed(s) per point{}; \
         ▲ at the top edge marks where a curve saturated (accepted traffic fell behind offered, or \
         packets were left undelivered) or its mean latency blew up: past it a mean says only how \
         long the run lasted, so the curve stops there.</p>\n<div id=\"chart\">{chart}</div>\n\
         <h2>The points</h2>\n{rows}<details><summary>as CSV</summary><pre id=\"csv\">{}</pre></details>\n",
        esc(title),
        if seeds > 1 {
            ", error bars the 95% confidence interval of the mean (Student's t)"
        } else {
            " (one seed: run with --seeds N for confidence intervals)"
        },
        esc(csv)
    );
    page(title, &body, None, "")
}

fn format_load(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{self, Settings};
    use crate::traffic::Traffic;

    /// The page's data for `traffic` planned on `network`.
    fn data(traffic: &Traffic, network: &str) -> Value {
        let mut settings = Settings::new();
        settings.set("network", network).expect("a network");
        let cfg = pipeline::resolve(traffic, &settings).expect("config");
        let plan = pipeline::plan(traffic, &cfg).expect("plan");
        let problem = plan.problem().expect("problem");
        let report = Plan::new(&problem, &plan.schedule, &plan.traffic);
        let page = super::plan("t", &report, "");
        let start = page.find("id=\"ttdl-data\">").expect("data") + 15;
        let end = start + page[start..].find("</script>").expect("end");
        serde_json::from_str(&page[start..end]).expect("json")
    }

    /// Named message types are the key when there are several; each hold carries its message's
    /// type; every directed link gets its busy cycles, which add up to the link holds.
    #[test]
    fn colours_follow_message_types_and_links_their_busy_cycles() {
        let mut b = Traffic::builder();
        let (a, c, d) = (b.task("a"), b.task("c"), b.task("d"));
        b.send(a, c, 4);
        b.send(c, d, 2);
        b.send(a, d, 3);
        let mut traffic = b.build();
        for (m, name) in traffic.messages.iter_mut().zip(["data", "ack", "data"]) {
            m.label = Some(name.into());
        }
        let d = data(&traffic, "mesh:2x2");
        assert_eq!(d["colourKey"], "message type");
        assert_eq!(d["colourNames"], json!(["ack", "data"]));
        assert_eq!(d["colourScale"], false);
        for h in d["holds"].as_array().expect("holds") {
            let want = if h[0] == 1 { 0 } else { 1 };
            assert_eq!(h[4], want, "{h}");
        }
        let busy = d["busy"].as_array().expect("busy");
        assert_eq!(busy.len(), 8, "a 2x2 mesh has 8 directed links");
        let total: u64 = busy.iter().map(|b| b[2].as_u64().unwrap_or(0)).sum();
        let rows = d["rows"].as_array().expect("rows");
        let link_holds: u64 = d["holds"]
            .as_array()
            .expect("holds")
            .iter()
            .filter(|h| !rows[h[1].as_u64().unwrap_or(0) as usize][1].is_null())
            .map(|h| h[3].as_u64().unwrap_or(0) - h[2].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(total, link_holds);
        assert!(total > 0);
    }

    /// Unnamed messages from many senders run along a colour scale by source task.
    #[test]
    fn many_senders_get_a_colour_scale() {
        let mut b = Traffic::builder();
        let first = b.tasks(25);
        for t in 0..25 {
            b.send(first + t, first + (t + 1) % 25, 2);
        }
        let d = data(&b.build(), "mesh:5x5");
        assert_eq!(d["colourKey"], "source task");
        assert_eq!(d["colourNames"].as_array().map(Vec::len), Some(25));
        assert_eq!(d["colourScale"], true);
    }
}
