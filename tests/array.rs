//! Eberhart's array-operation schedules against the thesis's own figures (reading notes §6):
//! each golden prints our figure beside the document's.

use std::fmt::Write as _;
use std::process::Command;

use expect_test::expect;
use ttdl_backend::array::hybrid::{combining, hybrid_choice, TABLE_COLUMNS};
use ttdl_backend::array::shift::Shift;
use ttdl_backend::array::transpose::Transpose;
use ttdl_backend::array::warp;

fn ttdl(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_ttdl"))
        .args(args)
        .output()
        .expect("ttdl runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

/// The arguments of `ttdl array transfer` from `from` (distributed `from_dist`) to `to`.
fn transfer_args<'a>(
    from: &'a str,
    from_dist: &'a str,
    to: &'a str,
    to_dist: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "array",
        "transfer",
        "--from",
        from,
        "--from-dist",
        from_dist,
        "--to",
        to,
        "--to-dist",
        to_dist,
    ];
    args.extend_from_slice(extra);
    args
}

/// §3.2.4 and Fig 3.13: the 4→2 base pattern, α = β = 1, and Alg 5's choice.
#[test]
fn hybrid_table_of_section_3_2_4() {
    let mut s = String::from("col  ovh α  ovh β  tx α  tx β  1 region  4 regions  10 regions\n");
    for (name, order) in TABLE_COLUMNS {
        let c = combining(4, 2, 1, order);
        let _ = writeln!(
            s,
            "{name}    {:>5}  {:>5}  {:>4}  {:>4}  {:>8}  {:>9}  {:>10}",
            c.overhead_alpha,
            c.overhead_beta,
            c.transmit_alpha,
            c.transmit_beta,
            c.total(1, 1, 1),
            c.total(4, 1, 1),
            c.total(10, 1, 1)
        );
    }
    for regions in [1, 4, 10] {
        let o = hybrid_choice(regions, 4, 2, 1, 1);
        let c = combining(4, 2, 1, &o);
        let _ = writeln!(
            s,
            "Alg 5, {regions} region(s): {} gather(s), {} scatter(s), total {}",
            c.gathers,
            c.scatters,
            c.total(regions, 1, 1)
        );
    }
    // The thesis's table: a 16/64/160, b 15/51/123, c 17/53/125, d = e 18/48/108, f 22/49/103;
    // the best is b (1 region), d/e (4), f (10).
    expect![[r#"
        col  ovh α  ovh β  tx α  tx β  1 region  4 regions  10 regions
        a        0      0     8     8        16         64         160
        b        1      2     4     8        15         51         123
        c        1      4     4     8        17         53         125
        d        2      6     2     8        18         48         108
        e        2      6     2     8        18         48         108
        f        3     10     1     8        22         49         103
        Alg 5, 1 region(s): 1 gather(s), 0 scatter(s), total 15
        Alg 5, 4 region(s): 1 gather(s), 1 scatter(s), total 48
        Alg 5, 10 region(s): 2 gather(s), 1 scatter(s), total 103
    "#]]
    .assert_eq(&s);
}

/// The worked examples of the figures (notes §6.2): the printed step counts.
#[test]
fn worked_examples_of_the_figures() {
    let shift = |r, c, dr, dc| Shift {
        rows: r,
        cols: c,
        off_r: dr,
        off_c: dc,
        units: 1,
    };
    let tr = |r, c, dr, dc| Transpose {
        rows: r,
        cols: c,
        r: dr,
        c: dc,
        units: 1,
    };
    let rows = [
        (
            "Fig 3.2 shift 2x3, offset (3,3)",
            3,
            shift(2, 3, 3, 3).schedule().len(),
        ),
        (
            "Fig 3.3 shift 3x5, offset (2,3)",
            3,
            shift(3, 5, 2, 3).schedule().len(),
        ),
        (
            "Fig 3.4 same, node-free sections",
            3,
            shift(3, 5, 2, 3).schedule_node_free().len(),
        ),
        (
            "Fig 4.1 transpose 3x2, offset (3,3)",
            2,
            tr(3, 2, 3, 3).schedule().len(),
        ),
        (
            "Fig 4.2 transpose 2x3, offset (0,1)",
            2,
            tr(2, 3, 0, 1).schedule().len(),
        ),
        (
            "Fig 5.2 right: 4x4 shift, offset (2,2)",
            2,
            shift(4, 4, 2, 2).schedule().len(),
        ),
        (
            "Fig 5.6 right: row of 7, offset (-2,4)",
            4,
            tr(1, 7, -2, 4).schedule().len(),
        ),
    ];
    let mut s = String::new();
    for (what, thesis, ours) in rows {
        let _ = writeln!(s, "{what:<42} thesis {thesis}  ours {ours}");
    }
    expect![[r#"
        Fig 3.2 shift 2x3, offset (3,3)            thesis 3  ours 3
        Fig 3.3 shift 3x5, offset (2,3)            thesis 3  ours 3
        Fig 3.4 same, node-free sections           thesis 3  ours 3
        Fig 4.1 transpose 3x2, offset (3,3)        thesis 2  ours 2
        Fig 4.2 transpose 2x3, offset (0,1)        thesis 2  ours 2
        Fig 5.2 right: 4x4 shift, offset (2,2)     thesis 2  ours 2
        Fig 5.6 right: row of 7, offset (-2,4)     thesis 4  ours 4
    "#]]
    .assert_eq(&s);
    assert!(shift(3, 5, 2, 3)
        .schedule_node_free()
        .node_conflict()
        .is_none());
}

/// Fig 5.6: the optimal transpose of one row of N_c, offset (−⌊N_c/3⌋, 2⌊N_c/3⌋) (notes' table).
#[test]
fn fig_5_6_s_cmax_curve() {
    let ncs = [3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 24, 32];
    let ours: Vec<i64> = ncs
        .iter()
        .map(|&n| {
            Transpose {
                rows: 1,
                cols: n,
                r: -(n / 3),
                c: 2 * (n / 3),
                units: 1,
            }
            .s_cmax()
        })
        .collect();
    assert_eq!(ours, vec![2, 2, 3, 4, 4, 5, 6, 6, 8, 10, 13, 16, 21]);
    for (&n, &s) in ncs.iter().zip(&ours) {
        let t = Transpose {
            rows: 1,
            cols: n,
            r: -(n / 3),
            c: 2 * (n / 3),
            units: 1,
        };
        assert_eq!(t.schedule().len() as i64, s);
        assert!(t.schedule().link_conflict().is_none());
    }
}

/// Fig 5.2: offset (2,2) on n×n sources — scheduled 2 steps for every n; unscheduled, the
/// average passes 3× the optimum by 196 processors and grows with n (thesis: avg > 3×, worst 5×).
#[test]
fn fig_5_2_scheduled_against_unscheduled() {
    let mut means = Vec::new();
    for n in [4, 8, 14] {
        let s = Shift {
            rows: n,
            cols: n,
            off_r: 2,
            off_c: 2,
            units: 1,
        };
        assert_eq!(s.schedule().len(), 2);
        let w = warp::unscheduled(&s.transfers(), 60, 1);
        means.push(w.mean);
    }
    assert!(means[0] < means[1] && means[1] < means[2], "{means:?}");
    assert!(
        means[2] > 6.0,
        "14x14: average {} is not above 3x the optimum",
        means[2]
    );
}

/// The command line prints the step counts the done-when names, and refuses bad input.
#[test]
fn ttdl_array_commands() {
    let (out, code) = ttdl(&["array", "shift", "--sources", "3x5", "--offset", "2,3"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("steps: 3\n"), "{out}");
    let (out, code) = ttdl(&["array", "transpose", "--sources", "1x7", "--offset", "-2,4"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("steps: 4\n"), "{out}");
    let (out, code) = ttdl(&transfer_args(
        "A(0:1,0:4:2)",
        "1,2",
        "B(3:4,3:5)",
        "1,1",
        &[],
    ));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("kind: shift") && out.contains("steps: 3\n"),
        "{out}"
    );
    for bad in [
        vec!["array", "shift", "--sources", "0x5", "--offset", "2,3"],
        vec!["array", "shift", "--sources", "3x5", "--offset", "2"],
        transfer_args("A(0:1)", "1,1", "B(0:1,0:1)", "1,1", &[]),
        transfer_args("A(0:1,0:1)", "0,1", "B(0:1,0:1)", "1,1", &[]),
        transfer_args("A(0:1,0:1)", "1,1", "B(0:2,0:1)", "1,1", &[]),
    ] {
        let (out, code) = ttdl(&bad);
        assert_eq!(code, 2, "{bad:?}: {out}");
        assert!(!out.contains("panicked"), "{out}");
    }
}

/// Regular transfers run Alg 2 with each region subroutine, general ones Alg 6: the method,
/// the thesis's length (reg·M) and the steps, checked in the backend for link contention and
/// delivery.
#[test]
fn regular_and_general_transfers() {
    let mut s = String::new();
    for (from, fd, to, td, sub) in [
        ("A(0:0,0:7)", "1,4", "B(0:0,6:20:2)", "1,2", "one-to-one"),
        ("A(0:7,0:7)", "4,1", "B(8:15,8:15)", "1,2", "one-to-one"),
        ("A(0:7,0:7)", "4,1", "B(8:15,8:15)", "1,2", "gather-scatter"),
        ("A(0:7,0:7)", "4,1", "B(8:15,8:15)", "1,2", "hybrid"),
        ("A(0:11,0:11)", "4,4", "B(11:22,11:22)", "2,2", "one-to-one"),
        ("A(2:9,2:8:2)", "2,4", "B(1:8,3:6)", "4,4", "one-to-one"),
    ] {
        let (out, code) = ttdl(&transfer_args(from, fd, to, td, &["--subroutine", sub]));
        assert_eq!(code, 0, "{out}");
        let _ = writeln!(s, "{from} {fd} -> {to} {td} --subroutine {sub}");
        for line in out.lines().filter(|l| {
            ["method:", "thesis length:", "steps:", "lower bound:"]
                .iter()
                .any(|p| l.starts_with(p))
        }) {
            let _ = writeln!(s, "  {line}");
        }
    }
    expect![[r#"
        A(0:0,0:7) 1,4 -> B(0:0,6:20:2) 1,2 --subroutine one-to-one
          method: Alg 2 (extended diagonal scheduling), one-to-one, Alg 3; base pattern 1x1 -> 1x4, sections 1x2 regions
          thesis length: 8 (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)
          steps: 8
          lower bound: 8 (the most messages on one directed channel): optimal
        A(0:7,0:7) 4,1 -> B(8:15,8:15) 1,2 --subroutine one-to-one
          method: Alg 2 (extended diagonal scheduling), one-to-one, Alg 3; base pattern 1x2 -> 4x1, sections 2x2 regions
          thesis length: 16 (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)
          steps: 16
          lower bound: 16 (the most messages on one directed channel): optimal
        A(0:7,0:7) 4,1 -> B(8:15,8:15) 1,2 --subroutine gather-scatter
          method: Alg 2 (extended diagonal scheduling), local gather/scatter, Alg 4; base pattern 1x2 -> 4x1, sections 2x2 regions; 1 gather and 2 scatter step(s)
          thesis length: 5 (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)
          steps: 5
          lower bound: 16 (the most messages on one directed channel): 11 below it, combining sends fewer messages
        A(0:7,0:7) 4,1 -> B(8:15,8:15) 1,2 --subroutine hybrid
          method: Alg 2 (extended diagonal scheduling), hybrid, Alg 5: 0 gather(s), 1 scatter(s); base pattern 1x2 -> 4x1, sections 2x2 regions; 0 gather and 1 scatter step(s)
          thesis length: 9 (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)
          steps: 9
          lower bound: 16 (the most messages on one directed channel): 7 below it, combining sends fewer messages
        A(0:11,0:11) 4,4 -> B(11:22,11:22) 2,2 --subroutine one-to-one
          method: Alg 6 (initial and final shifts with diagonal scheduling), one-to-one; scatter/scatter base patterns up to 1x1 -> 3x3, sections 1x3 regions, 2 shift step(s)
          thesis length: 29 (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)
          steps: 27
          lower bound: 27 (the most messages on one directed channel): optimal
        A(2:9,2:8:2) 2,4 -> B(1:8,3:6) 4,4 --subroutine one-to-one
          method: Alg 6 (initial and final shifts with diagonal scheduling), one-to-one; gather/gather base patterns up to 2x2 -> 1x1, sections 2x1 regions, 1 shift step(s)
          thesis length: 9 (reg·M, Theorems 2 and 3, with the shift, gather and scatter steps)
          steps: 9
          lower bound: 8 (the most messages on one directed channel): 1 above it
    "#]].assert_eq(&s);
}

/// Transposed regular and general transfers run Alg 7 on base patterns grouped by row (§4.2):
/// the method, the length `shifts + S·reg` and the steps, checked in the backend.
#[test]
fn transposed_transfers() {
    let mut s = String::new();
    for (from, fd, to, td) in [
        ("A(0:7,0:15)", "2,4", "B(8:23,8:15)", "2,2"),
        ("A(0:7,0:7)", "2,2", "B(0:7,0:7)", "1,4"),
        ("A(0:11,0:7)", "4,2", "B(8:15,12:23)", "1,2"),
        ("A(2:9,2:8:2)", "2,4", "B(1:4,3:10)", "4,4"),
        ("A(0:14,0:9)", "3,2", "B(0:9,0:14)", "2,4"),
    ] {
        let (out, code) = ttdl(&transfer_args(from, fd, to, td, &["--align", "transposed"]));
        assert_eq!(code, 0, "{out}");
        let _ = writeln!(s, "{from} {fd} -> {to} {td}");
        for line in out.lines().filter(|l| {
            [
                "kind:",
                "method:",
                "thesis length:",
                "steps:",
                "lower bound:",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        }) {
            let _ = writeln!(s, "  {line}");
        }
    }
    expect![[r#"
        A(0:7,0:15) 2,4 -> B(8:23,8:15) 2,2
          kind: regular (32 messages; source grid 4x4 at (0,0), destination grid 8x4 at (4,4))
          method: §4.2 (Alg 7 on base patterns grouped by row), one-to-one; scatter/scatter base patterns up to 1x1 -> 2x1, 4 of 4 patterns per row from each end (Eq 4.2 as printed: 4), 2 step(s) per pattern, 0 shift step(s)
          thesis length: 8 (S·reg, Alg 7 on base patterns, §4.2, with the shift steps)
          steps: 8
          lower bound: 8 (the most messages on one directed channel): optimal
        A(0:7,0:7) 2,2 -> B(0:7,0:7) 1,4
          kind: regular (28 messages; source grid 4x4 at (0,0), destination grid 8x2 at (0,0))
          method: §4.2 (Alg 7 on base patterns grouped by row), one-to-one; gather/scatter base patterns up to 2x1 -> 2x1, 4 of 4 patterns per row from each end (Eq 4.2 as printed: 2), 4 step(s) per pattern, 0 shift step(s)
          thesis length: 16 (S·reg, Alg 7 on base patterns, §4.2, with the shift steps)
          steps: 16
          lower bound: 12 (the most messages on one directed channel): 4 above it
        A(0:11,0:7) 4,2 -> B(8:15,12:23) 1,2
          kind: regular (48 messages; source grid 3x4 at (0,0), destination grid 8x6 at (8,6))
          method: §4.2 (Alg 7 on base patterns grouped by row), one-to-one; scatter/scatter base patterns up to 1x1 -> 2x2, 4 of 4 patterns per row from each end (Eq 4.2 as printed: 4), 4 step(s) per pattern, 0 shift step(s)
          thesis length: 16 (S·reg, Alg 7 on base patterns, §4.2, with the shift steps)
          steps: 16
          lower bound: 16 (the most messages on one directed channel): optimal
        A(2:9,2:8:2) 2,4 -> B(1:4,3:10) 4,4
          kind: general (16 messages; source grid 4x3 at (1,0), destination grid 2x3 at (0,0))
          method: §4.2 (Alg 7 on base patterns grouped by row), one-to-one; gather/gather base patterns up to 2x2 -> 1x1, 2 of 2 patterns per row from each end (Eq 4.2 as printed: 4), 4 step(s) per pattern, 1 shift step(s)
          thesis length: 9 (S·reg, Alg 7 on base patterns, §4.2, with the shift steps)
          steps: 7
          lower bound: 6 (the most messages on one directed channel): 1 above it
        A(0:14,0:9) 3,2 -> B(0:9,0:14) 2,4
          kind: general (32 messages; source grid 5x5 at (0,0), destination grid 5x4 at (0,0))
          method: §4.2 (Alg 7 on base patterns grouped by row), one-to-one; gather/scatter base patterns up to 2x1 -> 1x1, 4 of 5 patterns per row from each end (Eq 4.2 as printed: 4), 2 step(s) per pattern, 1 shift step(s)
          thesis length: 9 (S·reg, Alg 7 on base patterns, §4.2, with the shift steps)
          steps: 9
          lower bound: 6 (the most messages on one directed channel): 3 above it
    "#]].assert_eq(&s);
}

/// The emitted program runs through the whole pipeline: an n×n shift with no overlap plans in
/// n steps (n cycles for one-word messages), every deadline met.
#[test]
fn an_emitted_shift_plans_in_n_steps() {
    let dir = std::env::temp_dir().join(format!("ttdl-array-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("shift.ttdl");
    let (program, code) = ttdl(&[
        "array",
        "shift",
        "--sources",
        "4x4",
        "--offset",
        "4,4",
        "--emit",
        "ttdl",
    ]);
    assert_eq!(code, 0, "{program}");
    std::fs::write(&file, program).unwrap();
    let (out, code) = ttdl(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("makespan:         4 cycles"), "{out}");
    assert!(out.contains("deadlines:        all met"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stdlib face: `eberhart-shift` and `eberhart-transpose` write the same schedules as
/// traffic, one phase per step, and `run` plans them in as many steps.
#[test]
fn the_stdlib_writes_the_same_schedules() {
    let dir = std::env::temp_dir().join(format!("ttdl-array-lib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (script, steps) in [
        (
            "(defvar *m* (make-network :topology mesh :dims (list 8 8)))\n\
             (println (eberhart-shift *m* 0 0 4 4 4 4 1))\n(target *m* :place 'identity)\n",
            4,
        ),
        (
            "(defvar *m* (make-network :topology mesh :dims (list 8 5)))\n\
             (println (eberhart-shift *m* 0 0 3 5 2 3 1))\n(target *m* :place 'identity)\n",
            3,
        ),
        (
            "(defvar *m* (make-network :topology mesh :dims (list 7 7)))\n\
             (println (eberhart-transpose *m* 2 0 1 7 -2 4 1))\n(target *m* :place 'identity)\n",
            4,
        ),
    ] {
        let file = dir.join("lib.ttdl");
        std::fs::write(&file, script).unwrap();
        let (out, code) = ttdl(&["run", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{out}");
        assert!(out.starts_with(&format!("{steps}\n")), "{out}");
        assert!(
            out.contains(&format!("makespan:         {steps} cycles")),
            "{script}\n{out}"
        );
        assert!(out.contains("deadlines:        all met"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
