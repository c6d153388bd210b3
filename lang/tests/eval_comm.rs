//! The communication forms (SPEC §1.3) and networks and mappings (SPEC §1.4), as the evaluator
//! drives them.

use ttdl_ir::topology::Kind;
use ttdl_lang::{Interpreter, Limits};

fn interp(src: &str) -> Interpreter {
    let mut i = Interpreter::default();
    if let Err(d) = i.eval_source("test.ttdl", src) {
        panic!("{}", i.render(&d, false));
    }
    i
}

fn run(src: &str) -> String {
    let mut i = Interpreter::default();
    match i.eval_source("test.ttdl", src) {
        Ok(v) => v,
        Err(d) => panic!("{}", i.render(&d, false)),
    }
}

fn fail(src: &str) -> (String, String) {
    let mut i = Interpreter::default();
    match i.eval_source("test.ttdl", src) {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(d) => (d[0].code.clone(), i.render(&d, false)),
    }
}

/// Minsky Fig 4-2: the reader and the writer, matched whichever is evaluated first.
const READER_WRITER: &str = "
(defmessage m0 8)
(deftask t0 t1)
(define-comm reader (source-task t-north n)
  (iterate
    (read-stream m0 t-north)
    (compute 100)
    (write-stream m0 t-north)
    n))
(define-comm writer (source-task t-south n)
  (iterate
    (write-stream m0 t-south)
    (read-stream m0 t-south)
    n))
(reader t0 t1 4)
(writer t1 t0 4)
";

#[test]
fn reader_writer_builds_matched_traffic() {
    let i = interp(READER_WRITER);
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    assert_eq!(t.tasks.len(), 2);
    assert_eq!(t.tasks[0].name, "t0");
    assert_eq!(t.messages.len(), 8);
    assert!(t
        .messages
        .iter()
        .all(|m| m.size == 8 && m.label.as_deref() == Some("m0")));
    assert_eq!(t.period.as_ref().map(|p| p.iterations), Some(4));
}

#[test]
fn task_values() {
    assert_eq!(
        run("(deftask a b) (list (task-name a) (task-id b))"),
        "(\"a\" 1)"
    );
    assert_eq!(run("(deftask a) (eq? (task a) a)"), "#t");
    assert_eq!(run("(eq? (task \"x\") (task x))"), "#t");
    assert_eq!(run("(task-id (task 'fresh))"), "0");
    assert_eq!(
        run("(defmessage m 12) (list (message-size m) (message-size 5))"),
        "(12 5)"
    );
}

#[test]
fn stream_forms_need_a_task_context() {
    let (code, text) = fail("(deftask a b)\n(write-stream 8 b)");
    assert_eq!(code, "no-task-context");
    assert!(text.contains("test.ttdl:2:1"), "{text}");
    assert_eq!(fail("(compute 3)").0, "no-task-context");
    assert_eq!(fail("(synchronize p)").0, "no-task-context");
    // with-task gives one explicitly.
    let i =
        interp("(deftask a b) (with-task a (write-stream 8 b)) (with-task b (read-stream 8 a))");
    assert_eq!(i.traffic(None).map(|t| t.messages.len()).ok(), Some(1));
}

#[test]
fn nested_comm_calls_push_and_pop_the_context() {
    let i = interp(
        "(deftask a b c)
         (define-comm recv (self from) (read-stream 4 from))
         (define-comm send (self to)
           (write-stream 4 to)
           (recv to self)          ; runs in the context of `to`
           (write-stream 4 c))     ; back in the context of `self`
         (send a b)
         (recv c a)",
    );
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    let mut pairs: Vec<(usize, Vec<usize>)> =
        t.messages.iter().map(|m| (m.src, m.dst.to_vec())).collect();
    pairs.sort();
    assert_eq!(pairs, vec![(0, vec![1]), (0, vec![2])]);
}

#[test]
fn comm_pattern_needs_a_task_first() {
    let (code, text) = fail("(define-comm p (self) (compute 1)) (p \"x\")");
    assert_eq!(code, "type");
    assert!(text.contains("(p TASK args"), "{text}");
}

