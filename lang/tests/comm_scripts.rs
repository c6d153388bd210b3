//! The standard library and the thesis's examples, evaluated and matched: counts the seeds fix.

use ttdl_ir::traffic::Traffic;
use ttdl_lang::eval::Machine;
use ttdl_lang::{syntax, Diagnostic, Limits};

const STDLIB: &[(&str, &str)] = &[
    ("util", include_str!("../../stdlib/src/ttdl/util.ttdl")),
    (
        "mappings",
        include_str!("../../stdlib/src/ttdl/mappings.ttdl"),
    ),
    (
        "patterns",
        include_str!("../../stdlib/src/ttdl/patterns.ttdl"),
    ),
];

fn eval(m: &mut Machine, file: u32, text: &str) -> Result<(), Vec<Diagnostic>> {
    let (forms, errs) = syntax::read(file, text);
    if !errs.is_empty() {
        return Err(errs);
    }
    for f in &forms {
        m.eval_top(f).map_err(|d| vec![d])?;
    }
    Ok(())
}

fn run(script: &str) -> Result<Traffic, Vec<Diagnostic>> {
    let mut m = Machine::new(Limits::default());
    for (i, (name, text)) in STDLIB.iter().enumerate() {
        if let Err(d) = eval(&mut m, i as u32, text) {
            panic!("stdlib {name}: {d:#?}");
        }
    }
    eval(&mut m, 9, script)?;
    // As the session does: the backend adds the recurrence bounds (SPEC §2).
    let mut t = m.comm.finish()?;
    ttdl_backend::schedule::bounds::refine_unplaced_period(&mut t);
    Ok(t)
}

fn ok(script: &str) -> Traffic {
    match run(script) {
        Ok(t) => t,
        Err(d) => panic!("{d:#?}"),
    }
}

fn per_iteration(t: &Traffic, k: u64) -> Vec<u64> {
    t.messages
        .iter()
        .filter(|m| m.iteration == k)
        .map(|m| m.size)
        .collect()
}

#[test]
fn example_reader_writer() {
    let t = ok(include_str!("../../examples/reader-writer.ttdl"));
    assert_eq!(t.tasks.len(), 2);
    assert_eq!(t.messages.len(), 8);
    // The loop: 8 words to t0, its compute of 100, 8 words back (Fig 4-2's recurrence).
    assert_eq!(t.period.unwrap().lower_bound, 116);
}

#[test]
fn example_jacobi_2d() {
    let t = ok(include_str!("../../examples/jacobi-2d.ttdl"));
    assert_eq!(t.tasks.len(), 16);
    let it0 = per_iteration(&t, 0);
    assert_eq!(it0.len(), 64, "Minsky §5.1.2: sixty-four messages");
    assert!(it0.iter().all(|&s| s == 8));
    assert_eq!(per_iteration(&t, 1).len(), 64);
}

#[test]
fn example_jacobi_2d_8x8_and_3d() {
    let t = ok(include_str!("../../examples/jacobi-2d-8x8.ttdl"));
    assert_eq!((t.tasks.len(), per_iteration(&t, 0).len()), (64, 256));
    let t = ok(include_str!("../../examples/jacobi-3d.ttdl"));
    assert_eq!((t.tasks.len(), per_iteration(&t, 0).len()), (27, 27 * 5));
}

#[test]
fn example_fft() {
    let t = ok(include_str!("../../examples/fft.ttdl"));
    assert_eq!(t.tasks.len(), 16);
    assert_eq!(t.messages.len(), 20);
    assert_eq!(t.period.as_ref().unwrap().lower_bound, 12);
    let m16 = &t.messages[16];
    assert_eq!((m16.src, m16.dst.to_vec(), m16.size), (8, vec![12], 8));
}

#[test]
fn example_viterbi() {
    let t = ok(include_str!("../../examples/viterbi.ttdl"));
    assert_eq!(t.tasks.len(), 8);
    // 7 lexicon messages, 3 speech blocks through 7 links of the pipeline, 3 results back.
    assert_eq!(t.messages.len(), 7 + 3 * 7 + 3 * 7);
    let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["0", "phase-zero", "phase-one", "phase-two"]);
}

