//! Shifts (Eberhart §3.1): every source of an `N_r × N_c` grid sends one message to the node at
//! the same relative position of a grid displaced by `(off_r, off_c)`. Alg 1, diagonal
//! scheduling on sections, takes `max(sec_ver, sec_hor)` steps (Eq 3.3), the size of the
//! largest conflicting set, so it is optimal (Theorem 1).

use super::{StepSchedule, Transfer};

/// A shift: the source grid's size and the displacement of the destination grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shift {
    pub rows: i64,
    pub cols: i64,
    pub off_r: i64,
    pub off_c: i64,
    /// Data units per message.
    pub units: u64,
}

/// Eq 3.2's clamp `[x]^a_b`.
pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 {
    x.max(lo).min(hi)
}

impl Shift {
    /// The source grid's first node, placed so that every node of both grids is on the mesh.
    pub fn origin(&self) -> (i64, i64) {
        ((-self.off_r).max(0), (-self.off_c).max(0))
    }

    /// The smallest mesh that holds both grids: (rows, columns).
    pub fn mesh(&self) -> (i64, i64) {
        (self.rows + self.off_r.abs(), self.cols + self.off_c.abs())
    }

    /// Section sizes of Eq 3.3: `sec_ver = [|off_r|]^1_{N_r}`, `sec_hor = [|off_c|]^1_{N_c}`.
    pub fn sections(&self) -> (i64, i64) {
        (
            clamp(self.off_r.abs(), 1, self.rows),
            clamp(self.off_c.abs(), 1, self.cols),
        )
    }

    /// The sections of §3.1.4 that also avoid node contention (a node sending and receiving
    /// in one step): square `M×M` when the sections differ; `(s+1)×s` when they are equal;
    /// `1×(sec_hor+1)` or `(sec_ver+1)×1` when an offset is 0.
    pub fn node_free_sections(&self) -> (i64, i64) {
        let (v, h) = self.sections();
        if self.off_r == 0 {
            (1, h + 1)
        } else if self.off_c == 0 {
            (v + 1, 1)
        } else if v != h {
            let m = v.max(h);
            (m, m)
        } else {
            (v + 1, v)
        }
    }

    /// Alg 1 on the given sections: source (row, col), relative to the source origin, sends
    /// in step `d = (row mod sec_ver) − (col mod sec_hor) + 1` (+M when ≤ 0).
    pub fn schedule_with(&self, (sec_ver, sec_hor): (i64, i64)) -> StepSchedule {
        let m = sec_ver.max(sec_hor);
        let (r0, c0) = self.origin();
        let mut steps = vec![Vec::new(); m as usize];
        for row in 0..self.rows {
            for col in 0..self.cols {
                let mut d = row % sec_ver - col % sec_hor + 1;
                if d <= 0 {
                    d += m;
                }
                let src = (r0 + row, c0 + col);
                let dst = (src.0 + self.off_r, src.1 + self.off_c);
                if src != dst {
                    steps[(d - 1) as usize].push(Transfer {
                        src,
                        dst,
                        units: self.units,
                    });
                }
            }
        }
        StepSchedule { steps }
    }

    /// Alg 1: link-contention-free, `max(sec_ver, sec_hor)` steps.
    pub fn schedule(&self) -> StepSchedule {
        self.schedule_with(self.sections())
    }

    /// Alg 1 with the node-contention-free sections of §3.1.4.
    pub fn schedule_node_free(&self) -> StepSchedule {
        self.schedule_with(self.node_free_sections())
    }

    /// Every message of the shift.
    pub fn transfers(&self) -> Vec<Transfer> {
        self.schedule().transfers().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::max_link_load;

    fn shift(rows: i64, cols: i64, off_r: i64, off_c: i64) -> Shift {
        Shift {
            rows,
            cols,
            off_r,
            off_c,
            units: 1,
        }
    }

    #[test]
    fn worked_examples() {
        // Fig 3.2: 2×3 sources, no overlap, offset (3,3): 3 steps.
        assert_eq!(shift(2, 3, 3, 3).schedule().len(), 3);
        // Fig 3.3: 3×5 sources, offset (2,3), sections 2×3: 3 steps.
        let s = shift(3, 5, 2, 3);
        assert_eq!(s.sections(), (2, 3));
        assert_eq!(s.schedule().len(), 3);
        // Fig 3.4: the same with node-contention sections 3×3: still 3 steps.
        assert_eq!(s.node_free_sections(), (3, 3));
        assert_eq!(s.schedule_node_free().len(), 3);
        assert!(s.schedule_node_free().node_conflict().is_none());
    }

    #[test]
    fn length_is_the_largest_conflicting_set() {
        for rows in 1..=6 {
            for cols in 1..=6 {
                for off_r in -7..=7 {
                    for off_c in -7..=7 {
                        let s = shift(rows, cols, off_r, off_c);
                        let sched = s.schedule();
                        assert_eq!(sched.link_conflict(), None, "{s:?}");
                        let bound = max_link_load(sched.transfers());
                        if bound > 0 {
                            assert_eq!(sched.len(), bound, "{s:?}");
                        }
                    }
                }
            }
        }
    }
}
