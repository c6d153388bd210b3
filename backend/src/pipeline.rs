//! The one way every front end plans: a configuration in, a placed, routed, scheduled, verified
//! and replayed plan out. `ttdl run`, the `scheduled` model of `simulate` and `compare`, the
//! benchmarks and the tests call it, so one program gets one plan and one set of defaults.
//!
//! Each setting comes from the command line if given, else from the script's `(target …)`, else
//! from the defaults defined here once ([`Defaults`]).

use std::fmt;

use crate::place::{self, PlaceMethod};
use crate::progress::Progress;
use crate::route::{self, RouteMethod};
use crate::schedule::{self, program, Hardware, Method, Schedule, ScheduleError};
use crate::sim::models::scheduled::replay::{self, ReplayReport};
use crate::topology::{Kind, Network, NetworkSpec};
use crate::traffic::{Placement, Routing, Traffic};
use ttdl_ir::iterations::{Layout, Shape};

pub use ttdl_ir::config::{LpSolverKind, TimingModel, UnknownChoice};

pub use ttdl_ir::settings::{Setting, SettingError, Settings, SETTINGS};

/// A fully resolved plan configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanConfig {
    pub network: NetworkSpec,
    pub place: PlaceMethod,
    pub route: RouteMethod,
    pub schedule: Method,
    pub lp_solver: LpSolverKind,
    pub hardware: Hardware,
    pub timing: TimingModel,
    pub seed: u64,
    pub throughput: bool,
    /// How hard the scheduler works (the `effort` setting).
    pub effort: schedule::improve::Effort,
}

/// Why a configuration or plan could not be made.
#[derive(Debug)]
pub enum PipelineError {
    /// A setting names something that does not exist (exit 2 when it came from a flag).
    Config(String),
    /// The program or network cannot be planned (exit 1).
    Input(String),
    /// A scheduler or the replay produced something wrong: a bug (exit 101).
    Internal(String),
    /// The front end cancelled the work (Ctrl-C).
    Interrupted,
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipelineError::Config(s) | PipelineError::Input(s) | PipelineError::Internal(s) => {
                write!(f, "{s}")
            }
            PipelineError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for PipelineError {}

impl From<ScheduleError> for PipelineError {
    fn from(e: ScheduleError) -> Self {
        match e {
            ScheduleError::Input(_) | ScheduleError::Deadlock(_) | ScheduleError::TooLarge(_) => {
                PipelineError::Input(e.to_string())
            }
            ScheduleError::Invalid { .. } | ScheduleError::Lp(_) => {
                PipelineError::Internal(e.to_string())
            }
            ScheduleError::Interrupted => PipelineError::Interrupted,
        }
    }
}

/// The timing `check` shows before anything is placed: with `timing` (default
/// the table's) port-aware, each task's writes and reads pass one port each way, as on a
/// node of its own; with `thesis`, Minsky's instant writes (Fig 4-3) as the language computed them.
pub fn time_unplaced(traffic: &mut Traffic, timing: Option<&str>) -> Result<(), PipelineError> {
    let timing = match timing {
        Some(t) => t
            .parse()
            .map_err(|e: UnknownChoice| PipelineError::Config(format!("--timing: {e}")))?,
        None => TimingModel::default(),
    };
    let time = |t: &mut Traffic| -> Result<(), PipelineError> {
        if timing == TimingModel::Port && program::is_driven(t) {
            let own: Vec<usize> = (0..t.tasks.len()).collect();
            program::apply_port_timing(t, &own, 1)
                .map_err(|e| PipelineError::Input(e.to_string()))?;
        }
        Ok(())
    };
    time(traffic)?;
    // A folded program's critical path is the whole program's: the ideal timing of a repeating
    // program grows by the same amount every few iterations once its transient is over (a
    // max-plus system is eventually periodic), checked over three samples, then extrapolated.
    // The check is on every task, not only on the critical path: a task that runs ahead of its
    // readers (a writer that reads nothing) builds a backlog that grows with the count, so no
    // short sample shows the whole program's timing; such a program is timed unrolled.
    if let (Some(n), Some(shape)) = (traffic.repeat, Shape::of(traffic)) {
        // Samples are shared between the steps tried (2, 4, 6 then 4, 8, 12 …): each is timed once.
        let mut timed_samples: std::collections::BTreeMap<u64, Sample> = Default::default();
        // The folded program itself is the sample of its own count, timed just above.
        if timing == TimingModel::Port {
            timed_samples.insert(shape.count, Sample::of(traffic));
        }
        let mut sample = |m: u64| -> Result<Sample, PipelineError> {
            if let Some(s) = timed_samples.get(&m) {
                return Ok(s.clone());
            }
            let (mut t, _) = shape.with_count(traffic, m);
            if timing == TimingModel::Thesis && program::is_driven(&t) {
                program::apply_ideal_timing(&mut t)
                    .map_err(|e| PipelineError::Input(e.to_string()))?;
            }
            time(&mut t)?;
            let s = Sample::of(&t);
            timed_samples.insert(m, s.clone());
            Ok(s)
        };
        let mut settled = None;
        for step in [2u64, 4, 8, 16] {
            // Three samples `step` apart, the last within the program and ≡ n (mod step).
            if n < 3 * step {
                break;
            }
            let last = 2 * step + (n - 2 * step) % step + step;
            let s = [
                sample(last - 2 * step)?,
                sample(last - step)?,
                sample(last)?,
            ];
            if let Some(d) = Sample::steady_step(&s) {
                settled = Some(s[2].critical_path + (n - last) / step * d);
                break;
            }
        }
        traffic.critical_path = match settled {
            Some(cp) => cp,
            // No steady state in the samples: time the whole program, when it is small enough
            // to unroll.
            None if n.saturating_mul(shape.per_iteration(traffic) as u64)
                <= UNROLL_TIMING_LIMIT =>
            {
                sample(n)?.critical_path
            }
            None => {
                return Err(PipelineError::Input(format!(
                    "the folded program's ideal timing does not settle into a period within 48 \
                     iterations (a task runs ahead of the tasks it writes to), and its {n} \
                     iterations are too many to time unrolled: evaluate fewer iterations"
                )))
            }
        };
    }
    Ok(())
}

/// The most messages a folded program's timing unrolls when its samples show no steady state.
const UNROLL_TIMING_LIMIT: u64 = 4_000_000;

/// One timed sample of a folded program: its critical path and how far each task got (the last
/// release among its writes and the last start among its reads).
#[derive(Clone, Debug)]
struct Sample {
    critical_path: u64,
    progress: Vec<Option<u64>>,
}

impl Sample {
    fn of(t: &Traffic) -> Sample {
        let mut progress = vec![None; t.tasks.len()];
        let mut reach = |task: usize, at: u64| {
            if let Some(p) = progress.get_mut(task) {
                *p = Some(p.map_or(at, |q: u64| q.max(at)));
            }
        };
        for m in &t.messages {
            reach(m.src, m.release);
            for &d in &m.dst {
                reach(d, m.deadline);
            }
        }
        Sample {
            critical_path: t.critical_path,
            progress,
        }
    }

