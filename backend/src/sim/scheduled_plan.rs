//! The `scheduled` model for the execution-driven core: the program is placed, routed and
//! time-scheduled exactly as `ttdl run` does (Minsky §4.2), the plan is replayed word by word from
//! its switch programs ([`super::scheduled::replay`], which checks it), and the core then sees
//! each message arrive when the replay delivered it. A scheduled network never lets messages
//! collide, so nothing else can change an arrival: if a sender is late against the plan, the
//! message keeps its planned latency from the actual send.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::route::{self, RouteMethod};
use crate::schedule::{self, Hardware, Method};
use crate::traffic::{MsgId, TaskId};

use super::options::{ModelError, ModelOptions};
use super::registry::ModelContext;
use super::scheduled::replay;
use super::{Delivery, NetworkModel, Packet};

pub const OPTIONS: &str = "route=dor|random|shortest|reroute schedule=exact|lp|best latency=0";

/// Builds the plan for the context's program and placement.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let route_method: RouteMethod = opts
        .choice("route", "dor", &["dor", "random", "shortest", "reroute"])?
        .parse()
        .map_err(|e| ModelError(format!("{e}")))?;
    let method: Method = opts
        .choice("schedule", "exact", &["exact", "lp", "best"])?
        .parse()
        .map_err(|e| ModelError(format!("{e:?}")))?;
    let hop_latency = opts.u64_in("latency", 0, 0, 1 << 16)?;
    let (Some(traffic), Some(placement)) = (ctx.traffic, ctx.placement) else {
        return Err(ModelError(
            "the scheduled model plans a whole program; it cannot run synthetic traffic".into(),
        ));
    };
    let routing = route::route(traffic, ctx.network, placement, route_method, ctx.seed)
        .map_err(|e| ModelError(format!("scheduled: routing failed: {e}")))?;
    let hardware = Hardware {
        hop_latency,
        ..Hardware::default()
    };
    let plan = schedule::schedule(traffic, ctx.network, placement, &routing, method, hardware)
        .map_err(|e| ModelError(format!("scheduled: {e}")))?;
    let report = replay(traffic, ctx.network, placement, &routing, &plan)
        .map_err(|e| ModelError(format!("scheduled: {e}")))?;
    let mut name = format!("scheduled {}", plan.method.name());
    if route_method != RouteMethod::Dor {
        name.push_str(&format!(" route={}", route_method.name()));
    }
    Ok(Box::new(Scheduled {
        name,
        delivered: report.delivered,
        latency: report.latency,
        pending: BinaryHeap::new(),
        busy: link_words(ctx.network, &plan),
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
