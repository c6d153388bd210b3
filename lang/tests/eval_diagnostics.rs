//! How evaluation errors look to a user: each points at the form that caused it and says what to
//! do. Golden outputs (`UPDATE_EXPECT=1 cargo test -p ttdl-lang --test all eval_diagnostics::`).

use expect_test::{expect, Expect};
use ttdl_lang::Interpreter;

fn check(src: &str, expected: Expect) {
    let mut i = Interpreter::default();
    let d = match i.eval_source("prog.ttdl", src) {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(d) => d,
    };
    expected.assert_eq(&i.render(&d, false));
}

#[test]
fn unbound_with_suggestion() {
    check(
        "(defmessage m0 8)\n(define (send-all peers) (dolist (p peers) (write-stream mo p)))\n(send-all '())\n(send-al '())",
        expect![[r#"
            error[unbound]: unbound variable `send-al`
               ╭─[ prog.ttdl:4:2 ]
               │
             4 │ (send-al '())
               │  ───┬───  
               │     ╰───── not defined
            ───╯
              = help: did you mean `send-all`?
        "#]],
    );
}

#[test]
fn arity_mentions_the_definition() {
    check(
        "(define (area w h)\n  (* w h))\n(area 3)",
        expect![[r#"
            error[arity]: `area` takes 2 arguments, but 1 was given
               ╭─[ prog.ttdl:3:1 ]
               │
             1 │ (define (area w h)
               │         ─────┬────  
               │              ╰────── defined here
               │ 
             3 │ (area 3)
               │ ────┬───  
               │     ╰───── called with 1 argument
            ───╯
        "#]],
    );
}

#[test]
fn type_error_points_at_the_argument() {
    check(
        "(define n \"4\")\n(+ 1 n)",
        expect![[r#"
        error[type]: expected a number, found string `"4"`
           ╭─[ prog.ttdl:2:6 ]
           │
         2 │ (+ 1 n)
           │      ┬  
           │      ╰── this is a string
        ───╯
          = note: in argument 2 of `+`
    "#]],
    );
}

#[test]
fn an_improper_list_is_a_pair() {
    check(
        "(length (cons 1 2))",
        expect![[r#"
            error[type]: expected a list or a string, found pair `(1 . 2)`
               ╭─[ prog.ttdl:1:9 ]
               │
             1 │ (length (cons 1 2))
               │         ─────┬────  
               │              ╰────── this is a pair
            ───╯
              = note: in argument 1 of `length`
        "#]],
    );
}

#[test]
fn division_by_zero() {
    check(
        "(define (avg xs) (/ (apply + xs) (length xs)))\n(avg '())",
        expect![[r#"
        error[div-zero]: division by zero in `/`
           ╭─[ prog.ttdl:1:34 ]
           │
         1 │ (define (avg xs) (/ (apply + xs) (length xs)))
           │                                  ─────┬─────  
           │                                       ╰─────── this is zero
         2 │ (avg '())
           │ ────┬────  
           │     ╰────── in this call of `avg`
        ───╯
    "#]],
    );
}

#[test]
fn stream_form_outside_a_task() {
    check(
        "(deftask a b)\n(write-stream 8 b)",
        expect![[r#"
        error[no-task-context]: `write-stream` is used outside the context of any task
           ╭─[ prog.ttdl:2:1 ]
           │
         2 │ (write-stream 8 b)
           │ ─────────┬────────  
           │          ╰────────── no task to attach this to
        ───╯
          = help: stream forms describe one task's program: put them in the body of a `(define-comm NAME (TASK params…) …)` and call `(NAME task …)`, or wrap them in `(with-task TASK …)`
    "#]],
    );
}

#[test]
fn runaway_recursion() {
    check(
        "(define (depth n) (+ 1 (depth (+ n 1))))\n(depth 0)",
        expect![[r#"
            error[runaway-recursion]: runaway recursion: calls nested more than 10000 deep
               ╭─[ prog.ttdl:1:24 ]
               │
             1 │ (define (depth n) (+ 1 (depth (+ n 1))))
               │                        ───────┬───────  
               │                               ╰───────── this call went over the depth limit
            ───╯
              = help: make the recursive call in tail position (the last thing the procedure does), or raise the depth budget if the recursion really is this deep (`--max-depth` on the command line, `Limits::depth` when embedding)
        "#]],
    );
}

#[test]
fn runaway_iterate() {
    check(
        "(deftask a b)\n(defvar n 0)\n(define-comm spam (self peer) (iterate (set! n (+ n 1)) (write-stream 8 peer) 1000000000000))\n(spam a b)",
        expect![[r#"
            error[runaway-loop]: `iterate` would run 1000000000000 times (about 9000000000000 steps), more than the 99999999954 steps left in the budget
               ╭─[ prog.ttdl:3:31 ]
               │
             3 │ (define-comm spam (self peer) (iterate (set! n (+ n 1)) (write-stream 8 peer) 1000000000000))
               │                               ───────────────────────────────┬──────────────────────────────  
               │                                                              ╰──────────────────────────────── this loop runs 1000000000000 times
             4 │ (spam a b)
               │ ─────┬────  
               │      ╰────── in this call of `spam`
            ───╯
              = help: lower the count, or raise the step budget with `--max-steps 10000000000000` (or `Limits::steps` when embedding)
        "#]],
    );
}

#[test]
fn malformed_special_form() {
    check(
        "(let ((x 1) (y)) (if))",
        expect![[r#"
        error[syntax]: `if` takes a test, a then-form and an optional else-form
           ╭─[ prog.ttdl:1:18 ]
           │
         1 │ (let ((x 1) (y)) (if))
           │                  ──┬─  
           │                    ╰─── here
        ───╯
    "#]],
    );
}

#[test]
fn user_error() {
    check("(define (check-size n) (when (< n 1) (error \"size must be positive, got ~a\" n)))\n(check-size 0)", expect![[r#"
        error[error]: size must be positive, got 0
           ╭─[ prog.ttdl:1:38 ]
           │
         1 │ (define (check-size n) (when (< n 1) (error "size must be positive, got ~a" n)))
           │                                      ────────────────────┬────────────────────  
           │                                                          ╰────────────────────── raised here
         2 │ (check-size 0)
           │ ───────┬──────  
           │        ╰──────── in this call of `check-size`
        ───╯
    "#]]);
}

#[test]
fn peer_off_the_edge_of_a_mesh() {
    check(
        "(define net (make-network :topology mesh :dims (list 2 2)))\n(define-comm send-west (self) (write-stream 8 (neighbor net self west)))\n(send-west (car (network-tasks net)))",
        expect![[r#"
            error[type]: expected a task, found `nil`
               ╭─[ prog.ttdl:2:47 ]
               │
             2 │ (define-comm send-west (self) (write-stream 8 (neighbor net self west)))
               │                                               ────────────┬───────────  
               │                                                           ╰───────────── this is a nil
             3 │ (send-west (car (network-tasks net)))
               │ ──────────────────┬──────────────────  
               │                   ╰──────────────────── in this call of `send-west`
            ───╯
              = note: in argument 2 of `write-stream`
              = help: `neighbor` gives nil off the edge of a mesh: skip that peer, e.g. `(when peer (write-stream m peer))`, or use a torus
        "#]],
    );
}
