//! Stream matching, the subtask graph and its timing, driven directly through the `Comm` hooks
//! (as the evaluator drives them).

use expect_test::{expect, Expect};
use ttdl_ir::traffic::{Op, Traffic};
use ttdl_lang::comm::{Comm, CommLimits};
use ttdl_lang::{Diagnostic, Span};

fn sp(n: usize) -> Span {
    Span::new(0, n, n + 1)
}

/// Tasks with their programs, then messages with their times, one line each.
fn summary(t: &Traffic) -> String {
    let mut s = String::new();
    for task in &t.tasks {
        let ops: Vec<String> = task
            .ops
            .iter()
            .map(|o| match o {
                Op::Compute(c) => format!("c{c}"),
                Op::Send(m) => format!("s{m}"),
                Op::Recv(m) => format!("r{m}"),
                Op::Sync(p) => format!("y{p}"),
            })
            .collect();
        s += &format!("{} {}: {}\n", task.id, task.name, ops.join(" "));
    }
    for m in &t.messages {
        s += &format!(
            "M{} {}->{:?} size {} rel {} dl {} ph {} it {}\n",
            m.id, m.src, m.dst, m.size, m.release, m.deadline, m.phase, m.iteration
        );
    }
    for p in &t.phases {
        s += &format!("phase {} {} start {}\n", p.id, p.name, p.start);
    }
    s += &format!("critical path {}\n", t.critical_path);
    if let Some(p) = &t.period {
        s += &format!(
            "period {} over {} iterations, bound by {}\n",
            p.lower_bound, p.iterations, p.bound_by
        );
    }
    s
}

fn diags(d: &[Diagnostic]) -> String {
    let mut s = String::new();
    for d in d {
        s += &format!("{}: {}\n", d.code, d.message);
        for l in &d.labels {
            s += &format!("  @{}: {}\n", l.span.start, l.message);
        }
        for n in &d.notes {
            s += &format!("  note: {n}\n");
        }
        if let Some(h) = &d.help {
            s += &format!("  help: {h}\n");
        }
    }
    s
}

/// What the session hands on: the language's traffic with the backend's period bound (the
/// recurrences, SPEC §2) added.
fn finish(c: &Comm) -> Result<ttdl_ir::traffic::Traffic, Vec<ttdl_lang::Diagnostic>> {
    let mut t = c.finish()?;
    ttdl_backend::schedule::bounds::refine_unplaced_period(&mut t);
    Ok(t)
}

fn check(c: &Comm, e: Expect) {
    match finish(c) {
        Ok(t) => e.assert_eq(&summary(&t)),
        Err(d) => e.assert_eq(&diags(&d)),
    }
}

