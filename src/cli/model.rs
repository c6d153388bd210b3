//! `ttdl model`: Yuan's analytic model of multi-hop TDM networks (Yuan §4.2–4.3) on an N×N optical
//! torus — Table 4.1 (h, d, P), light-load delays, the maximum-throughput bounds of Table 4.2, the
//! best topology by routing time (Fig 4.12), M/D/1 delays at given loads and, on request, the same
//! quantities measured by the packet-level multi-hop simulator.

use std::fmt::Write as _;

use clap::{Args, ValueEnum};
use serde_json::json;
use ttdl_backend::sim::models::multihop::{poisson_run, MultiHop, MultiHopConfig};
use ttdl_backend::sim::optical::analytic::{best_by_gamma, Convention, TopologyParams};
use ttdl_backend::sim::optical::rca::{realize, Logical};
use ttdl_backend::sim::optical::torus::Torus;
use ttdl_backend::NetworkSpec;

use super::{CliError, CliResult, Format};

/// Which router bound to print (see `ttdl_backend::sim::optical::analytic`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ConventionArg {
    /// λ_s^max = 1/(γ(h+2)), as the M/D/1 router queue implies
    #[default]
    Queueing,
    /// λ_s^max = 2/(γ(h+2)), as printed in Yuan's Table 4.2
    Table,
}

/// Where the multiplexing degree d comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DegreeArg {
    /// Yuan's Table 4.1 formulas
    #[default]
    Yuan,
    /// The channel count of TTDL's own conflict-free realization on this torus
    Realized,
}

#[derive(Clone, Debug, Args)]
pub struct ModelArgs {
    /// Physical network: an N×N torus
    #[arg(long, value_name = "torus:NxN", default_value = "torus:16x16")]
    pub network: String,
    /// Seed of the simulated traffic (with --simulate)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Logical topologies, comma-separated: torus, hypercube, allxy, all-to-all (default: all)
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub logical: Vec<String>,
    /// Packet routing times γ in slots, comma-separated
    #[arg(long, value_delimiter = ',', default_values_t = vec![0.5, 1.0, 2.0, 4.0], value_name = "LIST")]
    pub gamma: Vec<f64>,
    /// Offered loads λ (packets/node/slot) for the M/D/1 delay table, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub lambda: Vec<f64>,
    /// Router-bound convention
    #[arg(long, value_enum, default_value_t = ConventionArg::Queueing)]
    pub convention: ConventionArg,
    /// Multiplexing degree: Yuan's formulas or TTDL's realization
    #[arg(long, value_enum, default_value_t = DegreeArg::Yuan)]
    pub degree: DegreeArg,
    /// Also simulate every (topology, γ, λ) packet by packet for this many slots
    #[arg(long, value_name = "SLOTS")]
    pub simulate: Option<u64>,
}

struct Row {
    params: TopologyParams,
    realized: Option<usize>,
}

pub fn run(args: &ModelArgs) -> CliResult {
    super::print(&render(args)?)?;
    Ok(())
}

