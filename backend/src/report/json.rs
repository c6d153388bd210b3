//! The machine-readable plan (SPEC §4): one document, `"version": 1`, written as it is walked.
//!
//! A plan of 100,000 messages has millions of schedule rows (the 98,304-message Jacobi exchange
//! on a 64×64 mesh: 4.4 million, an 844 MB document), so the document is never built whole. Its
//! small parts (the network's description, the metrics, `config`, `periodic`, the program's
//! header) form a JSON value, the skeleton; each long list (links, tasks, messages, schedule
//! rows, relaxed deadlines, the program's tasks and messages) stands in it as a placeholder and
//! is serialized row by row, straight into the writer, when the skeleton is written. Objects
//! come out with their keys sorted, as a `serde_json::Value` writes them, so the bytes are those
//! of the document built as one value.

use std::io::{self, Write};

use serde::ser::{Error as _, SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::{json, Value};

use super::Plan;
use crate::pipeline::{self, PipelineError};
use crate::schedule::{Hold, Relaxation, Resource, Schedule};
use crate::topology::Network;
use crate::traffic::{Message, Route, Routing, Traffic};

/// A resource as the document names it: `[from, to]`, `["inject", n]` or `["eject", n]`.
struct Res(Resource);

impl Serialize for Res {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Resource::Link { from, to } => (from, to).serialize(s),
            Resource::Inject(n) => ("inject", n).serialize(s),
            Resource::Eject(n) => ("eject", n).serialize(s),
        }
    }
}

fn resource(r: Resource) -> Value {
    match r {
        Resource::Link { from, to } => json!([from, to]),
        Resource::Inject(n) => json!(["inject", n]),
        Resource::Eject(n) => json!(["eject", n]),
    }
}

/// The rows a plan lists, in the document and in the CSV tables alike (one row each).
pub struct Rows<'a> {
    pub traffic: &'a Traffic,
    pub network: &'a Network,
    /// The node of each task.
    pub node_of: &'a [usize],
    pub routing: &'a Routing,
    pub schedule: &'a Schedule,
    /// Indices into `schedule.holds` in the order the rows are listed: by start, then message,
    /// then resource (the schedule keeps them by message). Sorted when first asked for.
    order: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> Rows<'a> {
    pub fn new(
        traffic: &'a Traffic,
        network: &'a Network,
        node_of: &'a [usize],
        routing: &'a Routing,
        schedule: &'a Schedule,
    ) -> Rows<'a> {
        Rows {
            traffic,
            network,
            node_of,
            routing,
            schedule,
            order: std::cell::OnceCell::new(),
        }
    }

    /// The plan's rows as a report sees them.
    pub fn of(p: &Plan<'a>) -> Rows<'a> {
        Rows::new(
            p.traffic,
            p.network,
            &p.placement.node_of,
            p.routing,
            p.schedule,
        )
    }

    /// The schedule rows in listing order.
    pub fn holds(&self) -> impl ExactSizeIterator<Item = &'a Hold> + '_ {
        let holds = &self.schedule.holds;
        let order = self.order.get_or_init(|| {
            let key = |h: &Hold| (h.start, h.msg, h.resource);
            let mut order: Vec<usize> = (0..holds.len()).collect();
            if !holds.is_sorted_by_key(key) {
                // Stable, so rows equal in all three keep the schedule's order.
                order.sort_by_key(|&i| key(&holds[i]));
            }
            order
        });
        order.iter().map(move |&i| &holds[i])
    }

    /// The row of message `m`.
    pub fn message(&self, m: &'a Message) -> MessageRow<'a> {
        let s = self.schedule;
        MessageRow {
            arrival: s.arrival.get(m.id).copied(),
            deadline: m.deadline,
            dst: Dst(m),
            effective_deadline: s.deadline.get(m.id).copied(),
            id: m.id,
            iteration: m.iteration,
            phase: m.phase,
            release: m.release,
            route: self.routing.routes.get(m.id),
            sent: s.sent.get(m.id).copied(),
            size: m.size,
            src: m.src,
        }
    }
}

/// A message's readers: one task id for a unicast (`null` for none), a list for a multicast.
pub struct Dst<'a>(&'a Message);

impl Serialize for Dst<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_multicast() {
            self.0.dst.serialize(s)
        } else {
            self.0.dst.first().serialize(s)
        }
    }
}

/// One `messages` row (SPEC §4); fields in the order the document lists them (sorted).
#[derive(Serialize)]
pub struct MessageRow<'a> {
    pub arrival: Option<u64>,
    pub deadline: u64,
    pub dst: Dst<'a>,
    pub effective_deadline: Option<u64>,
    pub id: usize,
    pub iteration: u64,
    pub phase: usize,
    pub release: u64,
    /// A node list, or a multicast tree's `[from, to]` edges (untagged, as SPEC §4 says).
    #[serde(serialize_with = "route")]
    pub route: Option<&'a Route>,
    pub sent: Option<u64>,
    pub size: u64,
    pub src: usize,
}

