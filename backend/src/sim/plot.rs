//! Latency-against-load curves as a small self-contained SVG (SPEC §4, "plots of latency against
//! load for the dynamic models"), drawn directly so the backend needs no plotting dependency.
//!
//! The figure is the one network papers print (Dally & Towles Fig 23.2; Chittor ch.5): mean
//! latency on a linear axis against offered load, one curve per model and pattern, each point
//! with the 95% confidence interval of its mean over seeds as an error bar. Past saturation a
//! mean latency says only how long the run lasted, so a point that saturated, or whose latency
//! blew up (beyond [`BLOW_UP`] times the lowest zero-load latency on the chart), is not plotted
//! at its value: the curve stops, a dashed stub and a marker at the top edge show where it
//! saturated, and a note under the plot says so. Ticks are round numbers (1, 2 or 5 times a power
//! of ten) and the legend sits beside the plot, sized to its longest label.

use std::fmt::Write;

/// One measured point: offered load `x`, mean latency `y`, the half-width `ci` of its 95%
/// confidence interval (0 with one seed), and whether the run saturated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub ci: f64,
    pub saturated: bool,
}

impl Point {
    /// A point measured once, below saturation.
    pub fn new(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            ci: 0.0,
            saturated: false,
        }
    }
}

/// One curve: a label and its points in x order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
}

/// A mean latency more than this many times the chart's lowest zero-load latency has blown up:
/// the queues grow through the run (the steady state is gone) even if accepted traffic has not
/// yet fallen behind offered.
pub const BLOW_UP: f64 = 10.0;

/// Okabe–Ito's colour-blind-safe palette (yellow left out: unreadable on white).
const COLORS: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// Width of one character at the chart's font size: the text is monospaced (DejaVu Sans Mono
/// and its kin advance 0.602 em), so a label's width is known without a browser.
const FONT: f64 = 12.0;
const CHAR_W: f64 = 0.62 * FONT;

/// A round tick step for `span` over about `target` ticks: 1, 2 or 5 times a power of ten.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let p = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0] {
        if raw <= m * p * (1.0 + 1e-9) {
            return m * p;
        }
    }
    10.0 * p
}

/// The ticks from 0 to the first multiple of the step at or above `max`.
pub fn ticks(max: f64, target: usize) -> Vec<f64> {
    let step = nice_step(max, target);
    let n = (max / step - 1e-9).ceil().max(1.0) as usize;
    (0..=n).map(|k| k as f64 * step).collect()
}

/// A tick label with the decimals the step needs, the same on every tick of an axis (`0`,
/// `0.05`, `0.10`, `0.15`; `0`, `50`, `100`).
pub fn tick_label(v: f64, step: f64) -> String {
    if v.abs() < step * 1e-6 {
        return "0".into();
    }
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()).min(12.0) as usize
    };
    format!("{v:.decimals$}")
}

/// A value as short as it reads exactly to four decimals: `0.3`, `0.4571`, `12`.
pub fn short(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A marker of shape `k` (circle, square, triangle, diamond, …) centred on `(x, y)`, so the
/// curves stay apart in grey print too.
fn marker(k: usize, x: f64, y: f64, colour: &str, r: f64) -> String {
    match k % 4 {
        0 => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\" fill=\"{colour}\"/>"),
        1 => format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>",
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => format!(
            "<path d=\"M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z\" fill=\"{colour}\"/>",
            y - 1.2 * r,
            x + 1.1 * r,
            y + 0.9 * r,
            x - 1.1 * r,
            y + 0.9 * r
        ),
        _ => format!(
            "<path d=\"M{x:.1},{:.1}L{:.1},{y:.1}L{x:.1},{:.1}L{:.1},{y:.1}Z\" fill=\"{colour}\"/>",
            y - 1.3 * r,
            x + 1.3 * r,
            y + 1.3 * r,
            x - 1.3 * r
        ),
    }
}

/// Where a curve stops: the index of its first point that saturated or blew up past `ceiling`
/// (every later point is past saturation too), or `None` when every point is plotted.
fn cut(points: &[Point], ceiling: f64) -> Option<usize> {
    points
        .iter()
        .position(|p| p.saturated || !p.y.is_finite() || p.y > ceiling)
}

