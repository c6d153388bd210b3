//! The REPL core without a terminal: input in, output out.

use expect_test::expect;
use ttdl_repl::{Output, Repl, ReplOptions, Status};

fn repl() -> Repl {
    match Repl::new(ReplOptions::default()) {
        Ok(r) => r,
        Err(e) => panic!("the standard library does not load:\n{e}"),
    }
}

fn text(out: Output) -> String {
    assert_eq!(out.error, "", "unexpected error");
    assert_eq!(out.status, Status::Done);
    out.text
}

fn error(out: Output) -> String {
    assert_eq!(out.status, Status::Done);
    assert!(!out.error.is_empty(), "expected an error, got {out:?}");
    out.error
}

#[test]
fn help_lists_every_command() {
    let mut r = repl();
    expect![[r#"
        Type TTDL forms to evaluate them; an entry continues until its parentheses balance.
        Ctrl-C drops the entry being typed or stops what is running; Ctrl-D leaves. Tab completes names.
          :help      show this help
          :quit      leave (also Ctrl-D)
          :load      FILE  read and evaluate a file; loading it again replaces what it defined and made
          :check     [MAPPING]  summary of the traffic built so far: tasks, messages, phases, critical path, period
          :run       [--network N --place P --route R --schedule S --seed N --ports N --latency C --timing T]  place, route, schedule, verify and replay; print the summary
          :simulate  MODEL [KEY=VALUE…]  run the program on a hardware model (`:simulate wormhole vc=2`)
          :compare   [MODEL,MODEL…]  every model (or those named) side by side
          :dag       [dot|json]  the task graph
          :show      schedule|routes|deadlines|bounds  a table of the last plan
          :set       [KEY VALUE]  a plan setting (`:set` alone lists them all, with their defaults); `:set KEY` alone clears it
          :save      DIR  write what `ttdl run --out DIR` writes, for the last plan
          :undo      take back the last entry or `:load` (its definitions, tasks and messages)
          :reset     start over with a fresh interpreter
          :env       [PREFIX]  the names bound in the global environment
    "#]]
    .assert_eq(&text(r.handle(":help")));
}

#[test]
fn quit_and_blank_input() {
    let mut r = repl();
    assert_eq!(r.handle(""), Output::default());
    assert_eq!(r.handle("   ; just a comment"), Output::default());
    assert_eq!(r.handle("#| a block |#"), Output::default());
    assert_eq!(r.handle("  :quit  "), Output::quit());
}

#[test]
fn multi_line_entries_wait_for_balance() {
    let mut r = repl();
    assert_eq!(r.handle("(define (f x)"), Output::more());
    assert!(r.is_pending());
    assert_eq!(r.handle("  \"a string (\""), Output::more());
    assert_eq!(r.handle("  \"still open"), Output::more());
    assert_eq!(r.handle("  ) (\" ; ("), Output::more());
    // The closing line completes the entry, whatever it evaluates to.
    assert_ne!(r.handle("  x)"), Output::more());
    assert!(!r.is_pending());
}

#[test]
fn cancel_drops_the_pending_entry() {
    let mut r = repl();
    assert_eq!(r.handle("(define x"), Output::more());
    r.cancel();
    assert!(!r.is_pending());
    assert_eq!(r.handle(":quit"), Output::quit());
}

#[test]
fn syntax_errors_are_rendered_and_the_session_goes_on() {
    let mut r = repl();
    let e = error(r.handle("(list 1 2))"));
    assert!(e.contains("error[syntax]: unexpected `)`"), "{e}");
    assert!(e.contains("<repl:1>:1:11"), "{e}");
    assert_eq!(r.handle(":quit"), Output::quit());
}

#[test]
fn load_reports_a_missing_file() {
    let mut r = repl();
    let e = error(r.handle(":load /nonexistent/dir/x.ttdl"));
    assert!(
        e.starts_with("error: cannot read /nonexistent/dir/x.ttdl"),
        "{e}"
    );
    let e = error(r.handle(":load"));
    assert!(e.contains("needs a file name"), "{e}");
}

#[test]
fn completions_include_commands() {
    let r = repl();
    let names = r.completions();
    for (cmd, _) in ttdl_repl::COMMANDS {
        assert!(names.iter().any(|n| n == cmd), "{cmd}");
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn values_printed_output_and_errors() {
    let mut r = repl();
    assert_eq!(text(r.handle("(define x 3)")), "x\n");
    assert_eq!(text(r.handle("(+ x 4)")), "7\n");
    assert_eq!(r.handle("(define (f a)"), Output::more());
    assert_eq!(text(r.handle("  (* a 2))")), "f\n");
    // What the program prints comes before the value.
    assert_eq!(text(r.handle("(begin (print \"hi\") (f 21))")), "hi\n42\n");
    // A run-time error is rendered against the entry, and the session keeps its bindings.
    expect![[r#"
        error[type]: expected a list, found integer `3`
           ╭─[ <repl:5>:1:6 ]
           │
         1 │ (car x)
           │      ┬  
           │      ╰── this is an integer
        ───╯
          = note: in argument 1 of `car`
    "#]]
    .assert_eq(&error(r.handle("(car x)")));
    assert_eq!(text(r.handle("(f x)")), "6\n");
}

#[test]
fn env_and_reset() {
    let mut r = repl();
    text(r.handle("(define my-frobnicator 1)"));
    assert_eq!(text(r.handle(":env my-frob")), "my-frobnicator\n");
    assert!(r.completions().iter().any(|n| n == "my-frobnicator"));
    assert_eq!(
        text(r.handle(":reset")),
        "; the session starts over (the :set settings are kept)\n"
    );
    assert_eq!(text(r.handle(":env my-frob")), "; no names bound\n");
    // The standard library is back after a reset.
    assert!(r.completions().iter().any(|n| n == "define-comm"));
}

#[test]
fn check_summarizes_the_traffic() {
    let mut r = repl();
    for line in [
        "(deftask a b)",
        "(define-comm ping (self peer) (sequence (compute 10) (write-stream 8 peer)))",
        "(define-comm pong (self peer) (read-stream 8 peer))",
        "(ping a b)",
        "(pong b a)",
    ] {
        let out = r.handle(line);
        assert_eq!(out.error, "", "{line}");
    }
    expect![[r#"
        tasks          2
        messages       1 (8 words)
        phases         1: 0 (starts at 0, 1 messages)
        critical path  18 cycles (ideal: no contention, no per-hop latency)
        period         none (the program does not repeat)
    "#]]
    .assert_eq(&text(r.handle(":check")));
    // An unmatched write is reported, and fixing it makes `:check` succeed again.
    text(r.handle("(ping a b)"));
    let e = error(r.handle(":check"));
    assert!(e.contains("error[unmatched-write]"), "{e}");
    text(r.handle("(pong b a)"));
    assert!(text(r.handle(":check")).contains("messages       2 (16 words)"));
}

#[test]
fn load_a_file() {
    let dir = std::env::temp_dir().join(format!("ttdl-repl-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("defs.ttdl");
    std::fs::write(&path, "(define loaded-value 41)\n(println \"loading\")\n").unwrap();
    let mut r = repl();
    let out = text(r.handle(&format!(":load {}", path.display())));
    assert_eq!(out, format!("loading\n; loaded {}\n", path.display()));
    assert_eq!(text(r.handle("(+ loaded-value 1)")), "42\n");
    // A quoted file name works too (loading it again replaces the first load).
    let quoted = text(r.handle(&format!(":load \"{}\"", path.display())));
    assert!(quoted.starts_with("loading\n; reloaded"), "{quoted}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Loading an edited file again replaces what the first load defined and made: its tasks and
/// messages are made once, not twice, and the entries typed after it are evaluated again.
#[test]
fn loading_a_file_again_replaces_it() {
    let dir = std::env::temp_dir().join(format!("ttdl-repl-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pair.ttdl");
    let program = |size: u32| {
        format!(
            "(deftask a b)\n(define size {size})\n(with-task a (write-stream size b))\n\
             (with-task b (read-stream size a))\n"
        )
    };
    std::fs::write(&path, program(8)).unwrap();
    let mut r = repl();
    text(r.handle(&format!(":load {}", path.display())));
    text(r.handle("(define twice (* 2 size))"));
    assert!(text(r.handle(":check")).contains("messages       1 (8 words)"));
    std::fs::write(&path, program(16)).unwrap();
    let out = text(r.handle(&format!(":load {}", path.display())));
    assert!(
        out.contains("reloaded") && out.contains("the 1 entry after it was evaluated again"),
        "{out}"
    );
    let check = text(r.handle(":check"));
    assert!(check.contains("messages       1 (16 words)"), "{check}");
    assert!(check.contains("tasks          2"), "{check}");
    assert_eq!(text(r.handle("twice")), "32\n");
    // An entry that the new text breaks says so.
    std::fs::write(&path, "(deftask a b)\n").unwrap();
    let out = r.handle(&format!(":load {}", path.display()));
    assert!(out.error.contains("size"), "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_commands_are_errors_with_a_suggestion() {
    let mut r = repl();
    let e = error(r.handle(":rnu"));
    assert!(
        e.contains("unknown command `:rnu` — did you mean `:run`?"),
        "{e}"
    );
    let e = error(r.handle(":topology"));
    assert!(e.contains("quote it: `':topology`"), "{e}");
    // A keyword is still a value when quoted or inside a form.
    assert_eq!(text(r.handle("':topology")), ":topology\n");
    assert_eq!(text(r.handle("(list :topology)")), "(:topology)\n");
}

/// The REPL explores a program through the same pipeline as the command line.
#[test]
fn run_simulate_compare_show_set_save() {
    let mut r = repl();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    text(r.handle(&format!(
        ":load {}",
        root.join("examples/fft.ttdl").display()
    )));
    let run = text(r.handle(":run"));
    assert!(run.contains("makespan:"), "{run}");
    assert!(run.contains("replay:"), "{run}");
    let sim = text(r.handle(":simulate wormhole"));
    assert!(sim.starts_with("model        wormhole"), "{sim}");
    assert!(sim.contains("completion"), "{sim}");
    let table = text(r.handle(":compare scheduled,store-forward"));
    assert!(
        table.contains("scheduled") && table.contains("store-forward"),
        "{table}"
    );
    assert!(text(r.handle(":show bounds")).contains("lower bound"));
    assert!(text(r.handle(":show deadlines")).contains("messages late"));
    assert!(text(r.handle(":show routes")).starts_with("msg    src -> dst"));
    assert!(text(r.handle(":show schedule")).contains("inject@"));
    assert!(error(r.handle(":show nothing")).contains("schedule, routes, deadlines or bounds"));
    // Settings: shown, validated, used by the next run, and overridden by `:run` flags.
    assert!(text(r.handle(":set")).contains("schedule   (the script's target, else best)"));
    assert!(error(r.handle(":set route zigzag")).contains("route"));
    assert!(error(r.handle(":set ports 0")).contains("`ports` takes a whole number from 1 to 64"));
    assert!(error(r.handle(":set prots 2")).contains("did you mean `ports`?"));
    assert_eq!(
        text(r.handle(":set lp-solver microlp")),
        "; lp-solver = microlp\n"
    );
    assert_eq!(text(r.handle(":set setup 1")), "; setup = 1\n");
    assert_eq!(
        text(r.handle(":set setup")),
        "; setup = (the script's target, else the default)\n"
    );
    assert_eq!(
        text(r.handle(":set schedule exact")),
        "; schedule = exact\n"
    );
    assert!(text(r.handle(":run")).contains("exact scheduler"));
    assert!(text(r.handle(":run --schedule lp")).contains("lp scheduler"));
    assert!(error(r.handle(":run --bogus")).contains("bogus"));
    let dot = text(r.handle(":dag"));
    assert!(dot.starts_with("digraph"), "{dot}");
    let dir = std::env::temp_dir().join(format!("ttdl-repl-save-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let saved = text(r.handle(&format!(":save {}", dir.display())));
    assert!(saved.starts_with("; wrote 11 files"), "{saved}");
    assert!(dir.join("plan.json").exists() && dir.join("plan.switch").exists());
    assert!(["schedule.csv", "messages.csv", "links.csv"]
        .iter()
        .all(|f| dir.join(f).exists()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_with_a_mapping() {
    let mut r = repl();
    for line in [
        "(define net (make-network :topology 'torus :dims (list 4 4)))",
        "(define-comm to-east (self) (write-stream 4 (neighbor net self 'east)))",
        "(define-comm from-west (self) (read-stream 4 (neighbor net self 'west)))",
        "(dolist (t (network-tasks net)) (to-east t) (from-west t))",
    ] {
        let out = r.handle(line);
        assert_eq!(out.error, "", "{line}");
    }
    assert!(text(r.handle(":check torus->mesh")).starts_with("tasks          16\n"));
    let e = error(r.handle(":check no-such-mapping"));
    assert!(e.contains("no-such-mapping"), "{e}");
}

#[test]
fn input_ending_inside_an_entry_shows_its_error() {
    let mut r = repl();
    assert_eq!(r.handle("(define (f x)"), Output::more());
    let e = error(r.finish());
    assert!(e.contains("unclosed `(`"), "{e}");
    assert!(!r.is_pending());
    assert_eq!(r.finish(), Output::default());
}

#[test]
fn piped_input_is_evaluated_line_by_line() {
    let mut r = repl();
    let mut input = std::io::Cursor::new(
        "(define (g x)\n  (* x 3))\r\n(define h 5)\n:quit\n(define never 1)\n",
    );
    assert_eq!(ttdl_repl::run_piped(&mut r, &mut input), Ok(()));
    assert_eq!(text(r.handle("(g h)")), "15\n");
    // Nothing after `:quit` was read.
    assert!(!r.completions().iter().any(|n| n == "never"));
}

#[test]
fn the_standard_library_is_optional() {
    let mut with = repl();
    assert_eq!(text(with.handle(":env torus->")), "torus->mesh\n");
    let mut without = match Repl::new(ReplOptions {
        stdlib: false,
        ..ReplOptions::default()
    }) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(text(without.handle(":env torus->")), "; no names bound\n");
    // The core language is there all the same.
    assert_eq!(text(without.handle("(+ 1 2)")), "3\n");
}

/// `:undo` takes back the last entry or load — its definitions, tasks and messages — back to the
/// session before it, whether the entries were typed before a load or after it.
#[test]
fn undo_takes_back_the_last_entry_or_load() {
    let dir = std::env::temp_dir().join(format!("ttdl-repl-undo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pair.ttdl");
    std::fs::write(
        &path,
        "(deftask a b)\n(with-task a (write-stream 8 b))\n(with-task b (read-stream 8 a))\n",
    )
    .unwrap();
    let mut r = repl();
    assert_eq!(text(r.handle(":undo")), "; nothing to undo\n");
    text(r.handle("(define x 1)"));
    text(r.handle("(define x 2)"));
    assert_eq!(text(r.handle(":undo")), "; took back entry <repl:2>\n");
    assert_eq!(text(r.handle("x")), "1\n");
    text(r.handle(&format!(":load {}", path.display())));
    text(r.handle("(with-task a (write-stream 4 b))"));
    text(r.handle("(with-task b (read-stream 4 a))"));
    assert!(text(r.handle(":check")).contains("messages       2 (12 words)"));
    text(r.handle(":undo"));
    text(r.handle(":undo"));
    assert!(text(r.handle(":check")).contains("messages       1 (8 words)"));
    let out = text(r.handle(":undo"));
    assert!(out.contains("took back `:load"), "{out}");
    assert!(error(r.handle("a")).contains("unbound"));
    assert_eq!(text(r.handle("x")), "1\n");
    std::fs::remove_dir_all(&dir).unwrap();
}
