//! Scheduling a transfer between two distributed sections: the messages come from the owners
//! of every element (§2.2). Shifts are scheduled by Alg 1 and transposed shifts by Alg 7, each
//! optimal; regular transfers by Alg 2 with the region subroutine asked for (Alg 3 one-to-one,
//! Alg 4 local gather/scatter, Alg 5 hybrid; `regions.rs`), general transfers by Alg 6
//! (initial and final shifts around the diagonal scheduling of regions). Every schedule is
//! checked — no directed channel twice in a step, every source's data at its destinations
//! exactly once. Transposed regular and general transfers run Alg 7 on base patterns grouped
//! by row (§4.2, `regions::transposed`). Should a schedule ever fail the check, the messages
//! are packed first-fit in diagonal order instead, and `method` says so.

pub use super::regions::Subroutine;
use super::regions::{self, check_delivery, Built, Carried, Piece};
use super::section::{Alignment, ArrayTransfer, Kind};
use super::shift::Shift;
use super::transpose::Transpose;
use super::{max_link_load, xy_path, StepSchedule, Transfer};

/// A scheduled transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferPlan {
    pub kind: Kind,
    /// Which algorithm made the schedule.
    pub method: String,
    pub schedule: StepSchedule,
    /// What each message of `schedule` carries: which source's data for which destination.
    pub pieces: Vec<Vec<Vec<Piece>>>,
    /// The largest conflicting set (the most messages on one directed channel).
    pub bound: usize,
    /// The thesis's length for the algorithm used (`reg·M` of Theorems 2 and 3, plus the
    /// shift, gather and scatter steps), when it is not the bound itself.
    pub limit: Option<usize>,
    /// Region steps M of Alg 2/6 (sections), when they ran.
    pub regions: Option<usize>,
}

impl TransferPlan {
    /// The schedule with its pieces, step by step.
    pub fn carried(&self) -> Vec<Vec<Carried>> {
        self.schedule
            .steps
            .iter()
            .zip(&self.pieces)
            .map(|(s, p)| {
                s.iter()
                    .zip(p)
                    .map(|(m, p)| Carried {
                        msg: *m,
                        pieces: p.clone(),
                    })
                    .collect()
            })
            .collect()
    }

    /// Checks the plan against `t`: no channel twice in a step, and every destination gets
    /// exactly what it needs from every source.
    pub fn check(&self, t: &ArrayTransfer) -> Result<(), String> {
        if let Some((step, ch)) = self.schedule.link_conflict() {
            return Err(format!("step {step} uses channel {ch:?} twice"));
        }
        check_delivery(&t.messages(), &self.carried())
    }
}

/// Schedules `t`, regular transfers with the one-to-one subroutine.
pub fn plan(t: &ArrayTransfer) -> TransferPlan {
    plan_with(t, Subroutine::OneToOne)
}

/// Schedules `t`, regular transfers with the region subroutine `sub`.
pub fn plan_with(t: &ArrayTransfer, sub: Subroutine) -> TransferPlan {
    let messages = t.messages();
    let bound = max_link_load(&messages);
    let kind = t.kind();
    let g = t.source_grid();
    let d = t.dest_grid();
    let direct = |schedule: StepSchedule, method: &str| {
        let pieces = schedule
            .steps
            .iter()
            .map(|s| s.iter().map(|m| Carried::direct(*m).pieces).collect())
            .collect();
        (schedule, method.to_string(), pieces, None, None)
    };
    let (schedule, method, pieces, limit, regions) = match (kind, t.align) {
        (Kind::Shift, Alignment::Identical) => {
            let shift = Shift {
                rows: g.rows,
                cols: g.cols,
                off_r: d.row - g.row,
                off_c: d.col - g.col,
                units: 1,
            };
            direct(
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
            direct(
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
        (Kind::Regular | Kind::General, align) => {
            let built = match (kind, align) {
                (Kind::Regular, Alignment::Identical) => regions::regular(t, sub),
                (_, Alignment::Identical) => regions::general(t).map(|mut b| {
                    if sub != Subroutine::OneToOne {
                        b.method += " (message combining is for regular transfers)";
                    }
                    b
                }),
                (_, Alignment::Transposed) => regions::transposed(t).map(|mut b| {
                    if sub != Subroutine::OneToOne {
                        b.method += " (message combining is for identical alignment)";
                    }
                    b
                }),
            };
            match built.and_then(|b| checked(&messages, b)) {
                Ok(b) => {
                    let (steps, pieces) = b
                        .steps
                        .into_iter()
                        .map(|s| s.into_iter().map(|c| (c.msg, c.pieces)).unzip())
                        .unzip();
                    (
                        StepSchedule { steps },
                        b.method,
                        pieces,
                        Some(b.limit),
                        Some(b.regions),
                    )
                }
                Err(why) => direct(
                    first_fit(&messages),
                    &format!("first fit in diagonal order ({why})"),
                ),
            }
        }
    };
    TransferPlan {
        kind,
        method,
        schedule,
        pieces,
        bound,
        limit,
        regions,
    }
}

/// A region schedule that passes both checks, or why not.
fn checked(messages: &[Transfer], b: Built) -> Result<Built, String> {
    let plain = StepSchedule {
        steps: b
            .steps
            .iter()
            .map(|s| s.iter().map(|c| c.msg).collect())
            .collect(),
    };
    if let Some((step, ch)) = plain.link_conflict() {
        return Err(format!(
            "{} put two messages on channel {:?}->{:?} in step {step}",
            b.method.split(';').next().unwrap_or_default(),
            ch.0,
            ch.1
        ));
    }
    check_delivery(messages, &b.steps)?;
    Ok(b)
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