/// The chart: `series` on shared axes, error bars, saturation marked, legend beside the plot.
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let usable = |p: &&Point| p.x.is_finite() && p.y.is_finite() && p.y > 0.0;
    // The lowest zero-load latency sets how high a latency may go before it has blown up.
    let zero_load = series
        .iter()
        .filter_map(|s| s.points.iter().filter(usable).find(|p| !p.saturated))
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let ceiling = if zero_load.is_finite() {
        zero_load * BLOW_UP
    } else {
        f64::INFINITY
    };
    let shown = |s: &Series| -> usize { cut(&s.points, ceiling).unwrap_or(s.points.len()) };
    // The x axis ends at the last point drawn: a curve's points past where it stopped are not.
    let xmax = series
        .iter()
        .flat_map(|s| {
            let end = (shown(s) + 1).min(s.points.len());
            s.points[..end]
                .iter()
                .filter(|p| p.x.is_finite())
                .map(|p| p.x)
        })
        .fold(0.0f64, f64::max);
    let ymax = series
        .iter()
        .flat_map(|s| s.points[..shown(s)].iter().filter(usable))
        .map(|p| p.y + p.ci.max(0.0).min(p.y))
        .fold(0.0f64, f64::max);
    let xt = ticks(if xmax > 0.0 { xmax } else { 1.0 }, 6);
    let yt = ticks(if ymax > 0.0 { ymax } else { 1.0 }, 6);
    let (xstep, ystep) = (xt[1] - xt[0], yt[1] - yt[0]);
    let (xtop, ytop) = (xt[xt.len() - 1], yt[yt.len() - 1]);
    // Layout: the plot, then the legend beside it as wide as its longest label.
    let (pw, ph): (f64, f64) = (560.0, 360.0);
    let (l, t, b) = (72.0, 44.0, 56.0);
    let longest = series
        .iter()
        .map(|s| s.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let legend_x = l + pw + 24.0;
    let legend_w = 34.0 + longest * CHAR_W + 12.0;
    // Notes under the plot: where each curve stopped.
    let mut notes = Vec::new();
    for s in series {
        if let Some(k) = cut(&s.points, ceiling) {
            let p = s.points[k];
            let why = if p.saturated {
                "saturated".to_string()
            } else {
                format!("mean latency above {ceiling:.0} cycles")
            };
            notes.push(format!(
                "▲ {}: {why} from offered load {}",
                s.label,
                short(p.x)
            ));
        }
    }
    let title_w = 24.0 + title.chars().count() as f64 * (CHAR_W * 14.0 / FONT);
    let note_w = notes.iter().map(|n| n.chars().count()).max().unwrap_or(0) as f64 * CHAR_W;
    let w = (legend_x + legend_w)
        .max(l + note_w + 12.0)
        .max(title_w)
        .ceil();
    let legend_h = 20.0 * series.len() as f64;
    let h = (t + ph.max(legend_h) + b + 18.0 * notes.len() as f64).ceil();
    let px = |x: f64| l + pw * x / xtop;
    let py = |y: f64| t + ph - ph * y / ytop;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans Mono, monospace" font-size="{FONT}" class="latency-chart">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{l}" y="24" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    for &x in &xt {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{t}" x2="{0:.1}" y2="{1:.1}" stroke="#e2e8f0"/><text class="xtick" x="{0:.1}" y="{2:.1}" text-anchor="middle">{3}</text>"##,
            px(x),
            t + ph,
            t + ph + 16.0,
            tick_label(x, xstep)
        );
    }
    for &y in &yt {
        let _ = writeln!(
            s,
            r##"<line x1="{l}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#e2e8f0"/><text class="ytick" x="{2:.1}" y="{3:.1}" text-anchor="end">{4}</text>"##,
            py(y),
            l + pw,
            l - 6.0,
            py(y) + 4.0,
            tick_label(y, ystep)
        );
    }
    let _ = writeln!(
        s,
        r#"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        l + pw / 2.0,
        t + ph + 40.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{0:.1}" text-anchor="middle" transform="rotate(-90 18 {0:.1})">{1}</text>"#,
        t + ph / 2.0,
        esc(y_label)
    );
    for (i, se) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let n = shown(se);
        let pts: Vec<&Point> = se.points[..n].iter().filter(usable).collect();
        let line: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", px(p.x), py(p.y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<g class="series"><polyline class="curve" fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
            line.join(" ")
        );
        for p in &pts {
            if p.ci > 0.0 {
                let (lo, hi) = (py((p.y - p.ci).max(0.0)), py((p.y + p.ci).min(ytop)));
                let x = px(p.x);
                let _ = writeln!(
                    s,
                    r#"<path class="errorbar" d="M{:.1},{lo:.1}H{:.1}M{x:.1},{lo:.1}V{hi:.1}M{:.1},{hi:.1}H{:.1}" stroke="{c}" stroke-width="1.2" fill="none"/>"#,
                    x - 4.0,
                    x + 4.0,
                    x - 4.0,
                    x + 4.0
                );
            }
            let _ = writeln!(
                s,
                "<g class=\"point\"><title>{}: load {} latency {:.1} ± {:.1}</title>{}</g>",
                esc(&se.label),
                short(p.x),
                p.y,
                p.ci,
                marker(i, px(p.x), py(p.y), c, 3.5)
            );
        }
        if n < se.points.len() {
            // The curve stops: a dashed stub up to a marker at the top edge (markers at the same
            // load stacked downwards, so none hides another).
            let p = se.points[n];
            let x = px(p.x);
            let stacked = series[..i]
                .iter()
                .filter(|o| {
                    let k = shown(o);
                    k < o.points.len() && (px(o.points[k].x) - x).abs() < 6.0
                })
                .count();
            let top = t + 11.0 * stacked as f64;
            if let Some(last) = pts.last() {
                let _ = writeln!(
                    s,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{x:.1}" y2="{top:.1}" stroke="{c}" stroke-width="1.5" stroke-dasharray="4 3"/>"#,
                    px(last.x),
                    py(last.y)
                );
            }
            let _ = writeln!(
                s,
                r#"<path class="saturated" d="M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z" fill="{c}" stroke="white"><title>{}: saturated from load {}</title></path>"#,
                top - 2.0,
                x + 6.0,
                top + 9.0,
                x - 6.0,
                top + 9.0,
                esc(&se.label),
                short(p.x)
            );
        }
        s.push_str("</g>\n");
        let ly = t + 10.0 + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<g class="legend"><line x1="{legend_x:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{c}" stroke-width="2"/>{}<text x="{:.1}" y="{:.1}">{}</text></g>"#,
            legend_x + 26.0,
            marker(i, legend_x + 13.0, ly, c, 3.5),
            legend_x + 34.0,
            ly + 4.0,
            esc(&se.label)
        );
    }
    for (k, note) in notes.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text class="note" x="{l}" y="{:.1}" fill="#4a5568">{}</text>"##,
            t + ph.max(legend_h) + b + 8.0 + 18.0 * k as f64,
            esc(note)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(x: f64, y: f64, ci: f64, saturated: bool) -> Point {
        Point {
            x,
            y,
            ci,
            saturated,
        }
    }

    /// Every text element's content, in order, for the elements of `class`.
    fn texts(svg: &str, class: &str) -> Vec<String> {
        let open = format!("<text class=\"{class}\"");
        svg.match_indices(&open)
            .filter_map(|(i, _)| {
                let rest = &svg[i..];
                let a = rest.find('>')? + 1;
                let b = rest.find("</text>")?;
                Some(rest[a..b].to_string())
            })
            .collect()
    }

    #[test]
    fn draws_every_point() {
        let svg = line_chart(
            "t",
            "x",
            "y",
            &[Series {
                label: "a<b".into(),
                points: vec![Point::new(0.01, 10.0), Point::new(0.02, 12.0)],
            }],
        );
        assert_eq!(svg.matches("class=\"point\"").count(), 2);
        assert!(svg.contains("a&lt;b"));
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(nice_step(0.64, 6), 0.2);
        assert_eq!(nice_step(0.072, 6), 0.02);
        assert_eq!(nice_step(213.0, 6), 50.0);
        let t = ticks(0.64, 6);
        let labels: Vec<String> = t.iter().map(|&v| tick_label(v, t[1] - t[0])).collect();
        assert_eq!(labels, ["0", "0.2", "0.4", "0.6", "0.8"]);
        let t = ticks(0.072, 6);
        let labels: Vec<String> = t.iter().map(|&v| tick_label(v, t[1] - t[0])).collect();
        assert_eq!(labels, ["0", "0.02", "0.04", "0.06", "0.08"]);
        // On a chart: every tick label is a multiple of 1, 2 or 5 times a power of ten.
        let svg = line_chart(
            "t",
            "x",
            "y",
            &[Series {
                label: "a".into(),
                points: vec![pt(0.072, 14.0, 0.0, false), pt(0.144, 33.0, 2.0, false)],
            }],
        );
        for class in ["xtick", "ytick"] {
            let labels = texts(&svg, class);
            assert!(labels.len() >= 3, "{svg}");
            let v: Vec<f64> = labels
                .iter()
                .map(|l| l.parse().expect("a number"))
                .collect();
            let step = v[1] - v[0];
            let p = 10f64.powf(step.log10().floor());
            let m = (step / p * 1000.0).round() / 1000.0;
            assert!([1.0, 2.0, 5.0].contains(&m), "{class}: {labels:?}");
            for (k, x) in v.iter().enumerate() {
                assert!((x - k as f64 * step).abs() < 1e-9, "{class}: {labels:?}");
            }
        }
        assert_eq!(texts(&svg, "xtick"), ["0", "0.05", "0.10", "0.15"]);
    }

    /// A saturated point and everything after it are not plotted at their latency: the axis
    /// stays at the unsaturated points' scale, and a marker and a note say where it saturated.
    #[test]
    fn saturation_is_marked_not_plotted() {
        let svg = line_chart(
            "t",
            "load",
            "latency",
            &[
                Series {
                    label: "wormhole vc=1 buf=2 (uniform)".into(),
                    points: vec![
                        pt(0.1, 11.0, 0.5, false),
                        pt(0.2, 14.0, 0.8, false),
                        pt(0.3, 6000.0, 900.0, true),
                        pt(0.4, 20.0, 1.0, false),
                    ],
                },
                Series {
                    label: "circuit (uniform)".into(),
                    points: vec![
                        pt(0.1, 13.0, 0.0, false),
                        pt(0.2, 30.0, 0.0, false),
                        pt(0.3, 900.0, 0.0, false),
                    ],
                },
            ],
        );
        assert_eq!(svg.matches("class=\"saturated\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"point\"").count(), 4, "{svg}");
        assert_eq!(svg.matches("class=\"errorbar\"").count(), 2, "{svg}");
        let y = texts(&svg, "ytick");
        assert_eq!(y.last().map(String::as_str), Some("30"), "{y:?}");
        let notes = texts(&svg, "note");
        assert_eq!(
            notes,
            [
                "▲ wormhole vc=1 buf=2 (uniform): saturated from offered load 0.3",
                "▲ circuit (uniform): mean latency above 110 cycles from offered load 0.3"
            ]
        );
    }

    /// The legend is beside the plot and the picture is wide enough for its longest label.
    #[test]
    fn legend_labels_are_whole() {
        let label = "wormhole vc=1 buf=2 (uniform) with a much longer name than usual";
        let svg = line_chart(
            "t",
            "x",
            "y",
            &[Series {
                label: label.into(),
                points: vec![Point::new(0.01, 10.0)],
            }],
        );
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|v| v.parse().ok())
            .expect("a width");
        let at = svg
            .find(&format!(">{label}</text>"))
            .expect("the whole label");
        let x: f64 = svg[..at]
            .rsplit("<text x=\"")
            .next()
            .and_then(|r| r.split('"').next())
            .and_then(|v| v.parse().ok())
            .expect("the label's x");
        assert!(x > 72.0 + 560.0, "beside the plot, not over it: {x}");
        assert!(
            x + label.chars().count() as f64 * CHAR_W <= width,
            "{x} + label > {width}"
        );
    }
}