    /// The growth per step of three samples taken a step apart, when the whole program is in
    /// its steady state: the critical path and every communicating task advance by the same
    /// amount in both steps.
    fn steady_step(s: &[Sample; 3]) -> Option<u64> {
        let d = s[1].critical_path.checked_sub(s[0].critical_path)?;
        if s[2].critical_path.checked_sub(s[1].critical_path)? != d {
            return None;
        }
        let tasks = s[0].progress.len();
        (0..tasks)
            .all(
                |t| match (s[0].progress[t], s[1].progress[t], s[2].progress[t]) {
                    (Some(a), Some(b), Some(c)) => {
                        b.checked_sub(a) == Some(d) && c.checked_sub(b) == Some(d)
                    }
                    (None, None, None) => true,
                    _ => false,
                },
            )
            .then_some(d)
    }
}

/// Resolves the configuration: the given settings, else the script's `target`, else the table's
/// defaults (the target's network, else the program's logical network, else the smallest square
/// mesh that holds its tasks; the canned mapping when every task has one, else `best`). Every
/// value was checked against its row when it was set; what is left to check here is what no
/// single row can know (a solver this build lacks, set-up with the LP).
pub fn resolve(traffic: &Traffic, o: &Settings) -> Result<PlanConfig, PipelineError> {
    let target = traffic.target.clone().unwrap_or_default();
    let s = o
        .clone()
        .or(target.settings.clone())
        .or(Settings::defaults());
    let network = match s.word("network") {
        Some(n) => n
            .parse()
            .map_err(|e| PipelineError::Config(format!("--network: {e}")))?,
        None => match target.network.clone().or_else(|| traffic.logical.clone()) {
            Some(n) => n,
            None => {
                let n = traffic.tasks.len().max(1);
                let k = (1..).find(|k| k * k >= n).unwrap_or(1);
                NetworkSpec::new(Kind::Mesh, vec![k, k])
            }
        },
    };
    let all_mapped = !traffic.tasks.is_empty() && traffic.tasks.iter().all(|t| t.mapped.is_some());
    let place = s.choice("place").unwrap_or(if all_mapped {
        PlaceMethod::Mapping
    } else {
        PlaceMethod::Best
    });
    let chosen = |name: &str| -> Result<String, PipelineError> {
        s.get(name)
            .map(|v| v.to_string())
            .ok_or_else(|| PipelineError::Internal(format!("the setting `{name}` has no value")))
    };
    let parse = |name: &str| -> Result<u64, PipelineError> {
        s.int(name)
            .ok_or_else(|| PipelineError::Internal(format!("the setting `{name}` has no value")))
    };
    let route: RouteMethod = chosen("route")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    let schedule: Method = chosen("schedule")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    let lp_solver: LpSolverKind = chosen("lp-solver")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    schedule::lp::solver(lp_solver)
        .map_err(|e| PipelineError::Config(format!("--lp-solver: {e}")))?;
    let timing: TimingModel = chosen("timing")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    let hardware = Hardware {
        ports: parse("ports")? as u32,
        hop_latency: parse("latency")?,
        setup: parse("setup")?,
        buffer: match s.get("buffer") {
            Some(ttdl_ir::settings::Value::Int(b)) => Some(*b as u32),
            _ => None,
        },
    };
    if hardware.setup > 0 && schedule == Method::Lp {
        return Err(PipelineError::Config(
            "--setup with --schedule lp: the LP scheduler splits messages into fragments, each \
             of which would pay the set-up again; use --schedule exact or best"
                .into(),
        ));
    }
    Ok(PlanConfig {
        network,
        place,
        route,
        schedule,
        lp_solver,
        hardware,
        timing,
        seed: parse("seed")?,
        throughput: s.flag("throughput").unwrap_or(false),
        effort: chosen("effort")?.parse().map_err(PipelineError::Config)?,
    })
}

impl PlanConfig {
    /// What the scheduler's improvement phase is given.
    pub fn improve(&self) -> schedule::improve::Improve {
        schedule::improve::Improve {
            effort: self.effort,
            seed: self.seed,
        }
    }

