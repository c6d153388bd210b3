//! Procedure bodies compiled to machine code answer exactly as the closures do: the same value,
//! the same rendered diagnostics (message, labels, notes, call sites) and the same step count,
//! with the tier on and off (`ttdl_lang::eval::code::set_native`).
//!
//! A body is compiled to machine code only once its procedure has been called a number of times,
//! so every program here calls its procedures hundreds of times, and many change course after
//! the tier has taken over: an error on the 300th call, a global redefined after 1,000 calls, a
//! step budget running out in the middle of a hot procedure.

use proptest::prelude::*;
use ttdl_lang::eval::code::{set_native, set_native_after};

/// The tier on or off, procedures compiled after a few calls (so short programs reach the code).
fn tier(native: bool) {
    set_native(native);
    set_native_after(8);
}
use ttdl_lang::{Interpreter, Limits};

/// Turns the tier back on (the default) when a run ends, even by a panic, so a failing test
/// leaves its thread as it found it.
struct NativeOn;

impl Drop for NativeOn {
    fn drop(&mut self) {
        set_native(true);
    }
}

/// A program's printed value or full diagnostics (rendered, and their structure), and its step
/// count, on a fresh interpreter with the tier on or off. A panic is an answer too (its message,
/// and no steps), so the comparison that fails shows the program that made it.
///
/// With `TTDL_TRACE_PROGRAMS` set, each program is printed before it runs: the last one printed
/// is the one that crashed the process, if one does.
fn run_one(src: &str, limits: Limits, native: bool) -> (String, u64) {
    if std::env::var_os("TTDL_TRACE_PROGRAMS").is_some() {
        eprintln!("--- native {native}, {limits:?}\n{src}");
    }
    let run = std::panic::catch_unwind(|| {
        let _restore = NativeOn;
        tier(native);
        let mut i = Interpreter::new(limits);
        let out = answer(&mut i, "t.ttdl", src);
        (out, i.machine().steps)
    });
    run.unwrap_or_else(|panic| (format!("panic: {}", panic_message(&*panic)), u64::MAX))
}

