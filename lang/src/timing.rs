//! Release and deadline times (Minsky Fig 4-3), critical path, period lower bound (SPEC §2).
//!
//! Fig 4-3 computes, recursively, each subtask's *delay* (the latest arrival of the messages it
//! waits for), the *release* of its outgoing messages (delay + its compute), their *arrival*
//! (release + length) and the *deadline* of its incoming messages (its own delay). Recursion would
//! overflow the stack on programs of thousands of tasks, so the same equations are solved here in
//! one pass over a topological order (Kahn's algorithm), which also finds the subtasks that can
//! never start: a set of tasks that wait on each other forever.
//!
//! Choices where the thesis is silent:
//! - the deadline of a multicast is the earliest delay among its readers;
//! - a phase barrier starts when the last participant has finished the subtask before its
//!   `synchronize`; the phase's `start` is the time of its first barrier;
//! - the critical path is the largest message arrival or subtask end (a program without
//!   messages still has a length).

use std::collections::VecDeque;

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use ttdl_ir::traffic::{Period, TaskId, Traffic};

use crate::dag::{Dependence, SubtaskGraph, SubtaskKind};

/// The ideal, contention-free timing of every subtask.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// Delay (start) time of every subtask, by node index.
    pub delay: Vec<u64>,
    /// The largest message arrival or subtask end.
    pub critical_path: u64,
}

/// Subtasks that wait on each other forever. `waits[i]` waits for `waits[i+1]` (and the last for
/// the first), each with the dependence it waits through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub waits: Vec<(NodeIndex, Dependence)>,
}

/// Solves Fig 4-3's equations over the graph. `Err` when some subtasks can never start.
pub fn solve(dag: &SubtaskGraph) -> Result<Timing, Cycle> {
    solve_with_latency(dag, &[])
}

/// As [`solve`], with `latency[m]` extra cycles between message `m`'s release and its arrival
/// (e.g. one per hop once placement and routes are known; SPEC §2). Missing entries are 0.
pub fn solve_with_latency(dag: &SubtaskGraph, latency: &[u64]) -> Result<Timing, Cycle> {
    let g = &dag.graph;
    let n = g.node_count();
    let mut indeg: Vec<usize> = (0..n)
        .map(|i| {
            g.edges_directed(NodeIndex::new(i), Direction::Incoming)
                .count()
        })
        .collect();
    let mut delay = vec![0u64; n];
    let mut queue: VecDeque<NodeIndex> = (0..n)
        .filter(|&i| indeg[i] == 0)
        .map(NodeIndex::new)
        .collect();
    let mut done = 0usize;
    let mut critical = 0u64;
    while let Some(v) = queue.pop_front() {
        done += 1;
        let end = delay[v.index()].saturating_add(g[v].compute);
        critical = critical.max(end);
        for e in g.edges_directed(v, Direction::Outgoing) {
            let w = e.target();
            let arrival = match *e.weight() {
                Dependence::Message(m) => end
                    .saturating_add(dag.sizes.get(m).copied().unwrap_or(0))
                    .saturating_add(latency.get(m).copied().unwrap_or(0)),
                _ => end,
            };
            critical = critical.max(arrival);
            let d = &mut delay[w.index()];
            *d = (*d).max(arrival);
            indeg[w.index()] -= 1;
            if indeg[w.index()] == 0 {
                queue.push_back(w);
            }
        }
    }
    if done < n {
        return Err(find_cycle(dag, &indeg));
    }
    Ok(Timing {
        delay,
        critical_path: critical,
    })
}

