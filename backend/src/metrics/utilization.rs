//! Minsky's link utilization function (§4.2.2, after Shukla):
//!
//! ```text
//! lu_j = Σ_p b_{m_p l_j} L_p  /  Σ_{k ∈ Q_p} (t_{i_{k+1}} − t_{i_k})
//! ```
//!
//! Time is cut into intervals by every message's release and deadline; `Q_p` holds the intervals in
//! which the messages on link j are active, so the denominator is the length of the union of their
//! release–deadline windows. `lu_j > 1` means link j must carry more words in that time than it has
//! cycles: no schedule exists.

use crate::traffic::{Message, MsgId, Traffic};

/// The window a message may occupy a link: `[release, max(deadline, release + size))`. (A deadline
/// earlier than the ideal arrival cannot be met anyway; the window is widened to the message
/// length so a lone message never shows as overfull.)
pub fn window(m: &Message) -> (u64, u64) {
    (m.release, m.deadline.max(m.release.saturating_add(m.size)))
}

/// `lu_j` for a link carrying `msgs`.
pub fn link_utilization(traffic: &Traffic, msgs: &[MsgId]) -> f64 {
    words_and_utilization(traffic, msgs.iter().copied(), &mut Vec::new()).1
}

/// The words a link carrying `msgs` moves (saturating) and its `lu_j`, with `spans` as scratch
/// (one buffer for every link of a network, not one per link).
pub fn words_and_utilization(
    traffic: &Traffic,
    msgs: impl Iterator<Item = MsgId>,
    spans: &mut Vec<(u64, u64)>,
) -> (u64, f64) {
    let mut words = 0u64;
    spans.clear();
    for id in msgs {
        if let Some(m) = traffic.messages.get(id) {
            words = words.saturating_add(m.size);
            spans.push(window(m));
        }
    }
    let active = union_length(spans);
    if active == 0 {
        (words, 0.0)
    } else {
        (words, words as f64 / active as f64)
    }
}

/// Length of the union of half-open intervals (sorts `spans`).
pub fn union_length(spans: &mut [(u64, u64)]) -> u64 {
    spans.sort_unstable();
    let mut total = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for &(a, b) in spans.iter() {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    if let Some((a, b)) = cur {
        total += b - a;
    }
    total
}

/// Per-interval utilization of one link: for each interval `[cuts[k], cuts[k+1])`, the words the
/// active messages must move, spread evenly over their windows, per cycle. A finer view than `lu_j`
/// (which averages over the union), used for snapshots of the network per interval.
pub fn interval_profile(traffic: &Traffic, msgs: &[MsgId], cuts: &[u64]) -> Vec<f64> {
    let n = cuts.len().saturating_sub(1);
    let mut prof = vec![0.0; n];
    for &id in msgs {
        let Some(m) = traffic.messages.get(id) else {
            continue;
        };
        let (a, b) = window(m);
        let rate = m.size as f64 / (b - a).max(1) as f64;
        let lo = cuts.partition_point(|&c| c <= a).saturating_sub(1);
        for (k, slot) in prof.iter_mut().enumerate().skip(lo) {
            if cuts[k] >= b {
                break;
            }
            if cuts[k + 1] > a {
                *slot += rate;
            }
        }
    }
    prof
}

/// The interval boundaries of Minsky §4.2.2: every release and deadline, sorted and distinct.
pub fn interval_cuts(traffic: &Traffic) -> Vec<u64> {
    let mut cuts: Vec<u64> = traffic
        .messages
        .iter()
        .flat_map(|m| {
            let (a, b) = window(m);
            [a, b]
        })
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}
