//! The REPL core without a terminal: input in, output out.

use expect_test::expect;
use ttdl_repl::{Output, Repl, ReplOptions};

fn repl() -> Repl {
    match Repl::new(ReplOptions::default()) {
        Ok(r) => r,
        Err(e) => panic!("the standard library does not load:\n{e}"),
    }
}

fn text(out: Output) -> String {
    match out {
        Output::Text(t) => t,
        other => panic!("expected text, got {other:?}"),
    }
}

fn error(out: Output) -> String {
    match out {
        Output::Error(t) => t,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn help_lists_every_command() {
    let mut r = repl();
    expect![[r#"
        Type TTDL forms to evaluate them; an entry continues until its parentheses balance.
        Ctrl-C drops the entry being typed, Ctrl-D leaves. Tab completes names.
          :help    show this help
          :quit    leave (also Ctrl-D)
          :load    FILE  read and evaluate a file
          :check   summary of the traffic built so far: tasks, messages, phases, critical path, period
          :reset   start over with a fresh interpreter
          :env     [PREFIX]  the names bound in the global environment
    "#]]
    .assert_eq(&text(r.handle(":help")));
}

#[test]
fn quit_and_blank_input() {
    let mut r = repl();
    assert_eq!(r.handle(""), Output::Nothing);
    assert_eq!(r.handle("   ; just a comment"), Output::Nothing);
    assert_eq!(r.handle("#| a block |#"), Output::Nothing);
    assert_eq!(r.handle("  :quit  "), Output::Quit);
}

#[test]
fn multi_line_entries_wait_for_balance() {
    let mut r = repl();
    assert_eq!(r.handle("(define (f x)"), Output::More);
    assert!(r.is_pending());
    assert_eq!(r.handle("  \"a string (\""), Output::More);
    assert_eq!(r.handle("  \"still open"), Output::More);
    assert_eq!(r.handle("  ) (\" ; ("), Output::More);
    // The closing line completes the entry, whatever it evaluates to.
    assert_ne!(r.handle("  x)"), Output::More);
    assert!(!r.is_pending());
}

#[test]
fn cancel_drops_the_pending_entry() {
    let mut r = repl();
    assert_eq!(r.handle("(define x"), Output::More);
    r.cancel();
    assert!(!r.is_pending());
    assert_eq!(r.handle(":quit"), Output::Quit);
}

#[test]
fn syntax_errors_are_rendered_and_the_session_goes_on() {
    let mut r = repl();
    let e = error(r.handle("(list 1 2))"));
    assert!(e.contains("error[syntax]: unexpected `)`"), "{e}");
    assert!(e.contains("<repl:1>:1:11"), "{e}");
    assert_eq!(r.handle(":quit"), Output::Quit);
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