fn route<S: Serializer>(r: &Option<&Route>, s: S) -> Result<S::Ok, S::Error> {
    match r {
        Some(Route::Path(nodes)) => nodes.serialize(s),
        Some(Route::Tree(edges)) => edges.serialize(s),
        None => s.serialize_none(),
    }
}

/// One `schedule` row: `msg` holds `link` for cycles `start ≤ t < end` (fields sorted).
#[derive(Serialize)]
struct HoldRow {
    end: u64,
    link: Res,
    msg: usize,
    start: u64,
}

impl From<&Hold> for HoldRow {
    fn from(h: &Hold) -> HoldRow {
        HoldRow {
            end: h.end,
            link: Res(h.resource),
            msg: h.msg,
            start: h.start,
        }
    }
}

/// One `tasks` row (fields sorted).
#[derive(Serialize)]
struct TaskRow<'a> {
    id: usize,
    name: &'a str,
    node: Option<usize>,
}

/// One `metrics.relaxed` row: a small value of its own (it names its waits and their holders).
fn relaxed_row(r: &Relaxation) -> Value {
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
}

/// The document's skeleton: everything but the long lists, which are `null` placeholders
/// (see the module doc).
pub fn skeleton(p: &Plan) -> Value {
    let net = p.network;
    let s = p.schedule;
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
            "links": null,
        },
        "tasks": null,
        "messages": null,
        "schedule": null,
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
            "relaxed": null,
            "ports": s.hardware.ports,
            "hop_latency": s.hardware.hop_latency,
            "buffer": s.hardware.buffer.map_or_else(|| "unbounded".into(), serde_json::Value::from),
            "buffered_max": p.buffers.max,
        },
    })
}

/// The program as written, for the document's `program`: the plan's traffic less the set-up
/// cycles its messages were given. Its header is a value; its tasks and messages are listed row
/// by row.
struct Program<'a> {
    traffic: &'a Traffic,
    setup: u64,
}

impl Program<'_> {
    /// The header: every field of the program but its tasks and messages (empty lists here).
    fn header(&self) -> Result<Value, serde_json::Error> {
        let t = self.traffic;
        // Every field named, so a new one is not left out of the document unnoticed.
        serde_json::to_value(Traffic {
            tasks: Vec::new(),
            messages: Vec::new(),
            phases: t.phases.clone(),
            critical_path: t.critical_path,
            period: t.period.clone(),
            logical: t.logical.clone(),
            target: t.target.clone(),
            repeat: t.repeat,
        })
    }

    /// A message as written: without the set-up cycles (a message with no words has none).
    fn message(&self, m: &Message) -> Result<Value, serde_json::Error> {
        if m.size == 0 || self.setup == 0 {
            return serde_json::to_value(m);
        }
        let mut m = m.clone();
        m.size -= self.setup;
        serde_json::to_value(&m)
    }
}

/// The whole plan document, serialized as it is walked.
pub struct Document<'a> {
    skeleton: Value,
    rows: Rows<'a>,
    program: Option<Program<'a>>,
}

/// Which long list a placeholder of the skeleton stands for, by its key and its parent's.
#[derive(Clone, Copy)]
enum List {
    Links,
    Tasks,
    Messages,
    Schedule,
    Relaxed,
    ProgramTasks,
    ProgramMessages,
}

impl List {
    fn at(parent: Option<&str>, key: &str) -> Option<List> {
        Some(match (parent, key) {
            (None, "tasks") => List::Tasks,
            (None, "messages") => List::Messages,
            (None, "schedule") => List::Schedule,
            (Some("network"), "links") => List::Links,
            (Some("metrics"), "relaxed") => List::Relaxed,
            (Some("program"), "tasks") => List::ProgramTasks,
            (Some("program"), "messages") => List::ProgramMessages,
            _ => return None,
        })
    }
}

/// Serializes `items` as one JSON array, each item as it comes.
fn seq<S: Serializer, T: Serialize>(
    s: S,
    len: usize,
    items: impl Iterator<Item = T>,
) -> Result<S::Ok, S::Error> {
    let mut out = s.serialize_seq(Some(len))?;
    for item in items {
        out.serialize_element(&item)?;
    }
    out.end()
}

/// Serializes `items`, each built as a small value first, as one JSON array.
fn value_seq<S: Serializer>(
    s: S,
    len: usize,
    items: impl Iterator<Item = Result<Value, serde_json::Error>>,
) -> Result<S::Ok, S::Error> {
    let mut out = s.serialize_seq(Some(len))?;
    for item in items {
        out.serialize_element(&item.map_err(S::Error::custom)?)?;
    }
    out.end()
}

