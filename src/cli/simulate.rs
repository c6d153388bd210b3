//! `ttdl simulate`: run a program on one hardware model.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::sim::core::{default_placement, simulate, SimOptions, SimReport};
use ttdl_backend::sim::registry::{self, ModelContext};
use ttdl_backend::{Network, NetworkSpec, Placement, Traffic};

use super::{CliError, CliResult, Common, Format};

/// The model list shown after `--help`.
pub fn models_help() -> String {
    format!(
        "Models (options as KEY=VALUE after the model name, e.g. `--model wormhole vc=2 buf=4`):\n{}",
        registry::help()
    )
}

#[derive(Clone, Debug, Args)]
#[command(after_help = models_help())]
pub struct SimulateArgs {
    /// The TTDL program (or a Traffic IR as `.json`)
    pub file: Option<PathBuf>,
    /// Hardware model, optionally with options: `wormhole` or `"wormhole vc=2 buf=4"`
    #[arg(long, value_name = "MODEL")]
    pub model: String,
    /// Model options, KEY=VALUE (see the list below)
    #[arg(value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Stop with an error if the program has not finished by this cycle
    #[arg(long, value_name = "CYCLES")]
    pub max_cycles: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// A program ready for the models: its traffic, the physical network and where tasks run.
pub struct Program {
    pub traffic: Traffic,
    pub network: Network,
    pub placement: Placement,
}

/// Reads a program: TTDL source evaluated by a [`crate::session::Session`] (the standard library
/// first unless `--no-stdlib`), or a Traffic IR written as JSON (`.json`).
pub fn load_traffic(path: &Path, common: &Common) -> Result<Traffic, CliError> {
    if path.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", path.display())))?;
        return serde_json::from_str(&text).map_err(|e| {
            CliError::Input(format!(
                "`{}` is not a Traffic document: {e}",
                path.display()
            ))
        });
    }
    let (printed, traffic) = super::check::evaluate(path, common)?;
    // What the script printed goes to standard error, keeping standard output for the report.
    eprint!("{printed}");
    Ok(traffic)
}

/// The program, its network (`--network`, else the script's `target`, else its logical network,
/// else the smallest square mesh that holds its tasks) and placement.
pub fn load_program(file: Option<&Path>, common: &Common) -> Result<Program, CliError> {
    let path = file.ok_or_else(|| CliError::Usage("a program file is required".into()))?;
    let traffic = load_traffic(path, common)?;
    let spec: NetworkSpec = match &common.network {
        Some(s) => s
            .parse()
            .map_err(|e| CliError::Usage(format!("--network: {e}")))?,
        None => match traffic
            .target
            .as_ref()
            .and_then(|t| t.network.clone())
            .or_else(|| traffic.logical.clone())
        {
            Some(s) => s,
            None => {
                let n = traffic.tasks.len().max(1);
                let k = (1..).find(|k| k * k >= n).unwrap_or(1);
                NetworkSpec::new(ttdl_backend::topology::Kind::Mesh, vec![k, k])
            }
        },
    };
    let network = Network::build(&spec).map_err(|e| CliError::Input(e.to_string()))?;
    // `--place`, else the script's `target :place`, else its canned mapping when every task has
    // mapped coordinates, else identity (task i on node i mod N).
    let method = common
        .place
        .clone()
        .or_else(|| traffic.target.as_ref().and_then(|t| t.place.clone()));
    let placement = match method {
        Some(m) => {
            let m: PlaceMethod = m
                .parse()
                .map_err(|e: ttdl_backend::place::PlaceError| CliError::Usage(e.to_string()))?;
            let seed = common
                .seed
                .or_else(|| traffic.target.as_ref().and_then(|t| t.seed))
                .unwrap_or(1);
            place::place(&traffic, &network, m, seed).map_err(|e| CliError::Input(e.to_string()))?
        }
        None => default_placement(&traffic, &network),
    };
    Ok(Program {
        traffic,
        network,
        placement,
    })
}

/// Runs one model spec on the program.
pub fn run_model(
    prog: &Program,
    spec: &str,
    seed: u64,
    max_cycles: Option<u64>,
) -> Result<SimReport, String> {
    let ctx = ModelContext {
        network: &prog.network,
        traffic: Some(&prog.traffic),
        placement: Some(&prog.placement),
        seed,
    };
    let mut model = registry::build(spec, &ctx).map_err(|e| e.to_string())?;
    let mut opts = SimOptions::default();
    if let Some(m) = max_cycles {
        opts.max_cycles = m;
    }
    simulate(
        &prog.traffic,
        &prog.placement,
        &prog.network,
        model.as_mut(),
        &opts,
    )
    .map_err(|e| e.to_string())
}

/// The network part of the JSON documents (SPEC §4).
pub fn network_json(net: &Network) -> serde_json::Value {
    json!({
        "topology": net.spec.kind.name(),
        "dims": net.spec.dims,
        "nodes": net.nodes(),
        "links": net.links.iter().map(|l| [l.from, l.to]).collect::<Vec<_>>(),
    })
}

fn text_report(prog: &Program, r: &SimReport) -> String {
    use std::fmt::Write;
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
        "throughput   {:.3} words/cycle ({} words)",
        r.throughput, r.words
    );
    let _ = writeln!(s, "peak link    {:.1}% busy", 100.0 * r.peak_utilization);
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

pub fn run(args: &SimulateArgs) -> CliResult {
    let prog = load_program(args.file.as_deref(), &args.common)?;
    let mut spec = args.model.clone();
    for o in &args.options {
        spec.push(' ');
        spec.push_str(o);
    }
    let seed = args
        .common
        .seed
        .or_else(|| prog.traffic.target.as_ref().and_then(|t| t.seed))
        .unwrap_or(1);
    // A bad model name or option is a usage error (exit 2), found before running anything.
    let ctx = ModelContext {
        network: &prog.network,
        traffic: Some(&prog.traffic),
        placement: Some(&prog.placement),
        seed,
    };
    registry::build(&spec, &ctx).map_err(|e| CliError::Usage(e.to_string()))?;
    let report = run_model(&prog, &spec, seed, args.max_cycles).map_err(CliError::Input)?;
    let out = match args.common.format {
        Format::Text => text_report(&prog, &report),
        Format::Json => {
            let doc = json!({
                "version": 1,
                "network": network_json(&prog.network),
                "tasks": report.tasks.iter().map(|t| json!({"id": t.task, "name": t.name, "node": t.node})).collect::<Vec<_>>(),
                "simulation": report,
            });
            serde_json::to_string_pretty(&doc).map_err(|e| CliError::Internal(e.to_string()))?
                + "\n"
        }
    };
    if let Some(dir) = &args.common.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Input(format!("cannot create `{}`: {e}", dir.display())))?;
        let path = dir.join("simulate.json");
        let doc =
            serde_json::to_string_pretty(&report).map_err(|e| CliError::Internal(e.to_string()))?;
        std::fs::write(&path, doc + "\n")
            .map_err(|e| CliError::Input(format!("cannot write `{}`: {e}", path.display())))?;
    }
    print!("{out}");
    Ok(())
}