    /// Every setting of the table as this configuration resolved it: the plan document's
    /// `config`, from which the same plan is made again.
    pub fn settings(&self) -> Settings {
        let mut s = Settings::new();
        let mut put = |name: &str, v: String| {
            // Every value here came from the table's own checks.
            let _ = s.set(name, &v);
        };
        put("network", self.network.to_string());
        put("place", self.place.name().to_string());
        put("route", self.route.name().to_string());
        put("schedule", self.schedule.name().to_string());
        put("lp-solver", self.lp_solver.name().to_string());
        put("ports", self.hardware.ports.to_string());
        put("latency", self.hardware.hop_latency.to_string());
        put("setup", self.hardware.setup.to_string());
        put("buffer", Hardware::buffer_name(self.hardware.buffer));
        put("timing", self.timing.name().to_string());
        put(
            "throughput",
            if self.throughput { "on" } else { "off" }.to_string(),
        );
        put("effort", self.effort.to_string());
        put("seed", self.seed.to_string());
        s
    }
}

/// The network and placement of a configuration. With `best`, each candidate is planned and the
/// placement of the best plan is kept (see [`plan_with_progress`]).
pub fn place(traffic: &Traffic, cfg: &PlanConfig) -> Result<(Network, Placement), PipelineError> {
    if cfg.place == PlaceMethod::Best {
        let plan = best_placement(traffic, cfg, &Progress::none())?;
        return Ok((plan.network, plan.placement));
    }
    let network = network(cfg)?;
    let placement = place_by(traffic, &network, cfg.place, cfg)?;
    Ok((network, placement))
}

fn network(cfg: &PlanConfig) -> Result<Network, PipelineError> {
    Network::build(&cfg.network).map_err(|e| PipelineError::Input(e.to_string()))
}

fn place_by(
    traffic: &Traffic,
    network: &Network,
    method: PlaceMethod,
    cfg: &PlanConfig,
) -> Result<Placement, PipelineError> {
    let options = place::PlaceOptions {
        ports: cfg.hardware.ports,
        ..place::PlaceOptions::new(method, cfg.seed)
    };
    place::place_with(traffic, network, &options, &mut |_| {})
        .map_err(|e| PipelineError::Input(e.to_string()))
}

/// `--place best`: plans the program on each of [`place::candidates`] — the canned mapping (when
/// it fits the network), identity, annealing — and keeps the placement with the smallest makespan
/// of the whole program, then the fewest relaxed deadlines; a tie goes to the earlier candidate. A
/// placement equal to an earlier one is not planned again. The candidates are judged by the
/// exact scheduler (fast, and where `--schedule best` starts); the kept placement is then planned
/// with the configured scheduler. The plan records what was tried.
fn best_placement(
    traffic: &Traffic,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Plan, PipelineError> {
    let network = network(cfg)?;
    let judge = PlanConfig {
        schedule: Method::Exact,
        ..cfg.clone()
    };
    let mut best: Option<(PlaceMethod, Plan)> = None;
    let mut tried: Vec<PlaceTry> = Vec::new();
    // The placements planned so far, with the candidate that made each and its makespan.
    let mut planned: Vec<(Placement, PlaceMethod, u64)> = Vec::new();
    for method in place::candidates(traffic) {
        let placement = match place_by(traffic, &network, method, cfg) {
            Ok(p) => p,
            // A mapping made for another network is not a candidate on this one.
            Err(_) if method == PlaceMethod::Mapping => continue,
            Err(e) => return Err(e),
        };
        if let Some((_, first, makespan)) = planned.iter().find(|(p, ..)| *p == placement) {
            tried.push(PlaceTry {
                method,
                makespan: *makespan,
                same_as: Some(*first),
            });
            continue;
        }
        let plan = plan_placed_with_progress(
            traffic,
            network.clone(),
            placement.clone(),
            &judge,
            progress,
        )?;
        let key = plan.rank();
        tried.push(PlaceTry {
            method,
            makespan: key.0,
            same_as: None,
        });
        planned.push((placement, method, key.0));
        if best.as_ref().is_none_or(|(_, b)| key < b.rank()) {
            best = Some((method, plan));
        }
    }
    let (chosen, best) = best.ok_or_else(|| PipelineError::Input("no placement to try".into()))?;
    let mut plan = if cfg.schedule == Method::Exact {
        Plan {
            config: cfg.clone(),
            ..best
        }
    } else {
        plan_placed_with_progress(traffic, best.network, best.placement, cfg, progress)?
    };
    plan.placed_by = Some(PlaceChoice { chosen, tried });
    Ok(plan)
}

/// What `--place best` tried and kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceChoice {
    pub chosen: PlaceMethod,
    pub tried: Vec<PlaceTry>,
}

/// One candidate of `--place best`: its whole-program makespan, or the earlier candidate whose
/// placement it equals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceTry {
    pub method: PlaceMethod,
    pub makespan: u64,
    pub same_as: Option<PlaceMethod>,
}

impl PlaceChoice {
    /// The summary's line, e.g. `placed by:        anneal (makespans, scheduled exact: identity
    /// 58, anneal 42; …)`.
    pub fn summary_line(&self) -> String {
        let tried: Vec<String> = self
            .tried
            .iter()
            .map(|t| match t.same_as {
                Some(m) => format!("{} = {}", t.method.name(), m.name()),
                None => format!("{} {}", t.method.name(), t.makespan),
            })
            .collect();
        format!(
            "placed by:        {} (makespans, scheduled exact: {}; the smallest kept; on a tie, the fewest relaxed deadlines, then the first)\n",
            self.chosen.name(),
            tried.join(", ")
        )
    }
}

/// A plan, ready to print.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The traffic as scheduled: with port-aware timing, its releases and deadlines are the
    /// placed program's.
    pub traffic: Traffic,
    pub network: Network,
    pub placement: Placement,
    pub routing: Routing,
    pub schedule: Schedule,
    pub replay: ReplayReport,
    /// With `throughput`: the traffic as routing saw it (deadlines relaxed to the period).
    pub routed_as: Option<Traffic>,
    pub config: PlanConfig,
    /// Present when the plan is a periodic schedule: a sample of the iterations scheduled, its
    /// kernel repeated (then `traffic` and `schedule` hold the whole program when it has at most
    /// [`Periodic::ROWS`] schedule rows, else the sample).
    pub periodic: Option<Periodic>,
    /// With `--place best`: the candidates planned and the one kept.
    pub placed_by: Option<PlaceChoice>,
    /// When a dynamic model's run gave the order of a shorter plan ([`schedule::from_run`]):
    /// which, as the summary says it.
    pub ordered_by: Option<String>,
}

/// A periodic schedule (SPEC §2, §4 `periodic`): how the plan was made from a sample.
#[derive(Clone, Debug)]
pub struct Periodic {
    /// Iterations of the whole program.
    pub count: u64,
    pub kernel: schedule::kernel::Kernel,
    /// The sample's layout (prefix, messages per iteration, iterations, suffix).
    pub sample: Layout,
    /// Whether the plan holds the whole program (else the sample).
    pub whole: bool,
    /// The longer run the extrapolation was verified and replayed on, and its relaxed deadlines.
    pub checked: u64,
    pub checked_relaxed: usize,
    /// Of the whole program: messages, makespan, and the words of its busiest resource (a
    /// makespan bound: every word of it needs a cycle of its own).
    pub messages: usize,
    pub makespan: u64,
    pub busiest: (u64, String),
    /// The switch programs of the whole program as loops over the kernel, when every node's
    /// program has that form (checked against the plain programs of two longer runs).
    pub loops: Option<crate::switch::LoopPrograms>,
}

impl Periodic {
    /// The summary's line: what repeats, how often, and what the extrapolation was checked on.
    pub fn summary_line(&self) -> String {
        let k = &self.kernel;
        let copies = k.copies(self.count).unwrap_or(0);
        let held = if self.whole {
            format!("and on the whole program of {} iterations", self.count)
        } else {
            "(the rest repeats the checked kernel)".to_string()
        };
        let loops = match &self.loops {
            Some(l) => format!(
                "; switch programs loop {} times over a {}-cycle kernel",
                l.nodes.iter().map(|n| n.count).max().unwrap_or(0),
                l.period
            ),
            None => String::new(),
        };
        format!(
            "periodic:         kernel of {} iteration(s) every {} cycles, repeated {} more times; scheduled on a sample of {} iterations, verified and replayed on {} {}{loops}\n",
            k.q,
            k.period,
            copies,
            self.sample.count,
            self.checked,
            held
        )
    }

