//! Step 4 of the replay: what arrived, against the plan. Every message must be complete at
//! every node it was sent to, on the cycle the schedule planned; the task programs then run
//! against those arrivals (a sender may not inject before its program released the message);
//! and the words the switches kept waiting must be what the plan says (`buffered_max`).

use super::cycles::Moved;
use super::{mismatch, ReplayError, ReplayReport};
use crate::schedule::{program, Problem, Schedule};
use crate::topology::NodeId;
use crate::traffic::MsgId;

/// Checks what the cycles moved and makes the report.
pub(super) fn report(
    problem: &Problem,
    schedule: &Schedule,
    moved: Moved,
) -> Result<ReplayReport, ReplayError> {
    let traffic = problem.traffic;
    let n = traffic.messages.len();
    // Words each message delivered to `node`, and when the last came.
    let received = |m: MsgId, node: NodeId| -> Option<(u64, u64)> {
        let c = moved.cells.get(moved.ejections.cursor(m, node)?)?;
        Some((c.taken as u64, c.pushed as u64))
    };

    // Every message complete at every destination, when planned.
    let node_of = &problem.placement.node_of;
    let mut delivered = vec![0u64; n];
    let mut nodes: Vec<NodeId> = Vec::new();
    for (m, msg) in traffic.messages.iter().enumerate() {
        nodes.clear();
        nodes.extend(msg.dst.iter().filter_map(|&d| node_of.get(d).copied()));
        nodes.sort_unstable();
        nodes.dedup();
        for &node in &nodes {
            if msg.size == 0 {
                delivered[m] = delivered[m].max(schedule.arrival[m]);
                continue;
            }
            let (words, at) = received(m, node).unwrap_or((0, 0));
            if words != msg.size {
                return mismatch(format!(
                    "message {m} delivered {words} of its {} words at node {node}",
                    msg.size
                ));
            }
            delivered[m] = delivered[m].max(at);
        }
        if delivered[m] != schedule.arrival[m] {
            return mismatch(format!(
                "message {m} arrived at {} but the schedule planned {}",
                delivered[m], schedule.arrival[m]
            ));
        }
    }

    // The programs against the replayed arrivals.
    let (released, task_finish) = if program::is_driven(traffic) {
        let timing = program::run_with(traffic, |m, d, at| {
            node_of
                .get(d)
                .and_then(|&node| received(m, node))
                .map_or(at.max(schedule.arrival[m]), |(_, a)| a)
        })?;
        for m in 0..n {
            if schedule.sent[m] < timing.release[m] {
                return mismatch(format!(
                    "message {m} was injected at {} before its sender released it at {}",
                    schedule.sent[m], timing.release[m]
                ));
            }
        }
        (timing.release, timing.task_finish)
    } else {
        (
            traffic.messages.iter().map(|m| m.release).collect(),
            schedule.task_finish.clone(),
        )
    };
    let latency = (0..n)
        .map(|m| delivered[m].saturating_sub(released[m]))
        .collect();
    let completion = task_finish
        .iter()
        .chain(delivered.iter())
        .copied()
        .max()
        .unwrap_or(0);

    // What the switches held must be what the plan says they hold (`buffered_max`).
    let planned = crate::schedule::buffers::usage_of(problem, schedule).max;
    if moved.max_buffered != planned {
        return mismatch(format!(
            "the switches kept at most {} words waiting at one input, but the plan says {planned}",
            moved.max_buffered
        ));
    }

    Ok(ReplayReport {
        delivered,
        released,
        latency,
        task_finish,
        completion,
        word_hops: moved.word_hops,
        max_buffered: moved.max_buffered,
        cycles: moved.horizon,
    })
}
