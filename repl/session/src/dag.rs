//! The task graph (Minsky Fig 4-3's subtasks) as Graphviz DOT or JSON: what `ttdl dag` prints,
//! `ttdl run --out` writes and the REPL's `:dag` shows.

use std::fmt::Write as _;
use ttdl_ir::limits::Limits;

use serde_json::json;
use ttdl_ir::traffic::Traffic;
use ttdl_lang::dag::{Dependence, SubtaskGraph, SubtaskKind};
use ttdl_lang::timing;

/// The subtask graph of checked traffic, with every subtask's delay (start time).
pub fn graph_of(traffic: &Traffic) -> Result<(SubtaskGraph, Vec<u64>), String> {
    let dag =
        SubtaskGraph::build(traffic).map_err(|e| format!("the task graph is inconsistent: {e}"))?;
    let delays = timing::solve(&dag)
        .map(|t| t.delay)
        .map_err(|_| "the task graph has a cycle after checking".to_string())?;
    Ok((dag, delays))
}

/// The task graph as Graphviz DOT (what `ttdl dag` prints and `ttdl run --out` writes).
pub fn dot_of(traffic: &Traffic) -> Result<String, String> {
    let (dag, delays) = graph_of(traffic)?;
    Ok(to_dot(traffic, &dag, &delays))
}

fn kind_parts(k: SubtaskKind) -> (&'static str, Option<usize>) {
    match k {
        SubtaskKind::Start => ("start", None),
        SubtaskKind::Send(m) => ("send", Some(m)),
        SubtaskKind::Recv(m) => ("recv", Some(m)),
        SubtaskKind::Sync(p) => ("sync", Some(p)),
        SubtaskKind::Barrier { phase, .. } => ("barrier", Some(phase)),
    }
}

