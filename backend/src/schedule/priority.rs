//! Which released message to send first.
//!
//! SPEC §2 "Order of released writes": a task's writes are released in program order, but the
//! plan may send released messages in any order, as long as the messages of one stream keep
//! theirs. A compile-time scheduler knows what follows each message, so it sends first the one
//! with the longest chain of work still behind it — list scheduling by critical path to the end
//! (the "highest level first" rule of task scheduling; Minsky §4.2.4 orders by deadline, which
//! the ideal timing derived from program order and so inherits it). A farm whose master writes
//! its jobs fastest worker first then sends the slowest worker's job first.

use std::collections::BTreeMap;

use super::bounds::chain_tails;
use crate::traffic::{Dests, MsgId, Op, TaskId, Traffic};

/// Per message: its size plus the longest chain of compute and messages that must follow its
/// arrival before the program ends (the critical path from its release to the end, without
/// contention), raised to the largest value of any later message of its stream so that sending
/// by this priority keeps every stream in order.
pub fn critical_to_end(traffic: &Traffic) -> Vec<u64> {
    // Per reader of each message (`first[m]..first[m + 1]`): the longest of them counts.
    let (first, tails) = chain_tails(traffic);
    let tail = |m: usize| -> u64 {
        match (first.get(m), first.get(m + 1)) {
            (Some(&a), Some(&b)) => tails[a..b].iter().copied().max().unwrap_or(0),
            _ => 0,
        }
    };
    let mut prio: Vec<u64> = traffic
        .messages
        .iter()
        .map(|m| m.size.saturating_add(tail(m.id)))
        .collect();
    for stream in streams(traffic).values() {
        let mut later = 0u64;
        for &m in stream.iter().rev() {
            prio[m] = prio[m].max(later);
            later = prio[m];
        }
    }
    prio
}

/// Every stream's messages in the order their writer sends them (SPEC §1.3: a stream is the
/// ordered pair writer, reader(s)).
pub fn streams(traffic: &Traffic) -> BTreeMap<(TaskId, Dests), Vec<MsgId>> {
    let mut streams: BTreeMap<(TaskId, Dests), Vec<MsgId>> = BTreeMap::new();
    for task in &traffic.tasks {
        for op in &task.ops {
            if let Op::Send(m) = *op {
                if let Some(msg) = traffic.messages.get(m) {
                    streams
                        .entry((task.id, msg.dst.clone()))
                        .or_default()
                        .push(m);
                }
            }
        }
    }
    streams
}

/// Per message: the message of its stream sent just before it, if any.
pub fn stream_predecessor(traffic: &Traffic) -> Vec<Option<MsgId>> {
    let mut pred = vec![None; traffic.messages.len()];
    for stream in streams(traffic).values() {
        for w in stream.windows(2) {
            pred[w[1]] = Some(w[0]);
        }
    }
    pred
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{Message, Task};

    /// A master writing two jobs, to a fast worker first: the slow worker's job has the longer
    /// chain after it; two messages of one stream keep their order whatever their chains.
    #[test]
    fn longest_chain_first_streams_in_order() {
        let msg = |id, src, dst, size| Message {
            id,
            src,
            dst: vec![dst].into(),
            size,
            ..Message::default()
        };
        let task = |id, ops| Task {
            id,
            name: format!("t{id}"),
            ops,
            ..Task::default()
        };
        let traffic = Traffic {
            tasks: vec![
                task(0, vec![Op::Send(0), Op::Send(1), Op::Send(2)]),
                task(1, vec![Op::Recv(0), Op::Compute(5)]),
                task(
                    2,
                    vec![Op::Recv(1), Op::Compute(1), Op::Recv(2), Op::Compute(50)],
                ),
            ],
            messages: vec![msg(0, 0, 1, 4), msg(1, 0, 2, 4), msg(2, 0, 2, 40)],
            ..Traffic::default()
        };
        let p = critical_to_end(&traffic);
        assert_eq!(p[0], 9);
        // Message 2's chain is its 40 words and 50 cycles of work; message 1's own is 4 + 1
        // + 50, raised to message 2's as it goes first on their stream.
        assert_eq!(p[2], 90);
        assert_eq!(p[1], 90);
        assert_eq!(stream_predecessor(&traffic), vec![None, None, Some(1)]);
    }
}
