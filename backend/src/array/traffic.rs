//! A step schedule as a TTDL program: one task per mesh node, one phase per step
//! (`(synchronize k)`), each message a write at its source and a read at its destination, so
//! `ttdl run` schedules it (verified, with switch programs) and `ttdl compare` runs it on every
//! dynamic model.

use std::fmt::Write as _;

use super::{Node, StepSchedule};

/// The program, on a `rows × cols` mesh; `words_per_unit` words per data unit; `title` goes in
/// the header comment.
pub fn to_ttdl(
    schedule: &StepSchedule,
    mesh: (i64, i64),
    words_per_unit: u64,
    title: &str,
) -> String {
    let (rows, cols) = mesh;
    let mut out = String::new();
    let _ = writeln!(out, ";;; {title}");
    let _ = writeln!(
        out,
        ";;; Written by `ttdl array`: one task per node of a {rows}x{cols} mesh (row r, column c is the\n\
         ;;; task at coordinates (c r)), one phase per step of the schedule (Eberhart §2.1.4:\n\
         ;;; synchronized steps), {words_per_unit} word(s) per data unit."
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "(defvar *mesh* (make-network :topology mesh :dims (list {cols} {rows})))"
    );
    let _ = writeln!(
        out,
        "(define (node rc) (task-at *mesh* (list (second rc) (first rc))))"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        ";; PLAN: one (STEP SENDS READS) per step, every step for every node that takes part, so each\n\
         ;; step is a barrier as in the thesis; a send or read is (WORDS (ROW COL)) naming the peer."
    );
    let _ = writeln!(out, "(define-comm array-node (self plan)");
    let _ = writeln!(out, "  (dolist (s plan)");
    let _ = writeln!(out, "    (synchronize (first s))");
    let _ = writeln!(
        out,
        "    (dolist (m (second s)) (write-stream (first m) (node (second m))))"
    );
    let _ = writeln!(
        out,
        "    (dolist (m (third s)) (read-stream (first m) (node (second m))))))"
    );
    let _ = writeln!(out);
    // Per node, per step: its sends and reads.
    type Plan = std::collections::BTreeMap<usize, (Vec<(u64, Node)>, Vec<(u64, Node)>)>;
    let mut plans: std::collections::BTreeMap<Node, Plan> = Default::default();
    for (k, step) in schedule.steps.iter().enumerate() {
        for t in step {
            let words = t.units * words_per_unit;
            plans
                .entry(t.src)
                .or_default()
                .entry(k + 1)
                .or_default()
                .0
                .push((words, t.dst));
            plans
                .entry(t.dst)
                .or_default()
                .entry(k + 1)
                .or_default()
                .1
                .push((words, t.src));
        }
    }
    let list = |v: &[(u64, Node)]| -> String {
        v.iter()
            .map(|(w, (r, c))| format!("({w} ({r} {c}))"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let empty = (Vec::new(), Vec::new());
    for (node, plan) in &plans {
        let steps: Vec<String> = (1..=schedule.steps.len())
            .map(|k| {
                let (sends, reads) = plan.get(&k).unwrap_or(&empty);
                format!("({k} ({}) ({}))", list(sends), list(reads))
            })
            .collect();
        let _ = writeln!(
            out,
            "(array-node (node '({} {})) '({}))",
            node.0,
            node.1,
            steps.join(" ")
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "(target *mesh* :place 'identity)");
    out
}
