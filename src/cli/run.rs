//! `ttdl run`: evaluate a program, place, route, time-schedule, verify, replay the switch
//! programs, and summarize (SPEC §3). The input is TTDL source, a tasks file (Minsky Fig 5-5,
//! `.tasks`) or the Traffic IR as JSON (`.json`).

use std::path::{Path, PathBuf};

use clap::Args;
use ttdl_backend::place::{self, PlaceMethod};
use ttdl_backend::report::{self, Plan};
use ttdl_backend::route::{self, RouteMethod};
use ttdl_backend::schedule::{self, Hardware, Method, Problem, ScheduleError};
use ttdl_backend::sim::scheduled;
use ttdl_backend::topology::Kind;
use ttdl_backend::{switch, tasks_file, Network, NetworkSpec, Placement, Traffic};

use super::{CliError, CliResult, Common, Format};

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// The program: TTDL source, a tasks file (`.tasks`) or Traffic JSON (`.json`)
    pub file: Option<PathBuf>,
    /// Processor–network ports per node, each way
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub ports: u32,
    /// Cycles a word takes through one switch (0: the thesis's circuit model)
    #[arg(long, default_value_t = 0, value_name = "CYCLES")]
    pub latency: u64,
    /// Route for throughput (Minsky §5.2): before routing, move every message's deadline to at
    /// least its release plus the period lower bound — the slack a periodically invoked task graph
    /// has — so rerouting can spread messages over the whole period
    #[arg(long)]
    pub throughput: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Everything `run` produced, for the printers and `--out`.
struct Outcome {
    name: String,
    traffic: Traffic,
    network: Network,
    placement: Placement,
    routing: ttdl_backend::Routing,
    schedule: schedule::Schedule,
    hardware: Hardware,
    replay: scheduled::ReplayReport,
    /// With `--throughput`: the traffic as routing saw it (deadlines relaxed to the period).
    routed_as: Option<Traffic>,
}

pub fn run(args: &RunArgs) -> CliResult {
    let file = super::check::required_file(args.file.as_deref(), "run")?;
    let (printed, traffic) = load(file, &args.common)?;
    let out = plan(file, traffic, args)?;
    let problem = Problem::new(
        &out.traffic,
        &out.network,
        &out.placement,
        &out.routing,
        out.hardware,
    )
    .map_err(|e| CliError::Internal(e.to_string()))?;
    // Report the contention the router optimized: with --throughput, the pipelined windows.
    let windows = out.routed_as.as_ref().unwrap_or(&out.traffic);
    let plan = Plan::new(&problem, &out.schedule, windows);
    let text = summary(&plan, &out);
    // The JSON lists every link of the network: build it only when it is written.
    let json = match (args.common.format, &args.common.out) {
        (Format::Text, None) => String::new(),
        _ => report::json::to_string(&plan),
    };
    match args.common.format {
        Format::Text => {
            print!("{printed}");
            print!("{text}");
        }
        Format::Json => {
            // Keep stdout one JSON document: what the script printed goes to stderr.
            eprint!("{printed}");
            print!("{json}");
        }
    }
    if let Some(dir) = &args.common.out {
        let programs = switch::build(&problem, &out.schedule).to_string();
        let files = [
            (
                format!("{}.tasks", out.name),
                tasks_file::write(&out.traffic, Some((&out.network, &out.placement))),
            ),
            (format!("{}.switch", out.name), programs),
            (
                format!("{}.dag.dot", out.name),
                super::dag::dot_of(&out.traffic)?,
            ),
            (format!("{}.json", out.name), json),
            (format!("{}.txt", out.name), text),
            (
                format!("{}.schedule.svg", out.name),
                report::svg::timeline(&plan),
            ),
            (
                format!("{}.snapshots.svg", out.name),
                report::svg::snapshots(&plan),
            ),
        ];
        write_all(dir, &files)?;
    }
    Ok(())
}

/// The program's traffic and what evaluating it printed.
fn load(file: &Path, common: &Common) -> Result<(String, Traffic), CliError> {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let read = || {
        std::fs::read_to_string(file)
            .map_err(|e| CliError::Input(format!("cannot read `{}`: {e}", file.display())))
    };
    match ext {
        "tasks" => {
            let mut traffic = tasks_file::read(&read()?)
                .map_err(|e| CliError::Input(format!("{}:{e}", file.display())))?;
            if traffic.critical_path == 0 {
                traffic.critical_path = traffic
                    .messages
                    .iter()
                    .map(|m| m.release + m.size)
                    .max()
                    .unwrap_or(0);
            }
            Ok((String::new(), traffic))
        }
        "json" => serde_json::from_str(&read()?)
            .map(|t| (String::new(), t))
            .map_err(|e| {
                CliError::Input(format!(
                    "`{}` is not a Traffic document: {e}",
                    file.display()
                ))
            }),
        _ => super::check::evaluate(file, common),
    }
}

/// The thesis's relaxation step for pipelined programs (Minsky §5.2: "a relaxation step which moves
/// deadline times forward for messages which have some slack relative to this execution time"):
/// a copy of the traffic in which every deadline is at least release + period. Only routing sees
/// it; the schedule keeps the program's own deadlines.
fn relax_to_period(traffic: &Traffic) -> Result<Traffic, CliError> {
    let period = traffic
        .period
        .as_ref()
        .map(|p| p.lower_bound)
        .filter(|&p| p > 0)
        .ok_or_else(|| {
            CliError::Usage(
                "--throughput needs a program with a period bound: repeat its communication with `iterate`"
                    .into(),
            )
        })?;
    let mut relaxed = traffic.clone();
    for m in &mut relaxed.messages {
        m.deadline = m.deadline.max(m.release.saturating_add(period));
    }
    Ok(relaxed)
}

