//! Golden tests of diagnostic rendering (plain text, colour off).

use expect_test::expect;
use ttdl_lang::diagnostic::render;
use ttdl_lang::syntax::read;
use ttdl_lang::{Diagnostic, SourceMap, Span};

#[test]
fn syntax_errors_of_a_file() {
    let mut map = SourceMap::default();
    let text = "(deftask t0 t1)\n(define x 12abc))\n(print \"hi\\q\")\n(define (f a)\n  (+ a 1)\n";
    let file = map.add("jacobi.ttdl", text);
    let (_, diags) = read(file, text);
    expect![[r#"
        error[syntax]: malformed number `12abc`
           ╭─[ jacobi.ttdl:2:11 ]
           │
         2 │ (define x 12abc))
           │           ──┬──  
           │             ╰──── not a number
        ───╯
          = help: numbers are written like `42`, `-7`, `2.5` or `1e-3`; a symbol cannot start like a number
        error[syntax]: unexpected `)`
           ╭─[ jacobi.ttdl:2:17 ]
           │
         2 │ (define x 12abc))
           │                 ┬  
           │                 ╰── no list is open here
        ───╯
          = help: remove this `)`, or add the `(` it was meant to close
        error[syntax]: unknown escape `\q` in a string
           ╭─[ jacobi.ttdl:3:11 ]
           │
         3 │ (print "hi\q")
           │           ─┬  
           │            ╰── unknown escape
        ───╯
          = help: the escapes are `\n`, `\t`, `\r`, `\\` and `\"`; write `\\` for a backslash
        error[syntax]: unclosed `(`
           ╭─[ jacobi.ttdl:4:1 ]
           │
         4 │ (define (f a)
           │ ┬  
           │ ╰── this `(` is never closed
        ───╯
          = help: add a `)` to close this list
    "#]]
    .assert_eq(&render(&map, &diags, false));
}

#[test]
fn labels_in_two_files_with_notes() {
    let mut map = SourceMap::default();
    let lib = map.add(
        "stdlib/patterns.ttdl",
        "(define-comm ring (self n)\n  (read-stream 8 (prev self)))\n",
    );
    let user = map.add("main.ttdl", "(deftask a b)\n(ring a 4)\n");
    let d = Diagnostic::new(
        "unmatched-read",
        "task `a` reads from `b` but `b` never writes",
    )
    .with_label(Span::new(lib, 29, 57), "this read waits forever")
    .with_label(Span::new(user, 14, 24), "called from here")
    .with_note("the k-th read on a stream matches the k-th write on it")
    .with_help("add a `write-stream` in `b`, or remove the read");
    expect![[r#"
        error[unmatched-read]: task `a` reads from `b` but `b` never writes
           ╭─[ stdlib/patterns.ttdl:2:3 ]
           │
         2 │   (read-stream 8 (prev self)))
           │   ──────────────┬─────────────  
           │                 ╰─────────────── this read waits forever
           │
           ├─[ main.ttdl:2:1 ]
           │
         2 │ (ring a 4)
           │ ─────┬────  
           │      ╰────── called from here
        ───╯
          = note: the k-th read on a stream matches the k-th write on it
          = help: add a `write-stream` in `b`, or remove the read
    "#]]
    .assert_eq(&render(&map, &[d], false));
}

#[test]
fn bad_spans_do_not_panic() {
    let mut map = SourceMap::default();
    let f = map.add("u.ttdl", "(λ)");
    let diags = [
        // Past the end, inside a multi-byte character, empty, and in a file that is not loaded.
        Diagnostic::new("type", "past the end").with_label(Span::new(f, 10, 20), "here"),
        Diagnostic::new("type", "mid-character").with_label(Span::new(f, 2, 2), "here"),
        Diagnostic::new("type", "no labels").with_help("nothing to show"),
        Diagnostic::new("type", "unknown file").with_label(Span::new(9, 0, 1), "somewhere"),
    ];
    expect![[r#"
        error[type]: past the end
           ╭─[ u.ttdl:1:3 ]
           │
         1 │ (λ)
           │   ┬  
           │   ╰── here
        ───╯
        error[type]: mid-character
           ╭─[ u.ttdl:1:2 ]
           │
         1 │ (λ)
           │  ┬  
           │  ╰── here
        ───╯
        error[type]: no labels
          = help: nothing to show
        error[type]: unknown file
          = note: somewhere (in a source that is not loaded, file #9 bytes 0..1)
    "#]]
    .assert_eq(&render(&map, &diags, false));
}

#[test]
fn colour_only_adds_escapes() {
    let mut map = SourceMap::default();
    let text = "(a";
    let f = map.add("c.ttdl", text);
    let (_, diags) = read(f, text);
    let plain = render(&map, &diags, false);
    let coloured = render(&map, &diags, true);
    assert!(coloured.contains('\u{1b}'));
    assert!(!plain.contains('\u{1b}'));
    let stripped = strip_ansi(&coloured);
    assert_eq!(stripped, plain);
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn missing_paren_points_at_the_next_form() {
    let mut map = SourceMap::default();
    let text = "(define (f x)\n  (+ x 1)\n\n(define (g y)\n  (* y 2))\n";
    let file = map.add("missing.ttdl", text);
    let (_, diags) = read(file, text);
    expect![[r#"
        error[syntax]: unclosed `(`
           ╭─[ missing.ttdl:1:1 ]
           │
         1 │ (define (f x)
           │ ┬  
           │ ╰── this `(` is never closed
           │ 
         4 │ (define (g y)
           │ ┬  
           │ ╰── this `(` at the start of a line is still inside the list
        ───╯
          = note: the `)` is probably missing before this line
          = help: add a `)` to close this list
    "#]]
    .assert_eq(&render(&map, &diags, false));
}

#[test]
fn a_label_above_the_primary_one_stays_in_one_snippet() {
    let mut map = SourceMap::default();
    let text = "(define (f a b)\n  (+ a b))\n\n(f 1)\n";
    let file = map.add("arity.ttdl", text);
    let d = Diagnostic::new("arity", "`f` takes 2 arguments, but 1 was given")
        .with_label(Span::new(file, 28, 33), "called with 1 argument")
        .with_label(Span::new(file, 0, 15), "defined here");
    expect![[r#"
        error[arity]: `f` takes 2 arguments, but 1 was given
           ╭─[ arity.ttdl:4:1 ]
           │
         1 │ (define (f a b)
           │ ───────┬───────  
           │        ╰───────── defined here
           │ 
         4 │ (f 1)
           │ ──┬──  
           │   ╰──── called with 1 argument
        ───╯
    "#]]
    .assert_eq(&render(&map, &[d], false));
}

#[test]
fn an_empty_file() {
    let mut map = SourceMap::default();
    let file = map.add("empty.ttdl", "");
    let d = Diagnostic::new("type", "nothing here").with_label(Span::new(file, 0, 0), "here");
    expect![[r#"
        error[type]: nothing here
           ╭─[ empty.ttdl:1:1 ]
           │
         1 │ 
           │ │ 
           │ ╰─ here
        ───╯
    "#]]
    .assert_eq(&render(&map, &[d], false));
}