#[test]
fn stdlib_patterns_match_and_time() {
    let t = ok("(jacobi-2d-on (make-network :topology torus :dims (list 4 4)) 2)");
    assert_eq!((t.tasks.len(), t.messages.len()), (16, 128));
    let t = ok("(jacobi-2d-on (make-network :topology mesh :dims (list 4 4)) 1)");
    assert_eq!(t.messages.len(), 48, "a 4x4 mesh has 48 directed links");
    let t = ok("(jacobi-3d-on (make-network :topology torus :dims (list 3 3 3)) 1)");
    assert_eq!(t.messages.len(), 27 * 6);
    let t = ok("(nearest-neighbor-on (make-network :topology mesh :dims (list 3 3)) 2)");
    assert_eq!(t.messages.len(), 2 * 24);
    let t = ok("(ring-on (make-tasks \"r\" 5) 3)");
    assert_eq!(t.messages.len(), 15);
    let t = ok("(shift-on (make-tasks \"s\" 6) 2 1)");
    assert!(t.messages.iter().all(|m| m.dst[0] == (m.src + 2) % 6));
    let t = ok("(transpose-on (make-network :topology mesh :dims (list 4 4)))");
    assert_eq!(t.messages.len(), 12);
    let t = ok("(all-to-all-on (make-tasks \"a\" 5))");
    assert_eq!(t.messages.len(), 20);
    let t = ok("(hypercube-exchange-on (make-tasks \"h\" 8))");
    assert_eq!(t.messages.len(), 24);
    assert!(t
        .messages
        .iter()
        .all(|m| (m.src ^ m.dst[0]).is_power_of_two()));
    let t = ok("(shuffle-exchange-on (make-tasks \"x\" 8))");
    assert_eq!(t.messages.len(), 3 * (6 + 8));
    let t = ok("(bit-reversal-on (make-tasks \"b\" 8))");
    assert_eq!(t.messages.len(), 4);
    let t = ok("(define ts (make-tasks \"c\" 4)) (scatter-from (car ts) ts) (gather-to (car ts) ts) (broadcast-from (car ts) ts 2)");
    assert_eq!(t.messages.len(), 3 + 3 + 1);
    assert_eq!(t.messages[6].dst.to_vec(), vec![1, 2, 3]);
    let t = ok("(pipelined-fft (make-tasks \"f\" 16) 2)");
    assert_eq!((t.messages.len(), t.period.unwrap().lower_bound), (40, 12));
    let t = ok("(viterbi-pipeline (task \"host\") (make-tasks \"d\" 7) 2 2)");
    assert_eq!(t.messages.len(), 7 + 2 * 7 + 2 * 7);
}

#[test]
fn stdlib_helpers() {
    let mut m = Machine::new(Limits::default());
    for (i, (_, text)) in STDLIB.iter().enumerate() {
        eval(&mut m, i as u32, text).unwrap();
    }
    let check = |m: &mut Machine, src: &str, want: &str| {
        let (forms, errs) = syntax::read(9, src);
        assert!(errs.is_empty());
        let v = m.eval_top(&forms[0]).unwrap();
        assert_eq!(m.show(&v), want, "{src}");
    };
    check(&mut m, "(row-major-coords 9 (list 4 4))", "(1 2)");
    check(&mut m, "(row-major-index (list 1 2) (list 4 4))", "9");
    check(
        &mut m,
        "(map (lambda (i) (fold-ring i 4)) (range 4))",
        "(0 2 3 1)",
    );
    check(&mut m, "(map gray (range 4))", "(0 1 3 2)");
    check(
        &mut m,
        "(map gray-inverse (map gray (range 8)))",
        "(0 1 2 3 4 5 6 7)",
    );
    check(
        &mut m,
        "(map (lambda (i) (bit-reverse i 3)) (range 8))",
        "(0 4 2 6 1 5 3 7)",
    );
    check(
        &mut m,
        "(map (lambda (i) (rotate-left i 3)) (range 8))",
        "(0 2 4 6 1 3 5 7)",
    );
    check(&mut m, "(bit-xor 6 3)", "5");
    check(&mut m, "(log2 16)", "4");
    check(
        &mut m,
        "(define tor (make-network :topology torus :dims (list 4 4)))",
        "tor",
    );
    check(
        &mut m,
        "(define msh (make-network :topology mesh :dims (list 4 4)))",
        "msh",
    );
    check(
        &mut m,
        "(define cube (make-network :topology hypercube :dims (list 4)))",
        "cube",
    );
    check(
        &mut m,
        "(define line (make-network :topology line :dims (list 16)))",
        "line",
    );
    check(&mut m, "(torus->mesh (list 3 1) tor msh)", "(1 2)");
    check(&mut m, "(identity (list 3 1) tor msh)", "(3 1)");
    check(&mut m, "(row-major (list 6) line msh)", "(2 1)");
    check(&mut m, "(snake (list 6) line msh)", "(1 1)");
    check(&mut m, "(hypercube->mesh (list 1 0 1 1) cube msh)", "(1 3)");
    check(
        &mut m,
        "(hypercube->mesh-gray (list 0 1 1 0) cube msh)",
        "(3 1)",
    );
}

