//! Scheduling a transfer between two distributed sections: the messages come from the owners
//! of every element (§2.2); shifts are scheduled by Alg 1 and transposed shifts by Alg 7, each
//! optimal; other regular and general transfers are packed first-fit, in the diagonal order of
//! Alg 2, into link-contention-free steps, and their length is printed against the bound.

use super::section::{Alignment, ArrayTransfer, Kind};
use super::shift::Shift;
use super::transpose::Transpose;
use super::{max_link_load, xy_path, StepSchedule, Transfer};

/// A scheduled transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferPlan {
    pub kind: Kind,
    /// Which algorithm made the schedule.
    pub method: &'static str,
    pub schedule: StepSchedule,
    /// The largest conflicting set (the most messages on one directed channel).
    pub bound: usize,
}

/// Schedules `t`.
pub fn plan(t: &ArrayTransfer) -> TransferPlan {
    let messages = t.messages();
    let bound = max_link_load(&messages);
    let kind = t.kind();
    let g = t.source_grid();
    let d = t.dest_grid();
    let (schedule, method) = match (kind, t.align) {
        (Kind::Shift, Alignment::Identical) => {
            let shift = Shift {
                rows: g.rows,
                cols: g.cols,
                off_r: d.row - g.row,
                off_c: d.col - g.col,
                units: 1,
            };
            (
                by_step(&messages, |m| {
                    diagonal_step(shift.sections(), m.src.0 - g.row, m.src.1 - g.col)
                }),
                "Alg 1 (diagonal scheduling on sections)",
            )
        }
        (Kind::Shift, Alignment::Transposed) => {
            let tr = Transpose {
                rows: g.rows,
                cols: g.cols,
                r: d.row - g.row,
                c: d.col - g.col,
                units: 1,
            };
            let s = tr.s_cmax();
            (
                by_step(&messages, |m| {
                    // Alg 7: the 1-based column sends at step col or at N_c + 1 − col.
                    let col1 = m.src.1 - g.col + 1;
                    if col1 <= s {
                        col1
                    } else {
                        g.cols + 1 - col1
                    }
                }),
                "Alg 7 (transpose, both ends inward)",
            )
        }
        _ => (first_fit(&messages), "first fit in diagonal order"),
    };
    TransferPlan {
        kind,
        method,
        schedule,
        bound,
    }
}

/// Alg 1's step for a source at (row, col) relative to the source origin.
pub fn diagonal_step((sec_ver, sec_hor): (i64, i64), row: i64, col: i64) -> i64 {
    let m = sec_ver.max(sec_hor);
    let mut d = row.rem_euclid(sec_ver) - col.rem_euclid(sec_hor) + 1;
    if d <= 0 {
        d += m;
    }
    d
}

fn by_step(messages: &[Transfer], step: impl Fn(&Transfer) -> i64) -> StepSchedule {
    let mut steps: Vec<Vec<Transfer>> = Vec::new();
    for m in messages {
        let k = step(m).max(1) as usize;
        if steps.len() < k {
            steps.resize(k, Vec::new());
        }
        steps[k - 1].push(*m);
    }
    StepSchedule { steps }
}

/// Each message, in the order of the diagonals of the source grid, into the first step whose
/// channels it does not share.
fn first_fit(messages: &[Transfer]) -> StepSchedule {
    let mut order: Vec<&Transfer> = messages.iter().collect();
    order.sort_by_key(|m| (m.src.0 - m.src.1, m.src, m.dst));
    let mut steps: Vec<Vec<Transfer>> = Vec::new();
    let mut used: Vec<std::collections::BTreeSet<super::Channel>> = Vec::new();
    for m in order {
        let path = xy_path(m.src, m.dst);
        let k = (0..steps.len())
            .find(|&k| path.iter().all(|ch| !used[k].contains(ch)))
            .unwrap_or_else(|| {
                steps.push(Vec::new());
                used.push(Default::default());
                steps.len() - 1
            });
        steps[k].push(*m);
        used[k].extend(path);
    }
    StepSchedule { steps }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::section::Dist;

    fn transfer(
        from: &str,
        fd: (i64, i64),
        to: &str,
        td: (i64, i64),
        align: Alignment,
    ) -> ArrayTransfer {
        ArrayTransfer::new(
            from.parse().unwrap(),
            Dist { kr: fd.0, kc: fd.1 },
            to.parse().unwrap(),
            Dist { kr: td.0, kc: td.1 },
            align,
        )
        .unwrap()
    }

    #[test]
    fn fig_3_2_shift_takes_three_steps() {
        let t = transfer(
            "A(0:1,0:4:2)",
            (1, 2),
            "B(3:4,3:5)",
            (1, 1),
            Alignment::Identical,
        );
        let p = plan(&t);
        assert_eq!((p.kind, p.schedule.len(), p.bound), (Kind::Shift, 3, 3));
        assert_eq!(p.schedule.link_conflict(), None);
    }

    #[test]
    fn fig_3_5_is_a_one_to_four_scatter() {
        // A(0:7), k = 4 → B(6:20:2), k' = 2: each source feeds 4 destinations (1 → 4).
        let t = transfer(
            "A(0:0,0:7)",
            (1, 4),
            "B(0:0,6:20:2)",
            (1, 2),
            Alignment::Identical,
        );
        assert_eq!(t.kind(), Kind::Regular);
        let p = plan(&t);
        let per_source = p.schedule.transfers().filter(|m| m.src == (0, 0)).count();
        assert_eq!(per_source, 4);
        assert_eq!(p.schedule.link_conflict(), None);
        assert!(p.schedule.len() >= p.bound);
    }

    #[test]
    fn transposed_shift_uses_alg_7() {
        // A 1×7 row of nodes transposed into a column, offset (−2, 4) (Fig 5.6 right).
        let t = transfer(
            "A(2:2,0:6)",
            (1, 1),
            "B(0:6,6:6)",
            (1, 1),
            Alignment::Transposed,
        );
        let p = plan(&t);
        assert_eq!(p.kind, Kind::Shift);
        assert_eq!(p.schedule.link_conflict(), None);
        assert_eq!(p.schedule.len(), p.bound);
    }
}