/// Minsky Fig 4-2: `(reader t0 t1)` then `(writer t1 t0)` with n = 2 and an 8-word m0. The reads of
/// `reader` are evaluated before the matching writes: they wait in the pending-read queue.
#[test]
fn fig_4_2_reader_writer() {
    let mut c = Comm::new(CommLimits::default());
    let t0 = c.fresh_task("t0", sp(0)).unwrap();
    let t1 = c.fresh_task("t1", sp(1)).unwrap();
    let n = 2;
    c.iterate_begin(t0, n, sp(10));
    for i in 0..n {
        c.iterate_next(t0, i);
        c.read(t0, t1, 8, Some("m0"), sp(11)).unwrap();
        c.compute(t0, 100, sp(12)).unwrap();
        c.write(t0, t1, 8, Some("m0"), sp(13)).unwrap();
    }
    c.iterate_end(t0);
    c.iterate_begin(t1, n, sp(20));
    for i in 0..n {
        c.iterate_next(t1, i);
        c.write(t1, t0, 8, Some("m0"), sp(21)).unwrap();
        c.read(t1, t0, 8, Some("m0"), sp(22)).unwrap();
    }
    c.iterate_end(t1);
    check(
        &c,
        expect![[r#"
            0 t0: r0 c100 s1 r2 c100 s3
            1 t1: s0 r1 s2 r3
            M0 1->[0] size 8 rel 0 dl 8 ph 0 it 0
            M1 0->[1] size 8 rel 108 dl 116 ph 0 it 0
            M2 1->[0] size 8 rel 116 dl 124 ph 0 it 1
            M3 0->[1] size 8 rel 224 dl 232 ph 0 it 1
            phase 0 0 start 0
            critical path 232
            period 116 over 2 iterations, bound by recurrence: the cycle t1 → t0, 116 cycles over 1 iteration(s) in phase 0
        "#]],
    );
}

/// The 16-task pipelined FFT of Minsky Figs 5-10/5-11: four rows of four tasks, each computing 12
/// cycles; rows 1 and 2 write two 4-word messages, row 3 one 8-word message. The thesis reports a
/// maximum throughput of 12 (one FFT every 12 cycles) and 20 messages M0..M19.
fn fft(n: u64) -> Comm {
    let mut c = Comm::new(CommLimits::default());
    let t: Vec<usize> = (0..16)
        .map(|i| c.task_numbered(i, sp(0)).unwrap())
        .collect();
    let ct = 12;
    // Row 1 (tasks 0-3): butterflies of stride 2 into row 2.
    for i in 0..4 {
        let me = t[i];
        c.synchronize(me, "phase-zero", sp(1)).unwrap();
        c.iterate_begin(me, n, sp(2));
        for k in 0..n {
            c.iterate_next(me, k);
            c.compute(me, ct, sp(3)).unwrap();
            c.write(me, t[4 + i], 4, None, sp(4)).unwrap();
            c.write(me, t[4 + (i ^ 2)], 4, None, sp(5)).unwrap();
        }
        c.iterate_end(me);
    }
    // Row 2 (4-7): stride 1 into row 3.
    for i in 0..4 {
        let me = t[4 + i];
        c.synchronize(me, "phase-zero", sp(6)).unwrap();
        c.iterate_begin(me, n, sp(7));
        for k in 0..n {
            c.iterate_next(me, k);
            let (a, b) = (i.min(i ^ 2), i.max(i ^ 2));
            c.read(me, t[a], 4, None, sp(8)).unwrap();
            c.read(me, t[b], 4, None, sp(9)).unwrap();
            c.compute(me, ct, sp(10)).unwrap();
            c.write(me, t[8 + i], 4, None, sp(11)).unwrap();
            c.write(me, t[8 + (i ^ 1)], 4, None, sp(12)).unwrap();
        }
        c.iterate_end(me);
    }
    // Row 3 (8-11): one 8-word message to row 4.
    for i in 0..4 {
        let me = t[8 + i];
        c.synchronize(me, "phase-zero", sp(13)).unwrap();
        c.iterate_begin(me, n, sp(14));
        for k in 0..n {
            c.iterate_next(me, k);
            let (a, b) = (i.min(i ^ 1), i.max(i ^ 1));
            c.read(me, t[4 + a], 4, None, sp(15)).unwrap();
            c.read(me, t[4 + b], 4, None, sp(16)).unwrap();
            c.compute(me, ct, sp(17)).unwrap();
            c.write(me, t[12 + i], 8, None, sp(18)).unwrap();
        }
        c.iterate_end(me);
    }
    for i in 0..4 {
        let me = t[12 + i];
        c.synchronize(me, "phase-zero", sp(19)).unwrap();
        c.iterate_begin(me, n, sp(20));
        for k in 0..n {
            c.iterate_next(me, k);
            c.read(me, t[8 + i], 8, None, sp(21)).unwrap();
            c.compute(me, ct, sp(22)).unwrap();
        }
        c.iterate_end(me);
    }
    c
}

#[test]
fn fft_fig_5_10() {
    let t = fft(1).finish().unwrap();
    assert_eq!(t.tasks.len(), 16);
    assert_eq!(t.messages.len(), 20);
    let p = t.period.as_ref().unwrap();
    assert_eq!(p.lower_bound, 12, "Minsky §5.2: maximum throughput 12");
    // M16 travels from task 8 to task 12 (Minsky §5.2) and is 8 words long: with a period of 12
    // it has 12 - 8 = 4 cycles of slack, as the thesis says.
    let m16 = &t.messages[16];
    assert_eq!((m16.src, m16.dst.to_vec(), m16.size), (8, vec![12], 8));
    assert_eq!(p.lower_bound - m16.size, 4);
    check(
        &fft(1),
        expect![[r#"
            0 0: y1 c12 s0 s4
            1 1: y1 c12 s2 s6
            2 2: y1 c12 s5 s1
            3 3: y1 c12 s7 s3
            4 4: y1 r0 r1 c12 s8 s10
            5 5: y1 r2 r3 c12 s11 s9
            6 6: y1 r4 r5 c12 s12 s14
            7 7: y1 r6 r7 c12 s15 s13
            8 8: y1 r8 r9 c12 s16
            9 9: y1 r10 r11 c12 s17
            10 10: y1 r12 r13 c12 s18
            11 11: y1 r14 r15 c12 s19
            12 12: y1 r16 c12
            13 13: y1 r17 c12
            14 14: y1 r18 c12
            15 15: y1 r19 c12
            M0 0->[4] size 4 rel 12 dl 16 ph 1 it 0
            M1 2->[4] size 4 rel 12 dl 16 ph 1 it 0
            M2 1->[5] size 4 rel 12 dl 16 ph 1 it 0
            M3 3->[5] size 4 rel 12 dl 16 ph 1 it 0
            M4 0->[6] size 4 rel 12 dl 16 ph 1 it 0
            M5 2->[6] size 4 rel 12 dl 16 ph 1 it 0
            M6 1->[7] size 4 rel 12 dl 16 ph 1 it 0
            M7 3->[7] size 4 rel 12 dl 16 ph 1 it 0
            M8 4->[8] size 4 rel 28 dl 32 ph 1 it 0
            M9 5->[8] size 4 rel 28 dl 32 ph 1 it 0
            M10 4->[9] size 4 rel 28 dl 32 ph 1 it 0
            M11 5->[9] size 4 rel 28 dl 32 ph 1 it 0
            M12 6->[10] size 4 rel 28 dl 32 ph 1 it 0
            M13 7->[10] size 4 rel 28 dl 32 ph 1 it 0
            M14 6->[11] size 4 rel 28 dl 32 ph 1 it 0
            M15 7->[11] size 4 rel 28 dl 32 ph 1 it 0
            M16 8->[12] size 8 rel 44 dl 52 ph 1 it 0
            M17 9->[13] size 8 rel 44 dl 52 ph 1 it 0
            M18 10->[14] size 8 rel 44 dl 52 ph 1 it 0
            M19 11->[15] size 8 rel 44 dl 52 ph 1 it 0
            phase 0 0 start 0
            phase 1 phase-zero start 0
            critical path 64
            period 12 over 1 iterations, bound by compute of task 0 (12 cycles per iteration)
        "#]],
    );
}

/// Jacobi 2D on a 4x4 logical torus (Minsky Fig 5-2): 16 tasks, 64 messages of 8 words per
/// iteration (§5.1.2: "a total of sixty-four messages, four from each processor").
#[test]
fn jacobi_2d_torus_4x4() {
    let mut c = Comm::new(CommLimits::default());
    let w = 4usize;
    let t: Vec<usize> = (0..16)
        .map(|i| c.fresh_task(&format!("t{i}"), sp(0)).unwrap())
        .collect();
    let at = |x: usize, y: usize| t[(y % w) * w + (x % w)];
    let iters = 3;
    for y in 0..w {
        for x in 0..w {
            let me = at(x, y);
            let north = at(x, y + 1);
            let south = at(x, y + w - 1);
            let east = at(x + 1, y);
            let west = at(x + w - 1, y);
            c.synchronize(me, "0", sp(1)).unwrap();
            c.iterate_begin(me, iters, sp(2));
            for k in 0..iters {
                c.iterate_next(me, k);
                c.write(me, north, 8, Some("m0"), sp(3)).unwrap();
                c.read(me, south, 8, Some("m0"), sp(4)).unwrap();
                c.write(me, east, 8, Some("m0"), sp(5)).unwrap();
                c.read(me, west, 8, Some("m0"), sp(6)).unwrap();
                c.write(me, west, 8, Some("m0"), sp(7)).unwrap();
                c.read(me, east, 8, Some("m0"), sp(8)).unwrap();
                c.write(me, south, 8, Some("m0"), sp(9)).unwrap();
                c.read(me, north, 8, Some("m0"), sp(10)).unwrap();
                c.compute(me, 10, sp(11)).unwrap();
            }
            c.iterate_end(me);
        }
    }
    let t = finish(&c).unwrap();
    assert_eq!(t.tasks.len(), 16);
    assert_eq!(t.messages.len(), 64 * iters as usize);
    for k in 0..iters {
        let per: Vec<_> = t.messages.iter().filter(|m| m.iteration == k).collect();
        assert_eq!(per.len(), 64);
        assert!(per.iter().all(|m| m.size == 8));
    }
    assert_eq!(t.phases.len(), 1, "(synchronize 0) is the implicit phase 0");
    let p = t.period.unwrap();
    // Each task drains 32 words from its neighbours, then computes 10, before it can send again.
    assert_eq!(p.lower_bound, 42);
    assert_eq!(
        p.bound_by,
        "recurrence: the cycle t15 → t3 → t0 → t3, 42 cycles over 1 iteration(s) in phase 0"
    );
    // Ideal timing: each iteration is 4 exchanges of 8 words then 10 cycles of compute.
    // Each iteration waits for four 8-word messages in turn (write, then read the matching
    // neighbour's), then computes 10 cycles.
    assert_eq!(t.critical_path, 3 * (4 * 8 + 10));
}

#[test]
fn multicast_matches_each_reader() {
    let mut c = Comm::new(CommLimits::default());
    let h = c.fresh_task("host", sp(0)).unwrap();
    let a = c.fresh_task("a", sp(0)).unwrap();
    let b = c.fresh_task("b", sp(0)).unwrap();
    c.read(a, h, 5, None, sp(1)).unwrap();
    c.compute(h, 3, sp(2)).unwrap();
    c.broadcast(h, &[a, b], 5, Some("m"), sp(3)).unwrap();
    c.compute(b, 20, sp(4)).unwrap();
    c.read(b, h, 5, None, sp(5)).unwrap();
    check(
        &c,
        expect![[r#"
            0 host: c3 s0
            1 a: r0
            2 b: c20 r0
            M0 0->[1, 2] size 5 rel 3 dl 8 ph 0 it 0
            phase 0 0 start 0
            critical path 20
        "#]],
    );
}

#[test]
fn phases_start_together() {
    let mut c = Comm::new(CommLimits::default());
    let a = c.fresh_task("a", sp(0)).unwrap();
    let b = c.fresh_task("b", sp(0)).unwrap();
    c.compute(a, 50, sp(1)).unwrap();
    c.synchronize(a, "go", sp(2)).unwrap();
    c.write(a, b, 4, None, sp(3)).unwrap();
    c.synchronize(b, "go", sp(4)).unwrap();
    c.read(b, a, 4, None, sp(5)).unwrap();
    check(
        &c,
        expect![[r#"
            0 a: c50 y1 s0
            1 b: y1 r0
            M0 0->[1] size 4 rel 50 dl 54 ph 1 it 0
            phase 0 0 start 0
            phase 1 go start 50
            critical path 54
        "#]],
    );
}

#[test]
fn unmatched_and_mismatched() {
    let mut c = Comm::new(CommLimits::default());
    let a = c.fresh_task("a", sp(0)).unwrap();
    let b = c.fresh_task("b", sp(0)).unwrap();
    for _ in 0..3 {
        c.write(a, b, 8, None, sp(10)).unwrap();
    }
    c.read(b, a, 4, None, sp(20)).unwrap();
    c.read(a, b, 8, None, sp(30)).unwrap();
    check(
        &c,
        expect![[r#"
            unmatched-write: task `a` writes 2 messages to task `b` that `b` never reads
              @10: `a` writes here; `b` has no read left to match it
              note: the stream `a` → `b` has 3 writes and 1 read
              help: add a matching (read-stream M a) to `b`'s program, or remove the extra write
            unmatched-read: task `a` reads 1 message from task `b` that `b` never writes
              @30: `a` waits here forever: `b` has no write left to match it
              note: the stream `b` → `a` has 0 writes and 1 read
              help: add a matching (write-stream M a) to `b`'s program, or remove the extra read
            size-mismatch: task `a` writes 8 words but task `b` reads 4 words
              @10: this write sends 8 words
              @20: this read, which matches it, expects 4 words
              help: use the same message type (or size) in the write and the read it matches; the k-th write on a stream matches the k-th read
        "#]],
    );
}

/// Three tasks that each read from the previous one before writing to the next: a cycle of reads.
#[test]
fn deadlock_names_the_cycle() {
    let mut c = Comm::new(CommLimits::default());
    let t: Vec<usize> = ["a", "b", "c"]
        .iter()
        .map(|n| c.fresh_task(n, sp(0)).unwrap())
        .collect();
    for i in 0..3 {
        let prev = t[(i + 2) % 3];
        let next = t[(i + 1) % 3];
        c.read(t[i], prev, 1, None, sp(10 + i)).unwrap();
        c.write(t[i], next, 1, None, sp(20 + i)).unwrap();
    }
    check(
        &c,
        expect![[r#"
            deadlock: tasks wait for each other forever: `a` waits for `c` waits for `b` waits for `a`
              @10: `a` waits here for a message from `c`
              @11: `b` waits here for a message from `a`
              @12: `c` waits here for a message from `b`
              note: a read waits until its message has arrived; a write never waits
              help: let one of these tasks write before it reads, so that the cycle of reads is broken
        "#]],
    );
}

/// A barrier that one task can only reach after a message sent from behind the barrier.
#[test]
fn deadlock_through_a_phase() {
    let mut c = Comm::new(CommLimits::default());
    let a = c.fresh_task("a", sp(0)).unwrap();
    let b = c.fresh_task("b", sp(0)).unwrap();
    c.synchronize(a, "p", sp(1)).unwrap();
    c.write(a, b, 1, None, sp(2)).unwrap();
    c.read(b, a, 1, None, sp(3)).unwrap();
    c.synchronize(b, "p", sp(4)).unwrap();
    let d = c.finish().unwrap_err();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "deadlock");
    assert!(d[0].labels.iter().any(|l| l.span == sp(3)), "{d:?}");
    assert!(
        d[0].labels
            .iter()
            .any(|l| l.span == sp(1) || l.span == sp(4)),
        "{d:?}"
    );
}

#[test]
fn task_ids_and_names() {
    let mut c = Comm::new(CommLimits::default());
    assert_eq!(c.task_numbered(2, sp(0)).unwrap(), 2);
    assert_eq!(c.task_count(), 3);
    assert_eq!(c.task_name(1), "1");
    let x = c.task_named("x", sp(0)).unwrap();
    assert_eq!(c.task_named("x", sp(0)).unwrap(), x);
    assert_ne!(c.fresh_task("x", sp(0)).unwrap(), x);
    assert!(c.task_numbered(-1, sp(0)).is_err());
    let mut small = Comm::new(CommLimits {
        max_tasks: 2,
        max_messages: 3,
    });
    small.fresh_task("a", sp(0)).unwrap();
    small.fresh_task("b", sp(0)).unwrap();
    assert_eq!(small.fresh_task("c", sp(0)).unwrap_err().code, "limit");
    for _ in 0..3 {
        small.write(0, 1, 1, None, sp(0)).unwrap();
    }
    assert_eq!(small.write(0, 1, 1, None, sp(0)).unwrap_err().code, "limit");
    assert_eq!(small.write(0, 1, 0, None, sp(0)).unwrap_err().code, "limit");
}

/// 4,096 tasks in one long chain of reads: timing must not recurse.
#[test]
fn long_chains_do_not_overflow() {
    let mut c = Comm::new(CommLimits::default());
    let n = 4096;
    let t: Vec<usize> = (0..n).map(|i| c.task_numbered(i, sp(0)).unwrap()).collect();
    for i in 0..n as usize {
        if i > 0 {
            c.read(t[i], t[i - 1], 2, None, sp(1)).unwrap();
        }
        c.compute(t[i], 1, sp(2)).unwrap();
        if i + 1 < n as usize {
            c.write(t[i], t[i + 1], 2, None, sp(3)).unwrap();
        }
    }
    let tr = c.finish().unwrap();
    assert_eq!(tr.critical_path, 4096 + 2 * 4095);
}

/// Per-hop latency, once known, delays arrivals and everything after them.
#[test]
fn latency_per_message() {
    use ttdl_lang::dag::SubtaskGraph;
    use ttdl_lang::timing;
    let mut c = Comm::new(CommLimits::default());
    let a = c.fresh_task("a", sp(0)).unwrap();
    let b = c.fresh_task("b", sp(0)).unwrap();
    c.write(a, b, 4, None, sp(1)).unwrap();
    c.read(b, a, 4, None, sp(2)).unwrap();
    c.compute(b, 10, sp(3)).unwrap();
    let t = c.finish().unwrap();
    let dag = SubtaskGraph::build(&t).unwrap();
    assert_eq!(timing::solve(&dag).unwrap().critical_path, 14);
    assert_eq!(
        timing::solve_with_latency(&dag, &[3])
            .unwrap()
            .critical_path,
        17
    );
}

/// Thousands of streams left unread: a bounded list of diagnostics, quickly.
#[test]
fn many_unmatched_streams_are_summed_up() {
    let mut c = Comm::new(CommLimits::default());
    let t: Vec<usize> = (0..400)
        .map(|i| c.task_numbered(i, sp(0)).unwrap())
        .collect();
    for &a in &t {
        for k in 1..=10 {
            for _ in 0..20 {
                c.read(a, t[(a + k) % t.len()], 8, None, sp(1)).unwrap();
            }
        }
    }
    let d = c.finish().unwrap_err();
    assert_eq!(d.len(), 20);
    assert!(d.iter().all(|d| d.code == "unmatched-read"));
    let last = d.last().unwrap();
    assert!(
        last.notes.iter().any(|n| n.contains("3980 more streams")),
        "{last:?}"
    );
}
