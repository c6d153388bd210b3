//! Sweeps people can publish: offered load × models × traffic patterns × seeds, each point one
//! synthetic run ([`super::drive::synthetic::run`]), summarized per (model, pattern, load) with the mean
//! over seeds and its 95% confidence interval. A sweep is a [`SweepSpec`] (flags or a TOML
//! file); its points are numbered, so they can run here on every core, or one per job on a
//! cluster, and be merged back into the same table ([`merge`]).

use std::fmt::Write as _;
use ttdl_ir::limits::Limits;

use serde::{Deserialize, Serialize};

use super::drive::synthetic::{self, Injection, Pattern, SyntheticConfig};
use super::options::ModelError;
use super::registry::{self, ModelContext};
use crate::topology::{Network, NetworkSpec};

/// What to sweep. Every list is crossed with every other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SweepSpec {
    pub network: String,
    /// Model specs, `wormhole vc=2`.
    pub models: Vec<String>,
    /// Traffic patterns, `uniform`, `transpose`, …
    pub patterns: Vec<String>,
    pub injection: String,
    /// Offered loads, packets per node per cycle.
    pub rates: Vec<f64>,
    /// The traffic generator's seeds. A TOML file may give them as a list (`seeds = [1, 5, 9]`) or,
    /// as the `--seeds N` flag does, as a count (`seeds = 3` = seeds 1, 2, 3).
    #[serde(deserialize_with = "seeds_as_list_or_count")]
    pub seeds: Vec<u64>,
    /// Packet size in flits.
    pub size: u64,
    pub warmup: u64,
    pub measure: u64,
    pub drain: u64,
    pub hot_node: usize,
    pub hot_fraction: f64,
}

/// `seeds = N` (N seeds from 1, what `--seeds N` means with the default `--seed 1`) or a list.
fn seeds_as_list_or_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seeds {
        Count(u64),
        List(Vec<u64>),
    }
    match Seeds::deserialize(d) {
        Ok(Seeds::List(list)) => Ok(list),
        Ok(Seeds::Count(n)) if (1..=1000).contains(&n) => Ok((1..=n).collect()),
        Ok(Seeds::Count(n)) => Err(serde::de::Error::custom(format!(
            "seeds = {n}: a count of seeds is 1 to 1000 (or give the list, seeds = [1, 2, 3])"
        ))),
        Err(_) => Err(serde::de::Error::custom(
            "seeds is a count (seeds = 3, seeds 1 to 3) or a list (seeds = [1, 2, 3])",
        )),
    }
}

impl Default for SweepSpec {
    fn default() -> Self {
        SweepSpec {
            network: "mesh:8x8".into(),
            models: vec!["wormhole".into()],
            patterns: vec!["uniform".into()],
            injection: "bernoulli".into(),
            rates: vec![0.01],
            seeds: vec![1],
            size: 8,
            warmup: 1_000,
            measure: 10_000,
            drain: 20_000,
            hot_node: 0,
            hot_fraction: 0.1,
        }
    }
}

/// One point of a sweep: its number and what it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub index: usize,
    pub model: String,
    pub pattern: String,
    pub rate: f64,
    pub seed: u64,
}

/// What one point measured (a CSV row: [`point_csv`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub index: usize,
    /// The model spec swept (groups the rows) and the model's own name (labels them).
    pub spec: String,
    pub model: String,
    pub pattern: String,
    pub rate: f64,
    pub seed: u64,
    pub offered_flits: f64,
    pub accepted_flits: f64,
    pub mean_latency: f64,
    pub p99: u64,
    pub packets: u64,
    pub unfinished: u64,
}

impl PointResult {
    /// The row of point `p`, from what its synthetic run measured.
    pub fn measured(p: &Point, r: synthetic::SyntheticResult) -> PointResult {
        PointResult {
            index: p.index,
            spec: p.model.clone(),
            model: r.model,
            pattern: p.pattern.clone(),
            rate: p.rate,
            seed: p.seed,
            offered_flits: r.offered_flits,
            accepted_flits: r.accepted_flits,
            mean_latency: r.latency.mean,
            p99: r.latency.p99,
            packets: r.latency.count as u64,
            unfinished: r.unfinished,
        }
    }
}

