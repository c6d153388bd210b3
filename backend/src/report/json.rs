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

use serde::ser::Serializer;
use serde::Serialize;
use serde_json::{json, Value};

use super::pretty::{self, list_at};
use super::Plan;
use crate::pipeline::{self, PipelineError};
use crate::schedule::{Hold, Relaxation, Resource, Schedule};
use crate::topology::Network;
use crate::traffic::{Message, Route, Routing, Traffic};

/// A resource as the document names it: `[from, to]`, `["inject", n]` or `["eject", n]`
/// (the schedule rows are written by hand the same way: [`super::pretty::hold_row`]).
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
            let key = |h: &Hold| (h.start(), h.msg(), h.resource());
            if holds.is_sorted_by_key(key) {
                return (0..holds.len()).collect();
            }
            listing_order(holds)
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

/// Hold numbers by (start, message, resource), stable (rows equal in all three keep the
/// schedule's order). A counting sort on the start cycle when the cycles are few compared with
/// the rows (the usual case: a plan of 4.4 million rows spans a few thousand cycles), then each
/// cycle's rows, already in schedule order, sorted by the rest; else one comparison sort.
fn listing_order(holds: &[Hold]) -> Vec<usize> {
    let key = |h: &Hold| (h.start(), h.msg(), h.resource());
    let (lo, hi) = holds.iter().fold((u64::MAX, 0), |(l, h), x| {
        (l.min(x.start()), h.max(x.start()))
    });
    let span = hi.saturating_sub(lo);
    if holds.is_empty() || holds.len() >= u32::MAX as usize || span > 4 * holds.len() as u64 {
        let mut order: Vec<usize> = (0..holds.len()).collect();
        order.sort_by_key(|&i| key(&holds[i]));
        return order;
    }
    let mut by_start = crate::schedule::Groups::new(
        span as usize + 1,
        holds.iter().map(|h| Some((h.start() - lo) as usize)),
    );
    for s in 0..=span as usize {
        let group = by_start.of_mut(s);
        if !group.is_sorted_by_key(|&i| (holds[i as usize].msg(), holds[i as usize].resource())) {
            group.sort_by_key(|&i| (holds[i as usize].msg(), holds[i as usize].resource()));
        }
    }
    by_start.all().iter().map(|&i| i as usize).collect()
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

/// One `tasks` row (fields sorted).
#[derive(Serialize)]
struct TaskRow<'a> {
    id: usize,
    name: &'a str,
    node: Option<usize>,
}

/// One `metrics.relaxed` row, naming its waits and their holders (fields sorted).
#[derive(Serialize)]
struct RelaxedRow<'a> {
    blamed: Vec<BlameRow<'a>>,
    cause: String,
    deadline: u64,
    knock_on: bool,
    msg: usize,
    new_deadline: u64,
    upstream: u64,
}

/// One wait of a relaxed row (fields sorted); only the last holders are named after a long
/// backlog, and `more_holders` then says so.
#[derive(Serialize)]
struct BlameRow<'a> {
    holders: &'a [usize],
    link: Res,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    more_holders: bool,
    waited: u64,
}

fn relaxed_row(r: &Relaxation) -> RelaxedRow<'_> {
    RelaxedRow {
        blamed: r
            .blamed
            .iter()
            .map(|b| BlameRow {
                holders: &b.holders,
                link: Res(b.resource),
                more_holders: b.more_holders,
                waited: b.waited,
            })
            .collect(),
        cause: r.cause(),
        deadline: r.deadline,
        knock_on: r.knock_on,
        msg: r.msg,
        new_deadline: r.new_deadline,
        upstream: r.upstream,
    }
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

