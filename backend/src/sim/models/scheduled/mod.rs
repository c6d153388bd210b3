//! The `scheduled` model for the execution-driven core: the program is placed, routed and
//! time-scheduled exactly as `ttdl run` does (Minsky §4.2), the plan is replayed word by word from
//! its switch programs ([`crate::sim::models::scheduled::replay::replay`], which checks it), and the core then sees
//! each message arrive when the replay delivered it. A scheduled network never lets messages
//! collide, so nothing else can change an arrival: if a sender is late against the plan, the
//! message keeps its planned latency from the actual send.

pub mod replay;

use crate::schedule::{self, Schedule};
use crate::topology::Network;
use crate::traffic::{MsgId, Placement, TaskId, Traffic};
use ttdl_ir::settings::{Settings, SETTINGS};

use replay::ReplayReport;

use crate::sim::event::EventQueue;
use crate::sim::options::{
    choice, choice_enum, setting, Choice, ModelError, ModelOptions, OptionSpec,
};

choice_enum! {
    /// How a broadcast travels.
    pub enum Multicast {
        /// Once through the network as a tree (the plan's own way).
        Tree = "tree",
        /// One copy per reader, as the dynamic models send it.
        Unicast = "unicast",
    }
}
use crate::sim::registry::ModelContext;
use crate::sim::{Delivery, NetworkModel, Packet};

/// The plan settings the model takes as `key=value` options: the rows of the settings table
/// marked for it (SPEC §3), with the table's types, ranges, defaults and help, and then the
/// model's own [`MULTICAST`]. A program run by `simulate` or `compare` fills in the command's own
/// settings where the spec leaves them out.
pub const OPTIONS: &[OptionSpec] = &model_options();

/// How a broadcast travels: once through the network as a tree (the plan's own way), or as one
/// unicast per reader, as every dynamic model sends it — the like-for-like row `compare` adds when
/// a program multicasts (SPEC §5).
const MULTICAST: OptionSpec = choice(
    "multicast",
    "tree",
    Multicast::WORDS,
    "how a broadcast travels: tree (once through the network, the plan's own) or unicast (one \
     copy per reader, as the dynamic models send it: like for like)",
);

const MODEL_SETTINGS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < SETTINGS.len() {
        if SETTINGS[i].model {
            n += 1;
        }
        i += 1;
    }
    n
};

const fn model_options() -> [OptionSpec; MODEL_SETTINGS + 1] {
    let mut out = [MULTICAST; MODEL_SETTINGS + 1];
    let (mut i, mut j) = (0, 0);
    while i < SETTINGS.len() {
        if SETTINGS[i].model {
            out[j] = setting(&SETTINGS[i]);
            j += 1;
        }
        i += 1;
    }
    out
}

/// What plans a program on a placement for the model: the one pipeline `ttdl run` uses (same
/// defaults), so `compare` shows the plan `run` prints. It lives above the simulator, which
/// receives it in [`ModelContext::planner`].
pub trait Planner {
    fn plan(
        &self,
        traffic: &Traffic,
        network: &Network,
        placement: &Placement,
        settings: &Settings,
    ) -> Result<PlannedRun, String>;
}

/// A verified plan and its replay, as the model runs it.
pub struct PlannedRun {
    pub schedule: Schedule,
    pub replay: ReplayReport,
    /// The settings a reader of the row's name must know, as `key=value`: the set-up cycles,
    /// and the route, buffer and timing when they are not the defaults (Minsky's timing rule,
    /// a write waiting for its subtask's compute, differs from the dynamic models' semantics).
    pub non_default: Vec<String>,
}