    /// The sample's summary with the whole program's figures in place of the sample's (the
    /// schedule of the whole program is not written out: it has more than [`Periodic::ROWS`]
    /// rows). Lines that describe the sample say so.
    pub(crate) fn whole_program_lines(&self, sample_summary: &str, sample: &Traffic) -> String {
        let words: u64 = {
            let per: u64 = (0..self.sample.per)
                .map(|slot| sample.messages[self.sample.prefix + slot].size)
                .sum();
            let all: u64 = sample.messages.iter().map(|m| m.size).sum();
            all + per * (self.count - self.sample.count)
        };
        let (bound, by) = &self.busiest;
        sample_summary
            .lines()
            .map(|l| {
                let (key, _) = l.split_once(':').unwrap_or((l, ""));
                let value = match key {
                    "messages" => format!("{} ({words} words)", self.messages),
                    "critical path" => format!("{} cycles over the sample of {} iterations", l[key.len() + 1..].trim().split(' ').next().unwrap_or("?"), self.sample.count),
                    "period" => format!("{} cycles over {} iterations (lower bound {})", self.kernel.period / self.kernel.q, self.count, l.split("lower bound ").nth(1).unwrap_or("").trim_end_matches(')')),
                    "makespan" => format!("{} cycles", self.makespan),
                    "lower bound" => format!("{bound} cycles ({by} over all {} iterations)", self.count),
                    "schedule" | "placement cost" | "peak link use" | "contention" | "linear programs" => {
                        format!("{} (the sample of {} iterations)", l[key.len() + 1..].trim(), self.sample.count)
                    }
                    "deadlines" if self.checked_relaxed > 0 => format!(
                        "{} relaxed in the checked run of {} iterations; every kernel repetition relaxes its share",
                        self.checked_relaxed, self.checked
                    ),
                    _ => return format!("{l}\n"),
                };
                format!("{:<18}{value}\n", format!("{key}:"))
            })
            .collect()
    }

    /// SPEC §4 `periodic`: the kernel is iterations `kernel_iterations` of the rows listed
    /// (message ids `first + i·messages_per_iteration + slot`); in the whole program it occurs
    /// `repetitions` times, each `period` cycles after the last and `iterations_per_kernel`
    /// iterations further, and every later row moves by the inserted repetitions. `whole` says
    /// whether the rows are the whole program's (then already expanded) or the sample's.
    pub fn json(&self, schedule: &Schedule) -> serde_json::Value {
        let k = &self.kernel;
        let first = k.pump + 1 - k.q;
        let kernel_start = schedule
            .holds
            .iter()
            .filter(|h| {
                matches!(self.sample.place(h.msg), ttdl_ir::iterations::Place::Iteration { iteration, .. } if (first..=k.pump).contains(&iteration))
            })
            .map(|h| h.start)
            .min()
            .unwrap_or(0);
        serde_json::json!({
            "period": k.period,
            "kernel_start": kernel_start,
            "kernel_end": kernel_start + k.period,
            "repetitions": k.copies(self.count).unwrap_or(0) + 1,
            "iterations": self.count,
            "iterations_per_kernel": k.q,
            "kernel_iterations": [first, k.pump],
            "messages_per_iteration": self.sample.per,
            "prefix_messages": self.sample.prefix,
            "sample_iterations": self.sample.count,
            "whole": self.whole,
        })
    }

    /// Schedule rows the whole program may have and still be written out in full (SPEC §4).
    pub const ROWS: usize = 1_000_000;
    /// Iterations from which a uniform repeating program is scheduled periodically.
    pub const MIN_ITERATIONS: u64 = 64;
    /// Sample sizes tried, in iterations.
    pub const SAMPLES: [u64; 3] = [16, 32, 64];
}

/// Places, times, routes, schedules, verifies and replays.
pub fn plan(traffic: &Traffic, cfg: &PlanConfig) -> Result<Plan, PipelineError> {
    plan_with_progress(traffic, cfg, &Progress::none())
}