impl Document<'_> {
    /// Writes the document pretty-printed (two-space indents), newline-terminated, through a
    /// buffer: the bytes `serde_json`'s pretty printer writes for the document as one value
    /// ([`super::pretty`]), the schedule rows written by hand.
    pub fn write(&self, w: impl Write) -> io::Result<()> {
        let mut w = io::BufWriter::with_capacity(1 << 16, w);
        self.write_node(&mut w, None, None, &self.skeleton, 0)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// A value of the skeleton at `parent.key`, written `depth` levels in: a placeholder's
    /// list, or the value as it is (an object's members walked the same way, one level down).
    fn write_node<W: Write>(
        &self,
        w: &mut W,
        parent: Option<&str>,
        key: Option<&str>,
        value: &Value,
        depth: usize,
    ) -> io::Result<()> {
        if let Some(list) = key.and_then(|k| List::at(parent, k)) {
            return self.write_list(w, list, depth);
        }
        match value {
            // Placeholders lie at most two levels down.
            Value::Object(map) if parent.is_none() => {
                if map.is_empty() {
                    return w.write_all(b"{}");
                }
                w.write_all(b"{")?;
                for (i, (k, v)) in map.iter().enumerate() {
                    w.write_all(if i == 0 { b"\n" } else { b",\n" })?;
                    pretty::indent(w, depth + 1)?;
                    pretty::value_at(w, depth + 1, k)?;
                    w.write_all(b": ")?;
                    self.write_node(w, key, Some(k), v, depth + 1)?;
                }
                w.write_all(b"\n")?;
                pretty::indent(w, depth)?;
                w.write_all(b"}")
            }
            v => pretty::value_at(w, depth, v),
        }
    }

    /// The long list a placeholder stands for, row by row, `depth` levels in.
    fn write_list<W: Write>(&self, w: &mut W, list: List, depth: usize) -> io::Result<()> {
        let r = &self.rows;
        let value = |w: &mut W, d: usize, v: Result<Value, serde_json::Error>| {
            pretty::value_at(w, d, &v.map_err(io::Error::other)?)
        };
        match list {
            List::Links => list_at(w, depth, r.network.links.iter(), |w, d, l| {
                pretty::value_at(w, d, &(l.from, l.to))
            }),
            List::Tasks => list_at(w, depth, r.traffic.tasks.iter(), |w, d, t| {
                let row = TaskRow {
                    id: t.id,
                    name: &t.name,
                    node: r.node_of.get(t.id).copied(),
                };
                pretty::value_at(w, d, &row)
            }),
            List::Messages => list_at(w, depth, r.traffic.messages.iter(), |w, d, m| {
                pretty::value_at(w, d, &r.message(m))
            }),
            List::Schedule => list_at(w, depth, r.holds(), pretty::hold_row),
            List::Relaxed => list_at(w, depth, r.schedule.relaxed.iter(), |w, d, x| {
                pretty::value_at(w, d, &relaxed_row(x))
            }),
            List::ProgramTasks => match &self.program {
                Some(p) => list_at(w, depth, p.traffic.tasks.iter(), |w, d, t| {
                    value(w, d, serde_json::to_value(t))
                }),
                None => w.write_all(b"null"),
            },
            List::ProgramMessages => match &self.program {
                Some(p) => list_at(w, depth, p.traffic.messages.iter(), |w, d, m| {
                    value(w, d, p.message(m))
                }),
                None => w.write_all(b"null"),
            },
        }
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

#[cfg(test)]
mod tests {
    use crate::pipeline::{self, Settings};
    use crate::traffic::Traffic;

    /// The document written part by part is what `serde_json` writes for it as one value.
    #[test]
    fn the_document_is_the_pretty_printers() {
        let mut b = Traffic::builder();
        let (a, c, d) = (b.task("a"), b.task("c"), b.task("d \"quoted\"\n"));
        b.send(a, c, 4);
        b.send(c, d, 2);
        b.send(a, d, 3);
        b.send(d, a, 0);
        let traffic = b.build();
        let mut settings = Settings::new();
        settings.set("network", "mesh:2x2").expect("a network");
        let cfg = pipeline::resolve(&traffic, &settings).expect("config");
        let plan = pipeline::plan(&traffic, &cfg).expect("plan");
        let text = plan.to_json().expect("json");
        let value: serde_json::Value = serde_json::from_str(&text).expect("parses");
        assert!(value["schedule"].as_array().is_some_and(|r| !r.is_empty()));
        let whole = serde_json::to_string_pretty(&value).expect("written") + "\n";
        assert_eq!(text, whole);
    }
}