/// The output of `ttdl model` as text or JSON.
pub fn render(args: &ModelArgs) -> Result<String, CliError> {
    let spec: NetworkSpec = args
        .network
        .parse()
        .map_err(|e| CliError::Usage(format!("{e}")))?;
    let torus = Torus::from_spec(&spec).map_err(|e| CliError::Usage(e.to_string()))?;
    if torus.nx != torus.ny || !torus.wrap {
        return Err(CliError::Usage(format!(
            "Yuan's model is for square N×N tori (got {spec})"
        )));
    }
    let n = torus.nx;
    let logicals = if args.logical.is_empty() {
        Logical::ALL.to_vec()
    } else {
        args.logical
            .iter()
            .map(|s| Logical::parse(s.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CliError::Usage(e.to_string()))?
    };
    for &g in &args.gamma {
        if !(g > 0.0 && g.is_finite()) {
            return Err(CliError::Usage(format!(
                "γ must be a positive number (got {g})"
            )));
        }
    }
    for &l in &args.lambda {
        if !(l > 0.0 && l.is_finite()) {
            return Err(CliError::Usage(format!(
                "λ must be a positive number (got {l})"
            )));
        }
    }
    let conv = match args.convention {
        ConventionArg::Queueing => Convention::Queueing,
        ConventionArg::Table => Convention::Table42,
    };
    let mut rows = Vec::new();
    for &l in &logicals {
        let params = match TopologyParams::yuan(l, n) {
            Ok(p) => p,
            // Unasked-for topologies that do not exist on this size (a hypercube needs a power of
            // two) are left out.
            Err(_) if args.logical.is_empty() => continue,
            Err(e) => return Err(CliError::Usage(e.to_string())),
        };
        let realized = if args.degree == DegreeArg::Realized || args.simulate.is_some() {
            Some(
                realize(&torus, l)
                    .map_err(|e| CliError::Input(e.to_string()))?
                    .len(),
            )
        } else {
            None
        };
        let params = match (args.degree, realized) {
            (DegreeArg::Realized, Some(d)) => params.with_degree(d),
            _ => params,
        };
        rows.push(Row { params, realized });
    }
    let sims = match args.simulate {
        Some(slots) => simulate(&torus, &rows, args, slots)?,
        None => Vec::new(),
    };
    Ok(match args.format {
        Format::Text => text(n, &rows, args, conv, &sims),
        Format::Json => json_out(n, &rows, args, conv, &sims),
    })
}

/// (topology, γ, λ, throughput, delay) measured by the simulator.
type Sim = (Logical, f64, f64, f64, f64);

fn simulate(t: &Torus, rows: &[Row], args: &ModelArgs, slots: u64) -> Result<Vec<Sim>, CliError> {
    if args.lambda.is_empty() {
        return Err(CliError::Usage(
            "--simulate needs loads: give --lambda".into(),
        ));
    }
    let seed = args.seed;
    let mut out = Vec::new();
    for row in rows {
        for &g in &args.gamma {
            for &l in &args.lambda {
                let cfg = MultiHopConfig {
                    torus: *t,
                    logical: row.params.logical,
                    gamma: g,
                };
                let mut net = MultiHop::new(cfg).map_err(|e| CliError::Input(e.to_string()))?;
                let r = poisson_run(&mut net, l, slots / 5, slots, seed)
                    .map_err(|e| CliError::Input(e.to_string()))?;
                out.push((row.params.logical, g, l, r.throughput, r.delay));
            }
        }
    }
    Ok(out)
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("saturated".into(), |v| format!("{v:.2}"))
}

fn text(n: usize, rows: &[Row], args: &ModelArgs, conv: Convention, sims: &[Sim]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Multi-hop TDM on a {n}x{n} torus (Yuan §4.2–4.3; times in slots)"
    );
    let _ = writeln!(
        s,
        "d from {}; router bound λs^max = {}",
        match args.degree {
            DegreeArg::Yuan => "Yuan's Table 4.1",
            DegreeArg::Realized => "TTDL's conflict-free realization",
        },
        match conv {
            Convention::Queueing => "1/(γ(h+2))",
            Convention::Table42 => "2/(γ(h+2)) (as printed in Yuan's Table 4.2)",
        }
    );
    let _ = writeln!(s, "\nTable 4.1");
    let _ = writeln!(
        s,
        "{:<11} {:>8} {:>8} {:>10} {:>10}",
        "topology", "h", "d", "P", "realized d"
    );
    for r in rows {
        let p = &r.params;
        let _ = writeln!(
            s,
            "{:<11} {:>8.4} {:>8} {:>10} {:>10}",
            p.logical.name(),
            p.h,
            p.d,
            p.p,
            r.realized.map_or("-".into(), |d| d.to_string())
        );
    }
    let gammas = args
        .gamma
        .iter()
        .map(|g| format!("{:>9}", format!("γ={g}")))
        .collect::<String>();
    let _ = writeln!(s, "\nLight-load delay (h+2)γ + (h+1)(d+1)/2");
    let _ = writeln!(s, "{:<11} {}", "topology", gammas);
    for r in rows {
        let vals: String = args
            .gamma
            .iter()
            .map(|&g| format!("{:>9.2}", r.params.light_load_delay(g)))
            .collect();
        let _ = writeln!(s, "{:<11} {}", r.params.logical.name(), vals);
    }
    let _ = writeln!(
        s,
        "\nMaximum throughput (packets/node/slot), Table 4.2 layout"
    );
    let _ = writeln!(s, "{:<11} {:<6} {}", "topology", "bound", gammas);
    for r in rows {
        let p = &r.params;
        for (name, f) in [
            (
                "λs^max",
                &(|g| p.router_bound(g, conv)) as &dyn Fn(f64) -> f64,
            ),
            ("λp^max", &|_| p.path_bound()),
            ("λ^max", &|g| p.max_throughput(g, conv)),
        ] {
            let vals: String = args
                .gamma
                .iter()
                .map(|&g| format!("{:>9.4}", f(g)))
                .collect();
            let _ = writeln!(s, "{:<11} {:<6} {}", p.logical.name(), name, vals);
        }
    }
    let params: Vec<TopologyParams> = rows.iter().map(|r| r.params).collect();
    let _ = writeln!(s, "\nBest topology at light load by γ (Fig 4.12)");
    for (g, l) in best_by_gamma(&params) {
        let _ = writeln!(s, "  from γ = {g:<9.3} {}", l.name());
    }
    if !args.lambda.is_empty() {
        let _ = writeln!(s, "\nM/D/1 delay (Yuan §4.3)");
        for &g in &args.gamma {
            let _ = writeln!(s, "γ = {g}");
            let lambdas: String = args
                .lambda
                .iter()
                .map(|l| format!("{:>11}", format!("λ={l}")))
                .collect();
            let _ = writeln!(s, "  {:<11} {}", "topology", lambdas);
            for r in rows {
                let vals: String = args
                    .lambda
                    .iter()
                    .map(|&l| format!("{:>11}", fmt_opt(r.params.delay(g, l))))
                    .collect();
                let _ = writeln!(s, "  {:<11} {}", r.params.logical.name(), vals);
            }
        }
    }
    if !sims.is_empty() {
        let _ = writeln!(s, "\nSimulated (packet level, realized channels)");
        let _ = writeln!(
            s,
            "{:<11} {:>6} {:>8} {:>11} {:>10} {:>10}",
            "topology", "γ", "λ", "throughput", "delay", "model"
        );
        for &(l, g, lam, thr, delay) in sims {
            let model = rows.iter().find(|r| r.params.logical == l).and_then(|r| {
                let p = match r.realized {
                    Some(d) => r.params.with_degree(d),
                    None => r.params,
                };
                p.delay(g, lam)
            });
            let _ = writeln!(
                s,
                "{:<11} {:>6} {:>8} {:>11.4} {:>10.2} {:>10}",
                l.name(),
                g,
                lam,
                thr,
                delay,
                fmt_opt(model)
            );
        }
    }
    s
}