#[test]
fn broadcast_takes_varargs_or_a_list() {
    let i = interp(
        "(deftask s a b c)
         (define-comm bc (self peers) (broadcast 6 peers))
         (define-comm bc2 (self x y) (broadcast 6 x y))
         (define-comm rd (self from) (read-stream 6 from))
         (bc s (list a b c))
         (bc2 s a b)
         (dolist (t (list a b c a b)) (rd t s))",
    );
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    let mut dsts: Vec<Vec<usize>> = t.messages.iter().map(|m| m.dst.to_vec()).collect();
    dsts.sort();
    assert_eq!(dsts, vec![vec![1, 2], vec![1, 2, 3]]);
}

#[test]
fn synchronize_takes_bare_phase_names() {
    let i = interp(
        "(deftask a b)
         (define-comm p (self peer) (synchronize phase-zero) (write-stream 1 peer) (synchronize 2))
         (define-comm q (self peer) (synchronize phase-zero) (read-stream 1 peer))
         (p a b) (q b a)",
    );
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"phase-zero") && names.contains(&"2"),
        "{names:?}"
    );
}

#[test]
fn runaway_iterate_stops_at_once_pointing_at_the_form() {
    let start = std::time::Instant::now();
    // A body that changes state is evaluated every time: the budget stops it at once.
    let (code, text) = fail(
        "(defvar k 0)\n(deftask a b)\n(with-task a\n  (iterate (set! k (+ k 1)) (write-stream 8 b) 1000000000000))",
    );
    assert_eq!(code, "runaway-loop");
    assert!(text.contains("test.ttdl:4:3"), "{text}");
    assert!(start.elapsed().as_secs() < 5);
    // One that does not folds: four iterations evaluated, the count recorded; unfolding it is
    // refused by the message limit, not attempted.
    let mut i = Interpreter::default();
    i.eval_source(
        "t",
        "(deftask a b)\n(with-task a (iterate (write-stream 8 b) 1000000000000))\n(with-task b (iterate (read-stream 8 a) 1000000000000))",
    )
    .unwrap();
    assert_eq!(
        i.traffic_folded(None).unwrap().repeat,
        Some(1_000_000_000_000)
    );
    assert_eq!(i.traffic(None).unwrap_err()[0].code, "limit");
    assert!(start.elapsed().as_secs() < 5);
    // A count within the step budget, but too costly per iteration, stops after one iteration.
    let small = Limits {
        steps: 100_000,
        ..Limits::default()
    };
    let mut i = Interpreter::new(small);
    let d = i
        .eval_source(
            "t",
            "(defvar k 0) (deftask a) (with-task a (iterate (set! k 1) (compute 1) (compute 1) 60000))",
        )
        .unwrap_err();
    assert_eq!(d[0].code, "runaway-loop");
}