impl SweepSpec {
    /// Every point, numbered: models, then patterns, then loads, then seeds.
    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for m in &self.models {
            for p in &self.patterns {
                for &r in &self.rates {
                    for &s in &self.seeds {
                        out.push(Point {
                            index: out.len(),
                            model: m.clone(),
                            pattern: p.clone(),
                            rate: r,
                            seed: s,
                        });
                    }
                }
            }
        }
        out
    }

    fn network(&self) -> Result<Network, ModelError> {
        let spec: NetworkSpec = self
            .network
            .parse()
            .map_err(|e| ModelError(format!("network: {e}")))?;
        Network::build(&spec).map_err(|e| ModelError(e.to_string()))
    }

    /// Checks every setting before anything runs: the network, each model spec (built once),
    /// patterns, loads and the number of points.
    pub fn validate(&self) -> Result<(), ModelError> {
        let net = self.network()?;
        if self.models.is_empty() || self.patterns.is_empty() || self.rates.is_empty() {
            return Err(ModelError(
                "a sweep needs at least one model, one pattern and one load".into(),
            ));
        }
        if self.seeds.is_empty() {
            return Err(ModelError("a sweep needs at least one seed".into()));
        }
        let n = self.models.len() * self.patterns.len() * self.rates.len() * self.seeds.len();
        if n > Limits::SWEEP_POINTS {
            return Err(ModelError(format!(
                "{n} points is more than {0}; each is a whole simulation",
                Limits::SWEEP_POINTS
            )));
        }
        for r in &self.rates {
            if !(r.is_finite() && *r >= 0.0) {
                return Err(ModelError(format!("`{r}` is not a load")));
            }
        }
        for p in &self.patterns {
            p.parse::<Pattern>()?;
        }
        self.injection.parse::<Injection>()?;
        let ctx = ModelContext::new(&net);
        for m in &self.models {
            registry::build(m, &ctx)?;
        }
        Ok(())
    }

    /// Runs one point.
    pub fn run_point(&self, p: &Point) -> Result<PointResult, ModelError> {
        let net = self.network()?;
        let ctx = ModelContext::new(&net).with_seed(p.seed);
        let mut model = registry::build(&p.model, &ctx)?;
        let cfg = SyntheticConfig {
            pattern: p.pattern.parse()?,
            injection: self.injection.parse()?,
            rate: p.rate,
            size: self.size,
            warmup: self.warmup,
            measure: self.measure,
            drain: self.drain,
            hot_node: self.hot_node,
            hot_fraction: self.hot_fraction,
            seed: p.seed,
        };
        let r = synthetic::run(&net, model.as_mut(), &cfg)?;
        Ok(PointResult::measured(p, r))
    }
}

const POINT_HEADER: &str = "index,spec,model,pattern,rate,seed,offered_flits,accepted_flits,mean_latency,p99,packets,unfinished";

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Point rows as CSV (what each cluster job writes), in index order.
pub fn point_csv(rows: &[PointResult]) -> String {
    let mut s = String::from(POINT_HEADER);
    s.push('\n');
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            r.index,
            quote(&r.spec),
            quote(&r.model),
            quote(&r.pattern),
            r.rate,
            r.seed,
            r.offered_flits,
            r.accepted_flits,
            r.mean_latency,
            r.p99,
            r.packets,
            r.unfinished
        );
    }
    s
}

/// Splits one CSV line, honouring quoted fields.
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Reads rows written by [`point_csv`].
pub fn parse_point_csv(text: &str) -> Result<Vec<PointResult>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(POINT_HEADER) {
        return Err("not a sweep point file (the header differs)".into());
    }
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f = fields(l);
            if f.len() != 12 {
                return Err(format!("a row has {} fields, not 12: {l}", f.len()));
            }
            let num = |i: usize| {
                f[i].parse::<f64>()
                    .map_err(|_| format!("`{}` is not a number", f[i]))
            };
            let int = |i: usize| {
                f[i].parse::<u64>()
                    .map_err(|_| format!("`{}` is not a whole number", f[i]))
            };
            Ok(PointResult {
                index: int(0)? as usize,
                spec: f[1].clone(),
                model: f[2].clone(),
                pattern: f[3].clone(),
                rate: num(4)?,
                seed: int(5)?,
                offered_flits: num(6)?,
                accepted_flits: num(7)?,
                mean_latency: num(8)?,
                p99: int(9)?,
                packets: int(10)?,
                unfinished: int(11)?,
            })
        })
        .collect()
}

/// One row of the published table: a (model, pattern, load) over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub model: String,
    pub pattern: String,
    pub rate: f64,
    pub seeds: usize,
    pub offered_flits: f64,
    pub accepted_flits: f64,
    pub mean_latency: f64,
    /// Half-width of the 95% confidence interval of the mean latency over seeds (Student's t;
    /// 0 with one seed).
    pub latency_ci95: f64,
    pub p99: f64,
    /// Accepted below offered by more than chance explains (three standard deviations of the
    /// packets counted, at least 1%), or packets left undelivered: past saturation.
    pub saturated: bool,
}

/// Student's t for a two-sided 95% interval with `df` degrees of freedom.
fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => 0.0,
        d if d <= 30 => T[d - 1],
        _ => 1.96,
    }
}