fn json_out(n: usize, rows: &[Row], args: &ModelArgs, conv: Convention, sims: &[Sim]) -> String {
    let params: Vec<TopologyParams> = rows.iter().map(|r| r.params).collect();
    let topologies: Vec<_> = rows
        .iter()
        .map(|r| {
            let p = &r.params;
            json!({
                "topology": p.logical.name(),
                "h": p.h,
                "d": p.d,
                "P": p.p,
                "realized_d": r.realized,
                "by_gamma": args.gamma.iter().map(|&g| json!({
                    "gamma": g,
                    "light_load_delay": p.light_load_delay(g),
                    "router_bound": p.router_bound(g, conv),
                    "path_bound": p.path_bound(),
                    "max_throughput": p.max_throughput(g, conv),
                    "delay": args.lambda.iter().map(|&l| json!({"lambda": l, "delay": p.delay(g, l)})).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "version": 1,
        "network": {"topology": "torus", "dims": [n, n]},
        "convention": match conv { Convention::Queueing => "queueing", Convention::Table42 => "table-4.2" },
        "topologies": topologies,
        "best_by_gamma": best_by_gamma(&params).iter().map(|(g, l)| json!({"from_gamma": g, "topology": l.name()})).collect::<Vec<_>>(),
        "simulated": sims.iter().map(|&(l, g, lam, thr, delay)| json!({
            "topology": l.name(), "gamma": g, "lambda": lam, "throughput": thr, "delay": delay,
        })).collect::<Vec<_>>(),
    });
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use expect_test::expect;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: ModelArgs,
    }

    fn out(argv: &[&str]) -> Result<String, CliError> {
        let cmd = Cmd::try_parse_from(std::iter::once("model").chain(argv.iter().copied()))
            .map_err(|e| CliError::Usage(e.to_string()))?;
        render(&cmd.args)
    }

    #[test]
    fn table_4_2_layout_on_32x32() {
        let s = out(&["--network", "torus:32x32", "--convention", "table"]).unwrap();
        expect![[r#"
            Multi-hop TDM on a 32x32 torus (Yuan §4.2–4.3; times in slots)
            d from Yuan's Table 4.1; router bound λs^max = 2/(γ(h+2)) (as printed in Yuan's Table 4.2)

            Table 4.1
            topology           h        d          P realized d
            all-to-all    0.0000     4096    1047552          -
            allxy         0.9394      128      63488          -
            hypercube     4.0000       20      10240          -
            torus        15.0000        4       4096          -

            Light-load delay (h+2)γ + (h+1)(d+1)/2
            topology        γ=0.5      γ=1      γ=2      γ=4
            all-to-all    2049.50  2050.50  2052.50  2056.50
            allxy          126.56   128.03   130.97   136.85
            hypercube       55.50    58.50    64.50    76.50
            torus           48.50    57.00    74.00   108.00

            Maximum throughput (packets/node/slot), Table 4.2 layout
            topology    bound      γ=0.5      γ=1      γ=2      γ=4
            all-to-all  λs^max    2.0000   1.0000   0.5000   0.2500
            all-to-all  λp^max    0.2498   0.2498   0.2498   0.2498
            all-to-all  λ^max     0.2498   0.2498   0.2498   0.2498
            allxy       λs^max    1.3608   0.6804   0.3402   0.1701
            allxy       λp^max    0.2498   0.2498   0.2498   0.2498
            allxy       λ^max     0.2498   0.2498   0.2498   0.1701
            hypercube   λs^max    0.6667   0.3333   0.1667   0.0833
            hypercube   λp^max    0.1000   0.1000   0.1000   0.1000
            hypercube   λ^max     0.1000   0.1000   0.1000   0.0833
            torus       λs^max    0.2353   0.1176   0.0588   0.0294
            torus       λp^max    0.0625   0.0625   0.0625   0.0625
            torus       λ^max     0.0625   0.0625   0.0588   0.0294

            Best topology at light load by γ (Fig 4.12)
              from γ = 0.000     torus
              from γ = 1.136     hypercube
              from γ = 23.718    allxy
              from γ = 2047.500  all-to-all
        "#]].assert_eq(&s);
    }

    #[test]
    fn simulated_beside_the_model() {
        let s = out(&[
            "--network",
            "torus:8x8",
            "--logical",
            "torus,allxy",
            "--gamma",
            "1",
            "--lambda",
            "0.01",
            "--simulate",
            "2000",
        ])
        .unwrap();
        let sim = s.split("Simulated").nth(1).unwrap_or_default();
        expect![[r#"
             (packet level, realized channels)
            topology         γ        λ  throughput      delay      model
            torus            1     0.01      0.0095      16.20      15.46
            allxy            1     0.01      0.0095      16.43      16.38
        "#]]
        .assert_eq(sim);
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        assert!(matches!(
            out(&["--network", "mesh:4x4"]),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(
            out(&["--logical", "ring"]),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(
            out(&["--network", "torus:12x12", "--logical", "hypercube"]),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(out(&["--gamma", "0"]), Err(CliError::Usage(_))));
    }
}