/// Edges as (from, to, kind, message or phase), sorted.
fn edges(dag: &SubtaskGraph) -> Vec<(usize, usize, &'static str, Option<usize>)> {
    dag.edge_list()
        .into_iter()
        .map(|(a, b, d)| {
            let (kind, id) = match d {
                Dependence::Intra => ("intra", None),
                Dependence::Message(m) => ("message", Some(m)),
                Dependence::Phase(p) => ("phase", Some(p)),
            };
            (a, b, kind, id)
        })
        .collect()
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Graphviz DOT: one cluster per task (its chain of subtasks), barriers as diamonds, messages as
/// blue edges labelled with their id and size.
///
/// Graphviz lays out clusters of this size in seconds; a larger graph is drawn one node per task
/// instead ([`task_dot`]), which it lays out at any size a program has. `newrank` keeps dot's
/// ranking global: without it, message edges between clusters make dot fail ("trouble in
/// init_rank") on programs as small as the Viterbi example.
pub fn to_dot(t: &Traffic, dag: &SubtaskGraph, delay: &[u64]) -> String {
    let g = &dag.graph;
    if g.node_count() > Limits::DOT_SUBTASKS {
        return task_dot(t, g.node_count());
    }
    let mut s = String::from(
        "digraph subtasks {\n  rankdir=TB;\n  newrank=true;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    for (task, chain) in dag.chains.iter().enumerate() {
        if chain.is_none() {
            continue;
        }
        let name = t.tasks.get(task).map(|t| t.name.as_str()).unwrap_or("?");
        let _ = writeln!(
            s,
            "  subgraph cluster_{task} {{\n    label=\"{}\";",
            dot_escape(name)
        );
        for n in g.node_indices().filter(|&n| g[n].task == Some(task)) {
            let _ = writeln!(
                s,
                "    n{} [label=\"{}\\ndelay {} compute {}\"];",
                n.index(),
                dot_escape(&dag.describe(t, n)),
                delay.get(n.index()).copied().unwrap_or(0),
                g[n].compute
            );
        }
        s.push_str("  }\n");
    }
    for n in g.node_indices().filter(|&n| g[n].task.is_none()) {
        let _ = writeln!(
            s,
            "  n{} [shape=diamond, label=\"{}\\nstarts {}\"];",
            n.index(),
            dot_escape(&dag.describe(t, n)),
            delay.get(n.index()).copied().unwrap_or(0)
        );
    }
    for (a, b, kind, id) in edges(dag) {
        let _ = match (kind, id) {
            ("message", Some(m)) => writeln!(
                s,
                "  n{a} -> n{b} [color=blue, label=\"M{m} ({})\"];",
                t.messages.get(m).map(|m| m.size).unwrap_or(0)
            ),
            ("phase", _) => writeln!(s, "  n{a} -> n{b} [style=dashed];"),
            _ => writeln!(s, "  n{a} -> n{b};"),
        };
    }
    s.push_str("}\n");
    s
}

/// One node per task (its compute), one edge per communicating pair (messages and words as the
/// edge's tooltip: edge labels make dot's layout many times slower), the busiest pairs first
/// when there are too many to draw.
pub fn task_dot(t: &Traffic, subtasks: usize) -> String {
    let mut pairs: std::collections::BTreeMap<(usize, usize), (usize, u64)> = Default::default();
    for m in &t.messages {
        for &d in &m.dst {
            let e = pairs.entry((m.src, d)).or_default();
            e.0 += 1;
            e.1 += m.size;
        }
    }
    let mut edges: Vec<((usize, usize), (usize, u64))> = pairs.into_iter().collect();
    let total = edges.len();
    // Busiest first, ties by task ids, so what is left out is deterministic.
    edges.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    edges.truncate(Limits::DOT_EDGES);
    edges.sort_by_key(|e| e.0);
    let mut s = format!(
        "digraph tasks {{\n  // {subtasks} subtasks are too many to draw one by one: one node per task, one edge per\n  // communicating pair{}.\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
        if total > Limits::DOT_EDGES {
            format!(" (the {0} busiest of {total})", Limits::DOT_EDGES)
        } else {
            String::new()
        }
    );
    for task in &t.tasks {
        let compute: u64 = task
            .ops
            .iter()
            .map(|op| match *op {
                ttdl_backend::Op::Compute(c) => c,
                _ => 0,
            })
            .sum();
        let _ = writeln!(
            s,
            "  t{} [label=\"{}\\ncompute {compute}\"];",
            task.id,
            dot_escape(&task.name)
        );
    }
    for ((a, b), (n, words)) in edges {
        let _ = writeln!(
            s,
            "  t{a} -> t{b} [color=blue, tooltip=\"{n} msg, {words} words\"];"
        );
    }
    s.push_str("}\n");
    s
}

/// JSON: nodes with their task, kind, message or phase, compute and delay; sorted edges.
pub fn to_json(t: &Traffic, dag: &SubtaskGraph, delay: &[u64]) -> serde_json::Value {
    let g = &dag.graph;
    let nodes: Vec<_> = g
        .node_indices()
        .map(|n| {
            let s = g[n];
            let (kind, id) = kind_parts(s.kind);
            let mut v = json!({
                "id": n.index(),
                "task": s.task,
                "kind": kind,
                "compute": s.compute,
                "delay": delay.get(n.index()).copied().unwrap_or(0),
            });
            match s.kind {
                SubtaskKind::Send(_) | SubtaskKind::Recv(_) => v["msg"] = json!(id),
                SubtaskKind::Sync(_) => v["phase"] = json!(id),
                SubtaskKind::Barrier { phase, instance } => {
                    v["phase"] = json!(phase);
                    v["instance"] = json!(instance);
                }
                SubtaskKind::Start => {}
            }
            v
        })
        .collect();
    let edges: Vec<_> = edges(dag)
        .into_iter()
        .map(|(a, b, kind, id)| {
            let mut v = json!({"from": a, "to": b, "kind": kind});
            match kind {
                "message" => v["msg"] = json!(id),
                "phase" => v["phase"] = json!(id),
                _ => {}
            }
            v
        })
        .collect();
    json!({
        "version": 1,
        "tasks": t.tasks.iter().map(|task| json!({"id": task.id, "name": task.name})).collect::<Vec<_>>(),
        "nodes": nodes,
        "edges": edges,
        "critical_path": t.critical_path,
    })
}