/// A value of the skeleton at `parent.key`: a placeholder's list, or the value as it is (an
/// object's members walked the same way, one level down).
struct Node<'d, 'a> {
    doc: &'d Document<'a>,
    parent: Option<&'d str>,
    key: Option<&'d str>,
    value: &'d Value,
}

impl Serialize for Node<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(list) = self.key.and_then(|k| List::at(self.parent, k)) {
            return self.doc.list(list, s);
        }
        match self.value {
            // Placeholders lie at most two levels down.
            Value::Object(map) if self.parent.is_none() => {
                let mut out = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    out.serialize_entry(
                        k,
                        &Node {
                            doc: self.doc,
                            parent: self.key,
                            key: Some(k),
                            value: v,
                        },
                    )?;
                }
                out.end()
            }
            v => v.serialize(s),
        }
    }
}

impl Document<'_> {
    fn list<S: Serializer>(&self, list: List, s: S) -> Result<S::Ok, S::Error> {
        let r = &self.rows;
        match list {
            List::Links => seq(
                s,
                r.network.links.len(),
                r.network.links.iter().map(|l| (l.from, l.to)),
            ),
            List::Tasks => seq(
                s,
                r.traffic.tasks.len(),
                r.traffic.tasks.iter().map(|t| TaskRow {
                    id: t.id,
                    name: &t.name,
                    node: r.node_of.get(t.id).copied(),
                }),
            ),
            List::Messages => seq(
                s,
                r.traffic.messages.len(),
                r.traffic.messages.iter().map(|m| r.message(m)),
            ),
            List::Schedule => seq(s, r.schedule.holds.len(), r.holds().map(HoldRow::from)),
            List::Relaxed => seq(
                s,
                r.schedule.relaxed.len(),
                r.schedule.relaxed.iter().map(relaxed_row),
            ),
            List::ProgramTasks => match &self.program {
                Some(p) => value_seq(
                    s,
                    p.traffic.tasks.len(),
                    p.traffic.tasks.iter().map(serde_json::to_value),
                ),
                None => s.serialize_none(),
            },
            List::ProgramMessages => match &self.program {
                Some(p) => value_seq(
                    s,
                    p.traffic.messages.len(),
                    p.traffic.messages.iter().map(|m| p.message(m)),
                ),
                None => s.serialize_none(),
            },
        }
    }
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Node {
            doc: self,
            parent: None,
            key: None,
            value: &self.skeleton,
        }
        .serialize(s)
    }
}

impl Document<'_> {
    /// Writes the document pretty-printed (two-space indents), newline-terminated, through a
    /// buffer.
    pub fn write(&self, w: impl Write) -> io::Result<()> {
        let mut w = io::BufWriter::with_capacity(1 << 16, w);
        let mut ser = serde_json::Serializer::pretty(&mut w);
        self.serialize(&mut ser).map_err(io::Error::other)?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

/// The SPEC §4 document of `plan`, ready to write. Besides what SPEC §4 lists, it carries the
/// resolved `config` and the `program` (the Traffic IR with every task's op chain), so
/// `ttdl run plan.json` plans the same program the same way again.
pub fn document<'a>(
    plan: &'a pipeline::Plan,
    report: &Plan<'a>,
) -> Result<Document<'a>, PipelineError> {
    let internal = |e: serde_json::Error| PipelineError::Internal(e.to_string());
    let mut doc = skeleton(report);
    doc["config"] = plan.config.settings().to_json();
    if let Some(choice) = &plan.placed_by {
        doc["config"]["placed_by"] = choice.chosen.name().into();
        doc["config"]["place_tried"] = choice
            .tried
            .iter()
            .map(|t| {
                json!({
                    "place": t.method.name(),
                    "makespan": t.makespan,
                    "same_as": t.same_as.map(|m| m.name()),
                })
            })
            .collect();
    }
    if let Some(p) = &plan.periodic {
        doc["periodic"] = p.json(&plan.schedule);
        if !p.whole {
            doc["metrics"]["makespan"] = p.makespan.into();
            doc["metrics"]["lower_bound"] = p.busiest.0.into();
            doc["metrics"]["lower_bound_by"] = p.busiest.1.clone().into();
        }
    }
    let program = Program {
        traffic: &plan.traffic,
        setup: plan.config.hardware.setup,
    };
    doc["program"] = program.header().map_err(internal)?;
    // The sample of a periodic plan stands for the whole program: its last iteration repeats.
    if let Some(p) = plan.periodic.as_ref().filter(|p| !p.whole) {
        doc["program"]["repeat"] = p.count.into();
    }
    Ok(Document {
        skeleton: doc,
        rows: Rows::of(report),
        program: Some(program),
    })
}