#[test]
fn make_network_in_both_styles() {
    let i = interp(
        "(define a (make-network :topology mesh :dims (list 4 4)))
         (define b (make-network :topology \"2d-mesh\" :routing \"random\" :n 16 :ndim 2 :nx 4 :ny 4))
         (define c (make-network :topology \"3d-torus\" :n 27))
         (define h (make-network :topology hypercube :n 16))
         (define r (make-network :topology ring :n 8))
         (define g (make-network :topology graph :edges '((0 1) (1 2))))",
    );
    assert_eq!(i.global("a").as_deref(), Some("#<network mesh:4x4>"));
    assert_eq!(i.global("b").as_deref(), Some("#<network mesh:4x4>"));
    assert_eq!(i.global("c").as_deref(), Some("#<network torus:3x3x3>"));
    assert_eq!(i.global("h").as_deref(), Some("#<network hypercube:4>"));
    assert_eq!(i.global("r").as_deref(), Some("#<network ring:8>"));
    assert_eq!(i.global("g").as_deref(), Some("#<network graph:0-1,1-2>"));
    let (code, text) = fail("(make-network :topology blob :n 4)");
    assert_eq!(code, "type");
    assert!(text.contains("unknown topology"), "{text}");
    assert_eq!(fail("(make-network :topology mesh :sides 4)").0, "type");
    assert_eq!(fail("(make-network :topology mesh :n 15)").0, "type");
}

#[test]
fn network_tasks_coords_and_neighbors() {
    let src = "(define net (make-network :topology torus :dims (list 4 3)))
               (define ts (network-tasks net))";
    assert_eq!(run(&format!("{src} (length ts)")), "12");
    assert_eq!(
        run(&format!("{src} (eq? (car ts) (car (network-tasks net)))")),
        "#t"
    );
    // Row-major: x varies fastest.
    assert_eq!(
        run(&format!(
            "{src} (map (lambda (t) (coords net t)) (list (nth 1 ts) (nth 4 ts)))"
        )),
        "((1 0) (0 1))"
    );
    assert_eq!(
        run(&format!("{src} (coords net (neighbor net (car ts) west))")),
        "(3 0)"
    );
    assert_eq!(
        run(&format!(
            "{src} (coords net (neighbor net (car ts) 'south))"
        )),
        "(0 2)"
    );
    assert_eq!(
        run(&format!("{src} (coords net (task-at net '(5 -1)))")),
        "(1 2)"
    );
    let mesh = "(define net (make-network :topology mesh :dims (list 4 4)))
                (define t0 (car (network-tasks net)))";
    assert_eq!(
        run(&format!(
            "{mesh} (list (neighbor net t0 west) (neighbor net t0 south))"
        )),
        "(nil nil)"
    );
    assert_eq!(
        run(&format!("{mesh} (coords net (neighbor net t0 :north))")),
        "(0 1)"
    );
    assert_eq!(run(&format!("{mesh} (task-at net '(4 0))")), "nil");
    assert_eq!(fail(&format!("{mesh} (neighbor net t0 up)")).0, "type");
    assert_eq!(
        fail(&format!("{mesh} (neighbor net t0 'sideways)")).0,
        "type"
    );
    let cube = "(define net (make-network :topology hypercube :dims (list 3)))
                (define t5 (nth 5 (network-tasks net)))";
    assert_eq!(run(&format!("{cube} (list (coords net t5) (coords net (neighbor net t5 1)) (coords net (neighbor net t5 east)))")), "((1 0 1) (1 1 1) (0 0 1))");
}

#[test]
fn network_tasks_carry_coordinates_and_the_logical_network() {
    let i = interp(
        "(define net (make-network :topology torus :dims (list 2 2)))
         (define-comm ping (self peer) (write-stream 1 peer) (read-stream 1 peer))
         (dolist (t (network-tasks net)) (ping t (neighbor net t east)))",
    );
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    assert_eq!(t.tasks[3].coords.as_deref(), Some(&[1, 1][..]));
    assert_eq!(t.tasks[3].name, "t1_1");
    assert_eq!(t.logical.as_ref().map(|s| s.kind), Some(Kind::Torus));
}

const FOLDED: &str = "
(define-mapping fold (c logical physical)
  (map (lambda (x n) (if (< (* 2 x) n) (* 2 x) (+ 1 (* 2 (- n 1 x))))) c (network-dims logical)))
(define-mapping mirror (c logical physical) (list (- 3 (car c)) (cadr c)))
(define logical (make-network :topology torus :dims (list 4 2)))
(define physical (make-network :topology mesh :dims (list 4 2)))
(define-comm ping (self e w) (write-stream 1 e) (read-stream 1 w))
(dolist (t (network-tasks logical)) (ping t (neighbor logical t east) (neighbor logical t west)))
";

#[test]
fn target_records_the_backend_request_and_the_mapping_is_applied() {
    let i = interp(&format!(
        "{FOLDED} (target physical :mapping fold :place anneal :route dor :schedule lp :seed 7)"
    ));
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    let target = t.target.clone().unwrap_or_default();
    assert_eq!(
        target.network.map(|n| n.to_string()).as_deref(),
        Some("mesh:4x2")
    );
    assert_eq!(target.mapping.as_deref(), Some("fold"));
    assert_eq!(target.settings.word("place"), Some("anneal"));
    assert_eq!(target.settings.word("route"), Some("dor"));
    assert_eq!(target.settings.word("schedule"), Some("lp"));
    assert_eq!(target.settings.int("seed"), Some(7));
    // A canned mapping is a placement to use, not a constraint: nothing is wired down.
    assert!(t.tasks.iter().all(|t| !t.wired && t.mapped.is_some()));
    let mapped: Vec<Vec<i64>> = t.tasks.iter().filter_map(|t| t.mapped.clone()).collect();
    // x: 0 1 2 3 → 0 2 3 1 on the 4-wide row.
    assert_eq!(
        mapped[..4],
        [vec![0, 0], vec![2, 0], vec![3, 0], vec![1, 0]]
    );
    // The argument overrides the script's mapping.
    let t2 = i
        .traffic(Some("mirror"))
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    assert_eq!(t2.tasks[1].mapped, Some(vec![2, 0]));
    assert_eq!(t2.target.and_then(|t| t.mapping).as_deref(), Some("mirror"));
}

#[test]
fn bad_mappings_are_diagnostics() {
    let i = interp(&format!("{FOLDED} (target physical)"));
    let d = i.traffic(Some("fodl")).unwrap_err();
    assert_eq!(d[0].code, "unbound");
    assert_eq!(d[0].help.as_deref(), Some("did you mean `fold`?"));
    let i = interp(&format!(
        "{FOLDED} (define-mapping far (c l p) (list 9 9)) (target physical :mapping far)"
    ));
    let d = i.traffic(None).unwrap_err();
    assert_eq!(d[0].code, "type");
    assert!(
        d[0].message.contains("not a node of mesh:4x2"),
        "{}",
        d[0].message
    );
}

/// Without a `target` form a mapping named by the caller has no place in the source: the
/// diagnostic carries no label (it used to point at the first line of the first file).
#[test]
fn a_mapping_given_without_a_target_has_no_label() {
    let i =
        interp("(deftask a b) (with-task a (write-stream 1 b)) (with-task b (read-stream 1 a))");
    let d = i.traffic(Some("nosuch")).unwrap_err();
    assert_eq!(d[0].code, "unbound");
    assert!(d[0].labels.is_empty(), "{:?}", d[0].labels);
    assert!(i.render(&d, false).contains("was given as the mapping"));
}

#[test]
fn an_integer_is_an_anonymous_message() {
    let i = interp("(defvar lexicon 1500) (deftask h d) (with-task h (write-stream lexicon d)) (with-task d (read-stream lexicon h))");
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    assert_eq!(
        (t.messages[0].size, t.messages[0].label.clone()),
        (1500, None)
    );
    assert_eq!(
        fail("(deftask a b) (with-task a (write-stream \"big\" b))").0,
        "type"
    );
}

#[test]
fn bare_names_still_mean_names_when_a_variable_has_another_meaning() {
    let i = interp(
        "(define mesh (make-network :topology mesh :dims (list 2 2)))
         (define torus (make-network :topology torus :dims (list 2 2)))
         (define lp 3)
         (target mesh :place anneal :schedule lp)",
    );
    assert_eq!(i.global("torus").as_deref(), Some("#<network torus:2x2>"));
    let t = i
        .traffic(None)
        .unwrap_or_else(|d| panic!("{}", i.render(&d, false)));
    assert_eq!(
        t.target.as_ref().and_then(|t| t.settings.word("schedule")),
        Some("lp")
    );
    // A variable holding a kind name is used for its value.
    let i = interp("(define kind \"ring\") (define r (make-network :topology kind :n 5))");
    assert_eq!(i.global("r").as_deref(), Some("#<network ring:5>"));
}