/// The tasks file carries everything the language produced: reading it back gives the same
/// traffic, for every thesis example.
#[test]
fn tasks_file_round_trip_of_the_examples() {
    for script in [
        include_str!("../../examples/reader-writer.ttdl"),
        include_str!("../../examples/fft.ttdl"),
        include_str!("../../examples/viterbi.ttdl"),
        include_str!("../../examples/jacobi-3d.ttdl"),
    ] {
        let mut t = ok(script);
        let text = ttdl_backend::tasks_file::write(&t, None);
        // Iteration marks are not part of the thesis format.
        for task in &mut t.tasks {
            task.iterations.clear();
        }
        assert_eq!(ttdl_backend::tasks_file::read(&text), Ok(t));
    }
}

fn eval_value(m: &mut Machine, src: &str) -> String {
    let (forms, errs) = syntax::read(9, src);
    assert!(errs.is_empty(), "{errs:?}");
    let mut last = String::new();
    for f in &forms {
        let v = m.eval_top(f).unwrap_or_else(|d| panic!("{src}: {d:?}"));
        last = m.show(&v);
    }
    last
}

fn ints(text: &str) -> Vec<i64> {
    text.trim_matches(|c| c == '(' || c == ')')
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

/// The thesis's Jacobi mapping (§5.1): torus neighbours, the wrap-around included, land at most
/// two hops apart on the mesh, and no two tasks share a node.
#[test]
fn torus_to_mesh_keeps_neighbours_within_two_hops() {
    for dims in [vec![4, 4], vec![8, 8], vec![3, 3, 3], vec![5, 2]] {
        let mut m = Machine::new(Limits::default());
        for (i, (_, text)) in STDLIB.iter().enumerate() {
            eval(&mut m, i as u32, text).unwrap();
        }
        let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
        let d = d.join(" ");
        eval_value(
            &mut m,
            &format!(
                "(define tor (make-network :topology torus :dims (list {d}))) \
                 (define msh (make-network :topology mesh :dims (list {d})))"
            ),
        );
        let n: usize = dims.iter().product();
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..n {
            let mut c = Vec::new();
            let mut r = i;
            for &k in &dims {
                c.push(r % k);
                r /= k;
            }
            let here = ints(&eval_value(
                &mut m,
                &format!("(torus->mesh (list {}) tor msh)", join(&c)),
            ));
            assert!(seen.insert(here.clone()), "{dims:?}: two tasks on {here:?}");
            for axis in 0..dims.len() {
                let mut nb = c.clone();
                nb[axis] = (nb[axis] + 1) % dims[axis];
                let there = ints(&eval_value(
                    &mut m,
                    &format!("(torus->mesh (list {}) tor msh)", join(&nb)),
                ));
                let hops: i64 = here.iter().zip(&there).map(|(a, b)| (a - b).abs()).sum();
                assert!(
                    hops <= 2,
                    "{dims:?}: {c:?} and {nb:?} are {hops} hops apart"
                );
            }
        }
    }
}

fn join(c: &[usize]) -> String {
    c.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Gray-coded hypercube on a mesh: nodes next to each other in a mesh row or column are
/// hypercube neighbours.
#[test]
fn gray_mapping_puts_hypercube_neighbours_side_by_side() {
    let mut m = Machine::new(Limits::default());
    for (i, (_, text)) in STDLIB.iter().enumerate() {
        eval(&mut m, i as u32, text).unwrap();
    }
    eval_value(
        &mut m,
        "(define cube (make-network :topology hypercube :dims (list 4))) \
         (define msh (make-network :topology mesh :dims (list 4 4)))",
    );
    let mut at = std::collections::BTreeMap::new();
    for node in 0..16usize {
        let bits: Vec<usize> = (0..4).map(|b| (node >> b) & 1).collect();
        let xy = ints(&eval_value(
            &mut m,
            &format!("(hypercube->mesh-gray (list {}) cube msh)", join(&bits)),
        ));
        assert!(at.insert(xy.clone(), node).is_none(), "{xy:?} used twice");
    }
    for (xy, &node) in &at {
        for (dx, dy) in [(1, 0), (0, 1)] {
            if let Some(&other) = at.get(&vec![xy[0] + dx, xy[1] + dy]) {
                assert_eq!((node ^ other).count_ones(), 1, "{node} and {other}");
            }
        }
    }
}
