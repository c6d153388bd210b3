//! The one way every front end plans: a configuration in, a placed, routed, scheduled, verified
//! and replayed plan out. `ttdl run`, the `scheduled` model of `simulate` and `compare`, the
//! benchmarks and the tests call it, so one program gets one plan and one set of defaults.
//!
//! Each setting comes from the command line if given, else from the script's `(target …)`, else
//! from the defaults defined here once ([`Defaults`]).

use std::fmt;

use crate::place::PlaceMethod;
use crate::progress::Progress;
use crate::route::{self, RouteMethod};
use crate::schedule::{self, program, Hardware, Method, Schedule, ScheduleError};
use crate::sim::models::scheduled::replay::{self, ReplayReport};
use crate::topology::{Network, NetworkSpec};
use crate::traffic::{Placement, Routing, Traffic};
use ttdl_ir::iterations::{Layout, Shape};

pub use ttdl_ir::config::{LpSolverKind, TimingModel, UnknownChoice};

pub use ttdl_ir::settings::{Setting, SettingError, Settings, SETTINGS};

mod config;
mod document;
mod follow;
mod periodic;
mod placed;
mod placement;
mod timing;

pub use config::resolve;
pub use document::read_plan_document;
pub use follow::FOLLOW_LARGEST;
pub use periodic::Periodic;
pub use placed::{placed, ModelRun, Pipeline, Placed};
pub use placement::{place, PlaceChoice, PlaceTry};
pub use timing::{time_unplaced, timed};

use follow::follow_runs;
use periodic::plan_periodic;
use placement::best_placement;
use timing::relax_to_period;

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
    /// Whether a dynamic model's run may order the plan (the `follow` setting).
    pub follow: bool,
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
