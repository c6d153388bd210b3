//! The machine-readable plan (SPEC §4): one document, `"version": 1`.

use serde_json::{json, Value};

use super::Plan;
use crate::schedule::Resource;
use crate::traffic::Route;

fn resource(r: Resource) -> Value {
    match r {
        Resource::Link { from, to } => json!([from, to]),
        Resource::Inject(n) => json!(["inject", n]),
        Resource::Eject(n) => json!(["eject", n]),
    }
}

/// The whole plan as JSON.
pub fn plan(p: &Plan) -> Value {
    let net = p.network;
    let s = p.schedule;
    let links: Vec<Value> = net.links.iter().map(|l| json!([l.from, l.to])).collect();
    let tasks: Vec<Value> = p
        .traffic
        .tasks
        .iter()
        .map(|t| json!({"id": t.id, "name": t.name, "node": p.placement.node_of.get(t.id)}))
        .collect();
    let messages: Vec<Value> = p
        .traffic
        .messages
        .iter()
        .map(|m| {
            let dst = if m.is_multicast() {
                json!(m.dst)
            } else {
                json!(m.dst.first())
            };
            let route = match p.routing.routes.get(m.id) {
                Some(Route::Path(nodes)) => json!(nodes),
                Some(Route::Tree(edges)) => {
                    Value::Array(edges.iter().map(|&(a, b)| json!([a, b])).collect())
                }
                None => Value::Null,
            };
            json!({
                "id": m.id, "src": m.src, "dst": dst, "size": m.size,
                "release": m.release, "deadline": m.deadline, "phase": m.phase,
                "iteration": m.iteration, "route": route,
                "effective_deadline": s.deadline.get(m.id),
                "sent": s.sent.get(m.id), "arrival": s.arrival.get(m.id),
            })
        })
        .collect();
    let mut holds = s.holds.clone();
    holds.sort_by_key(|h| (h.start, h.msg, h.resource));
    let schedule: Vec<Value> = holds
        .iter()
        .map(
            |h| json!({"msg": h.msg, "link": resource(h.resource), "start": h.start, "end": h.end}),
        )
        .collect();
    let relaxed: Vec<Value> = s
        .relaxed
        .iter()
        .map(|r| {
            json!({
                "msg": r.msg, "deadline": r.deadline, "upstream": r.upstream,
                "new_deadline": r.new_deadline, "knock_on": r.knock_on,
                "cause": r.cause(),
                "blamed": r.blamed.iter().map(|b| {
                    let mut v = json!({
                        "link": resource(b.resource), "waited": b.waited, "holders": b.holders
                    });
                    // Only the last holders are named after a long backlog; say so.
                    if b.more_holders {
                        v["more_holders"] = json!(true);
                    }
                    v
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    // A run too short for a steady state has no period (SPEC §4: no figure under its bound);
    // its iteration spacing is still given.
    let period = p
        .period
        .as_ref()
        .filter(|pr| pr.steady())
        .map(|pr| pr.achieved);
    // Known only when the makespan meets a bound or the MILP ran (null otherwise).
    let optimality = crate::schedule::Optimality::of(s, p.lower_bound.0);
    json!({
        "version": 1,
        "network": {
            "topology": net.spec.kind.name(),
            "dims": net.spec.dims,
            "nodes": net.nodes(),
            "links": links,
        },
        "tasks": tasks,
        "messages": messages,
        "schedule": schedule,
        "metrics": {
            "scheduler": s.method.name(),
            "makespan": s.makespan,
            "critical_path": p.traffic.critical_path,
            "period": period,
            "period_lower_bound": p.period.as_ref().map(|pr| pr.lower_bound),
            "iteration_spacing": p.period.as_ref().map(|pr| pr.achieved),
            "period_bound_by": p.period.as_ref().map(|pr| pr.bound_by.clone()),
            "peak_utilization": (p.peak_utilization.0 * 1e4).round() / 1e4,
            "placement_cost": p.placement_cost,
            "window_utilization_peak": (p.contention.peak_utilization * 1e4).round() / 1e4,
            "channel_load_max": p.contention.channel_load_max,
            "channel_load_avg": (p.contention.channel_load_avg * 1e4).round() / 1e4,
            "path_contention_max": p.contention.path_contention_max,
            "path_contention_avg": (p.contention.path_contention_avg * 1e4).round() / 1e4,
            "dilation": p.contention.dilation,
            "congestion": p.contention.congestion,
            "lower_bound": p.lower_bound.0,
            "lower_bound_by": p.lower_bound.1,
            "optimal": optimality.map(|o| o.optimal()),
            "optimality_gap": optimality.map(|o| (o.gap() * 1e4).ceil() / 1e4),
            "deadlines_met": s.deadlines_met(),
            "relaxed": relaxed,
            "ports": s.hardware.ports,
            "hop_latency": s.hardware.hop_latency,
            "buffer": s.hardware.buffer.map_or_else(|| "unbounded".into(), serde_json::Value::from),
            "buffered_max": p.buffers.max,
        },
    })
}

/// Pretty-printed, newline-terminated.
pub fn to_string(p: &Plan) -> String {
    let mut s = serde_json::to_string_pretty(&plan(p))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
