//! Periodic plans (SPEC §2, §4 `periodic`): a long uniform program is scheduled on a sample of
//! its iterations, its repeating kernel found, checked on a longer run and extrapolated.

use super::timing::{on_the_wire, placed_timing, timed};
use super::{resized, PipelineError, Plan, PlanConfig, TimingModel};
use crate::progress::Progress;
use crate::schedule::{self, Schedule};
use crate::sim::models::scheduled::replay::{self};
use crate::topology::Network;
use crate::traffic::{Placement, Routing, Traffic};
use ttdl_ir::iterations::{Layout, Shape};

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
                matches!(self.sample.place(h.msg()), ttdl_ir::iterations::Place::Iteration { iteration, .. } if (first..=k.pump).contains(&iteration))
            })
            .map(|h| h.start())
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

/// The periodic schedule of a uniform repeating program (Minsky §6.2.1): schedule a sample of
/// its iterations, find the kernel, and extrapolate. The extrapolation is verified and replayed
/// on a run three kernels longer than the sample (the inserted copies against each other, the
/// prologue and the epilogue), and on the whole program when it is small enough to write out.
/// `None` when no sample's schedule repeats (or the routes differ between iterations): the
/// program is then scheduled whole.
pub(super) fn plan_periodic(
    traffic: &Traffic,
    shape: &Shape,
    n: u64,
    network: &Network,
    placement: &Placement,
    cfg: &PlanConfig,
    progress: &Progress,
) -> Result<Option<Plan>, PipelineError> {
    // The slot table of one iteration, found once for every sample.
    let mut memo = schedule::modulo::Memo::default();
    for m0 in Periodic::SAMPLES {
        if 2 * m0 > n {
            break;
        }
        let mut m = m0;
        let mut found = None;
        for _ in 0..2 {
            let (t, layout, routing) = resized(traffic, shape, m, network, placement, cfg)?;
            // A program whose writes no read gates is planned as a slot table (a modulo
            // schedule, its paths chosen with it); any other by scheduling the sample. A table
            // far above its bound is set beside the sample's schedule: the shorter period wins.
            let slotted = if cfg.schedule == schedule::Method::Lp {
                None
            } else {
                let problem =
                    schedule::Problem::new(&t, network, placement, &routing, cfg.hardware)?;
                schedule::modulo::plan(
                    &problem, &layout, cfg.seed, cfg.effort, progress, &mut memo,
                )?
            };
            let table = slotted.map(|p| (p.near, p.schedule, p.routing));
            let mut candidates = Vec::new();
            if let Some((true, s, r)) = table {
                candidates.push((s, r));
            } else {
                let s = schedule::schedule_with_effort(
                    &t,
                    network,
                    placement,
                    &routing,
                    cfg.schedule,
                    cfg.hardware,
                    cfg.lp_solver,
                    &cfg.improve(),
                    progress,
                )?;
                candidates.push((s, routing));
                if let Some((false, s, r)) = table {
                    candidates.push((s, r));
                }
            }
            let best = candidates
                .into_iter()
                .filter_map(|(s, r)| Some((schedule::kernel::detect(&layout, &s, 4)?, s, r)))
                .min_by_key(|(k, _, _)| (k.period * 1_000_000).div_ceil(k.q));
            let Some((k, s, routing)) = best else {
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
        let (ct, clayout) = timed_run(traffic, shape, checked, placement, cfg, false)?;
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
            let (wt, wlayout) = timed_run(traffic, shape, n, placement, cfg, true)?;
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

/// The program of `count` iterations timed on the placement as [`resized`] times it, without
/// routing it (the run takes the kernel's routes); its own critical path (a second timing, on a
/// node per task) only when `printed`, for the plan's traffic.
fn timed_run(
    traffic: &Traffic,
    shape: &Shape,
    count: u64,
    placement: &Placement,
    cfg: &PlanConfig,
    printed: bool,
) -> Result<(Traffic, Layout), PipelineError> {
    let (t, layout) = shape.with_count(traffic, count);
    let mut t = if printed {
        timed(&t, placement, cfg)?
    } else {
        placed_timing(&t, placement, cfg)?
    };
    if cfg.timing == TimingModel::Thesis && schedule::program::is_driven(&t) {
        schedule::program::apply_ideal_timing(&mut t)
            .map_err(|e| PipelineError::Input(e.to_string()))?;
    }
    Ok((t, layout))
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
        // The programs are the holds on their routes: no timing or routing of this run needed.
        let (t, layout) = shape.with_count(traffic, count);
        let t = on_the_wire(&t, cfg);
        let (Some(holds), Some(routing)) = (
            kernel.extrapolate(&layout, sample, s),
            kernel.routing(&layout, sample, routing),
        ) else {
            return Ok(None);
        };
        let problem = schedule::Problem::new(&t, network, placement, &routing, cfg.hardware)?;
        Ok(Some(crate::switch::build_from_holds(&problem, &holds)))
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
        let e = load.entry(h.resource()).or_default();
        e.0 += h.end() - h.start();
        if let ttdl_ir::iterations::Place::Iteration { iteration, .. } = layout.place(h.msg()) {
            if (lo..=kernel.pump).contains(&iteration) {
                e.1 += h.end() - h.start();
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
