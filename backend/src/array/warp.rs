//! The unscheduled baseline (Eberhart App. B, the WARP simulator): every source sends its
//! messages as soon as it can, one at a time; time advances in unit steps; a message's head
//! takes every free channel of its X-Y path it reaches, and where several heads want the same
//! channel one of them, chosen at random, wins; the others block and **hold every channel back
//! to the source** until they are delivered (Fig B.1). A message of L units occupies its whole
//! path for L steps once its head has arrived.

use std::collections::BTreeMap;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{xy_path, Channel, Transfer};

/// Steps until the last message of `transfers` is delivered, unscheduled, with seed `seed`.
pub fn unscheduled_steps(transfers: &[Transfer], seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Each source sends its messages in order, one at a time.
    let mut queues: BTreeMap<super::Node, Vec<usize>> = BTreeMap::new();
    for (i, t) in transfers.iter().enumerate() {
        queues.entry(t.src).or_default().push(i);
    }
    for q in queues.values_mut() {
        q.reverse();
    }
    let paths: Vec<Vec<Channel>> = transfers.iter().map(|t| xy_path(t.src, t.dst)).collect();
    let mut held: BTreeMap<Channel, usize> = BTreeMap::new();
    // Per message: channels taken so far, and the step its data has fully arrived by.
    let mut taken = vec![0usize; transfers.len()];
    let mut done_at: Vec<Option<u64>> = vec![None; transfers.len()];
    let mut active: Vec<usize> = Vec::new();
    let mut left = transfers.len();
    let mut step = 0u64;
    while left > 0 {
        step += 1;
        // Messages whose data finished arriving at the end of the last step release their path.
        active.retain(|&m| match done_at[m] {
            Some(t) if t < step => {
                for ch in &paths[m] {
                    held.remove(ch);
                }
                left -= 1;
                if let Some(q) = queues.get_mut(&transfers[m].src) {
                    q.retain(|&x| x != m);
                }
                false
            }
            _ => true,
        });
        if left == 0 {
            break;
        }
        // Each idle source injects its next message.
        for q in queues.values() {
            if let Some(&m) = q.last() {
                if !active.contains(&m) {
                    active.push(m);
                }
            }
        }
        // Heads advance in a random order: a contested channel goes to a random competitor.
        let mut order: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&m| done_at[m].is_none())
            .collect();
        order.sort_unstable();
        order.shuffle(&mut rng);
        for m in order {
            while taken[m] < paths[m].len() {
                let ch = paths[m][taken[m]];
                if held.contains_key(&ch) {
                    break;
                }
                held.insert(ch, m);
                taken[m] += 1;
            }
            if taken[m] == paths[m].len() {
                done_at[m] = Some(step + transfers[m].units.max(1) - 1);
            }
        }
    }
    step - 1
}

/// Min, mean and max over `runs` seeded unscheduled runs (seeds `seed`, `seed + 1`, …).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WarpStats {
    pub runs: u64,
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}

pub fn unscheduled(transfers: &[Transfer], runs: u64, seed: u64) -> WarpStats {
    let all: Vec<u64> = (0..runs.max(1))
        .map(|k| unscheduled_steps(transfers, seed.wrapping_add(k)))
        .collect();
    WarpStats {
        runs: runs.max(1),
        min: all.iter().copied().min().unwrap_or(0),
        mean: all.iter().sum::<u64>() as f64 / all.len() as f64,
        max: all.iter().copied().max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::shift::Shift;

    #[test]
    fn uncontended_messages_take_their_length() {
        let t = [Transfer {
            src: (0, 0),
            dst: (3, 3),
            units: 1,
        }];
        assert_eq!(unscheduled_steps(&t, 1), 1);
        let t = [Transfer {
            src: (0, 0),
            dst: (3, 3),
            units: 4,
        }];
        assert_eq!(unscheduled_steps(&t, 1), 4);
        // Two messages on one channel: one waits for the other.
        let t = [
            Transfer {
                src: (0, 0),
                dst: (0, 2),
                units: 1,
            },
            Transfer {
                src: (0, 1),
                dst: (0, 2),
                units: 1,
            },
        ];
        assert_eq!(unscheduled_steps(&t, 1), 2);
    }

    #[test]
    fn deterministic_for_a_seed() {
        let s = Shift {
            rows: 6,
            cols: 6,
            off_r: 2,
            off_c: 2,
            units: 1,
        }
        .transfers();
        assert_eq!(unscheduled_steps(&s, 7), unscheduled_steps(&s, 7));
        assert!(unscheduled_steps(&s, 7) >= 2);
    }
}