/// Walks backwards from the first subtask that never started, through predecessors that never
/// finished either, until a subtask repeats: the repeated stretch is a cycle of waits.
fn find_cycle(dag: &SubtaskGraph, indeg: &[usize]) -> Cycle {
    let g = &dag.graph;
    let start = indeg.iter().position(|&d| d > 0).unwrap_or(0);
    let mut seen = vec![usize::MAX; g.node_count()];
    let mut path: Vec<(NodeIndex, Dependence)> = Vec::new();
    let mut v = NodeIndex::new(start);
    loop {
        if seen[v.index()] != usize::MAX {
            let from = seen[v.index()];
            return Cycle {
                waits: path.split_off(from),
            };
        }
        // A stuck subtask has at least one stuck predecessor (its in-degree never reached 0).
        // Prefer a message or phase wait over program order: it says more about the deadlock.
        let mut preds: Vec<(NodeIndex, Dependence)> = g
            .edges_directed(v, Direction::Incoming)
            .filter(|e| indeg[e.source().index()] > 0)
            .map(|e| (e.source(), *e.weight()))
            .collect();
        preds.sort_by_key(|(p, d)| (matches!(d, Dependence::Intra), p.index()));
        let Some(&(p, dep)) = preds.first() else {
            return Cycle { waits: path };
        };
        seen[v.index()] = path.len();
        path.push((v, dep));
        v = p;
    }
}

/// Writes release, deadline and phase start times and the critical path into `traffic`
/// (Minsky Fig 4-3).
pub fn assign(traffic: &mut Traffic, dag: &SubtaskGraph, timing: &Timing) {
    for (m, msg) in traffic.messages.iter_mut().enumerate() {
        if let Some(s) = dag.sender.get(m).copied().flatten() {
            msg.release = timing.delay[s.index()].saturating_add(dag.graph[s].compute);
        }
        let readers = dag.readers.get(m).map(Vec::as_slice).unwrap_or(&[]);
        if let Some(d) = readers.iter().map(|r| timing.delay[r.index()]).min() {
            msg.deadline = d;
        } else {
            msg.deadline = msg.release.saturating_add(msg.size);
        }
    }
    for n in dag.graph.node_indices() {
        if let SubtaskKind::Barrier { phase, instance: 0 } = dag.graph[n].kind {
            if let Some(p) = traffic.phases.get_mut(phase) {
                p.start = timing.delay[n.index()];
            }
        }
    }
    traffic.critical_path = timing.critical_path;
}

/// Work of one task in one iteration, for the period bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IterationLoad {
    pub compute: u64,
    pub inject: u64,
    pub eject: u64,
}

/// The steady-state period lower bound (SPEC §2): the busiest task's compute per iteration, and
/// the busiest processor port's words per iteration (each task has its own injection and ejection
/// port until placement puts several on one node). Links are not counted: which messages share a
/// link depends on the placement and routes, which come later. `loads` holds one entry per task
/// and iteration (of each phase). Ties go to compute, then injection, then ejection, then the
/// lower task id.
pub fn period_bound(
    traffic: &Traffic,
    iterations: u64,
    loads: &[(TaskId, IterationLoad)],
) -> Period {
    let mut best: (u64, u8, usize) = (0, 0, 0);
    for &(t, l) in loads {
        {
            for (what, v) in [(0u8, l.compute), (1, l.inject), (2, l.eject)] {
                let key = (v, std::cmp::Reverse(what), std::cmp::Reverse(t));
                if key > (best.0, std::cmp::Reverse(best.1), std::cmp::Reverse(best.2)) {
                    best = (v, what, t);
                }
            }
        }
    }
    let name = traffic
        .tasks
        .get(best.2)
        .map(|t| t.name.clone())
        .unwrap_or_default();
    let bound_by = if best.0 == 0 {
        "nothing: no compute or message inside `iterate`".to_string()
    } else {
        match best.1 {
            0 => format!("compute of task {name} ({} cycles per iteration)", best.0),
            1 => format!(
                "injection port of task {name} ({} words per iteration)",
                best.0
            ),
            _ => format!(
                "ejection port of task {name} ({} words per iteration)",
                best.0
            ),
        }
    };
    Period {
        iterations,
        lower_bound: best.0,
        bound_by,
    }
}
