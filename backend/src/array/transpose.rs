//! Transposes (Eberhart Ch. 4): with transposed alignment, source (i, j), relative to the
//! source origin, sends to (r + j, c + i), so source row i feeds destination column c + i.
//! Alg 7 sends from both ends of every row at once, moving inward, in `S_cmax` steps (Eq 4.1),
//! which is optimal (Theorem 4).
//!
//! Two slips of the thesis are corrected here, as the reading notes verify by brute force:
//! Alg 7 prints the destination as `(row + r, col + c)`, a plain shift, where §4.1.1 and Eq 4.1
//! mean the transposed mapping; and it compares the 0-based `col − P_c(l_c)` with the 1-based
//! `left`/`right` counters.

use super::shift::clamp;
use super::{StepSchedule, Transfer};

/// A transpose of an `N_r × N_c` source grid with offsets `(r, c)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transpose {
    pub rows: i64,
    pub cols: i64,
    pub r: i64,
    pub c: i64,
    pub units: u64,
}

impl Transpose {
    /// Where source (i, j), relative to the source origin, sends: (r + j, c + i).
    pub fn dest_of(&self, i: i64, j: i64) -> (i64, i64) {
        (self.r + j, self.c + i)
    }

    /// The source grid's first node, placed so that every node is on the mesh.
    pub fn origin(&self) -> (i64, i64) {
        ((-self.r).max(0), (-self.c).max(0))
    }

    /// The smallest mesh that holds both grids.
    pub fn mesh(&self) -> (i64, i64) {
        let (r0, c0) = self.origin();
        let rows = (r0 + self.rows).max(r0 + self.r + self.cols);
        let cols = (c0 + self.cols).max(c0 + self.c + self.rows);
        (rows, cols)
    }

    /// Eq 4.1: `S_cmax = max([N_r−r−1], [N_r+c−1], [N_c+r−1], [N_c−c−1])`, each clamped to
    /// `[·]^0_{N_c}` — the nodes above, left of, below and right of each row's meeting with
    /// its destination column.
    pub fn s_cmax(&self) -> i64 {
        let (nr, nc, r, c) = (self.rows, self.cols, self.r, self.c);
        [nr - r - 1, nr + c - 1, nc + r - 1, nc - c - 1]
            .into_iter()
            .map(|x| clamp(x, 0, nc))
            .max()
            .unwrap_or(0)
    }

    /// Alg 7: in step `k`, column `k` and column `N_c + 1 − k` (1-based) of every row send,
    /// the right one only while it is beyond `S_cmax`; a node whose destination is itself
    /// sends nothing.
    pub fn schedule(&self) -> StepSchedule {
        let s = self.s_cmax();
        let (r0, c0) = self.origin();
        let mut steps = vec![Vec::new(); s as usize];
        for step in 1..=s {
            let left = step;
            let right = self.cols + 1 - step;
            for i in 0..self.rows {
                for j in 0..self.cols {
                    let col1 = j + 1;
                    let sends = col1 == left || (col1 == right && right > s);
                    let src = (r0 + i, c0 + j);
                    let (dr, dc) = self.dest_of(i, j);
                    let dst = (r0 + dr, c0 + dc);
                    if sends && src != dst {
                        steps[(step - 1) as usize].push(Transfer {
                            src,
                            dst,
                            units: self.units,
                        });
                    }
                }
            }
        }
        StepSchedule { steps }
    }

    /// Every message of the transpose.
    pub fn transfers(&self) -> Vec<Transfer> {
        let (r0, c0) = self.origin();
        let mut out = Vec::new();
        for i in 0..self.rows {
            for j in 0..self.cols {
                let src = (r0 + i, c0 + j);
                let (dr, dc) = self.dest_of(i, j);
                let dst = (r0 + dr, c0 + dc);
                if src != dst {
                    out.push(Transfer {
                        src,
                        dst,
                        units: self.units,
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::max_link_load;

    fn t(rows: i64, cols: i64, r: i64, c: i64) -> Transpose {
        Transpose {
            rows,
            cols,
            r,
            c,
            units: 1,
        }
    }

    #[test]
    fn worked_examples() {
        // Fig 4.1: 3×2 nodes, offset (3,3): 2 steps. Fig 4.2: 2×3, offset (0,1): 2 (naive 3).
        assert_eq!(t(3, 2, 3, 3).s_cmax(), 2);
        assert_eq!(t(2, 3, 0, 1).s_cmax(), 2);
        // Fig 5.6 (right): one row of 7, offset (−2, 4): optimal 4.
        assert_eq!(t(1, 7, -2, 4).s_cmax(), 4);
    }

    #[test]
    fn every_step_is_free_and_the_length_is_the_bound() {
        for rows in 1..=4 {
            for cols in 1..=5 {
                for r in -6..=6 {
                    for c in -6..=6 {
                        let x = t(rows, cols, r, c);
                        let sched = x.schedule();
                        assert_eq!(sched.link_conflict(), None, "{x:?}");
                        let mut sent: Vec<_> = sched.transfers().copied().collect();
                        let mut all = x.transfers();
                        sent.sort();
                        all.sort();
                        assert_eq!(sent, all, "every node that must send is scheduled: {x:?}");
                        assert_eq!(x.s_cmax() as usize, max_link_load(&all), "{x:?}");
                    }
                }
            }
        }
    }
}