/// Network, placement, routing, schedule and replay: options from the command line, else the
/// script's `target`, else defaults (the logical network or the smallest square mesh; the canned
/// mapping when every task has one, else identity; dimension-order routing; both schedulers).
fn plan(file: &Path, traffic: Traffic, args: &RunArgs) -> Result<Outcome, CliError> {
    let common = &args.common;
    let target = traffic.target.clone().unwrap_or_default();
    let spec: NetworkSpec = match &common.network {
        Some(s) => s
            .parse()
            .map_err(|e| CliError::Usage(format!("--network: {e}")))?,
        None => match target.network.clone().or_else(|| traffic.logical.clone()) {
            Some(s) => s,
            None => {
                let n = traffic.tasks.len().max(1);
                let k = (1..).find(|k| k * k >= n).unwrap_or(1);
                NetworkSpec::new(Kind::Mesh, vec![k, k])
            }
        },
    };
    let network = Network::build(&spec).map_err(|e| CliError::Input(e.to_string()))?;
    let seed = common.seed.or(target.seed).unwrap_or(1);
    let all_mapped = !traffic.tasks.is_empty() && traffic.tasks.iter().all(|t| t.mapped.is_some());
    let place_method: PlaceMethod = match common.place.clone().or(target.place.clone()) {
        Some(m) => m
            .parse()
            .map_err(|e: place::PlaceError| CliError::Usage(format!("--place: {e}")))?,
        None if all_mapped => PlaceMethod::Mapping,
        None => PlaceMethod::Identity,
    };
    let placement = place::place(&traffic, &network, place_method, seed)
        .map_err(|e| CliError::Input(e.to_string()))?;
    let route_method: RouteMethod = common
        .route
        .clone()
        .or(target.route.clone())
        .unwrap_or_else(|| "dor".into())
        .parse()
        .map_err(|e: route::RouteError| CliError::Usage(format!("--route: {e}")))?;
    let routed_as = if args.throughput {
        Some(relax_to_period(&traffic)?)
    } else {
        None
    };
    let routing = route::route(
        routed_as.as_ref().unwrap_or(&traffic),
        &network,
        &placement,
        route_method,
        seed,
    )
    .map_err(|e| CliError::Input(e.to_string()))?;
    let method: Method = common
        .schedule
        .clone()
        .or(target.schedule.clone())
        .unwrap_or_else(|| "best".into())
        .parse()
        .map_err(|e: ScheduleError| CliError::Usage(format!("--schedule: {e}")))?;
    let hardware = Hardware {
        ports: args.ports.max(1),
        hop_latency: args.latency,
    };
    let schedule = schedule::schedule(&traffic, &network, &placement, &routing, method, hardware)
        .map_err(|e| match e {
        ScheduleError::Input(_) | ScheduleError::Deadlock(_) => CliError::Input(e.to_string()),
        ScheduleError::Invalid { .. } | ScheduleError::Lp(_) => CliError::Internal(e.to_string()),
    })?;
    // The switch programs, executed word by word, must deliver exactly what was planned.
    let replay = scheduled::replay(&traffic, &network, &placement, &routing, &schedule)
        .map_err(|e| CliError::Internal(e.to_string()))?;
    let name = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plan")
        .to_string();
    Ok(Outcome {
        name,
        traffic,
        network,
        placement,
        routing,
        schedule,
        hardware,
        replay,
        routed_as,
    })
}

fn summary(plan: &Plan, out: &Outcome) -> String {
    let mut s = report::text::summary(plan);
    if out.routed_as.is_some() {
        s.push_str("throughput:       routed with every deadline at least release + period (Minsky §5.2); the contention line uses those windows\n");
    }
    s.push_str(&format!(
        "replay:           every message delivered as planned; program done at cycle {}, mean latency {:.1} cycles, at most {} words buffered in a switch\n",
        out.replay.completion,
        out.replay.mean_latency(),
        out.replay.max_buffered
    ));
    s
}

/// The file in an `--out` directory that lists what TTDL wrote there.
const MANIFEST: &str = ".ttdl-out";

/// Writes the artifacts into `dir`, refusing to replace a file TTDL did not write there before
/// (the directory's manifest lists what it wrote).
fn write_all(dir: &Path, files: &[(String, String)]) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::Input(format!("cannot create `{}`: {e}", dir.display())))?;
    let manifest = dir.join(MANIFEST);
    let ours: Vec<String> = std::fs::read_to_string(&manifest)
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default();
    for (name, _) in files {
        let path = dir.join(name);
        if path.exists() && !ours.contains(name) {
            return Err(CliError::Input(format!(
                "refusing to overwrite `{}`: TTDL did not write it; move it away or choose another --out directory",
                path.display()
            )));
        }
    }
    let mut listed: Vec<String> = ours;
    for (name, _) in files {
        if !listed.contains(name) {
            listed.push(name.clone());
        }
    }
    listed.sort();
    std::fs::write(&manifest, listed.join("\n") + "\n")
        .map_err(|e| CliError::Input(format!("cannot write `{}`: {e}", manifest.display())))?;
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| CliError::Input(format!("cannot write `{}`: {e}", path.display())))?;
    }
    eprintln!("wrote {} files to {}", files.len(), dir.display());
    Ok(())
}