/// Groups point rows by (spec, pattern, load) in sweep order and averages over seeds. The same
/// rows in any order give the same table: a merged cluster run equals a local one.
pub fn aggregate(rows: &[PointResult]) -> Vec<Summary> {
    let mut rows: Vec<&PointResult> = rows.iter().collect();
    rows.sort_by_key(|r| r.index);
    let mut groups: Vec<(String, String, f64, Vec<&PointResult>)> = Vec::new();
    for r in rows {
        match groups
            .iter_mut()
            .find(|g| g.0 == r.spec && g.1 == r.pattern && g.2 == r.rate)
        {
            Some(g) => g.3.push(r),
            None => groups.push((r.spec.clone(), r.pattern.clone(), r.rate, vec![r])),
        }
    }
    groups
        .into_iter()
        .map(|(_, pattern, rate, g)| {
            let n = g.len() as f64;
            let mean = |f: &dyn Fn(&PointResult) -> f64| g.iter().map(|r| f(r)).sum::<f64>() / n;
            let lat = mean(&|r| r.mean_latency);
            let var = if g.len() > 1 {
                g.iter()
                    .map(|r| (r.mean_latency - lat).powi(2))
                    .sum::<f64>()
                    / (n - 1.0)
            } else {
                0.0
            };
            let offered = mean(&|r| r.offered_flits);
            // Accepted falls short of offered by chance in a finite window: by ~1/√packets.
            let packets: u64 = g.iter().map(|r| r.packets).sum();
            let tolerance = (3.0 / (packets.max(1) as f64).sqrt()).max(0.01);
            let accepted = mean(&|r| r.accepted_flits);
            Summary {
                model: g[0].model.clone(),
                pattern,
                rate,
                seeds: g.len(),
                offered_flits: offered,
                accepted_flits: accepted,
                mean_latency: lat,
                latency_ci95: t95(g.len() - 1) * (var / n).sqrt(),
                p99: mean(&|r| r.p99 as f64),
                saturated: accepted < offered * (1.0 - tolerance)
                    || g.iter().any(|r| r.unfinished > 0),
            }
        })
        .collect()
}

/// The published table as CSV.
pub fn summary_csv(rows: &[Summary]) -> String {
    let mut s = String::from(
        "model,pattern,rate,seeds,offered_flits,accepted_flits,mean_latency,latency_ci95,p99,saturated\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{:.6},{},{:.6},{:.6},{:.3},{:.3},{:.1},{}",
            quote(&r.model),
            quote(&r.pattern),
            r.rate,
            r.seeds,
            r.offered_flits,
            r.accepted_flits,
            r.mean_latency,
            r.latency_ci95,
            r.p99,
            r.saturated
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_cross_every_list_and_rows_round_trip() {
        let spec = SweepSpec {
            network: "mesh:3x3".into(),
            models: vec!["wormhole".into(), "circuit".into()],
            patterns: vec!["uniform".into()],
            rates: vec![0.01, 0.02],
            seeds: vec![1, 2, 3],
            warmup: 50,
            measure: 200,
            drain: 400,
            ..SweepSpec::default()
        };
        spec.validate().unwrap();
        let points = spec.points();
        assert_eq!(points.len(), 12);
        assert_eq!(points[5].index, 5);
        let rows: Vec<PointResult> = points.iter().map(|p| spec.run_point(p).unwrap()).collect();
        let back = parse_point_csv(&point_csv(&rows)).unwrap();
        assert_eq!(back.len(), rows.len());
        // Any order of rows aggregates to the same table.
        let mut shuffled = back.clone();
        shuffled.reverse();
        assert_eq!(
            summary_csv(&aggregate(&shuffled)),
            summary_csv(&aggregate(&rows))
        );
        let table = aggregate(&rows);
        assert_eq!(table.len(), 4);
        assert!(table.iter().all(|r| r.seeds == 3 && r.latency_ci95 >= 0.0));
    }

    #[test]
    fn confidence_interval_is_students() {
        let row = |seed, lat| PointResult {
            index: seed as usize,
            spec: "m".into(),
            model: "m".into(),
            pattern: "uniform".into(),
            rate: 0.1,
            seed,
            offered_flits: 1.0,
            accepted_flits: 1.0,
            mean_latency: lat,
            p99: 0,
            packets: 1,
            unfinished: 0,
        };
        let t = aggregate(&[row(1, 10.0), row(2, 12.0), row(3, 14.0)]);
        // mean 12, s = 2, t(2) = 4.303: 4.303 * 2 / sqrt(3).
        assert!((t[0].mean_latency - 12.0).abs() < 1e-9);
        assert!((t[0].latency_ci95 - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
        assert!(spec_error("mesh:0x0").is_err());
    }

    fn spec_error(net: &str) -> Result<(), ModelError> {
        SweepSpec {
            network: net.into(),
            ..SweepSpec::default()
        }
        .validate()
    }
}