/// Builds the plan for the context's program and placement with the context's planner.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let mut settings = Settings::new();
    for s in SETTINGS.iter().filter(|s| s.model) {
        if let Some(v) = opts.written_text(s.key) {
            settings
                .set(s.name, v)
                .map_err(|e| ModelError(format!("scheduled: {e}")))?;
        }
    }
    settings
        .set("network", &ctx.network.spec.to_string())
        .and_then(|s| s.set("seed", &ctx.seed.to_string()))
        .map_err(|e| ModelError(format!("scheduled: {e}")))?;
    let (Some(traffic), Some(placement)) = (ctx.traffic, ctx.placement) else {
        return Err(ModelError(
            "the scheduled model plans a whole program; it cannot run synthetic traffic".into(),
        ));
    };
    // Like for like: the broadcasts sent as unicasts, and each reader's copy found by its
    // message and reader.
    let unicasts = match opts.chosen(MULTICAST.key)? {
        Multicast::Unicast => traffic.with_unicasts(),
        Multicast::Tree => None,
    };
    let copies = unicasts.as_ref().map(|u| {
        traffic
            .messages
            .iter()
            .zip(&u.ids)
            .map(|(m, ids)| m.dst.iter().copied().zip(ids.iter().copied()).collect())
            .collect()
    });
    let traffic = unicasts.as_ref().map_or(traffic, |u| &u.traffic);
    let Some(planner) = ctx.planner else {
        return Err(ModelError(
            "the scheduled model needs a planner to plan the program (run it through the pipeline)"
                .into(),
        ));
    };
    let plan = planner
        .plan(traffic, ctx.network, placement, &settings)
        .map_err(|e| ModelError(format!("scheduled: {e}")))?;
    let mut name = format!("scheduled {}", plan.schedule.method.name());
    if copies.is_some() {
        name.push_str(" unicast");
    }
    for setting in &plan.non_default {
        name.push(' ');
        name.push_str(setting);
    }
    Ok(Box::new(Scheduled {
        name,
        copies,
        busy: link_words(ctx.network, &plan.schedule),
        activity: activity(&plan.schedule),
        buffered_max: plan.replay.max_buffered,
        delivered: plan.replay.delivered,
        latency: plan.replay.latency,
        pending: EventQueue::new(),
    }))
}

fn link_words(net: &crate::topology::Network, plan: &schedule::Schedule) -> Vec<u64> {
    let mut busy = vec![0u64; net.links.len()];
    for h in &plan.holds {
        if let schedule::Resource::Link { from, to } = h.resource() {
            if let Some(l) = net.link_between(from as usize, to as usize) {
                busy[l] += h.end().saturating_sub(h.start());
            }
        }
    }
    busy
}

/// What the switches did (SPEC §5 energy): each switch instruction (one per hold of a link or
/// ejection port) is a step of a switch program, moving its words through the crossbar with no
/// allocation; words are not buffered.
fn activity(plan: &schedule::Schedule) -> crate::sim::energy::Activity {
    let mut a = crate::sim::energy::Activity::default();
    for h in &plan.holds {
        let words = h.end().saturating_sub(h.start());
        match h.resource() {
            schedule::Resource::Link { .. } => {
                a.link_flits += words;
                a.crossbar += words;
                a.switch_steps += 1;
            }
            schedule::Resource::Eject(_) => {
                a.port_flits += words;
                a.crossbar += words;
                a.switch_steps += 1;
            }
            schedule::Resource::Inject(_) => a.port_flits += words,
        }
    }
    a
}

/// Arrivals taken from a replayed plan.
pub struct Scheduled {
    name: String,
    /// With broadcasts planned as unicasts: per message of the program, each reader and the
    /// planned message that carries its copy.
    copies: Option<Vec<Vec<(TaskId, MsgId)>>>,
    delivered: Vec<u64>,
    latency: Vec<u64>,
    /// (cycle of the last word, packet id).
    pending: EventQueue<u64>,
    busy: Vec<u64>,
    activity: crate::sim::energy::Activity,
    /// The replay's most words waiting at one switch input (`buffered_max`).
    buffered_max: u64,
}

impl NetworkModel for Scheduled {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn inject(&mut self, now: u64, packet: Packet) {
        // Without a message id there is no plan entry: move it at one word per cycle.
        self.pending.push(now + packet.size.max(1) - 1, packet.id);
    }

    fn inject_for(&mut self, now: u64, packet: Packet, msg: MsgId, dst_task: TaskId) {
        let msg = match &self.copies {
            Some(copies) => copies
                .get(msg)
                .and_then(|c| c.iter().find(|&&(d, _)| d == dst_task))
                .map_or(usize::MAX, |&(_, m)| m),
            None => msg,
        };
        let planned = self.delivered.get(msg).copied();
        let lat = self.latency.get(msg).copied();
        let at = match (planned, lat) {
            (Some(p), Some(l)) => p.max(now + l.max(1)),
            _ => now + packet.size.max(1),
        };
        self.pending.push(at.max(now + 1) - 1, packet.id);
    }

    fn carries_local(&self) -> bool {
        true
    }

    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>) {
        while let Some((_, id)) = self.pending.pop_due(now) {
            delivered.push(Delivery {
                packet: id,
                at: now + 1,
            });
        }
    }

    fn next_event(&self, now: u64) -> Option<u64> {
        self.pending.next_time().map(|at| at.max(now))
    }

    fn link_busy(&self) -> Vec<u64> {
        self.busy.clone()
    }

    fn activity(&self) -> Option<crate::sim::energy::Activity> {
        Some(self.activity)
    }
    fn buffered_max(&self) -> Option<u64> {
        Some(self.buffered_max)
    }
}