/// A source's value or rendered diagnostics (and their structure), then what it printed.
fn answer(i: &mut Interpreter, name: &str, src: &str) -> String {
    let out = match i.eval_source(name, src) {
        Ok(v) => v,
        Err(d) => format!("{}\n{d:?}", i.render(&d, false)),
    };
    let printed = i.take_output();
    if printed.is_empty() {
        out
    } else {
        format!("{out}\n--- printed:\n{printed}")
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The program run with the tier on and off, which must agree; returns both (on, off).
fn run_both(src: &str, limits: Limits) -> [(String, u64); 2] {
    let both = [true, false].map(|native| run_one(src, limits, native));
    assert!(both[0] == both[1], "{}", differ(src, limits, &both));
    both
}

/// Sources evaluated in turn on one interpreter, as a REPL does (each with a fresh budget): each
/// one's value or diagnostics and steps, with the tier on and off, which must agree.
fn run_session(sources: &[&str], limits: Limits) {
    let both = [true, false].map(|native| {
        let run = std::panic::catch_unwind(|| {
            let _restore = NativeOn;
            tier(native);
            let mut i = Interpreter::new(limits);
            sources
                .iter()
                .enumerate()
                .map(|(k, src)| {
                    let out = answer(&mut i, &format!("in{k}.ttdl"), src);
                    (out, i.machine().steps)
                })
                .collect::<Vec<_>>()
        });
        run.unwrap_or_else(|panic| vec![(format!("panic: {}", panic_message(&*panic)), u64::MAX)])
    });
    if both[0] != both[1] {
        let (on, off) = (&both[0], &both[1]);
        let k = (0..on.len().max(off.len()))
            .find(|&k| on.get(k) != off.get(k))
            .unwrap_or(0);
        let none = (String::from("(nothing: an earlier source panicked)"), 0);
        let pair = [
            on.get(k).unwrap_or(&none).clone(),
            off.get(k).unwrap_or(&none).clone(),
        ];
        panic!(
            "{}\n(source {k} of {sources:#?})",
            differ(&sources.join("\n"), limits, &pair)
        );
    }
}

fn on_fresh_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// What a failing comparison shows: the program, and each way's answer and steps in plain text.
fn differ(src: &str, limits: Limits, both: &[(String, u64); 2]) -> String {
    let [(on, on_steps), (off, off_steps)] = both;
    format!(
        "machine code and closures differ on this program ({limits:?}):\n{src}\n\
         --- machine code, {on_steps} steps:\n{on}\n--- closures, {off_steps} steps:\n{off}\n"
    )
}

fn steps(n: u64) -> Limits {
    Limits {
        steps: n,
        ..Limits::default()
    }
}

fn depth(n: usize) -> Limits {
    Limits {
        depth: n,
        ..Limits::default()
    }
}

/// `defs`, then a tail loop calling `expr` (which may read the counter `i`) for `i` from 0 to
/// `n - 1`; the program's value is the last call's.
fn hot(n: u32, defs: &str, expr: &str) -> String {
    format!(
        "{defs}\n(define (drive i last) (if (= i {n}) last (drive (+ i 1) {expr})))\n(drive 0 nil)"
    )
}

/// As [`hot`], the loop summing the calls' values.
fn hot_sum(n: u32, defs: &str, expr: &str) -> String {
    format!(
        "{defs}\n(define (drive i acc) (if (= i {n}) acc (drive (+ i 1) (+ acc {expr}))))\n\
         (drive 0 0)"
    )
}

// The list programs of `lang/examples/bench_lists.rs`, from the same files.

const RECORDS: &str = include_str!("../examples/lists/records.ttdl");
const QSORT: &str = include_str!("../examples/lists/qsort.ttdl");
const TREE: &str = include_str!("../examples/lists/tree.ttdl");
const STRINGS: &str = include_str!("../examples/lists/strings.ttdl");
const RECUR: &str = include_str!("../examples/lists/recur.ttdl");
const MSORT: &str = include_str!("../examples/lists/msort.ttdl");
const ASSOC: &str = include_str!("../examples/lists/assoc.ttdl");
const QUEENS: &str = include_str!("../examples/lists/queens.ttdl");

/// The list benchmarks at small sizes.
fn bench_programs() -> Vec<String> {
    vec![
        format!("{RECORDS}(records-main 3000)"),
        format!("{QSORT}(qsort-main 300 3)"),
        format!("{TREE}(tree-main 8 4)"),
        format!("{STRINGS}(strings-main 1000)"),
        format!("{RECUR}(recur-main 500 4)"),
        format!("{MSORT}(msort-main 2000 3)"),
        format!("{ASSOC}(assoc-main 3000 3)"),
        format!("{QUEENS}(queens-main 6 8)"),
    ]
}

/// The forms of a body, each in a procedure called hundreds of times; several change course
/// once the tier has had time to take over (an error on a late call).
fn form_programs() -> Vec<String> {
    vec![
        // `if`, with and without an else branch.
        hot(
            300,
            "(define (f x) (if (< x 150) 'lo (if (= x 150) 'mid 'hi)))",
            "(list (f i) (f 150) (f (- 300 i)))",
        ),
        hot(
            300,
            "(define (f x) (if (> x 1000) 'never))",
            "(list (f i) (f 2000))",
        ),
        // `cond`: `else`, a clause with no body (its test's value), no clause taken.
        hot(
            400,
            "(define (f x l) (cond ((= x 0) 'zero) ((< x 0) 'neg) ((car l)) (else 'other)))",
            "(list (f (- i 200) (list i)) (f 0 nil) (f 5 '(#f)))",
        ),
        hot(
            300,
            "(define (f x) (cond ((= x -1) 'never) ((null? x) 'nil)))",
            "(f i)",
        ),
        // `=>` is no form of `cond` here: it is a variable, unbound, on the 300th call.
        hot(
            400,
            "(define (f x) (cond ((< x 299) x) (x => car)))",
            "(f i)",
        ),
        // `and`, `or`, `not`: values, empty forms, short circuits.
        hot(
            300,
            "(define (f x y) (list (and x y) (or x y) (not x) (and) (or) (and x) (or #f nil y) \
             (and x (car y))))",
            "(f (if (= (modulo i 2) 0) #f i) (list i))",
        ),
        hot(
            300,
            "(define (f x y) (or (and (< x 100) (car y)) (not (pair? y))))",
            "(f i (if (< i 290) (list i) 5))",
        ),
        // `let` and `let*`: shadowing, inits that see the outer bindings or the ones before.
        hot(
            300,
            "(define (f x) (let ((x (+ x 1)) (y x)) (let* ((x (* x 10)) (z (+ x y)) (x z)) \
             (list x y z))))",
            "(f i)",
        ),
        // A `let*` init reading a binding not made yet: the global, unbound, on the 300th call;
        // the diagnostic suggests the locals in scope.
        hot(
            400,
            "(define (f abc) (if (< abc 299) abc (let* ((xyz abd) (abd 1)) xyz)))",
            "(f i)",
        ),
        hot(
            400,
            "(define (f abc) (let ((xyz 1)) (if (< abc 299) abc (+ xyz abx))))",
            "(f i)",
        ),
        hot(
            400,
            "(define (f abc) (if (< abc 299) abc (abx abc)))",
            "(f i)",
        ),
        // `begin`, `set!` of a parameter and of a let-local.
        hot(
            300,
            "(define (f x) (begin (set! x (+ x 1)) (let ((y x)) (set! y (* y 2)) \
             (begin x (list x y)))))",
            "(f i)",
        ),
        hot(
            300,
            "(define (f x) (let ((acc '())) (set! acc (cons x acc)) (set! x 'done) \
             (set! acc (cons x acc)) acc))",
            "(f i)",
        ),
        // Quoted constants: lists, strings, symbols, nested.
        hot(
            300,
            "(define (f x) (list '(1 2 (3 \"four\" five)) \"str\" 'sym '() x '(a . b)))",
            "(f i)",
        ),
        hot(
            300,
            "(define (f x) (if (eq? x 'b) '(x y) (equal? x '(1 (2)))))",
            "(list (f 'b) (f '(1 (2))) (f i))",
        ),
        // Integer arithmetic: overflow on a late call, of a product and of a sum.
        hot(
            400,
            "(define (f x) (* x x))",
            "(f (if (= i 299) 4000000000 i))",
        ),
        hot(
            400,
            "(define big 9223372036854775000) (define (f x) (+ big x))",
            "(f (if (< i 299) i 1000))",
        ),
        hot(
            300,
            "(define big 3037000500) (define (f x) (- (* big big) x))",
            "(f i)",
        ),
        hot(
            300,
            "(define (f x) (- (- 0 9223372036854775807) x))",
            "(f (quotient i 200))",
        ),
        // Floats mixed with integers.
        hot(
            300,
            "(define (f x) (list (+ x 0.5) (* 1.5 x) (- x 2.25) (< x 2.5) (= x 2.0) (>= 3.0 x) \
             (/ x 4)))",
            "(f i)",
        ),
        // `car` of a non-pair, on a late call, in several places.
        hot(
            400,
            "(define (f l) (car l))",
            "(f (if (< i 299) (list i) i))",
        ),
        hot(
            400,
            "(define (f l) (+ 1 (car (cdr l))))",
            "(f (if (< i 299) (list i i) (list i)))",
        ),
        hot(
            400,
            "(define (f l) (let ((a (car l))) (cons a (cdr a))))",
            "(f (if (< i 299) (list (list i)) (list i)))",
        ),
        // A local procedure called: a builtin, a lambda, a user procedure, then a number.
        hot(
            400,
            "(define (twice x) (* 2 x)) (define (app f x) (f x)) \
             (define (pick i) (cond ((= i 299) 5) ((= (modulo i 3) 0) car) \
               ((= (modulo i 3) 1) (lambda (y) (list y y))) (else twice)))",
            "(app (pick i) (if (= (modulo i 3) 0) (list i) i))",
        ),
        // `apply`: of a builtin, of a user procedure, with a wrong count late.
        hot(
            400,
            "(define (g a b c) (+ a (* b c))) (define (f x) (list (apply + (list x 1 2)) \
             (apply g x (if (< x 299) (list 2 3) (list 2)))))",
            "(f i)",
        ),
        // A builtin with the wrong number of arguments, late.
        hot(
            400,
            "(define (f x) (if (< x 299) (car (list x)) (car (list x) x)))",
            "(f i)",
        ),
        hot(
            400,
            "(define (f x) (if (< x 299) (cons x x) (cons x)))",
            "(f i)",
        ),
        // A user procedure with the wrong number of arguments, late, each way.
        hot(
            400,
            "(define (g a b) (list a b)) (define (f x) (if (< x 299) (g x x) (g x)))",
            "(f i)",
        ),
        hot(
            400,
            "(define (g a) a) (define (f x) (list (if (< x 299) (g x) (g x x x))))",
            "(f i)",
        ),
        // List builtins and predicates.
        hot(
            300,
            "(define (f x) (let ((l (list x (+ x 1) (cons x '())))) \
             (list (length l) (null? l) (null? '()) (pair? l) (pair? x) (cons x l) \
             (eq? x x) (eq? l l) (eq? (list x) (list x)) (equal? (list x) (list x)) \
             (equal? 1 1.0) (eq? 'a 'a))))",
            "(f i)",
        ),
        hot(
            400,
            "(define (f x) (length x))",
            "(f (if (< i 299) (list i i) i))",
        ),
        // Comparisons with mixed types: numbers agree, others are errors, late.
        hot(
            300,
            "(define (f x) (list (< x 2.5) (> x 2) (<= x 2.0) (>= x 100.5) (= x 7) (= 7.0 x) \
             (< 1 x 299)))",
            "(f i)",
        ),
        hot(
            400,
            "(define (f x y) (< x y))",
            "(f i (if (< i 299) 5 \"a\"))",
        ),
        hot(400, "(define (f x y) (= x y))", "(f i (if (< i 299) 5 'a))"),
        hot(
            400,
            "(define (f x y) (>= x y))",
            "(f (if (< i 299) i (list i)) 3)",
        ),
        // Strings.
        hot(
            300,
            "(define (f x) (string-append \"n\" (number->string x) \"-\" (number->string 2.5)))",
            "(f i)",
        ),
        hot(
            400,
            "(define (f x) (string-append \"n\" x))",
            "(f (if (< i 299) \"s\" i))",
        ),
        // `modulo` and `quotient`, negative, and by zero late.
        hot(
            300,
            "(define (f x) (list (modulo x 7) (modulo (- x) 7) (modulo x -7) (quotient x 7) \
             (quotient (- x) 7)))",
            "(f i)",
        ),
        hot(400, "(define (f x y) (quotient x y))", "(f i (- 299 i))"),
        hot(400, "(define (f x y) (modulo x y))", "(f i (- 299 i))"),
        // Procedures of 0, 1, 2, 5 and 8 parameters.
        hot_sum(
            300,
            "(define (p0) 7) (define (p1 a) (+ a 1)) (define (p2 a b) (- a b)) \
             (define (p5 a b c d e) (+ a (* b c) (- d e))) \
             (define (p8 a b c d e f g h) (+ a b c d e f g (* h 2)))",
            "(p0) (p1 i) (p2 i 3) (p5 i 1 2 3 4) (p8 i 1 2 3 4 5 6 i)",
        ),
        hot(
            300,
            "(define (p8 a b c d e f g h) (if (= a 0) (list a b c d e f g h) \
               (p8 (- a 1) h a b c d e f)))",
            "(p8 (modulo i 11) 1 2 3 4 5 6 i)",
        ),
        // Many parameters: 16, 17; and a late call of the 16 with 15.
        hot_sum(
            400,
            "(define (p16 a b c d e f g h j k l m n o p q) (+ a q (* b p) (- o c))) \
             (define (p17 a b c d e f g h j k l m n o p q r) (if (= a 0) r (p17 (- a 1) \
               r a b c d e f g h j k l m n o p))) \
             (define (f x) (if (< x 299) (p16 x 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15) \
               (p16 x 1 2 3 4 5 6 7 8 9 10 11 12 13 14)))",
            "(f i) (p17 (modulo i 20) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 i)",
        ),
        // Tail calls between procedures of different arities, in `cond` and `let` bodies.
        hot(
            300,
            "(define (a n x) (cond ((= n 0) x) (else (b (- n 1) x 1)))) \
             (define (b n x y) (let ((z (+ x y))) (if (= n 0) z (a (- n 1) z))))",
            "(a (modulo i 20) i)",
        ),
        // Closures passed to user procedures.
        hot(
            200,
            "(define (my-map f l) (if (null? l) '() (cons (f (car l)) (my-map f (cdr l))))) \
             (define (scale k l) (my-map (lambda (x) (* x k)) l))",
            "(scale i '(1 2 3))",
        ),
        hot(
            300,
            "(define (my-fold f acc l) (if (null? l) acc (my-fold f (f acc (car l)) (cdr l)))) \
             (define (count-if p l) (my-fold (lambda (n x) (if (p x) (+ n 1) n)) 0 l))",
            "(count-if (lambda (x) (< x i)) '(5 50 150 250))",
        ),
        // Procedures returning procedures.
        hot(
            300,
            "(define (adder k) (lambda (x) (+ x k))) (define (compose f g) (lambda (x) (f (g x))))",
            "((compose (adder i) (adder 1)) 10)",
        ),
        hot(
            400,
            "(define (maker k) (if (< k 299) (lambda (x) (+ x k)) k))",
            "((maker i) 1)",
        ),
        // Closures made and kept: a counter over a shared binding, a closure seeing its
        // variable assigned after it was made, one kept in a global and called hot, three
        // levels of nesting, an unbound name and a wrong count of arguments late.
        "(define (make-counter) (let ((n 0)) (lambda () (set! n (+ n 1)) n))) \
         (define c (make-counter)) \
         (define (drive i last) (if (= i 500) (list last (c)) (drive (+ i 1) (c)))) (drive 0 0)"
            .to_string(),
        hot(
            300,
            "(define (f x) (let ((g (lambda () x))) (set! x (+ x 1)) (g)))",
            "(f i)",
        ),
        hot(
            400,
            "(define (adder k) (lambda (x) (+ x k))) (define add5 (adder 5))",
            "(add5 (if (< i 299) i 'x))",
        ),
        hot(
            300,
            "(define (f a) (lambda (b) (lambda (c) (list a b c (+ a b c)))))",
            "(((f 1) i) (* i 2))",
        ),
        hot(
            400,
            "(define (f abc) (lambda (xyz) (if (< xyz 299) xyz (abx xyz))))",
            "((f 1) i)",
        ),
        hot(
            400,
            "(define (f k) (lambda (x y) (+ x y k)))",
            "(if (< i 299) ((f i) i 1) ((f i) i))",
        ),
        // Named `let` loops calling flat procedures.
        "(define (sq x) (* x x)) (define (inc x) (+ x 1)) \
         (let loop ((i 0) (acc 0)) (if (= i 2000) acc (loop (inc i) (+ acc (modulo (sq i) 7)))))"
            .to_string(),
        "(define (step-of x) (if (= (modulo x 2) 0) (quotient x 2) (+ (* 3 x) 1))) \
         (define (collatz n) (let loop ((n n) (k 0)) (if (= n 1) k (loop (step-of n) (+ k 1))))) \
         (let outer ((i 1) (acc 0)) (if (= i 300) acc (outer (+ i 1) (+ acc (collatz i)))))"
            .to_string(),
        // Errors inside nested calls: the call sites on the way, late.
        hot(
            400,
            "(define (c x) (car x)) (define (b x) (list (c x))) (define (a x) (cons 1 (b x)))",
            "(a (if (< i 299) (list i) i))",
        ),
        hot(
            400,
            "(define (c x) (+ x 1)) (define (b x) (c x)) (define (a x) (b x))",
            "(a (if (< i 299) i 'sym))",
        ),
        // A call of itself in tail position with the arguments swapped, with a `let` before it,
        // and with its old parameters in the new arguments.
        hot(
            300,
            "(define (swap a b n) (if (= n 0) (list a b) (swap b a (- n 1))))",
            "(swap i 'x (modulo i 5))",
        ),
        hot(
            300,
            "(define (f x n) (let ((x (+ x 1)) (n (- n 1))) (if (< n 0) x (f (* x 2) n))))",
            "(f i (modulo i 7))",
        ),
        hot(
            300,
            "(define (fib a b n) (if (= n 0) a (fib b (+ a b) (- n 1))))",
            "(fib 0 1 (modulo i 60))",
        ),
        // Integer overflow at the edges: negating the least integer, subtracting past it.
        hot(
            400,
            "(define least (- -9223372036854775807 1)) (define (f x) (- x))",
            "(f (if (< i 299) i least))",
        ),
        hot(
            400,
            "(define least (- -9223372036854775807 1)) (define (f x y) (- x y))",
            "(f (if (< i 299) i least) 1)",
        ),
        hot(
            400,
            "(define (f x y) (* x y))",
            "(f (if (< i 299) i -4611686018427387905) 2)",
        ),
        // Empty and degenerate forms.
        hot(
            300,
            "(define (f x) (list (begin) (cond) (and) (or) (let () x) (let* () x) (if #f #f) \
             (cond (x)) (cond (#f 1) (else 2)) (or #f) (and 1 2 3)))",
            "(f i)",
        ),
        // Shared structure built and dropped in compiled code, read back whole at the end.
        "(define (f l) (let ((a (cons l l))) (if (pair? (car a)) (cdr a) a))) \
         (define (g l n) (if (= n 0) l (g (cons (f l) l) (- n 1)))) \
         (define (walk t) (if (pair? t) (+ (walk (car t)) (walk (cdr t))) 1)) \
         (let loop ((i 0) (acc '())) (if (= i 200) (list (length acc) (walk (car acc)) (car acc)) \
           (loop (+ i 1) (cons (g (list i \"s\") 3) acc))))"
            .to_string(),
        "(define (keep s n) (if (= n 0) s (keep s (- n 1)))) \
         (define (drive i acc) (if (= i 500) acc \
           (drive (+ i 1) (keep (string-append acc \"\") 3)))) \
         (string-append (drive 0 \"x\") (keep \"y\" 10))"
            .to_string(),
        // A procedure defined as a lambda at top level, and one closed over a `let`, calling
        // each other.
        hot(
            300,
            "(define f (lambda (x) (+ x 1))) \
             (define g (let ((k 10)) (lambda (x) (if (< x 0) x (f (* x k))))))",
            "(list (f i) (g i) (g -1))",
        ),
        // Compiled procedures called by builtins (`map`, `filter`, `reduce`, `apply`), and an
        // error inside one of them, late.
        hot(
            400,
            "(define (sq x) (* x x)) (define (small? x) (< x 5)) (define (add a b) (+ a b)) \
             (define (f n) (list (map sq (list n 1 2)) (filter small? (list n 1 9)) \
               (reduce add 0 (list n 1 2)) (apply add (list n 2))))",
            "(f (if (< i 299) i 'x))",
        ),
        // Macros expanded in a body; printing from a body (the printed text is compared too).
        hot(
            300,
            "(defmacro twice (x) (list '* 2 x)) (define (f y) (+ (twice y) 1))",
            "(f i)",
        ),
        hot(
            120,
            "(define (f x) (if (= (modulo x 40) 0) (println \"at\" x)) (format nil \"~a-~a\" x x))",
            "(f i)",
        ),
        // Errors later still: on the 500th and the 1,000th call.
        hot(
            600,
            "(define (g a b) (+ a b)) (define (f x) (if (= x 499) (g x) (g x 1)))",
            "(f i)",
        ),
        hot(
            1100,
            "(define (f x y) (* (+ x 3037000000) y))",
            "(f i (if (< i 999) 1 3037000000))",
        ),
        // Optional and rest parameters.
        hot(
            300,
            "(define (o a &optional b) (list a b)) (define (r a &rest more) (cons a more)) \
             (define (f x) (list (o x) (o x x) (r x) (r x 1 2 3) (apply r x (list x x))))",
            "(f i)",
        ),
        hot(
            400,
            "(define (o a &optional b) (list a b)) (define (f x) (if (< x 299) (o x) (o x x x)))",
            "(f i)",
        ),
        // Forms a compiled body may leave to the walk, with the body's variables.
        hot(
            300,
            "(define (f x) (let ((acc nil)) \
               (dolist (y (list 1 2 3)) (set! acc (cons (* x y) acc))) \
               (dotimes (k 2) (set! acc (cons k acc))) \
               (when (> x 100) (set! acc (cons 'big acc))) \
               (unless (> x 100) (set! acc (cons 'small acc))) \
               (list (case (modulo x 3) ((0) 'zero) (else 'other)) `(a ,x ,@acc))))",
            "(f i)",
        ),
        // `error`, late, deep in non-tail calls.
        hot(
            400,
            "(define (down n) (if (= n 0) (error \"bottom\" n) (+ 1 (down (- n 1))))) \
             (define (f x) (if (< x 299) x (down 50)))",
            "(f i)",
        ),
    ]
}

/// Non-tail recursion thousands deep, and the depth limit.
fn deep_programs() -> Vec<(String, Limits)> {
    let sum = "(define (sum l) (if (null? l) 0 (+ (car l) (sum (cdr l))))) \
               (define (upto n acc) (if (= n 0) acc (upto (- n 1) (cons n acc))))";
    let count = "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))";
    let d = Limits::default();
    vec![
        (format!("{sum} (sum (upto 5000 '()))"), d),
        (format!("{count} (count 5000)"), d),
        // Beyond the default depth: an error, then a value with the limit raised.
        (format!("{count} (count 50000)"), d),
        (format!("{sum} (sum (upto 50000 '()))"), depth(60_000)),
        // The depth limit, reached from a hot procedure, through one and two procedures.
        (
            format!("{count} (count 50) (count 60) (count 99) (count 150)"),
            depth(100),
        ),
        (
            "(define (a n) (if (= n 0) 0 (+ 1 (b (- n 1))))) (define (b n) (* 1 (a n))) \
             (define (loop i) (if (= i 300) (a 200) (begin (a 20) (loop (+ i 1))))) (loop 0)"
                .to_string(),
            depth(100),
        ),
        // Non-tail recursion through a procedure and one that makes a closure and calls it,
        // 8,000 calls deep.
        (
            "(define (a n) (if (= n 0) 0 (+ 1 (b (- n 1))))) \
             (define (b n) (let ((k (lambda () n))) (a (k)))) (a 4000)"
                .to_string(),
            d,
        ),
        // The depth limit exactly: after warming up, 99 and 100 levels fit in 100 (or not).
        (
            format!(
                "{count} (define (w i) (if (= i 50) 0 (begin (count 20) (w (+ i 1))))) \
                     (w 0) (list (count 97) (count 98) (count 99))"
            ),
            depth(100),
        ),
        (
            format!(
                "{count} (define (w i) (if (= i 50) 0 (begin (count 20) (w (+ i 1))))) \
                     (w 0) (count 100)"
            ),
            depth(100),
        ),
        // A closure recursing through the global that holds it, thousands deep.
        (
            "(define (mk k) (lambda (n) (if (= n 0) k (+ 1 (g (- n 1)))))) (define g (mk 7)) \
             (list (g 5000) (g 10))"
                .to_string(),
            d,
        ),
        // An error at the bottom of thousands of compiled frames, each a call site.
        (
            "(define (down n) (if (= n 0) (car n) (+ 1 (down (- n 1))))) (down 5000)".to_string(),
            d,
        ),
        // A runaway non-tail recursion stops at the default depth.
        ("(define (r n) (+ 1 (r n))) (r 1)".to_string(), d),
    ]
}

/// Tail loops and mutual tail recursion of a million calls, in constant stack.
fn long_programs() -> Vec<String> {
    vec![
        "(define (l n acc) (if (= n 0) acc (l (- n 1) (+ acc 1)))) (l 1000000 0)".to_string(),
        "(let loop ((i 0)) (if (< i 100000) (loop (+ i 1)) i))".to_string(),
        // Mutual tail recursion between two and three procedures.
        "(define (ev n) (if (= n 0) #t (od (- n 1)))) \
         (define (od n) (if (= n 0) #f (ev (- n 1)))) (list (ev 1000000) (od 1001))"
            .to_string(),
        "(define (p n acc) (if (= n 0) acc (q (- n 1) (+ acc 1)))) \
         (define (q n acc) (cond ((= n 0) acc) (else (r (- n 1) (+ acc 2))))) \
         (define (r n acc) (let ((m (- n 1))) (if (< m 0) acc (p m (+ acc 3))))) \
         (p 1000000 0)"
            .to_string(),
    ]
}

/// Globals redefined while calls are in flight, after the procedures have been hot.
fn redefinition_programs() -> Vec<String> {
    vec![
        // `car` redefined inside a running loop, after 1,000 calls.
        "(define (f l) (car l)) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (set! car (lambda (x) 'mine))) \
             (drive (+ i 1) (if (eq? (f (list i)) 'mine) (+ acc 1000) (+ acc 1)))))) \
         (drive 0 0)"
            .to_string(),
        "(define (f l) (car l)) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (set! car cdr)) \
             (drive (+ i 1) (if (pair? (f (list i i))) (+ acc 1000) (+ acc 1)))))) \
         (drive 0 0)"
            .to_string(),
        // Predicates and accessors in tests, redefined.
        "(define (f l) (if (null? (cdr l)) (car l) 'long)) \
         (define (drive i acc) (if (= i 1500) acc \
           (begin (if (= i 1000) (begin (set! null? pair?) (set! cdr car))) \
             (drive (+ i 1) (cons (f (list i)) acc))))) \
         (let ((l (drive 0 '()))) (list (length l) (f '(1)) (car l) (car (cdr (cdr l)))))"
            .to_string(),
        // Stretches that read the pristine flag once: after a call that clears it (the hook),
        // in a loop of their own, with `let`s (one set of slots for both copies), in tests whose
        // values are kept, and ending in calls in tail position.
        "(define (hook x) (if (= x 700) (set! * +))) \
         (define (walk l acc) (if (null? l) acc \
           (begin (hook (car l)) (walk (cdr l) (+ acc (* (car l) (- (car l) 1))))))) \
         (define (count n acc) (if (= n 0) acc (count (- n 1) (cons n acc)))) \
         (walk (count 1000 '()) 0)"
            .to_string(),
        "(define (ok? row dist placed) (if (null? placed) #t \
           (and (not (= (car placed) (+ row dist))) (not (= (car placed) (- row dist))) \
                (ok? row (+ dist 1) (cdr placed))))) \
         (define (drive i n) (if (= i 0) n \
           (begin (if (= i 300) (begin (set! = eq?) (set! not null?))) \
             (drive (- i 1) (if (ok? (modulo i 8) 1 (list 1 5 2 6 3)) (+ n 1) n))))) \
         (drive 600 0)"
            .to_string(),
        "(define (f x) (let ((a (+ x 1)) (b (* x 2))) (if (< a b) (- b a) (let* ((c (- a b)) (d (+ c c))) (list c d))))) \
         (define (drive i acc) (if (= i 0) acc \
           (begin (if (= i 500) (set! - (lambda (x y) (* 10 x)))) (drive (- i 1) (cons (f (modulo i 5)) acc))))) \
         (let ((l (drive 1000 '()))) (list (length l) (car l) (car (cdr l))))"
            .to_string(),
        "(define (f x l) (if (or (and (pair? l) (car l)) (< x 3)) (+ x 1) (- x 1))) \
         (define (drive i acc) (if (= i 0) acc \
           (begin (if (= i 400) (set! car (lambda (p) #f))) \
             (drive (- i 1) (+ acc (f (modulo i 7) (if (= (modulo i 3) 0) '() (list i)))))))) \
         (drive 800 0)"
            .to_string(),
        "(define (g x) (* x 3)) \
         (define (f x) (if (< x 2) (g (+ x 10)) (+ x (* x 2)))) \
         (define (drive i acc) (if (= i 0) acc \
           (begin (if (= i 500) (set! < (lambda (a b) #t))) (drive (- i 1) (+ acc (f (modulo i 4))))))) \
         (drive 1000 0)"
            .to_string(),
        // A `define` inside a body is local: the hot procedures still see the builtin.
        "(define (f l) (car l)) \
         (define (drive i acc) (if (= i 1500) acc \
           (begin (if (= i 1000) (define (car x) 'mine)) (drive (+ i 1) (+ acc (f (list i))))))) \
         (drive 0 0)"
            .to_string(),
        // `+` redefined; the loop counts with `-`.
        "(define (f x) (+ x 1)) \
         (define (drive i acc) (if (= i 0) acc \
           (begin (if (= i 1000) (set! + *)) (drive (- i 1) (cons (f i) acc))))) \
         (let ((l (drive 2000 '()))) (list (car l) (length l)))"
            .to_string(),
        "(define (f x) (< x 10)) \
         (define (drive i n) (if (= i 0) n \
           (begin (if (= i 1000) (set! < >)) (drive (- i 1) (if (f i) (- n -1) n))))) \
         (drive 2000 0)"
            .to_string(),
        // A procedure redefined from outside it, while it is hot.
        "(define (g x) (* x 2)) (define (f x) (g x)) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (set! g (lambda (x) (- x)))) (drive (+ i 1) (+ acc (f i)))))) \
         (drive 0 0)"
            .to_string(),
        // ... redefined with another arity: the hot caller's call is now wrong.
        "(define (g x) (* x 2)) (define (f x) (g x)) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (set! g (lambda (x y) (- x)))) (drive (+ i 1) (+ acc (f i)))))) \
         (drive 0 0)"
            .to_string(),
        // ... to something that is not a procedure.
        "(define (g x) (* x 2)) (define (f x) (g x)) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (set! g 5)) (drive (+ i 1) (+ acc (f i)))))) \
         (drive 0 0)"
            .to_string(),
        // A procedure that `set!`s itself while running: the calls in flight finish with the old
        // body, the next call takes the new one.
        "(define (f n) (if (= n 500) (set! f (lambda (n) 'replaced))) n) \
         (define (drive i acc) (if (= i 1000) acc (drive (+ i 1) (cons (f i) acc)))) \
         (let ((l (drive 0 '()))) (list (car l) (length l) (car (cdr (cdr (cdr l))))))"
            .to_string(),
        "(define (f n) (if (= n 0) 0 \
           (begin (if (= n 700) (set! f (lambda (n) 1000))) (+ 1 (f (- n 1)))))) \
         (define (drive i acc) (if (= i 300) acc (drive (+ i 1) (+ acc (f 5))))) \
         (list (drive 0 0) (f 900) (f 900))"
            .to_string(),
        // A tail-recursive loop that swaps itself for another loop half way.
        "(define (loop n acc) (if (= n 0) acc \
           (begin (if (= n 5000) (set! loop (lambda (n acc) (if (= n 0) (list 'other acc) \
             (loop (- n 1) (+ acc 2)))))) (loop (- n 1) (+ acc 1))))) \
         (loop 10000 0)"
            .to_string(),
        // Globals redefined while hot frames of a non-tail recursion are waiting on the inner
        // call: the frames, once resumed, call the new definition.
        "(define round 0) \
         (define (walk n) (if (= n 0) (begin (if (= round 300) (set! + -)) 0) (+ (walk (- n 1)) n))) \
         (define (drive i acc) (if (= i 0) acc \
           (begin (set! round (- round -1)) (drive (- i 1) (cons (walk 10) acc))))) \
         (drive 400 '())"
            .to_string(),
        "(define round 0) \
         (define (walk l n) (if (= n 0) (begin (if (= round 300) (set! car cdr)) 0) \
           (+ (walk l (- n 1)) (car l)))) \
         (define (drive i acc) (if (= i 400) acc \
           (begin (set! round (+ round 1)) (drive (+ i 1) (+ acc (walk (list i) 10)))))) \
         (drive 0 0)"
            .to_string(),
        "(define round 0) (define (g x) x) \
         (define (walk n) (if (= n 0) (begin (if (= round 300) (set! g (lambda (x) (* x 100)))) 0) \
           (+ (walk (- n 1)) (g n)))) \
         (define (drive i acc) (if (= i 400) acc \
           (begin (set! round (+ round 1)) (drive (+ i 1) (cons (walk 10) acc))))) \
         (drive 0 '())"
            .to_string(),
        "(define round 0) (define (g x) x) \
         (define (walk n) (if (= n 0) (begin (if (= round 300) (set! g (lambda (x y) x))) 0) \
           (+ (walk (- n 1)) (g n)))) \
         (define (drive i acc) (if (= i 400) acc \
           (begin (set! round (+ round 1)) (drive (+ i 1) (+ acc (walk 10)))))) \
         (drive 0 0)"
            .to_string(),
        // A procedure's own name, assigned by another procedure while the first loops on it in
        // tail position (a call of itself by name is a jump only while the name holds it), and
        // while it recurses.
        "(define (hook n) (if (= n 5000) (set! loop (lambda (n acc) (list 'other n acc))))) \
         (define (loop n acc) (if (= n 0) acc (begin (hook n) (loop (- n 1) (+ acc 1))))) \
         (list (loop 10000 0) (loop 3 0))"
            .to_string(),
        "(define (hook n) (if (= n 500) (set! count (lambda (n) 1000)))) \
         (define (count n) (if (= n 0) 0 (begin (hook n) (+ 1 (count (- n 1)))))) \
         (list (count 300) (count 800) (count 5))"
            .to_string(),
        "(define (hook n) (if (= n 500) (set! count 7))) \
         (define (count n) (if (= n 0) 0 (begin (hook n) (+ 1 (count (- n 1)))))) \
         (list (count 300) (count 800))"
            .to_string(),
        // A builtin assigned its own value, and one the procedures do not use: the globals are
        // no longer as installed, and the answers are the same.
        "(define (f l) (if (pair? l) (+ (car l) 1) 0)) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (begin (set! car car) (set! reverse list))) \
             (drive (+ i 1) (+ acc (f (list i))))))) \
         (drive 0 0)"
            .to_string(),
        // `+` replaced by a procedure that fails: the error passes through compiled frames.
        "(define (f x) (+ x 1)) (define (g x) (* 2 (f x))) \
         (define (drive i acc) (if (= i 2000) acc \
           (begin (if (= i 1000) (set! + (lambda (a b) (car a)))) (drive (- i -1) (cons (g i) acc))))) \
         (drive 0 '())"
            .to_string(),
        // A global variable the hot procedure reads, assigned while in flight.
        "(define k 1) (define (f x) (+ x k)) \
         (define (g n) (if (= n 0) 0 (begin (if (= n 100) (set! k 1000)) (+ (f n) (g (- n 1)))))) \
         (define (drive i acc) (if (= i 20) acc (drive (+ i 1) (+ acc (g 200))))) (drive 0 0)"
            .to_string(),
    ]
}

/// Programs on which the tier once answered otherwise than the closures, each the smallest found.
fn known_differences() -> Vec<String> {
    vec![
        // An `else` clause with no body: `#t`, as the closures (the tier answered `nil`).
        hot(20, "(define (f) (cond (else)))", "(f)"),
    ]
}

#[test]
fn known_differences_answer_as_closures() {
    for p in known_differences() {
        run_both(&p, Limits::default());
    }
}

#[test]
fn forms_answer_as_closures() {
    for p in form_programs() {
        run_both(&p, Limits::default());
    }
}

/// Streams written and read from compiled procedures in the context of a task, and the task and
/// message limits reached from them: the same answers, and the same traffic built.
#[test]
fn communication_answers_as_closures() {
    let talk = "(deftask a b) \
        (define (send-n to n) (if (= n 0) 'sent (begin (write-stream 8 to) (send-n to (- n 1))))) \
        (define (recv-n from n) (if (= n 0) 'got (begin (read-stream 8 from) (recv-n from (- n 1))))) \
        (define-comm talk (self peer n) (send-n peer n)) \
        (define-comm hear (self peer n) (recv-n peer n))";
    let limited = |tasks, messages| Limits {
        tasks,
        messages,
        ..Limits::default()
    };
    for (p, limits) in [
        (
            format!("{talk} (list (talk a b 300) (hear b a 300))"),
            Limits::default(),
        ),
        (
            format!("{talk} (list (talk a b 300) (hear b a 299))"),
            Limits::default(),
        ),
        (format!("{talk} (talk a b 300)"), limited(1000, 200)),
        // Outside any task's context, once `send-n` is compiled.
        (
            format!("{talk} (list (talk a b 300) (send-n a 5))"),
            Limits::default(),
        ),
        (
            hot(300, "(define (mk i) (task i))", "(mk i)"),
            limited(200, 1000),
        ),
    ] {
        let both = [true, false].map(|native| {
            let _restore = NativeOn;
            set_native(native);
            let mut i = Interpreter::new(limits);
            let out = answer(&mut i, "t.ttdl", &p);
            let traffic = match i.traffic(None) {
                Ok(t) => format!("{} tasks, {} messages", t.tasks.len(), t.messages.len()),
                Err(d) => i.render(&d, false),
            };
            (format!("{out}\n--- traffic: {traffic}"), i.machine().steps)
        });
        assert!(both[0] == both[1], "{}", differ(&p, limits, &both));
    }
}

/// Odd corners, each in a procedure called 20 times on 0 to 19: builtins shadowed by locals,
/// arithmetic and comparisons of other arities, other names of builtins, indexes out of range,
/// `else` not last, a procedure's own name shadowed.
#[test]
fn corners_answer_as_closures() {
    for body in [
        "(let ((car cdr)) (car (list x 1)))",
        "(let ((+ -)) (+ x 1))",
        "(let ((f 5)) (+ f x))",
        "(list (+) (*) (+ x) (- x) (- x 1 2 3) (< x) (* x 2 3))",
        "(list (< x 1 2) (= x x x) (> 9 x 0) (<= x x 1000) (>= x x))",
        "(list (null x) (consp x) (first (list x)) (rest (list x)) (second (list 1 x)) \
         (third (list 1 2 x)) (eql x x) (mod x 3))",
        "(list (nth x '(1 2 3)) (list-ref '(1 2 3) (- 19 x)) (length '(1 2 . 3)))",
        "(list (eq? \"a\" \"a\") (eq? 1.5 1.5) (eq? x x) (eq? '() nil) (= x 1.0))",
        "(list (caddr (list x x)) (cddr (list x)) (car (cdr (cdr (cdr (list x x))))))",
        "(cond (else x) (#t 2))",
        "(list ((if (> x 5) car cdr) '(1 2)) :key t nil 'x)",
        "(if (< x 10) (f (+ x 1)) x)",
        "(nth (- x 10) '(1 2 3))",
        "(+ x (if (< x 15) 1 #t))",
    ] {
        run_both(
            &hot(20, &format!("(define (f x) {body})"), "(f i)"),
            Limits::default(),
        );
    }
    run_both(
        &hot(20, "(define (f car) (car 1))", "(f (if (< i 15) - 5))"),
        Limits::default(),
    );
}

/// A variable's last read takes its value over (`car` or `cdr` of a list held nowhere else frees
/// the cell then and there): lists consumed as they are walked, a variable read again after a
/// read lent to a call whose arguments are still being made, the same variable twice in one
/// call, a value shared elsewhere, `let` bindings, and `car` and `cdr` redefined while the
/// procedures that read them last run.
fn last_read_programs() -> Vec<String> {
    vec![
        // Consumed by a non-tail recursion, a tail loop, and a partition into two lists.
        hot_sum(
            200,
            "(define (build n acc) (if (= n 0) acc (build (- n 1) (cons n acc))))\n\
             (define (sum l) (if (null? l) 0 (+ (car l) (sum (cdr l)))))\n\
             (define (len l n) (if (null? l) n (len (cdr l) (+ n 1))))\n\
             (define (split l lo hi) (cond ((null? l) (cons lo hi)) \
               ((< (car l) 20) (split (cdr l) (cons (car l) lo) hi)) \
               (else (split (cdr l) lo (cons (car l) hi)))))",
            "(+ (sum (build 40 '())) (len (build i '()) 0) (length (car (split (build 40 '()) '() '()))))",
        ),
        // Read once lent, then for the last time in a later argument of the same call.
        hot(
            300,
            "(define (f t) (list t (car t) (cdr t)))\n\
             (define (g t) (eq? t (cdr t)))\n\
             (define (h t) (+ (length t) (car t)))\n\
             (define (k t) (cons t t))\n\
             (define (m t) (and t (car t)))",
            "(list (f (list i 2)) (g (list i)) (h (list i 1)) (k (list i)) (m (list i)) (m #f))",
        ),
        // `eq?` made in place on every kind, in a test and as a value, on lists read last.
        hot(
            300,
            "(define (same a b) (if (eq? a b) 'yes 'no))\n\
             (define (all x l s) (list (eq? x x) (eq? x (+ x 0)) (eq? 'a 'a) (eq? 'a 'b) \
               (eq? :k :k) (eq? nil '()) (eq? l l) (eq? l (list x)) (eq? s s) (eq? s \"t\") \
               (eq? 1.5 1.5) (eq? #t #t) (eq? #f nil) (eq? x 'a) (eq? car car) (same l (cdr l))))",
            "(let ((l (list i))) (list (all i l \"t\") (same i i) (same l l) (same (list 1) (list 1))))",
        ),
        // Symbols, keywords and `nil` made by Rust carry nothing past their payload in their
        // word: `eq?` compares the payload only.
        hot(
            300,
            "(define (f x y) (list (eq? x y) (if (eq? x 'b) 1 2) (eq? y nil) (eq? x :k)))",
            "(list (f 'b 'b) (f 'c (car (list 'c))) (f :k nil) (f i (cdr (list i))))",
        ),
        // `not` of a test, in `if`, `and`, `or` and `cond`, its value kept; then `=` and `not`
        // redefined while the procedures that make them in place are hot.
        hot(
            600,
            "(define real= =)\n(define real-not not)\n\
             (define (ok? row dist placed) (if (null? placed) #t \
               (and (not (= (car placed) (+ row dist))) (not (eq? (car placed) row)) \
                    (ok? row (+ dist 1) (cdr placed)))))\n\
             (define (f l) (list (or (not (null? l)) 'empty) (cond ((not (pair? l))) (else 'pair)) \
               (if (not (< (length l) 2)) 'long 'short)))",
            "(begin (if (= i 300) (set! = (lambda (a b) (if (real= a b) 'yes nil)))) \
               (if (= i 450) (set! not (lambda (x) (if (real-not x) 'no nil)))) \
               (list (ok? (modulo i 5) 1 (list 1 3 0)) (f (list i)) (f nil) (f (list 1 2))))",
        ),
        // A list the caller keeps: its cells are only counted down, never freed under it.
        hot(
            300,
            "(define (snd l) (car (cdr l)))\n\
             (define (both l) (list (snd l) (car l) l))",
            "(let ((l (list i (+ i 1) (+ i 2)))) (list (both l) (snd l) l))",
        ),
        // `let` and `let*` bindings read last inside calls and tests.
        hot(
            300,
            "(define (f x) (let ((a (list x x)) (b (cons x '()))) \
               (let* ((c (car a)) (d (cdr a))) (if (null? d) b (list c (car d) b)))))",
            "(f i)",
        ),
        // Arguments, a head and a value that are not lists.
        hot(
            300,
            "(define (ap f x) (f x))\n\
             (define (tw f) (f (f 1)))",
            "(list (ap (lambda (y) (* y i)) 3) (tw (lambda (z) (+ z i))) (ap car (list i)))",
        ),
        // `cdr` redefined (and put back) while procedures whose last read is a `cdr` are hot.
        hot(
            600,
            "(define real-cdr cdr)\n\
             (define (walk l n) (if (null? l) n (walk (cdr l) (+ n 1))))\n\
             (define (sum l) (if (null? l) 0 (+ (car l) (sum (cdr l)))))",
            "(begin (if (= i 300) (set! cdr (lambda (p) (real-cdr p)))) \
               (list (walk (list 1 2 3 i) 0) (sum (list i 1 2))))",
        ),
        // An error in the middle of a list consumed by its last reads.
        hot(
            400,
            "(define (sum l) (if (null? l) 0 (+ (car l) (sum (cdr l)))))",
            "(sum (list 1 2 (if (= i 350) 'x 3) 4))",
        ),
    ]
}

/// `modulo` made in place: the divisor's sign, both signs of each, a divisor of -1 and of the
/// least integer, and a divisor of 0 (the builtin's error, on a late call).
#[test]
fn modulo_answers_as_closures() {
    run_both(
        &hot(
            400,
            "(define (m a b) (modulo a b))\n\
             (define (all a) (list (m a 3) (m a -3) (m (- 0 a) 3) (m (- 0 a) -3) (m a 1) (m a -1) \
               (m -9223372036854775807 -1) (m a 9223372036854775807)))",
            "(if (= i 390) (m i 0) (all i))",
        ),
        Limits::default(),
    );
}

/// Halves of a variable's pairs read borrowed and once (`borrowed_halves`): held while a
/// later argument reads the variable for the last time (a list freed under them otherwise),
/// nested, of improper and short lists (the table's `nil`), of every kind, on paths that do
/// and do not read them first.
fn borrowed_half_programs() -> Vec<String> {
    vec![
        hot_sum(
            300,
            "(define (fresh i) (list (list i \"s\") (list i i) i))\n\
             (define (eat l) (if (null? l) 0 (+ 1 (eat (cdr l)))))\n\
             (define (f l) (list (car l) (eat l) (car (car l)) (cadr (car l)) (car (cadr l))))\n\
             (define (g l) (length (f l)))",
            "(g (fresh i))",
        ),
        hot_sum(
            300,
            "(define (f l) (list (cadr l) (cddr l) (caddr l) (car (cdr l)) (cdr (cdr l))))\n\
             (define (g i) (length (f (if (= (modulo i 3) 0) (cons i (cons i i)) \
               (if (= (modulo i 3) 1) (list i) (list i \"a\" 'b))))))",
            "(g i)",
        ),
        hot_sum(
            300,
            "(define (f l k) (if (and (pair? l) (< k 2)) \
               (if (= (car l) k) (+ (car l) 100) (- (car l) (car (cdr l)))) \
               (cond ((null? l) 0) ((= k 5) (car l)) (else (+ (car l) (car l))))))",
            "(f (list (modulo i 4) i) (modulo i 7))",
        ),
        hot_sum(
            300,
            "(define (walk l acc) (if (null? l) acc \
               (walk (cdr l) (if (string? (car l)) (+ acc (string-length (car l))) \
                 (+ acc (car l))))))",
            "(walk (list 1 \"ab\" 3 \"cde\") 0)",
        ),
    ]
}

/// Values of every kind consed in place, taken out of cells by a last read (the cell's only
/// count and a shared one) and read borrowed: a string, a closure, a message and a float are
/// packed in a cell as other words than they hold (`packed_as_held`), atoms and pairs as theirs.
fn kinds_in_cells_programs() -> Vec<String> {
    let kinds = [
        "(string-append \"a\" (number->string i))",
        "\"const\"",
        "(lambda (x) (+ x i))",
        "1.5",
        "'sym",
        "(list i)",
        "car",
    ];
    let mut v = Vec::new();
    for k in kinds {
        let defs = format!(
            "(define (mk i) (list {k} {k} i))\n\
             (define (fst l) (car l))\n\
             (define (walk l acc) (if (null? l) acc (walk (cdr l) (car l))))\n\
             (define (two x y) (cons x (cons y '())))\n\
             (define (peek l) (if (eq? (car l) (cadr l)) 1 (if (null? (caddr l)) 2 3)))\n\
             (define (kind x) (cond ((string? x) 1) ((procedure? x) 2) ((pair? x) 3) (else 4)))"
        );
        v.push(hot_sum(
            300,
            &defs,
            "(+ (kind (fst (mk i))) (kind (walk (mk i) 0)) (kind (car (two (fst (mk i)) i))) \
              (let ((l (mk i))) (+ (kind (fst l)) (kind (walk l 0)) (peek l) (length l))) \
              (kind (car (cdr (two i (car (mk i)))))))",
        ));
    }
    v
}

#[test]
fn kinds_in_cells_answer_as_closures() {
    for p in kinds_in_cells_programs() {
        let [(out, _), _] = run_both(&p, Limits::default());
        assert!(!out.contains("error"), "{p}\n{out}");
    }
}

/// Parameters lent by their callers (`lent`, those a loop walks): walked, returned, passed on
/// to a call of itself under another name with something else than a view of them (the call
/// goes the general way), read by a `cdr` redefined midway, lent to a callee that fails, and
/// lent down a recursion deep enough for the calls through Rust, and deeper than the limit.
fn lent_programs() -> Vec<String> {
    let nest = "(define (nest n acc) (if (= n 0) acc (nest (- n 1) (list acc n))))\n\
                (define (sum l acc) (cond ((null? l) acc) \
                  ((pair? (car l)) (sum (cdr l) (+ acc (sum (car l) 0)))) \
                  (else (sum (cdr l) (+ acc (car l))))))";
    vec![
        hot_sum(
            300,
            "(define (len l n) (if (null? l) n (len (cdr l) (+ n 1))))\n\
             (define (final l) (if (null? (cdr l)) l (final (cdr l))))\n\
             (define (f l n) (cond ((= n 0) (length l)) ((= n 1) (f (cdr l) 0)) \
               (else (g (list n n n) (- n 1)))))\n\
             (define g f)",
            "(+ (len (list 1 2 i) 0) (car (final (list i \"s\" i))) (f (list 1 2) (modulo i 4)))",
        ),
        "(define (walk l acc) (if (null? l) acc (walk (cdr l) (+ acc (car l)))))\n\
         (define (drive i acc) (if (= i 600) acc \
           (begin (if (= i 300) (set! cdr (lambda (p) (if (null? (rest p)) '() (rest p))))) \
             (drive (+ i 1) (+ acc (walk (list i 1 2 3) 0))))))\n\
         (drive 0 0)"
            .to_string(),
        "(define (bad l n) (if (= n 0) (+ 1 (car (car l))) (bad (cdr l) (- n 1))))\n\
         (define (drive i acc) (if (= i 300) acc \
           (drive (+ i 1) (+ acc (bad (list 0 (list i)) 1)))))\n\
         (drive 0 0)\n(bad (list 5 6) 1)"
            .to_string(),
        format!(
            "{nest}\n(define (drive i acc) (if (= i 20) acc \
                 (drive (+ i 1) (+ acc (sum (nest 3000 '()) 0)))))\n(drive 0 0)"
        ),
        format!(
            "{nest}\n(define (drive i acc) (if (= i 20) acc \
                 (drive (+ i 1) (+ acc (sum (nest 30 '()) 0)))))\n(drive 0 0)\n\
                 (sum (nest 20000 '()) 0)"
        ),
    ]
}

/// Calls in tail position made directly (a procedure that is not a leaf calling a leaf, see
/// `native/tails.rs`), and `length` made in place.
fn tail_call_programs() -> Vec<(String, Limits)> {
    let d = Limits::default();
    // `a` calls the leaf `b` in tail position; `b` calls `a` back, not in tail position.
    let ab = "(define (a n) (if (= n 0) 0 (b n))) (define (b n) (+ 1 (a (- n 1))))";
    // Two leaves, each calling its own name in tail position, and a procedure that is not a
    // leaf; their names swapped once they are hot.
    let swap = "(define (p n) (if (= n 0) 'p (p (- n 1)))) \
                (define (q n) (if (= n 0) (done n) (q (- n 1)))) (define (done n) 'q) \
                (define (warm i) (if (= i 2000) 'warm (begin (p 3) (q 3) (warm (+ i 1))))) \
                (warm 0) (define t p) (set! p q) (set! q t)";
    vec![
        (format!("{ab} (list (a 10) (a 5000))"), d),
        (format!("{ab} (a 40000)"), depth(50_000)),
        (format!("{ab} (a 20000)"), depth(10_000)),
        (format!("{swap} (list (p 1000000) (q 1000000))"), d),
        (format!("{swap} (list (p 10) (q 10) (p 0) (q 0))"), d),
        // An error in the leaf, given its call sites as through Rust.
        (
            hot_sum(
                2000,
                "(define (leaf x l) (if (= x 1999) (car x) (length l))) \
                 (define (f x) (if (< x 0) 0 (leaf x (list x x))))",
                "(f i)",
            ),
            d,
        ),
        // A leaf whose own call in tail position goes through Rust (a variable's procedure):
        // the caller hands it on.
        (
            hot_sum(
                3000,
                "(define (inc y) (+ y 1)) (define (dec y) (- y 1)) \
                 (define (b f x) (f x)) (define (a x) (if (< x 0) 0 (b (if (odd? x) inc dec) x)))",
                "(a i)",
            ),
            d,
        ),
        // Lent parameters of the leaf: borrowed from the caller's variables and from under
        // them, the caller's other variables let go before the call, its own lent ones kept.
        (
            hot_sum(
                3000,
                "(define (walk l n) (if (null? l) n (walk (cdr l) (+ n (car l))))) \
                 (define (f a b) (if (null? a) 0 (walk b (length a)))) \
                 (define (g a b) (if (null? a) 0 (walk (cdr b) (car a)))) \
                 (define (h a b) (let ((c (list a a))) (if (null? c) 0 (walk a (length b)))))",
                "(+ (f (list i 2) (list 1 i)) (g (list i) (list i i 3)) (h (list 1 2 i) (list i)))",
            ),
            d,
        ),
        // `length` of lists short and long, empty, improper, of a string, of a number.
        (
            hot_sum(
                3000,
                "(define (upto n acc) (if (= n 0) acc (upto (- n 1) (cons n acc)))) \
                 (define (len x) (length x))",
                "(+ (len (upto (modulo i 7) '())) (len '()) (len \"abc\") (len (list i i)))",
            ),
            d,
        ),
        (
            hot(
                3000,
                "(define (len x) (length x))",
                "(list (len (list i i i)) (if (= i 2999) (len (cons 1 2)) 0))",
            ),
            d,
        ),
        (
            hot(
                3000,
                "(define (len x) (length x))",
                "(list (len (list i)) (if (= i 2999) (len 5) 0))",
            ),
            d,
        ),
        (
            hot(
                3000,
                "(define (upto n acc) (if (= n 0) acc (upto (- n 1) (cons n acc)))) \
                 (define (len x) (length x))",
                "(len (upto (if (= i 2999) 100000 3) '()))",
            ),
            d,
        ),
    ]
}

/// Procedure values (closures made by `lambda`, procedures passed by name) called by compiled
/// code: their own code called from Rust on the arguments where the code left them.
fn procedure_value_programs() -> Vec<(String, Limits)> {
    let d = Limits::default();
    let map = "(define (my-map f l) (if (null? l) '() (cons (f (car l)) (my-map f (cdr l)))))";
    vec![
        (
            format!(
                "{map} (define (twice x) (* x 2)) \
                 (define (drive i acc) (if (= i 300) acc \
                   (drive (+ i 1) (+ acc (length (my-map (lambda (x) (+ x i)) (list 1 2 i))) \
                     (car (my-map twice (list i)))))))\n(drive 0 0)"
            ),
            d,
        ),
        // An error in the closure, its call sites as through Rust; a name it finds unbound.
        (
            format!(
                "{map} (define (drive i acc) (if (= i 300) acc \
                   (drive (+ i 1) (my-map (lambda (x) (if (= x 299) (car x) x)) (list i)))))\n\
                 (drive 0 0)"
            ),
            d,
        ),
        (
            format!(
                "{map} (define (drive i acc) (if (= i 300) acc \
                   (drive (+ i 1) (my-map (lambda (x) (if (= x 299) (+ x nowhere) x)) (list i)))))\n\
                 (drive 0 0)"
            ),
            d,
        ),
        // A closure whose own call in tail position goes back to the loop that called it.
        (
            format!(
                "{map} (define (inc x) (+ x 1)) \
                 (define (drive i acc) (if (= i 300) acc \
                   (drive (+ i 1) (+ acc (car (my-map (lambda (x) (inc x)) (list i)))))))\n\
                 (drive 0 0)"
            ),
            d,
        ),
        // Deep: the depth limit reached through the closures, then a value with it raised.
        (
            "(define (deep f n) (if (= n 0) 0 (+ 1 (f (lambda (m) (deep f m)) (- n 1))))) \
             (define (call g n) (g n)) (list (deep call 100) (deep call 4000))"
                .to_string(),
            d,
        ),
        (
            "(define (deep f n) (if (= n 0) 0 (+ 1 (f (lambda (m) (deep f m)) (- n 1))))) \
             (define (call g n) (g n)) (list (deep call 100) (deep call 30000))"
                .to_string(),
            depth(100_000),
        ),
    ]
}

/// Lists of several chunks of cells freed as they are walked (a cell's halves moved out and its
/// slot given back in place): chunks emptied, kept and taken again, listed for a new sweep.
#[test]
fn lists_freed_as_walked_answer_as_closures() {
    let p = "(define (upto n acc) (if (= n 0) acc (upto (- n 1) (cons n acc)))) \
             (define (sum l acc) (if (null? l) acc (sum (cdr l) (+ acc (car l))))) \
             (define (evens l acc) (if (null? l) acc \
               (evens (cdr l) (if (= (modulo (car l) 2) 0) (cons (car l) acc) acc)))) \
             (define (drive i acc) (if (= i 4) acc \
               (drive (+ i 1) (+ acc (sum (upto 250000 '()) 0) \
                 (sum (evens (upto (* 60000 i) '()) '()) 0)))))\n(drive 0 0)";
    let [(out, _), _] = run_both(p, Limits::default());
    assert!(!out.contains("error"), "{out}");
    // Two lists made cell by cell in turn, one freed as it is walked, its slots taken again by
    // a third: the other must read as it was made (a slot given back by mistake would be
    // taken while its cell is in use). `sum` owns its list (it hands a half to a procedure),
    // so its last read of a cell takes the car and frees the cell.
    let p = "(define (id x) x) \
             (define (sum l acc) (if (null? l) acc (sum (cdr l) (+ acc (id (car l)))))) \
             (define (upto n acc) (if (= n 0) acc (upto (- n 1) (cons n acc)))) \
             (define (make n a b k) (if (= n 0) (k a b) (make (- n 1) (cons n a) (cons (- n) b) k))) \
             (define (k a b) (let ((sb (sum b 0))) \
               (list sb (sum (upto 400000 '()) 0) (sum (upto 5000 '()) 0) (sum a 0)))) \
             (define (warm i) (if (= i 1100) 'warm \
               (begin (sum (list i 1) 0) (make 2 '() '() k0) (upto 2 '()) (warm (+ i 1))))) \
             (define (k0 a b) 0) \
             (warm 0) (list (make 150000 '() '() k) (make 150000 '() '() k))";
    let [(out, _), _] = run_both(p, Limits::default());
    assert!(out.contains("11250075000"), "{out}");
}

#[test]
fn procedure_values_answer_as_closures() {
    for (p, limits) in procedure_value_programs() {
        run_both(&p, limits);
    }
}

#[test]
fn tail_calls_and_length_answer_as_closures() {
    for (p, limits) in tail_call_programs() {
        run_both(&p, limits);
    }
}

/// Stretches with a copy for integer variables (`Gen::stretch`): the same procedures given
/// integers, floats, a mix, and integers that overflow.
#[test]
fn integer_copies_answer_as_closures() {
    let defs = "(define (f x y) (if (< x y) (+ x (* y 2)) (- (* x x) y)))\n\
                (define (g x y n) (if (= n 0) (+ x y) (g y (+ x y) (- n 1))))\n\
                (define (h x l) (and (pair? l) (not (= (car l) (+ x 1))) (> x (- (car l) 9))))";
    for args in ["i 3", "(* i 0.5) 3", "i 2.5", "(* i 0.25) (* i 0.5)"] {
        let p = hot_sum(
            300,
            defs,
            &format!(
                "(let ((v (f {args}))) (+ v (g {args} 5) (if (h (car (list {args})) (list 4 i)) 1 0)))"
            ),
        );
        let [(out, _), _] = run_both(&p, Limits::default());
        assert!(!out.contains("error"), "{p}\n{out}");
    }
    // A loop in the copy for integers that passes itself a float: it goes round the general
    // way, and the float is not taken for an integer.
    let p = hot_sum(
        300,
        "(define (k x n) (if (= n 0) x (k (if (= n 3) 0.5 (+ x 1)) (- n 1))))",
        "(k i 5)",
    );
    let [(out, _), _] = run_both(&p, Limits::default());
    assert!(out.contains("750.0"), "{p}\n{out}");
    // Integers that overflow in the copy for integers: the error, as the closures give it.
    let p = hot_sum(300, defs, "(g 1 i 200)");
    let [(out, _), _] = run_both(&p, Limits::default());
    assert!(out.contains("overflow"), "{p}\n{out}");
}

#[test]
fn lent_params_answer_as_closures() {
    for p in lent_programs() {
        run_both(&p, Limits::default());
    }
}

#[test]
fn borrowed_halves_answer_as_closures() {
    for p in borrowed_half_programs() {
        let [(out, _), _] = run_both(&p, Limits::default());
        assert!(!out.contains("error"), "{p}\n{out}");
    }
}

#[test]
fn last_reads_answer_as_closures() {
    for p in last_read_programs() {
        run_both(&p, Limits::default());
    }
}

#[test]
fn list_programs_answer_as_closures() {
    for p in bench_programs() {
        let [(out, _), _] = run_both(&p, Limits::default());
        assert!(!out.contains("error"), "{p}\n{out}");
    }
}

#[test]
fn deep_recursion_answers_as_closures() {
    for (p, limits) in deep_programs() {
        run_both(&p, limits);
    }
}

#[test]
fn long_tail_loops_answer_as_closures() {
    for p in long_programs() {
        run_both(&p, Limits::default());
    }
}

#[test]
fn redefinitions_answer_as_closures() {
    for p in redefinition_programs() {
        run_both(&p, Limits::default());
    }
}

/// Hot procedures redefined at top level between sources, and used again after an error (a
/// budget, the depth limit, a type error) stopped a source in the middle of them.
#[test]
fn sessions_answer_as_closures() {
    let loop_f =
        "(define (drive i acc) (if (= i 500) acc (drive (+ i 1) (+ acc (f i))))) (drive 0 0)";
    let sessions: Vec<(Vec<&str>, Limits)> = vec![
        (
            vec![
                "(define (f x) (* x 2))",
                loop_f,
                "(define (f x) (- x))",
                loop_f,
                "(f 3)",
            ],
            Limits::default(),
        ),
        (
            vec![
                "(define (g l) (car l)) (define (f x) (g (list x)))",
                loop_f,
                "(define (car x) 100)",
                loop_f,
                "(set! car cdr)",
                loop_f,
            ],
            Limits::default(),
        ),
        (
            vec![
                "(define (f x) (+ x 1))",
                loop_f,
                "(define (f x y) x)",
                loop_f,
                "(define f 7)",
                loop_f,
            ],
            Limits::default(),
        ),
        // A budget runs out inside the hot loop; the next sources start afresh.
        (
            vec![
                "(define (f x) (let ((y (list x x))) (length y)))",
                loop_f,
                "(define (spin n) (if (< n 0) n (spin (+ n (f n))))) (spin 0)",
                loop_f,
                "(spin 0)",
                loop_f,
            ],
            steps(20_000),
        ),
        // The depth limit, then the same procedures again.
        (
            vec![
                "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) \
                 (define (f x) (count (modulo x 50)))",
                loop_f,
                "(count 200)",
                loop_f,
                "(count 99)",
            ],
            depth(100),
        ),
        // An error deep in nested hot calls, then the calls again.
        (
            vec![
                "(define (c x) (car x)) (define (b x) (+ 1 (c x))) (define (f x) (b (list x)))",
                loop_f,
                "(define (a n) (if (= n 0) (b 5) (+ 1 (a (- n 1))))) (a 30)",
                loop_f,
            ],
            Limits::default(),
        ),
    ];
    for (sources, limits) in sessions {
        run_session(&sources, limits);
    }
}

/// Budgets to try below a program's total `t`: every one when `t` is small; else some spread
/// evenly, the last ones, and those around each multiple of the interrupt poll period (where
/// the budget check and the periodic check meet).
///
/// Each run with the tier on compiles the program's procedures anew, a few milliseconds each
/// in a debug build: that, not the steps, is what the number of budgets is weighed against.
fn budgets(t: u64) -> Vec<u64> {
    const POLL: u64 = ttdl_lang::eval::machine::INTERRUPT_POLL;
    if t <= 3000 {
        return (0..t).collect();
    }
    let mut b: Vec<u64> = (0..16).map(|k| k * t / 16 + k % 7).collect();
    b.extend((1..=3).map(|k| t - k));
    let mut m = POLL;
    while m < t + 2 {
        b.extend([m - 1, m, m + 1]);
        m += POLL;
    }
    b.retain(|&x| x < t);
    b.sort_unstable();
    b.dedup();
    b
}

/// Runs `p` under `limits` to learn its total step count (whether it ends in a value or an
/// error), then with budgets below it (see [`budgets`]): both ways stop at the same step, with
/// the same diagnostic.
///
/// The budgets are tried in batches, each on a thread of its own: a thread compiles a bounded
/// number of procedures and then stops compiling, and each run compiles the program's
/// procedures anew, so on one thread the later runs would all be closures.
fn check_budgets(p: &str, limits: Limits) {
    let [(_, t), _] = run_both(p, limits);
    for batch in budgets(t).chunks(BATCH) {
        on_fresh_thread(|| {
            for &b in batch {
                let [(out, _), _] = run_both(p, Limits { steps: b, ..limits });
                assert!(
                    out.starts_with("error[budget]: evaluation ran out of its step budget"),
                    "{p} with {b} steps:\n{out}"
                );
            }
        });
    }
}

/// Runs of a program on one thread (each compiles at most a few procedures).
const BATCH: usize = 256;

/// A step budget running out at any step of a short program whose procedures are hot stops
/// both ways at the same step, with the same diagnostic.
#[test]
fn every_step_budget_of_short_programs() {
    for p in [
        hot(16, "(define (f x) (+ x 1))", "(f i)"),
        hot(
            12,
            "(define (g a b) (list a b)) (define (f x) (let* ((a (g x x)) (b (length a))) b))",
            "(f i)",
        ),
    ] {
        check_budgets(&p, Limits::default());
    }
}

/// A step budget running out in the middle of a hot procedure, of a deep recursion, of a
/// builtin's work, near the periodic checks, stops both ways at the same step.
#[test]
fn step_budgets_of_longer_programs() {
    for p in [
        hot(
            200,
            "(define (f x) (if (< x 100) (+ x 1) (car (list x))))",
            "(f i)",
        ),
        hot(
            150,
            "(define (f x l) (cond ((null? l) x) ((pair? x) 0) (else (let ((y (car l))) (+ x y)))))",
            "(f i (list i))",
        ),
        "(define (l n acc) (if (= n 0) acc (l (- n 1) (+ acc 1)))) (l 3000 0)".to_string(),
        "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) \
         (define (drive i acc) (if (= i 40) acc (drive (+ i 1) (+ acc (count 60))))) (drive 0 0)"
            .to_string(),
        // The budget runs out up to a thousand compiled frames deep.
        "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) (count 1000)".to_string(),
        "(define (my-map f l) (if (null? l) '() (cons (f (car l)) (my-map f (cdr l))))) \
         (define (drive i acc) (if (= i 60) acc (drive (+ i 1) (my-map (lambda (x) (+ x i)) acc)))) \
         (drive 0 '(1 2 3 4 5))"
            .to_string(),
        "(define (f x) (string-append \"n\" (number->string (modulo x 7)))) \
         (let loop ((i 0) (acc '())) (if (= i 300) (length acc) (loop (+ i 1) (cons (f i) acc))))"
            .to_string(),
        // Mutual tail recursion of three procedures.
        "(define (p n acc) (if (= n 0) acc (q (- n 1) (+ acc 1)))) \
         (define (q n acc) (cond ((= n 0) acc) (else (r (- n 1) (+ acc 2))))) \
         (define (r n acc) (let ((m (- n 1))) (if (< m 0) acc (p m (+ acc 3))))) (p 600 0)"
            .to_string(),
        format!("{QSORT}(qsort-main 40 2)"),
        format!("{TREE}(tree-main 6 3)"),
        format!("{RECUR}(recur-main 60 2)"),
        format!("{QUEENS}(queens-main 5 3)"),
    ] {
        check_budgets(&p, Limits::default());
    }
    // Programs that end in an error, the budget running out before it or not (each over 3,000
    // steps, tried at a sample of budgets).
    for (p, limits) in [
        (
            hot(
                300,
                "(define (f l) (car l))",
                "(f (if (< i 290) (list i) i))",
            ),
            Limits::default(),
        ),
        (
            "(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) \
             (define (w i) (if (= i 30) (count 150) (begin (count 20) (w (+ i 1))))) (w 0)"
                .to_string(),
            depth(100),
        ),
        (
            "(define (f x) (* x 3)) \
             (define (drive i acc) (if (= i 0) acc \
               (begin (if (= i 100) (set! * +)) (drive (- i 1) (+ acc (f i)))))) \
             (drive 200 0)"
                .to_string(),
            Limits::default(),
        ),
    ] {
        check_budgets(&p, limits);
    }
}

/// Random programs: a few procedures of one to three parameters, the first a depth counter that
/// each call between them decreases, so they end; bodies of random expressions over the forms
/// above; a loop calling them a few hundred times on varying inputs and summing the answers.
/// Errors (`car` of an integer, overflow) are fine as long as both ways agree.
mod random {
    /// Reads a program's choices from bytes; when they run out every choice is the first, the
    /// simplest (so proptest, shortening the bytes, shortens the program).
    struct Gen<'a> {
        bytes: &'a [u8],
        pos: usize,
        fresh: usize,
        procs: Vec<usize>,
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Ty {
        Int,
        List,
    }

    /// Names in scope and their types; a later binding of a name shadows the earlier ones.
    type Scope = Vec<(String, Ty)>;

    impl Gen<'_> {
        fn pick(&mut self, n: usize) -> usize {
            let b = self.bytes.get(self.pos).copied().unwrap_or(0);
            self.pos += 1;
            b as usize % n
        }

        fn var(&mut self, scope: &Scope, ty: Ty) -> Option<String> {
            let visible: Vec<&String> = scope
                .iter()
                .enumerate()
                .filter(|(k, (name, t))| {
                    *t == ty && !scope[k + 1..].iter().any(|(later, _)| later == name)
                })
                .map(|(_, (name, _))| name)
                .collect();
            if visible.is_empty() {
                return None;
            }
            let k = self.pick(visible.len());
            Some(visible[k].clone())
        }

        /// A name for a new binding: fresh, or one in scope (shadowing it).
        fn binder(&mut self, scope: &Scope) -> String {
            // Never the depth counter: that the calls end depends on it.
            let names: Vec<&String> = scope.iter().map(|(n, _)| n).filter(|n| *n != "d").collect();
            if !names.is_empty() && self.pick(4) == 0 {
                let k = self.pick(names.len());
                return names[k].clone();
            }
            self.fresh += 1;
            format!("v{}", self.fresh)
        }

        fn int(&mut self, scope: &mut Scope, size: usize) -> String {
            let leaf = |g: &mut Self, scope: &Scope| {
                if g.pick(2) == 0 {
                    if let Some(v) = g.var(scope, Ty::Int) {
                        return v;
                    }
                }
                // Now and then a float, which the arithmetic made in place hands on.
                match g.pick(12) {
                    11 => "0.5".to_string(),
                    k => (k as i64 - 2).to_string(),
                }
            };
            if size == 0 {
                return leaf(self, scope);
            }
            let s = size - 1;
            match self.pick(17) {
                0 | 1 => leaf(self, scope),
                2 => format!("(+ {} {})", self.int(scope, s / 2), self.int(scope, s / 2)),
                // Subtraction, or another arity or operation of arithmetic.
                3 => match self.pick(5) {
                    0 => format!("(- {})", self.int(scope, s)),
                    1 => format!(
                        "(+ {} {} {})",
                        self.int(scope, s / 3),
                        self.int(scope, s / 3),
                        self.int(scope, s / 3)
                    ),
                    2 => {
                        let op = ["quotient", "modulo"][self.pick(2)];
                        format!(
                            "({op} {} {})",
                            self.int(scope, s / 2),
                            self.int(scope, s / 2)
                        )
                    }
                    _ => format!("(- {} {})", self.int(scope, s / 2), self.int(scope, s / 2)),
                },
                4 => format!("(* {} {})", self.int(scope, s / 2), self.int(scope, s / 2)),
                // `car` and its kin, under their other names too; now and then of a string consed
                // in front of a list (a value a cell packs as other words than it holds).
                5 => match self.pick(4) {
                    0 => format!(
                        "(string-length (car (cons (number->string {}) {})))",
                        self.int(scope, s / 2),
                        self.list(scope, s / 2)
                    ),
                    _ => {
                        let op = ["car", "car", "cadr", "caddr", "first", "second"][self.pick(6)];
                        format!("({op} {})", self.list(scope, s))
                    }
                },
                6 | 7 => format!(
                    "(if {} {} {})",
                    self.bool(scope, s / 3),
                    self.int(scope, s / 3),
                    self.int(scope, s / 3)
                ),
                8 => format!(
                    "(cond ({} {}) ({}) (else {}))",
                    self.bool(scope, s / 4),
                    self.int(scope, s / 4),
                    self.int(scope, s / 4),
                    self.int(scope, s / 4)
                ),
                9 => match self.pick(3) {
                    // A closure over the locals, called once or twice.
                    0 => {
                        let mut inner = scope.clone();
                        inner.push(("z".to_string(), Ty::Int));
                        let body = self.int(&mut inner, s / 2);
                        let (a, b) = (self.int(scope, s / 4), self.int(scope, s / 4));
                        match self.pick(2) {
                            0 => format!("((lambda (z) {body}) {a})"),
                            _ => format!("(let ((h (lambda (z) {body}))) (+ (h {a}) (h {b})))"),
                        }
                    }
                    _ => self.let_form(scope, s, Ty::Int),
                },
                10..=12 => self.call(scope, s),
                // Rarely `set!` (which keeps a body from being compiled), else `begin`.
                13 => match self.var(scope, Ty::Int).filter(|v| v != "d") {
                    Some(v) if self.pick(4) == 0 => {
                        let e = self.int(scope, s / 2);
                        format!("(begin (set! {v} {e}) {})", self.int(scope, s / 2))
                    }
                    _ => format!(
                        "(begin {} {})",
                        self.list(scope, s / 2),
                        self.int(scope, s / 2)
                    ),
                },
                14 => match self.pick(3) {
                    0 => format!(
                        "(nth (modulo {} 4) {})",
                        self.int(scope, s / 2),
                        self.list(scope, s / 2)
                    ),
                    1 => format!(
                        "(list-ref {} (modulo {} 3))",
                        self.list(scope, s / 2),
                        self.int(scope, s / 2)
                    ),
                    _ => format!("(length {})", self.list(scope, s)),
                },
                // `and` and `or` as values: `#f` or the integer, then the integer.
                15 => format!(
                    "(or (and {} {}) {})",
                    self.bool(scope, s / 3),
                    self.int(scope, s / 3),
                    self.int(scope, s / 3)
                ),
                // Rarely, a type error: `car` of an integer, a list added.
                _ => match self.pick(4) {
                    0 => format!("(car {})", self.int(scope, s)),
                    1 => format!("(+ 1 {})", self.list(scope, s)),
                    2 => format!("(cadr (cons {} 5))", self.int(scope, s)),
                    _ => leaf(self, scope),
                },
            }
        }

        fn bool(&mut self, scope: &mut Scope, size: usize) -> String {
            let s = size.saturating_sub(1);
            match self.pick(if size == 0 { 3 } else { 11 }) {
                0 => {
                    let op = ["<", ">", "<=", ">="][self.pick(4)];
                    format!(
                        "({op} {} {})",
                        self.int(scope, s / 2),
                        self.int(scope, s / 2)
                    )
                }
                1 => format!("(null? {})", self.list(scope, s)),
                2 => format!("(= {} {})", self.int(scope, s / 2), self.int(scope, s / 2)),
                3 => format!("(pair? {})", self.list(scope, s)),
                4 => format!(
                    "(and {} {})",
                    self.bool(scope, s / 2),
                    self.bool(scope, s / 2)
                ),
                5 => format!(
                    "(or {} {})",
                    self.bool(scope, s / 2),
                    self.bool(scope, s / 2)
                ),
                6 => match self.pick(3) {
                    0 => format!("(not {})", self.list(scope, s)),
                    1 => format!("(not {})", self.int(scope, s)),
                    _ => format!("(not {})", self.bool(scope, s)),
                },
                7 => match self.pick(2) {
                    0 => format!(
                        "(eq? {} {})",
                        self.int(scope, s / 2),
                        self.int(scope, s / 2)
                    ),
                    _ => format!(
                        "(eq? {} {})",
                        self.list(scope, s / 2),
                        self.list(scope, s / 2)
                    ),
                },
                // Degenerate forms: `cond` clauses of a test alone, an `else` with no body, empty
                // `and`/`or`/`let`; a comparison of three.
                8 => format!(
                    "(cond ({}) ((null? {})) (else))",
                    self.bool(scope, s / 2),
                    self.list(scope, s / 2)
                ),
                9 => match self.pick(4) {
                    0 => "(and)".to_string(),
                    1 => format!("(or {} (or))", self.bool(scope, s)),
                    2 => format!("(let () {})", self.bool(scope, s)),
                    _ => format!(
                        "(< {} {} {})",
                        self.int(scope, s / 3),
                        self.int(scope, s / 3),
                        self.int(scope, s / 3)
                    ),
                },
                _ => format!("(consp {})", self.list(scope, s)),
            }
        }

        fn list(&mut self, scope: &mut Scope, size: usize) -> String {
            let leaf = |g: &mut Self, scope: &Scope| match g.pick(4) {
                0 | 1 => g
                    .var(scope, Ty::List)
                    .unwrap_or_else(|| "'(1 2 3)".to_string()),
                2 => "'(1 2 3)".to_string(),
                _ => "'()".to_string(),
            };
            if size == 0 {
                return leaf(self, scope);
            }
            let s = size - 1;
            match self.pick(7) {
                0 | 1 => leaf(self, scope),
                2 => format!(
                    "(cons {} {})",
                    self.int(scope, s / 2),
                    self.list(scope, s / 2)
                ),
                3 => {
                    let op = ["cdr", "cdr", "cddr", "rest"][self.pick(4)];
                    format!("({op} {})", self.list(scope, s))
                }
                4 => format!(
                    "(if {} {} {})",
                    self.bool(scope, s / 3),
                    self.list(scope, s / 3),
                    self.list(scope, s / 3)
                ),
                5 => format!(
                    "(list {} {})",
                    self.int(scope, s / 2),
                    self.int(scope, s / 2)
                ),
                _ => self.let_form(scope, s, Ty::List),
            }
        }

        /// `let` or `let*` of one or two bindings, then a body of type `ty`.
        fn let_form(&mut self, scope: &mut Scope, size: usize, ty: Ty) -> String {
            let star = self.pick(2) == 0;
            let n = 1 + self.pick(2);
            let s = size / (n + 1);
            let mut bindings = Vec::new();
            let mut inner = scope.clone();
            for _ in 0..n {
                let bty = if self.pick(3) == 0 { Ty::List } else { Ty::Int };
                // In a `let*` each init sees the bindings before it; in a `let` none.
                let init_scope = if star { &mut inner } else { &mut *scope };
                let init = match bty {
                    Ty::Int => self.int(init_scope, s),
                    Ty::List => self.list(init_scope, s),
                };
                let name = self.binder(&inner);
                bindings.push(format!("({name} {init})"));
                inner.push((name, bty));
            }
            let body = match ty {
                Ty::Int => self.int(&mut inner, s),
                Ty::List => self.list(&mut inner, s),
            };
            let head = if star { "let*" } else { "let" };
            format!("({head} ({}) {body})", bindings.join(" "))
        }

        /// A call of one of the procedures, its depth counter one less than this one's: by its
        /// name, or now and then through a value (a local holding it, or one of two procedures
        /// of its arity chosen by a test), which compiled code calls the general way.
        fn call(&mut self, scope: &mut Scope, size: usize) -> String {
            let k = self.pick(self.procs.len());
            let arity = self.procs[k];
            let s = size / (arity + 1);
            let head = match self.pick(6) {
                0 => format!("(let ((h f{k})) h)"),
                1 => {
                    let same: Vec<usize> = (0..self.procs.len())
                        .filter(|&j| self.procs[j] == arity)
                        .collect();
                    let j = same[self.pick(same.len())];
                    format!("(if {} f{k} f{j})", self.bool(scope, s))
                }
                _ => format!("f{k}"),
            };
            let mut args = vec!["(- d 1)".to_string()];
            if arity > 1 {
                args.push(self.int(scope, s));
            }
            if arity > 2 {
                args.push(self.list(scope, s));
            }
            format!("({head} {})", args.join(" "))
        }
    }

    /// Parameters of procedure `k` by its arity: the depth counter, an integer, a list.
    fn params(arity: usize) -> Scope {
        let all = [("d", Ty::Int), ("x", Ty::Int), ("y", Ty::List)];
        all[..arity]
            .iter()
            .map(|&(n, t)| (n.to_string(), t))
            .collect()
    }

    /// A program from `bytes`: the procedures, the loop, its count.
    pub fn program(bytes: &[u8]) -> String {
        let mut g = Gen {
            bytes,
            pos: 0,
            fresh: 0,
            procs: Vec::new(),
        };
        let n = 1 + g.pick(3);
        g.procs = (0..n).map(|_| 1 + g.pick(3)).collect();
        let mut out = String::new();
        for k in 0..n {
            let arity = g.procs[k];
            let mut scope = params(arity);
            let size = 4 + g.pick(16);
            // The base case is a leaf: a variable or a small integer.
            let base = g.int(&mut scope, 0);
            let body = g.int(&mut scope, size);
            let names: Vec<&str> = ["d", "x", "y"][..arity].to_vec();
            let form = match g.pick(3) {
                0 => format!("(if (< d 1) {base} {body})"),
                1 => format!("(cond ((< d 1) {base}) (else {body}))"),
                _ => format!("(if (> d 0) {body} {base})"),
            };
            out.push_str(&format!("(define (f{k} {}) {form})\n", names.join(" ")));
        }
        let rounds = 100 + 50 * g.pick(5);
        let (mul, modulus, shift) = (1 + g.pick(13), 5 + g.pick(20), g.pick(8));
        // From call `late` on, the lists are empty and, at call `odd`, the integer is extreme:
        // inputs that may make a body fail after the tier has taken over (or never, when
        // these are beyond the last call).
        let late = 20 * g.pick(20);
        let odd = 20 * g.pick(20);
        let extreme = ["3037000500", "-9223372036854775807", "0"][g.pick(3)];
        let calls: Vec<String> = g
            .procs
            .iter()
            .enumerate()
            .map(|(k, &arity)| {
                let args = [
                    "(modulo i 4)".to_string(),
                    format!(
                        "(if (= i {odd}) {extreme} (- (modulo (* i {mul}) {modulus}) {shift}))"
                    ),
                    format!("(if (< i {late}) (list (modulo i 5) i) '())"),
                ];
                format!("(f{k} {})", args[..arity].join(" "))
            })
            .collect();
        // Now and then a global is assigned at call `at` of the loop (by a procedure of its
        // own: an assignment keeps a body from being compiled): a procedure swapped for
        // another of its arity, or a builtin the bodies use for another of its shape. Never
        // `-`, `<`, `>` or `=`: the depth counters and the loop count with them.
        let at = 20 * g.pick(20);
        let hook = match g.pick(8) {
            6 => {
                let k = g.pick(n);
                let same: Vec<usize> = (0..n).filter(|&j| g.procs[j] == g.procs[k]).collect();
                let j = same[g.pick(same.len())];
                Some(format!("(set! f{k} f{j})"))
            }
            7 => Some(
                [
                    "(set! car cadr)",
                    "(set! cdr cddr)",
                    "(set! cons list)",
                    "(set! null? pair?)",
                    "(set! + *)",
                ][g.pick(5)]
                .to_string(),
            ),
            _ => None,
        };
        let step = match &hook {
            Some(h) => {
                out.push_str(&format!("(define (hook i) (if (= i {at}) {h}))\n"));
                "(begin (hook i) (drive (- i -1) (+ acc {})))"
            }
            None => "(drive (+ i 1) (+ acc {}))",
        };
        let step = step.replace("{}", &calls.join(" "));
        out.push_str(&format!(
            "(define (drive i acc) (if (= i {rounds}) acc {step}))\n(drive 0 0)"
        ));
        out
    }
}

proptest! {
    // 64 cases unless `PROPTEST_CASES` asks for another number (a longer search).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    /// Each program runs to its end, then again with a budget that runs out part of the way
    /// (`cut` thousandths of its steps).
    #[test]
    fn random_programs_answer_as_closures(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        cut in 0u64..1000,
    ) {
        let p = random::program(&bytes);
        // Each case on a thread of its own, whose compiled code is its own: a case that fails
        // fails alone, and shrinking finds the program that fails rather than one that meets
        // what an earlier case left behind.
        let both = on_fresh_thread(|| [true, false].map(|native| run_one(&p, Limits::default(), native)));
        prop_assert!(both[0] == both[1], "{}", differ(&p, Limits::default(), &both));
        // The closures' count: a panic of the machine code shows above, not here.
        let b = both[1].1 * cut / 1000;
        let both = on_fresh_thread(|| [true, false].map(|native| run_one(&p, steps(b), native)));
        prop_assert!(both[0] == both[1], "{}", differ(&p, steps(b), &both));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    /// A random program, then the procedures of another defined over its own at top level (of
    /// other bodies and arities), then the first program's loop again: as a REPL session does,
    /// with the loop's compiled code calling procedures redefined under it. Half the sessions
    /// run under a step budget that stops the first program part of the way (each source
    /// starts afresh), so the later sources run after one stopped inside compiled code.
    #[test]
    fn random_sessions_answer_as_closures(
        first in prop::collection::vec(any::<u8>(), 0..300),
        second in prop::collection::vec(any::<u8>(), 0..300),
        cut in 0u64..2000,
    ) {
        let p = random::program(&first);
        let q = random::program(&second);
        let defs = q.split("(define (drive").next().unwrap_or_default().to_string();
        let sources = [p.as_str(), defs.as_str(), "(drive 0 0)"];
        let limits = if cut < 1000 {
            let (_, t) = run_one(&p, Limits::default(), false);
            steps(t * cut / 1000)
        } else {
            Limits::default()
        };
        on_fresh_thread(|| run_session(&sources, limits));
    }
}
