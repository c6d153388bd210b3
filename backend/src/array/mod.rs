//! Contention-free schedules for the communication that array operations induce on a 2-D
//! mesh (Eberhart 1996): shifts (Alg 1), transposes (Alg 7), regular transfers in regions of
//! base patterns (Alg 2 with the one-to-one, local gather/scatter and hybrid subroutines, Algs
//! 3–5, `regions`), general transfers (Alg 6: initial and final shifts around the same
//! diagonal scheduling, `regions`), and the WARP-style unscheduled baseline they are measured
//! against (App. B). `transfer::plan_with` picks the algorithm by the kind of transfer and
//! checks every schedule (no channel twice in a step, each source's data delivered to each
//! destination exactly once); transposed regular and general transfers run Alg 7 on base
//! patterns grouped by row (§4.2); first fit is left only as a safety net should a schedule
//! ever fail its check.
//!
//! The machine of the thesis (§2.1): a mesh without wrap-around, two directed channels per
//! link, multiport nodes, X-Y routing (horizontal first), a message of L units costs α + Lβ,
//! and the schedule runs in synchronized steps, each as long as its longest message. A step is
//! *link-contention-free* when no directed channel carries two of its messages; the largest
//! number of messages that share one channel over the whole transfer is the lower bound every
//! schedule meets at best.

pub mod hybrid;
pub mod regions;
pub mod section;
pub mod shift;
pub mod traffic;
pub mod transfer;
pub mod transpose;
pub mod warp;

use std::collections::BTreeMap;

/// A node of the mesh: (row, column), 0-based.
pub type Node = (i64, i64);

/// One message of an array operation: `units` data units from `src` to `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Transfer {
    pub src: Node,
    pub dst: Node,
    pub units: u64,
}

/// A directed channel between neighbouring nodes.
pub type Channel = (Node, Node);

/// The directed channels of the X-Y route from `src` to `dst`: along the row first (columns
/// change), then along the column (Eberhart §2.1.1).
pub fn xy_path(src: Node, dst: Node) -> Vec<Channel> {
    let mut out = Vec::new();
    let (mut r, mut c) = src;
    while c != dst.1 {
        let next = c + (dst.1 - c).signum();
        out.push(((r, c), (r, next)));
        c = next;
    }
    while r != dst.0 {
        let next = r + (dst.0 - r).signum();
        out.push(((r, c), (next, c)));
        r = next;
    }
    out
}

/// A schedule: the messages sent in each synchronized step, step 1 first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepSchedule {
    pub steps: Vec<Vec<Transfer>>,
}

impl StepSchedule {
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Every message, in step order.
    pub fn transfers(&self) -> impl Iterator<Item = &Transfer> {
        self.steps.iter().flatten()
    }

    /// The first step in which two messages share a directed channel, with the channel.
    pub fn link_conflict(&self) -> Option<(usize, Channel)> {
        for (k, step) in self.steps.iter().enumerate() {
            let mut used = std::collections::BTreeSet::new();
            for t in step {
                for ch in xy_path(t.src, t.dst) {
                    if !used.insert(ch) {
                        return Some((k + 1, ch));
                    }
                }
            }
        }
        None
    }

    /// The first step in which a node sends and receives, or sends twice (single-port node
    /// contention, §2.1.4 and §3.1.4), with the node.
    pub fn node_conflict(&self) -> Option<(usize, Node)> {
        for (k, step) in self.steps.iter().enumerate() {
            let mut busy = std::collections::BTreeSet::new();
            for t in step {
                if !busy.insert(t.src) || !busy.insert(t.dst) {
                    return Some((k + 1, if busy.contains(&t.src) { t.src } else { t.dst }));
                }
            }
        }
        None
    }

    /// Time with the cost model α + Lβ: each step lasts as long as its longest message.
    pub fn time(&self, alpha: u64, beta: u64) -> u64 {
        self.steps
            .iter()
            .map(|s| s.iter().map(|t| alpha + t.units * beta).max().unwrap_or(0))
            .sum()
    }
}

/// The largest number of messages that share one directed channel: no schedule of these
/// messages in link-contention-free steps is shorter (Eberhart's conflicting sets, §3.1).
pub fn max_link_load<'a>(transfers: impl IntoIterator<Item = &'a Transfer>) -> usize {
    let mut load: BTreeMap<Channel, usize> = BTreeMap::new();
    for t in transfers {
        for ch in xy_path(t.src, t.dst) {
            *load.entry(ch).or_default() += 1;
        }
    }
    load.values().copied().max().unwrap_or(0)
}

/// Why an array operation cannot be scheduled: a message for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArrayError(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xy_goes_along_the_row_first() {
        assert_eq!(
            xy_path((0, 0), (1, 2)),
            vec![((0, 0), (0, 1)), ((0, 1), (0, 2)), ((0, 2), (1, 2))]
        );
        assert!(xy_path((3, 3), (3, 3)).is_empty());
    }
}
