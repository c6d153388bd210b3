//! Timing before placement: releases and deadlines from the ideal, contention-free run of the
//! program (SPEC §2), on the whole program or on a sample of its iterations when it is long.

use super::{PipelineError, PlanConfig, TimingModel, UnknownChoice};
use crate::schedule::program;
use crate::traffic::{Placement, Traffic};
use ttdl_ir::iterations::Shape;

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
            if let Some(cp) =
                Sample::steady_step(&s).and_then(|d| Sample::extrapolate(&s, d, (n - last) / step))
            {
                settled = Some(cp);
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
    /// Per task that sends and reads nothing, its own chain: the sum of its computes. Such a
    /// task runs at its own pace, which no message ties to the others'; it can be behind in a
    /// short sample and still end the whole program (a compute of 10 per iteration beside a
    /// pipeline advancing 9).
    alone: Vec<Option<u64>>,
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
        let alone = t
            .tasks
            .iter()
            .zip(&progress)
            .map(|(task, p)| {
                p.is_none().then(|| {
                    task.ops
                        .iter()
                        .map(|op| match op {
                            ttdl_ir::Op::Compute(c) => *c,
                            _ => 0,
                        })
                        .sum()
                })
            })
            .collect();
        Sample {
            critical_path: t.critical_path,
            progress,
            alone,
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

    /// The critical path `k` steps after the last of three steady samples: the communicating
    /// tasks' path grown by `d` a step, or a lone task's own chain grown at its own pace,
    /// whichever ends later; `None` when a lone task's chain does not grow evenly.
    fn extrapolate(s: &[Sample; 3], d: u64, k: u64) -> Option<u64> {
        let mut cp = s[2].critical_path + k * d;
        for t in 0..s[0].alone.len() {
            if let (Some(a), Some(b), Some(c)) = (s[0].alone[t], s[1].alone[t], s[2].alone[t]) {
                let e = b.checked_sub(a)?;
                if c.checked_sub(b)? != e {
                    return None;
                }
                cp = cp.max(c + k * e);
            }
        }
        Some(cp)
    }
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
    let mut t = placed_timing(traffic, placement, cfg)?;
    // The critical path printed is the program's (SPEC §2), as `check` times it: set-up cycles,
    // more ports or tasks sharing a node change the plan's timing, not the program's. Only then
    // is the program timed again on its own.
    let shared = {
        let mut nodes = placement.node_of.clone();
        nodes.sort_unstable();
        nodes.windows(2).any(|w| w[0] == w[1])
    };
    if program::is_driven(traffic) && (cfg.hardware.setup > 0 || cfg.hardware.ports > 1 || shared) {
        let mut own = traffic.clone();
        time_unplaced(&mut own, Some(cfg.timing.name()))?;
        t.critical_path = own.critical_path;
    }
    Ok(t)
}

/// [`timed`] without the program's own critical path: the wire sizes and the placed timing
/// (releases and deadlines), for runs whose critical path is not printed (the checks of a
/// periodic plan).
pub(super) fn placed_timing(
    traffic: &Traffic,
    placement: &Placement,
    cfg: &PlanConfig,
) -> Result<Traffic, PipelineError> {
    let mut t = on_the_wire(traffic, cfg);
    let setup = cfg.hardware.setup;
    if cfg.timing == TimingModel::Port && program::is_driven(traffic) {
        program::apply_port_timing(&mut t, &placement.node_of, cfg.hardware.ports)?;
    } else if setup > 0 && program::is_driven(traffic) {
        program::apply_ideal_timing(&mut t).map_err(|e| PipelineError::Input(e.to_string()))?;
    }
    Ok(t)
}

/// The traffic with every message as long as it is on the wire (its set-up cycles added), not
/// timed: what the switch programs of a schedule's holds need.
pub(super) fn on_the_wire(traffic: &Traffic, cfg: &PlanConfig) -> Traffic {
    let mut t = traffic.clone();
    let setup = cfg.hardware.setup;
    if setup > 0 {
        for m in &mut t.messages {
            if m.size > 0 {
                m.size += setup;
            }
        }
    }
    t
}

/// The thesis's relaxation step for pipelined programs (Minsky §5.2: "a relaxation step which
/// moves deadline times forward for messages which have some slack relative to this execution
/// time"): a copy of the traffic in which every deadline is at least release + period. Only
/// routing sees it; the schedule keeps the program's own deadlines.
pub(super) fn relax_to_period(traffic: &Traffic) -> Result<Traffic, PipelineError> {
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