/// [`plan`], the long stages (schedule, verify, replay) reporting to `progress` and stopping
/// with [`PipelineError::Interrupted`] when it is cancelled.
pub fn plan_with_progress(
    traffic: &Traffic,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Plan, PipelineError> {
    if cfg.place == PlaceMethod::Best {
        return best_placement(traffic, cfg, progress);
    }
    let (network, placement) = place(traffic, cfg)?;
    plan_placed_with_progress(traffic, network, placement, cfg, progress)
}

/// [`plan`] on a given network and placement.
pub fn plan_placed(
    traffic: &Traffic,
    network: Network,
    placement: Placement,
    cfg: &PlanConfig,
) -> Result<Plan, PipelineError> {
    plan_placed_with_progress(traffic, network, placement, cfg, &Progress::none())
}

/// [`plan_placed`] with progress; see [`plan_with_progress`].
pub fn plan_placed_with_progress(
    traffic: &Traffic,
    network: Network,
    placement: Placement,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Plan, PipelineError> {
    let shape = Shape::of(traffic);
    if let Some(shape) = &shape {
        let count = traffic.repeat.unwrap_or(shape.count);
        if !cfg.throughput && count >= Periodic::MIN_ITERATIONS {
            if let Some(plan) =
                plan_periodic(traffic, shape, count, &network, &placement, cfg, progress)?
            {
                return Ok(plan);
            }
        }
    }
    // A folded program that has no periodic schedule is planned whole.
    let unfolded;
    let traffic = match (traffic.repeat, &shape) {
        (None, _) => traffic,
        (Some(count), Some(shape)) => {
            unfolded = resized(traffic, shape, count, &network, &placement, cfg)?.0;
            &unfolded
        }
        (Some(_), None) => {
            return Err(PipelineError::Input(
                "the program's folded iterations do not repeat alike".into(),
            ))
        }
    };
    let written = traffic;
    let mut traffic = timed(traffic, &placement, cfg)?;
    let routed_as = if cfg.throughput {
        Some(relax_to_period(&traffic)?)
    } else {
        None
    };
    let routing = route::route(
        routed_as.as_ref().unwrap_or(&traffic),
        &network,
        &placement,
        cfg.route,
        cfg.seed,
    )
    .map_err(|e| PipelineError::Input(e.to_string()))?;
    // The exact scheduler may move a message that would wait onto another minimal route: the
    // routes it chose are the plan's from then on.
    let mut schedule = schedule::schedule_choosing_routes(
        &traffic,
        &network,
        &placement,
        &routing,
        cfg.schedule,
        cfg.hardware,
        cfg.lp_solver,
        &cfg.improve(),
        progress,
    )?;
    let mut ordered_by = None;
    if let Some((f, by)) = follow_runs(
        written, &traffic, &network, &placement, &routing, &schedule, cfg, progress,
    )? {
        traffic = f.traffic;
        schedule = f.schedule;
        ordered_by = Some(by);
    }
    let routing = schedule.routes.take().unwrap_or(routing);
    // The switch programs, executed word by word, must deliver exactly what was planned.
    let replay = replay::replay_with_progress(
        &traffic, &network, &placement, &routing, &schedule, progress,
    )
    .map_err(|e| match e {
        replay::ReplayError::Interrupted => PipelineError::Interrupted,
        e => PipelineError::Internal(e.to_string()),
    })?;
    Ok(Plan {
        traffic,
        network,
        placement,
        routing,
        schedule,
        replay,
        routed_as,
        config: cfg.clone(),
        periodic: None,
        placed_by: None,
        ordered_by,
    })
}

/// The most messages a program may have for the dynamic models' runs to order its plan
/// ([`follow_runs`]): beyond it the plan is what the exact scheduler's own orders make.
/// It bounds the cost: each run that finishes first is followed by the exact scheduler three
/// times over, and the 9,900 messages of a 10×10 all-to-all made that minutes.
pub const FOLLOW_LARGEST: usize = 2_000;

/// The plan in the order of a dynamic model's run, when one finishes no later than `current`
/// (see [`schedule::from_run`]): every model `compare` runs but the plan's own is run on the
/// same placement, stopped once it is slower than the plan, and the exact scheduler follows
/// the sends of each that is not. Kept, with what ordered it, only when its verified plan is
/// strictly shorter. Not for the LP (asked for by name), pipelined windows (`throughput`),
/// fixed windows (a tasks file), programs larger than [`FOLLOW_LARGEST`] messages, or a plan
/// already at its lower bound.
#[allow(clippy::too_many_arguments)]
fn follow_runs(
    written: &Traffic,
    timed: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    current: &Schedule,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Option<(schedule::from_run::Followed, String)>, PipelineError> {
    use crate::sim::drive::program::{simulate, SimOptions};
    use crate::sim::registry::{self, ModelContext};
    let n = timed.messages.len();
    if cfg.schedule == Method::Lp
        || cfg.throughput
        || n > FOLLOW_LARGEST
        || !program::is_driven(timed)
        || current.method != Method::Exact
    {
        return Ok(None);
    }
    let mut problem = schedule::Problem::new(timed, network, placement, routing, cfg.hardware)?;
    problem.choose_routes = true;
    if current.makespan <= schedule::lower_bound(&problem).0 {
        return Ok(None);
    }
    let ctx = ModelContext {
        network,
        traffic: Some(written),
        placement: Some(placement),
        seed: cfg.seed,
    };
    let mut runs: Vec<(String, u64, &str)> = Vec::new();
    let mut sends: Vec<Vec<u64>> = Vec::new();
    for spec in registry::compare_specs() {
        if spec.split([' ', ':']).next() == Some("scheduled") {
            continue;
        }
        // A model that cannot run here, or does not finish before the plan, orders nothing.
        let Ok(mut model) = registry::build(&spec, &ctx) else {
            continue;
        };
        let mut opts = SimOptions::for_program(written, network, placement);
        opts.max_cycles = opts.max_cycles.min(current.makespan.saturating_add(1));
        let Ok(report) = simulate(written, placement, network, model.as_mut(), &opts) else {
            continue;
        };
        if report.completion > current.makespan {
            continue;
        }
        // Three views of the run's order: when it began to deliver each message (its delivery
        // less its words, the order in which it used the ports), when it delivered it, and
        // when the program queued it (`sent`).
        let mut began = vec![0u64; n];
        let mut delivered = vec![0u64; n];
        let mut queued = vec![0u64; n];
        for m in report.messages.iter().filter(|m| m.msg < n) {
            began[m.msg] = m.delivered.saturating_sub(m.size).max(m.sent);
            delivered[m.msg] = m.delivered;
            queued[m.msg] = m.sent;
        }
        for (view, order) in [
            ("began", began),
            ("delivered", delivered),
            ("queued", queued),
        ] {
            runs.push((spec.clone(), report.completion, view));
            sends.push(order);
        }
    }
    if runs.is_empty() {
        return Ok(None);
    }
    let Some(f) = schedule::from_run::follow(&problem, &sends, &cfg.improve(), progress)? else {
        return Ok(None);
    };
    if f.schedule.makespan >= current.makespan {
        return Ok(None);
    }
    let by = match f.run.and_then(|i| runs.get(i)) {
        Some((spec, completion, view)) => {
            let view = match *view {
                "began" => "the cycles it began to deliver each message",
                "delivered" => "the cycles it delivered each message",
                _ => "the cycles its programs sent each message",
            };
            format!("{view} in the {spec} run (done at cycle {completion}), each message released when its sender reaches it")
        }
        None => {
            "each message released when its sender reaches it (not held to the port-aware timing)"
                .to_string()
        }
    };
    Ok(Some((f, by)))
}

/// A program with `count` iterations, timed and routed as the configuration says.
fn resized(
    traffic: &Traffic,
    shape: &Shape,
    count: u64,
    network: &Network,
    placement: &Placement,
    cfg: &PlanConfig,
) -> Result<(Traffic, Layout, Routing), PipelineError> {
    let (t, layout) = shape.with_count(traffic, count);
    let mut t = timed(&t, placement, cfg)?;
    if cfg.timing == TimingModel::Thesis && program::is_driven(&t) {
        program::apply_ideal_timing(&mut t).map_err(|e| PipelineError::Input(e.to_string()))?;
    }
    let routing = route::route(&t, network, placement, cfg.route, cfg.seed)
        .map_err(|e| PipelineError::Input(e.to_string()))?;
    Ok((t, layout, routing))
}

/// The periodic schedule of a uniform repeating program (Minsky §6.2.1): schedule a sample of
/// its iterations, find the kernel, and extrapolate. The extrapolation is verified and replayed
/// on a run three kernels longer than the sample (the inserted copies against each other, the
/// prologue and the epilogue), and on the whole program when it is small enough to write out.
/// `None` when no sample's schedule repeats (or the routes differ between iterations): the
/// program is then scheduled whole.
fn plan_periodic(
    traffic: &Traffic,
    shape: &Shape,
    n: u64,
    network: &Network,
    placement: &Placement,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Option<Plan>, PipelineError> {
    for m0 in Periodic::SAMPLES {
        if 2 * m0 > n {
            break;
        }
        let mut m = m0;
        let mut found = None;
        for _ in 0..2 {
            let (t, layout, routing) = resized(traffic, shape, m, network, placement, cfg)?;
            // A program whose writes no read gates is planned as a slot table (a modulo
            // schedule, its paths chosen with it); any other by scheduling the sample.
            let slotted = if cfg.schedule == schedule::Method::Lp {
                None
            } else {
                let problem =
                    schedule::Problem::new(&t, network, placement, &routing, cfg.hardware)?;
                schedule::modulo::plan(&problem, &layout, cfg.seed, progress)?
            };
            let (s, routing) = match slotted {
                Some(p) => (p.schedule, p.routing),
                None => (
                    schedule::schedule_with_effort(
                        &t,
                        network,
                        placement,
                        &routing,
                        cfg.schedule,
                        cfg.hardware,
                        cfg.lp_solver,
                        &cfg.improve(),
                        progress,
                    )?,
                    routing,
                ),
            };
            let Some(k) = schedule::kernel::detect(&layout, &s, 4) else {
                break;
            };
            if k.copies(n).is_some() {
                found = Some((t, layout, routing, s, k));
                break;
            }
            m += (n - m) % k.q;
        }
        let Some((t, layout, routing, s, kernel)) = found else {
            continue;
        };
        // The check run: three more kernels, verified and replayed.
        let checked = m + 3 * kernel.q;
        let (ct, clayout, _) = resized(traffic, shape, checked, network, placement, cfg)?;
        let (Some(holds), Some(crouting)) = (
            kernel.extrapolate(&clayout, &layout, &s),
            kernel.routing(&clayout, &layout, &routing),
        ) else {
            continue;
        };
        let cproblem = schedule::Problem::new(&ct, network, placement, &crouting, cfg.hardware)?;
        let cs = schedule::kernel::schedule_from_holds(&cproblem, s.method, holds)?;
        if schedule::verify::verify(&cproblem, &cs).is_err() {
            continue;
        }
        // The programs must repeat too, not only the messages: a task that reads slower than
        // its messages arrive falls further behind every kernel, and has no period of its own.
        let shift = 3 * kernel.period;
        let programs_repeat = cs.makespan == s.makespan + shift
            && s.task_finish
                .iter()
                .zip(&cs.task_finish)
                .all(|(&a, &b)| b == a || b == a + shift);
        if !programs_repeat {
            continue;
        }
        replay::replay_with_progress(&ct, network, placement, &crouting, &cs, progress).map_err(
            |e| match e {
                replay::ReplayError::Interrupted => PipelineError::Interrupted,
                e => PipelineError::Internal(e.to_string()),
            },
        )?;
        let loops = loop_programs(
            traffic, shape, n, &layout, &s, &routing, &kernel, network, placement, cfg,
        )?;
        let copies = kernel.copies(n).unwrap_or(0);
        let whole_layout = Layout { count: n, ..layout };
        let rows_per_message = s.holds.len() as f64 / layout.total().max(1) as f64;
        let whole = (rows_per_message * whole_layout.total() as f64) as usize <= Periodic::ROWS;
        let mut periodic = Periodic {
            count: n,
            kernel,
            sample: layout,
            whole,
            checked,
            checked_relaxed: cs.relaxed.len(),
            messages: whole_layout.total(),
            makespan: s.makespan + copies * kernel.period,
            busiest: busiest(&s, &layout, &kernel, n).max(busiest_task(&t, &kernel, n)),
            loops,
        };
        let (traffic, routing, schedule) = if whole {
            let (wt, wlayout, _) = resized(traffic, shape, n, network, placement, cfg)?;
            let (holds, wrouting) = kernel
                .extrapolate(&wlayout, &layout, &s)
                .zip(kernel.routing(&wlayout, &layout, &routing))
                .ok_or_else(|| PipelineError::Internal("periodic extrapolation failed".into()))?;
            let wproblem =
                schedule::Problem::new(&wt, network, placement, &wrouting, cfg.hardware)?;
            let ws = schedule::kernel::schedule_from_holds(&wproblem, s.method, holds)?;
            schedule::verify::verify(&wproblem, &ws).map_err(|why| {
                PipelineError::Internal(format!("the periodic schedule is invalid: {why}"))
            })?;
            periodic.makespan = ws.makespan;
            (wt, wrouting, ws)
        } else {
            (t, routing, s)
        };
        let replay = replay::replay_with_progress(
            &traffic, network, placement, &routing, &schedule, progress,
        )
        .map_err(|e| match e {
            replay::ReplayError::Interrupted => PipelineError::Interrupted,
            e => PipelineError::Internal(e.to_string()),
        })?;
        return Ok(Some(Plan {
            traffic,
            network: network.clone(),
            placement: placement.clone(),
            routing,
            schedule,
            replay,
            routed_as: None,
            config: cfg.clone(),
            periodic: Some(periodic),
            placed_by: None,
            ordered_by: None,
        }));
    }
    Ok(None)
}

/// The switch programs of the whole `n`-iteration program as loops: found between the runs of
/// `m + 3q` and `m + 4q` iterations, checked against the run of `m + 5q`, then given the whole
/// program's repetition count.
#[allow(clippy::too_many_arguments)]
fn loop_programs(
    traffic: &Traffic,
    shape: &Shape,
    n: u64,
    sample: &Layout,
    s: &Schedule,
    routing: &Routing,
    kernel: &schedule::kernel::Kernel,
    network: &Network,
    placement: &Placement,
    cfg: &PlanConfig,
) -> Result<Option<crate::switch::LoopPrograms>, PipelineError> {
    let n1 = sample.count + 3 * kernel.q;
    if n < n1 + kernel.q {
        return Ok(None);
    }
    let programs = |count: u64| -> Result<Option<crate::switch::SwitchPrograms>, PipelineError> {
        let (t, layout, _) = resized(traffic, shape, count, network, placement, cfg)?;
        let (Some(holds), Some(routing)) = (
            kernel.extrapolate(&layout, sample, s),
            kernel.routing(&layout, sample, routing),
        ) else {
            return Ok(None);
        };
        let problem = schedule::Problem::new(&t, network, placement, &routing, cfg.hardware)?;
        let sched = schedule::kernel::schedule_from_holds(&problem, s.method, holds)?;
        Ok(Some(crate::switch::build(&problem, &sched)))
    };
    let (Some(a), Some(b), Some(c)) = (
        programs(n1)?,
        programs(n1 + kernel.q)?,
        programs(n1 + 2 * kernel.q)?,
    ) else {
        return Ok(None);
    };
    let step = sample.per * kernel.q as usize;
    let Some(loops) = crate::switch::LoopPrograms::find(&a, &b, kernel.period, step) else {
        return Ok(None);
    };
    if loops.lengthened(1).unrolled() != c {
        return Ok(None);
    }
    Ok(Some(loops.lengthened((n - n1) / kernel.q - 1)))
}

/// The busiest task of the whole program: its compute over every iteration (each cycle of it
/// is a cycle of the makespan).
fn busiest_task(sample: &Traffic, kernel: &schedule::kernel::Kernel, n: u64) -> (u64, String) {
    let copies = kernel.copies(n).unwrap_or(0);
    let lo = kernel.pump + 1 - kernel.q;
    sample
        .tasks
        .iter()
        .map(|task| {
            let mut all = 0;
            let mut per = 0;
            for (op, it) in task.ops.iter().zip(task.op_iterations()) {
                if let ttdl_ir::Op::Compute(c) = op {
                    all += c;
                    if it.is_some_and(|i| (lo..=kernel.pump).contains(&i)) {
                        per += c;
                    }
                }
            }
            (
                all + copies * per,
                format!("the compute of task {}", task.name),
            )
        })
        .max()
        .unwrap_or((0, String::new()))
}

/// The busiest resource of the whole program: the sample's words on it, plus a kernel's words
/// per inserted copy. Each word needs a cycle of its own there, so this bounds the makespan.
fn busiest(
    s: &Schedule,
    layout: &Layout,
    kernel: &schedule::kernel::Kernel,
    n: u64,
) -> (u64, String) {
    use std::collections::BTreeMap;
    let copies = kernel.copies(n).unwrap_or(0);
    let lo = kernel.pump + 1 - kernel.q;
    let mut load: BTreeMap<schedule::Resource, (u64, u64)> = BTreeMap::new();
    for h in &s.holds {
        let e = load.entry(h.resource).or_default();
        e.0 += h.end - h.start;
        if let ttdl_ir::iterations::Place::Iteration { iteration, .. } = layout.place(h.msg) {
            if (lo..=kernel.pump).contains(&iteration) {
                e.1 += h.end - h.start;
            }
        }
    }
    let cap = |r: &schedule::Resource| match r {
        schedule::Resource::Link { .. } => 1,
        _ => u64::from(s.hardware.ports.max(1)),
    };
    load.iter()
        .map(|(r, (all, per))| {
            let words = all + copies * per;
            (words.div_ceil(cap(r)), format!("every word through {r}"))
        })
        .max()
        .unwrap_or((0, String::new()))
}

/// The traffic with the configuration's timing: port-aware timing is recomputed on the
/// placement (tasks of one node share its ports); thesis timing is the language's own. A
/// tasks file without programs keeps its windows.
///
/// With a set-up cost (`--setup S`), every message is `S` cycles longer on the wire: its
/// transfer holds each resource of its route for `S` set-up cycles and then its words (Minsky
/// §5.1.2: "nine network cycles" for 8-word messages). The sizes scheduled, verified and replayed
/// are these wire lengths, and the ideal timing is recomputed with them, so every bound counts
/// the set-up too.
pub fn timed(
    traffic: &Traffic,
    placement: &Placement,
    cfg: &PlanConfig,
) -> Result<Traffic, PipelineError> {
    let mut t = traffic.clone();
    let setup = cfg.hardware.setup;
    if setup > 0 {
        for m in &mut t.messages {
            if m.size > 0 {
                m.size += setup;
            }
        }
    }
    if cfg.timing == TimingModel::Port && program::is_driven(traffic) {
        program::apply_port_timing(&mut t, &placement.node_of, cfg.hardware.ports)?;
    } else if setup > 0 && program::is_driven(traffic) {
        program::apply_ideal_timing(&mut t).map_err(|e| PipelineError::Input(e.to_string()))?;
    }
    // The critical path printed is the program's (SPEC §2), as `check` times it: set-up cycles,
    // more ports or tasks sharing a node change the plan's timing, not the program's. Only then
    // is the program timed again on its own.
    let shared = {
        let mut nodes = placement.node_of.clone();
        nodes.sort_unstable();
        nodes.windows(2).any(|w| w[0] == w[1])
    };
    if program::is_driven(traffic) && (setup > 0 || cfg.hardware.ports > 1 || shared) {
        let mut own = traffic.clone();
        time_unplaced(&mut own, Some(cfg.timing.name()))?;
        t.critical_path = own.critical_path;
    }
    Ok(t)
}

/// The thesis's relaxation step for pipelined programs (Minsky §5.2: "a relaxation step which
/// moves deadline times forward for messages which have some slack relative to this execution
/// time"): a copy of the traffic in which every deadline is at least release + period. Only
/// routing sees it; the schedule keeps the program's own deadlines.
fn relax_to_period(traffic: &Traffic) -> Result<Traffic, PipelineError> {
    let period = traffic
        .period
        .as_ref()
        .map(|p| p.lower_bound)
        .filter(|&p| p > 0)
        .ok_or_else(|| {
            PipelineError::Config(
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

impl Plan {
    /// The whole program's makespan and relaxed deadlines: how `--place best` ranks plans.
    pub fn rank(&self) -> (u64, usize) {
        match &self.periodic {
            Some(p) => (p.makespan, self.schedule.relaxed.len()),
            None => (self.schedule.makespan, self.schedule.relaxed.len()),
        }
    }

    /// The schedule problem the plan solved (the view the reports and the verifier take).
    pub fn problem(&self) -> Result<schedule::Problem<'_>, PipelineError> {
        schedule::Problem::new(
            &self.traffic,
            &self.network,
            &self.placement,
            &self.routing,
            self.schedule.hardware,
        )
        .map_err(|e| PipelineError::Internal(e.to_string()))
    }
}

/// A program placed for the hardware models: what `simulate` and `compare` run.
#[derive(Clone, Debug)]
pub struct Placed {
    pub traffic: Traffic,
    pub network: Network,
    pub placement: Placement,
    pub config: PlanConfig,
}

/// Resolves the configuration and places the program, as [`plan`] would.
pub fn placed(traffic: &Traffic, o: &Settings) -> Result<Placed, PipelineError> {
    let config = resolve(traffic, o)?;
    let (network, placement) = place(traffic, &config)?;
    Ok(Placed {
        traffic: traffic.clone(),
        network,
        placement,
        config,
    })
}

/// One model's run of a placed program, or why it could not run or finish.
#[derive(Clone, Debug)]
pub struct ModelRun {
    /// The spec as asked for (`wormhole vc=2`).
    pub spec: String,
    pub result: Result<crate::sim::drive::program::SimReport, crate::sim::drive::program::SimError>,
}

impl Placed {
    /// Runs the program on one model (`wormhole`, `"circuit setup=3"`), under `max_cycles` or
    /// the program's default cap. The `scheduled` model plans with this configuration's route,
    /// scheduler and timing unless the spec sets them.
    pub fn simulate(
        &self,
        spec: &str,
        max_cycles: Option<u64>,
    ) -> Result<crate::sim::drive::program::SimReport, crate::sim::drive::program::SimError> {
        self.simulate_with_progress(spec, max_cycles, &Progress::none())
    }

    /// [`Placed::simulate`], counting delivered messages on `progress`.
    pub fn simulate_with_progress(
        &self,
        spec: &str,
        max_cycles: Option<u64>,
        progress: &Progress,
    ) -> Result<crate::sim::drive::program::SimReport, crate::sim::drive::program::SimError> {
        use crate::sim::drive::program::{simulate_with_progress, SimOptions};
        use crate::sim::registry::{self, ModelContext};
        let ctx = ModelContext {
            network: &self.network,
            traffic: Some(&self.traffic),
            placement: Some(&self.placement),
            seed: self.config.seed,
        };
        let mut model = registry::build(&self.with_plan_settings(spec), &ctx)?;
        let mut opts = SimOptions::for_program(&self.traffic, &self.network, &self.placement);
        if let Some(m) = max_cycles {
            opts.max_cycles = m;
        }
        simulate_with_progress(
            &self.traffic,
            &self.placement,
            &self.network,
            model.as_mut(),
            &opts,
            progress,
        )
    }

    /// Builds the model `spec` names without running it: a bad name or option, or a model that
    /// cannot run on this network, is found before any work.
    pub fn check_model(&self, spec: &str) -> Result<(), crate::sim::ModelError> {
        let ctx = crate::sim::registry::ModelContext {
            network: &self.network,
            traffic: Some(&self.traffic),
            placement: Some(&self.placement),
            seed: self.config.seed,
        };
        crate::sim::registry::build(&self.with_plan_settings(spec), &ctx).map(|_| ())
    }

    /// The model specs `compare` runs: `models` as a comma-separated list (`wormhole,circuit
    /// setup=3`), or every registered model's standard set when it is `None` — the one default
    /// list every front end shows. An unknown model name is refused with the closest name.
    pub fn compare_specs(&self, models: Option<&str>) -> Result<Vec<String>, PipelineError> {
        use crate::sim::registry;
        let Some(list) = models else {
            let mut specs = registry::compare_specs();
            // A program that multicasts gets the like-for-like pair: the plan with its
            // broadcasts sent as unicasts, as the dynamic models send them (SPEC §5).
            if self.traffic.messages.iter().any(|m| m.is_multicast()) {
                let at = specs
                    .iter()
                    .position(|s| s == "scheduled")
                    .map_or(0, |i| i + 1);
                specs.insert(at, "scheduled multicast=unicast".to_string());
            }
            return Ok(specs);
        };
        let specs: Vec<String> = list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if specs.is_empty() {
            return Err(PipelineError::Config(
                "the model list names no model".into(),
            ));
        }
        for s in &specs {
            let name = s.split([' ', ':']).next().unwrap_or("");
            registry::known(name).map_err(PipelineError::Config)?;
        }
        Ok(specs)
    }

    /// Every spec in turn, side by side (`compare`); `progress` is called before each.
    pub fn compare(
        &self,
        specs: &[String],
        max_cycles: Option<u64>,
        mut progress: impl FnMut(&str),
    ) -> Vec<ModelRun> {
        specs
            .iter()
            .map(|spec| {
                progress(spec);
                ModelRun {
                    spec: spec.clone(),
                    result: self.simulate(spec, max_cycles),
                }
            })
            .collect()
    }

    /// `spec` with the plan settings filled in where a `scheduled` spec leaves them out, so
    /// `compare --schedule lp` or a script's `(target … :route 'shortest)` reaches the plan.
    pub fn with_plan_settings(&self, spec: &str) -> String {
        let name = spec.split([' ', ':']).next().unwrap_or("");
        if name != "scheduled" {
            return spec.to_string();
        }
        let given = |key: &str| {
            spec.split([' ', ',', ':'])
                .any(|w| w.split_once('=').is_some_and(|(k, _)| k == key))
        };
        let mut out = spec.to_string();
        for (setting, value) in self.config.settings().iter() {
            if setting.model && !given(setting.key) && !given(setting.name) {
                out.push_str(&format!(" {}={value}", setting.key));
            }
        }
        out
    }
}

/// A document `ttdl run --format json` wrote, read back: its program placed where the plan placed
/// it (each task mapped to its node's coordinates), and the plan's settings as the base the
/// command line overrides. `Ok(None)` when `text` is not a plan document (a bare Traffic IR).
pub fn read_plan_document(text: &str) -> Result<Option<(Traffic, Settings)>, PipelineError> {
    let bad = |e: String| PipelineError::Input(format!("not a plan document: {e}"));
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let (Some(program), Some(config)) = (doc.get("program"), doc.get("config")) else {
        return Ok(None);
    };
    let mut traffic: Traffic =
        serde_json::from_value(program.clone()).map_err(|e| bad(format!("program: {e}")))?;
    let config = config
        .as_object()
        .ok_or_else(|| bad("config is not an object".into()))?;
    // Every setting the plan was made with; what else `config` records (how the placement was
    // chosen) is not a setting.
    let mut settings =
        Settings::from_json(config, false).map_err(|e| bad(format!("config: {e}")))?;
    let network: NetworkSpec = settings
        .word("network")
        .ok_or_else(|| bad("config.network is missing".into()))?
        .parse()
        .map_err(|e: crate::topology::TopologyError| bad(format!("config.network: {e}")))?;
    let net = Network::build(&network).map_err(|e| bad(e.to_string()))?;
    let tasks = doc
        .get("tasks")
        .and_then(|t| t.as_array())
        .ok_or_else(|| bad("tasks are missing".into()))?;
    if tasks.len() != traffic.tasks.len() {
        return Err(bad(format!(
            "{} tasks placed, {} in the program",
            tasks.len(),
            traffic.tasks.len()
        )));
    }
    for (task, t) in traffic.tasks.iter_mut().zip(tasks) {
        let node = t
            .get("node")
            .and_then(|n| n.as_u64())
            .filter(|&n| (n as usize) < net.nodes())
            .ok_or_else(|| bad(format!("task {} has no node of {network}", task.id)))?;
        task.mapped = net.coords.get(node as usize).cloned();
    }
    // A document written before the buffer setting existed was planned with unbounded buffers.
    if !config.contains_key("buffer") {
        settings
            .set("buffer", "unbounded")
            .map_err(|e| bad(e.to_string()))?;
    }
    // The document's placement is kept: each task is mapped to its node.
    settings
        .set("place", "mapping")
        .map_err(|e| bad(e.to_string()))?;
    Ok(Some((traffic, settings)))
}
