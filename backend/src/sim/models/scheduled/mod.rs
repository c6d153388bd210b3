//! The `scheduled` model for the execution-driven core: the program is placed, routed and
//! time-scheduled exactly as `ttdl run` does (Minsky §4.2), the plan is replayed word by word from
//! its switch programs ([`crate::sim::models::scheduled::replay::replay`], which checks it), and the core then sees
//! each message arrive when the replay delivered it. A scheduled network never lets messages
//! collide, so nothing else can change an arrival: if a sender is late against the plan, the
//! message keeps its planned latency from the actual send.

pub mod replay;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use ttdl_ir::limits::Limits;

use crate::pipeline::{self, Defaults, LpSolverKind, Overrides};
use crate::schedule::{self};
use crate::traffic::{MsgId, TaskId};

use crate::sim::options::{
    choice_depends, int_depends, text, ModelError, ModelOptions, OptionSpec,
};
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};

/// The defaults are the pipeline's, the ones `ttdl run` uses.
pub const OPTIONS: &[OptionSpec] = &[
    choice_depends(
        "route",
        "as ttdl run",
        &["dor", "random", "shortest", "reroute"],
        "routing",
    ),
    choice_depends(
        "schedule",
        "as ttdl run",
        &["best", "exact", "lp"],
        "scheduler",
    ),
    choice_depends(
        "lp_solver",
        "as ttdl run",
        &["microlp", "highs"],
        "LP solver of the lp and best schedulers",
    ),
    int_depends(
        "latency",
        "as ttdl run",
        0,
        Limits::HOP_LATENCY,
        "cycles per switch",
    ),
    int_depends(
        "setup",
        "as ttdl run",
        0,
        Limits::HOP_LATENCY,
        "set-up cycles each message's transfer pays (Minsky §5.1.2)",
    ),
    int_depends(
        "ports",
        "as ttdl run",
        1,
        Limits::PORTS as u64,
        "processor-network ports per node",
    ),
    text(
        "buffer",
        "2",
        "words that may wait at one switch input, or unbounded (as ttdl run)",
    ),
    choice_depends(
        "timing",
        "as ttdl run",
        &["port", "thesis"],
        "ideal timing the deadlines come from",
    ),
];

/// Builds the plan for the context's program and placement with the one pipeline `ttdl run`
/// uses (same defaults), so `compare` shows the plan `run` prints.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let route = opts.choice_or("route", Defaults::ROUTE.name())?.to_string();
    let schedule = opts
        .choice_or("schedule", Defaults::SCHEDULE.name())?
        .to_string();
    let lp_solver = opts
        .choice_or("lp_solver", LpSolverKind::default().name())?
        .to_string();
    let latency = opts.int_or("latency", Defaults::LATENCY)?;
    let setup = opts.int_or("setup", 0)?;
    let ports = opts.int_or("ports", Defaults::PORTS as u64)? as u32;
    let timing = opts
        .choice_or("timing", Defaults::TIMING.name())?
        .to_string();
    let buffer = opts.text("buffer")?.to_string();
    let buffer_words = schedule::Hardware::parse_buffer(&buffer)
        .map_err(|e| ModelError(format!("option `buffer`: {e}")))?;
    let (Some(traffic), Some(placement)) = (ctx.traffic, ctx.placement) else {
        return Err(ModelError(
            "the scheduled model plans a whole program; it cannot run synthetic traffic".into(),
        ));
    };
    let overrides = Overrides {
        network: Some(ctx.network.spec.to_string()),
        route: Some(route),
        schedule: Some(schedule),
        lp_solver: Some(lp_solver),
        seed: Some(ctx.seed),
        ports: Some(ports),
        latency: Some(latency),
        setup: Some(setup),
        timing: Some(timing),
        buffer: Some(buffer),
        ..Overrides::default()
    };
    let cfg = pipeline::resolve(traffic, &overrides)
        .map_err(|e| ModelError(format!("scheduled: {e}")))?;
    let plan = pipeline::plan_placed(traffic, ctx.network.clone(), placement.clone(), &cfg)
        .map_err(|e| ModelError(format!("scheduled: {e}")))?;
    let mut name = format!("scheduled {}", plan.schedule.method.name());
    if setup > 0 {
        name.push_str(&format!(" setup={setup}"));
    }
    if cfg.route != Defaults::ROUTE {
        name.push_str(&format!(" route={}", cfg.route.name()));
    }
    if buffer_words != schedule::Hardware::BUFFER {
        name.push_str(&format!(
            " buffer={}",
            schedule::Hardware::buffer_name(buffer_words)
        ));
    }
    if cfg.timing != Defaults::TIMING {
        // Minsky's rule (a write waits for its subtask's compute) differs from the dynamic
        // models' semantics: the row says so.
        name.push_str(&format!(" timing={}", cfg.timing.name()));
    }
    Ok(Box::new(Scheduled {
        name,
        delivered: plan.replay.delivered.clone(),
        latency: plan.replay.latency.clone(),
        pending: BinaryHeap::new(),
        busy: link_words(ctx.network, &plan.schedule),
    }))
}

fn link_words(net: &crate::topology::Network, plan: &schedule::Schedule) -> Vec<u64> {
    let mut busy = vec![0u64; net.links.len()];
    for h in &plan.holds {
        if let schedule::Resource::Link { from, to } = h.resource {
            if let Some(l) = net.link_between(from, to) {
                busy[l] += h.end.saturating_sub(h.start);
            }
        }
    }
    busy
}

/// Arrivals taken from a replayed plan.
pub struct Scheduled {
    name: String,
    delivered: Vec<u64>,
    latency: Vec<u64>,
    /// (cycle of the last word, packet id).
    pending: BinaryHeap<Reverse<(u64, u64)>>,
    busy: Vec<u64>,
}

impl NetworkModel for Scheduled {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        // Without a message id there is no plan entry: move it at one word per cycle.
        self.pending
            .push(Reverse((now + packet.size.max(1) - 1, packet.id)));
    }

    fn inject_for(&mut self, now: u64, packet: Packet, msg: MsgId, _dst_task: TaskId) {
        let planned = self.delivered.get(msg).copied();
        let lat = self.latency.get(msg).copied();
        let at = match (planned, lat) {
            (Some(p), Some(l)) => p.max(now + l.max(1)),
            _ => now + packet.size.max(1),
        };
        self.pending.push(Reverse((at.max(now + 1) - 1, packet.id)));
    }

    fn carries_local(&self) -> bool {
        true
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        while let Some(&Reverse((at, id))) = self.pending.peek() {
            if at > now {
                break;
            }
            self.pending.pop();
            delivered.push(Delivery {
                packet: id,
                at: now + 1,
            });
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        self.pending.peek().map(|Reverse((at, _))| (*at).max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.busy.clone()
    }
}
