//! Step 1 of the replay: every switch instruction of every node numbered once, in program order
//! (node by node), without copying the programs, and each one's place in start order.
//!
//! The later steps keep their per-instruction state in arrays under these numbers; reading the
//! programs themselves again is for error messages only.

use super::{mismatch, ReplayError};
use crate::switch::{Instruction, SwitchPrograms};

/// No index: a queue, cursor or slot an instruction does not have.
pub(super) const NONE: u32 = u32::MAX;

/// Every instruction of every node, numbered in program order.
pub(super) struct Flat<'a> {
    programs: &'a SwitchPrograms,
    /// Per program: the number of its first instruction; then the total.
    offset: Vec<usize>,
}

impl<'a> Flat<'a> {
    /// Numbers the instructions, refusing more than the replay's 32-bit indices hold and any
    /// instruction for a message that does not exist (`n` messages).
    pub fn new(programs: &'a SwitchPrograms, n: usize) -> Result<Flat<'a>, ReplayError> {
        let total: usize = programs.nodes.iter().map(|np| np.instructions.len()).sum();
        if total >= NONE as usize {
            return mismatch(format!("{total} switch instructions: too many to replay"));
        }
        let mut offset = Vec::with_capacity(programs.nodes.len() + 1);
        let mut at = 0;
        for np in &programs.nodes {
            offset.push(at);
            at += np.instructions.len();
            if let Some(i) = np.instructions.iter().find(|i| i.msg() >= n) {
                return mismatch(format!(
                    "node {} has an instruction for message {}, which does not exist",
                    np.node, i.msg
                ));
            }
        }
        offset.push(at);
        Ok(Flat { programs, offset })
    }

    /// How many instructions there are.
    pub fn total(&self) -> usize {
        self.offset.last().copied().unwrap_or(0)
    }

    /// Every instruction with the node that runs it, in number order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &'a Instruction)> + Clone + 'a {
        self.programs
            .nodes
            .iter()
            .flat_map(|np| np.instructions.iter().map(move |i| (np.node as u32, i)))
    }

    /// Every instruction with its program's index and the node that runs it, in number order.
    pub fn iter_programs(&self) -> impl Iterator<Item = (u32, u32, &'a Instruction)> + 'a {
        self.programs.nodes.iter().enumerate().flat_map(|(p, np)| {
            np.instructions
                .iter()
                .map(move |i| (p as u32, np.node as u32, i))
        })
    }

    /// Instruction `k`, of program `p` (as [`Flat::iter_programs`] gave it), and the node that
    /// runs it: no search.
    pub fn at(&self, p: u32, k: usize) -> (u32, &'a Instruction) {
        let np = &self.programs.nodes[p as usize];
        (
            np.node as u32,
            &np.instructions[k - self.offset[p as usize]],
        )
    }

    /// Instruction `k` and the node that runs it (a search: for error messages).
    pub fn get(&self, k: usize) -> (u32, Instruction) {
        let p = self.offset.partition_point(|&o| o <= k).saturating_sub(1);
        let np = &self.programs.nodes[p];
        (np.node as u32, np.instructions[k - self.offset[p]])
    }

    /// The cycle after the last instruction ends.
    pub fn horizon(&self) -> u64 {
        self.iter().map(|(_, i)| i.end as u64).max().unwrap_or(0)
    }

    /// Per instruction: its place when all are ordered by start, then number.
    pub fn rank_by_start(&self) -> Vec<u32> {
        rank_by(self.total(), self.iter().map(|(_, i)| i.start as u64))
    }
}

/// Per item of `keys` (`total` of them): its place when the items are ordered by key, then
/// number. A counting sort when the keys span few values compared with the items (a plan's
/// start cycles: the usual case), else a comparison sort.
pub(super) fn rank_by(total: usize, keys: impl Iterator<Item = u64> + Clone) -> Vec<u32> {
    let (lo, hi) = keys
        .clone()
        .fold((u64::MAX, 0), |(l, h), s| (l.min(s), h.max(s)));
    if total == 0 {
        return Vec::new();
    }
    let span = hi - lo;
    let mut rank = vec![0u32; total];
    if span <= 4 * total as u64 {
        let mut first = vec![0u32; span as usize + 2];
        for s in keys.clone() {
            first[(s - lo) as usize + 1] += 1;
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        for (k, s) in keys.enumerate() {
            let b = (s - lo) as usize;
            rank[k] = first[b];
            first[b] += 1;
        }
    } else {
        let keys: Vec<u64> = keys.collect();
        let mut order: Vec<u32> = (0..total as u32).collect();
        order.sort_by_key(|&k| (keys[k as usize], k));
        for (i, &k) in order.iter().enumerate() {
            rank[k as usize] = i as u32;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::rank_by;

    #[test]
    fn ranks_by_key_then_number() {
        let keys = [5u64, 3, 5, 0, 3];
        assert_eq!(rank_by(5, keys.iter().copied()), vec![3, 1, 4, 0, 2]);
        // Keys far apart take the comparison sort, with the same result.
        let wide = [5_000_000u64, 3, 5_000_000, 0, 3];
        assert_eq!(rank_by(5, wide.iter().copied()), vec![3, 1, 4, 0, 2]);
        assert!(rank_by(0, std::iter::empty()).is_empty());
    }
}
