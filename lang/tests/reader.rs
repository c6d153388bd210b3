//! The reader: every atom and reader macro of SPEC §1.1, spans, and error recovery.

use expect_test::{expect, Expect};
use ttdl_ir::limits::Limits;
use ttdl_lang::syntax::{is_incomplete, print, read};
use ttdl_lang::{Datum, Diagnostic, Sexpr};

/// A compact dump: each datum with its byte span, lists indented.
fn dump(items: &[Sexpr], out: &mut String, indent: usize) {
    for x in items {
        out.push_str(&" ".repeat(indent));
        let (s, e) = (x.span.start, x.span.end);
        match &x.datum {
            Datum::List(xs) => {
                out.push_str(&format!("List {s}..{e}\n"));
                dump(xs, out, indent + 2);
            }
            d => out.push_str(&format!("{d:?} {s}..{e}\n")),
        }
    }
}

fn show_diags(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&format!("[{}] {}\n", d.code, d.message));
        for l in &d.labels {
            out.push_str(&format!(
                "  {}..{}: {}\n",
                l.span.start, l.span.end, l.message
            ));
        }
        for n in &d.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        if let Some(h) = &d.help {
            out.push_str(&format!("  help: {h}\n"));
        }
    }
    out
}

fn check(text: &str, expect: Expect) {
    let (items, diags) = read(0, text);
    let mut out = String::new();
    dump(&items, &mut out, 0);
    out.push_str(&show_diags(&diags));
    expect.assert_eq(&out);
}

#[test]
fn atoms() {
    check(
        r#"-12 2.5 "a\n\t\\\"" #t #f nil t-north *med-2d* -> torus->mesh 1+ - &optional :topology 1e3 +7"#,
        expect![[r#"
            Int(-12) 0..3
            Float(2.5) 4..7
            Str("a\n\t\\\"") 8..19
            Bool(true) 20..22
            Bool(false) 23..25
            Nil 26..29
            Symbol("t-north") 30..37
            Symbol("*med-2d*") 38..46
            Symbol("->") 47..49
            Symbol("torus->mesh") 50..61
            Symbol("1+") 62..64
            Symbol("-") 65..66
            Symbol("&optional") 67..76
            Keyword("topology") 77..86
            Float(1000.0) 87..90
            Int(7) 91..93
        "#]],
    );
}

#[test]
fn symbols_are_case_sensitive() {
    check(
        "Foo foo NIL",
        expect![[r#"
            Symbol("Foo") 0..3
            Symbol("foo") 4..7
            Symbol("NIL") 8..11
        "#]],
    );
}

#[test]
fn lists_and_comments() {
    check(
        "; line comment\n(deftask t0 #| block #| nested |# still |# t1) ; tail\n()",
        expect![[r#"
            List 15..61
              Symbol("deftask") 16..23
              Symbol("t0") 24..26
              Symbol("t1") 58..60
            List 69..71
        "#]],
    );
}

#[test]
fn reader_macros() {
    check(
        "'x `(a ,b ,@c) ' y",
        expect![[r#"
            List 0..2
              Symbol("quote") 0..1
              Symbol("x") 1..2
            List 3..14
              Symbol("quasiquote") 3..4
              List 4..14
                Symbol("a") 5..6
                List 7..9
                  Symbol("unquote") 7..8
                  Symbol("b") 8..9
                List 10..13
                  Symbol("unquote-splicing") 10..12
                  Symbol("c") 12..13
            List 15..18
              Symbol("quote") 15..16
              Symbol("y") 17..18
        "#]],
    );
}

#[test]
fn unicode_spans_are_bytes() {
    check(
        "(\"héllo\" λ)",
        expect![[r#"
            List 0..13
              Str("héllo") 1..9
              Symbol("λ") 10..12
        "#]],
    );
}

#[test]
fn every_error_in_one_run() {
    check(
        "(a 99999999999999999999 12abc)\n) #x \"bad \\q\" (b\n  (c)",
        expect![[r#"
            List 0..30
              Symbol("a") 1..2
            Str("bad q") 36..44
            List 45..53
              Symbol("b") 46..47
              List 50..53
                Symbol("c") 51..52
            [syntax] integer `99999999999999999999` does not fit in 64 bits
              3..23: integer out of range
              help: integers range from -9223372036854775808 to 9223372036854775807; write a float (e.g. `1e20`) if an approximation will do
            [syntax] malformed number `12abc`
              24..29: not a number
              help: numbers are written like `42`, `-7`, `2.5` or `1e-3`; a symbol cannot start like a number
            [syntax] unexpected `)`
              31..32: no list is open here
              help: remove this `)`, or add the `(` it was meant to close
            [syntax] unknown `#` syntax `#x`
              33..35: not a `#` form TTDL knows
              help: the `#` forms are `#t`, `#f` and block comments `#| … |#`
            [syntax] unknown escape `\q` in a string
              41..43: unknown escape
              help: the escapes are `\n`, `\t`, `\r`, `\\` and `\"`; write `\\` for a backslash
            [syntax] unclosed `(`
              45..46: this `(` is never closed
              help: add a `)` to close this list
        "#]],
    );
}

#[test]
fn unterminated_string_and_comment() {
    check(
        "(a \"open",
        expect![[r#"
            List 0..8
              Symbol("a") 1..2
              Str("open") 3..8
            [syntax] unclosed `(`
              0..1: this `(` is never closed
              help: add a `)` to close this list
            [syntax] unterminated string
              3..4: this string is never closed
              help: add a closing `"` (write `\"` for a quote inside a string)
        "#]],
    );
    check(
        "x #| a #| b |# c",
        expect![[r#"
            Symbol("x") 0..1
            [syntax] unterminated block comment
              2..4: this `#|` is never closed
              note: the comment runs to the end of the file
              help: end the comment with `|#` (block comments nest: every `#|` needs its own `|#`)
        "#]],
    );
}

#[test]
fn dangling_quote_and_stray_comment_end() {
    check(
        "(a ') |# :",
        expect![[r#"
            List 0..5
              Symbol("a") 1..2
            [syntax] `'` with nothing after it
              3..4: expected a datum after this
              help: write the datum to quote right after `'`, e.g. `'x`
            [syntax] `|#` outside a block comment
              6..8: no block comment is open here
              help: remove this `|#`, or open the comment with `#|`
            [syntax] a keyword needs a name
              9..10: empty keyword
              help: write the keyword's name right after the colon, e.g. `:topology`
        "#]],
    );
}

#[test]
fn nesting_limit_is_an_error_not_a_crash() {
    let deep = "(".repeat(Limits::READER_DEPTH + 5) + &")".repeat(Limits::READER_DEPTH + 5);
    let (items, diags) = read(3, &deep);
    assert!(items.is_empty());
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].labels[0].span.start, Limits::READER_DEPTH);
    assert_eq!(diags[0].labels[0].span.file, 3);
    // Right at the limit still reads, on a small thread stack.
    let ok = "(".repeat(Limits::READER_DEPTH) + &")".repeat(Limits::READER_DEPTH);
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let (items, diags) = read(0, &ok);
            (items.len(), diags.len())
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), (1, 0));
}

#[test]
fn quotes_count_towards_the_nesting_limit() {
    let deep = "'".repeat(Limits::READER_DEPTH + 1) + "x";
    let (items, diags) = read(0, &deep);
    assert!(items.is_empty());
    assert_eq!(diags[0].labels[0].span.start, Limits::READER_DEPTH);
    let mixed =
        "'(a ".repeat(Limits::READER_DEPTH / 2 + 1) + &")".repeat(Limits::READER_DEPTH / 2 + 1);
    assert_eq!(read(0, &mixed).1.len(), 1);
    // Quotes that are complete do not add up, and right at the limit still reads on a small
    // thread stack.
    let flat = "'a ".repeat(5000);
    assert_eq!(read(0, &flat).0.len(), 5000);
    let ok = "'(a ".repeat(Limits::READER_DEPTH / 2) + &")".repeat(Limits::READER_DEPTH / 2);
    let ok2 = "'".repeat(Limits::READER_DEPTH) + "x";
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || (read(0, &ok).1.len(), read(0, &ok2).1.len()))
        .unwrap();
    assert_eq!(handle.join().unwrap(), (0, 0));
}

#[test]
fn incomplete() {
    assert!(is_incomplete("(define (f x)\n  (+ x"));
    assert!(is_incomplete("\"abc"));
    assert!(is_incomplete("#| open"));
    assert!(!is_incomplete("(f x) ; (("));
    assert!(!is_incomplete("(f \"(\")"));
}

#[test]
fn print_uses_prefixes() {
    let (items, diags) = read(0, "(a 'b `(c ,d ,@e) \"q\\\"\\n\" 1.0 1e20 :k #t nil ())");
    assert!(diags.is_empty());
    expect![[r#"(a 'b `(c ,d ,@e) "q\"\n" 1.0 1e20 :k #t nil ())"#]].assert_eq(&print(&items[0]));
}

#[test]
fn byte_order_mark_is_whitespace() {
    check(
        "\u{feff}#| c |# (a)",
        expect![[r#"
            List 11..14
              Symbol("a") 12..13
        "#]],
    );
    assert!(!is_incomplete("\u{feff}#| c |#"));
}

#[test]
fn missing_paren_hint_skips_strings_and_finds_nested_lists() {
    // The `(` after a newline inside the string is not a list; the one in `(g)` is.
    check(
        "(define (f)\n  \"a\n(b\"\n(g)",
        expect![[r#"
            List 0..24
              Symbol("define") 1..7
              List 8..11
                Symbol("f") 9..10
              Str("a\n(b") 14..20
              List 21..24
                Symbol("g") 22..23
            [syntax] unclosed `(`
              0..1: this `(` is never closed
              21..22: this `(` at the start of a line is still inside the list
              note: the `)` is probably missing before this line
              help: add a `)` to close this list
        "#]],
    );
}

#[test]
fn error_count_is_capped() {
    let text = ")".repeat(10_000) + "(a";
    let (items, diags) = read(0, &text);
    assert_eq!(items.len(), 1);
    assert_eq!(diags.len(), Limits::SYNTAX_ERRORS + 1);
    // The first errors are kept, and the last entry says the rest were left out.
    assert_eq!(diags[0].labels[0].span.start, 0);
    assert_eq!(diags[99].labels[0].span.start, 99);
    assert!(diags[100]
        .message
        .starts_with("more than 100 syntax errors"));
}

#[test]
fn an_unclosed_nested_comment_is_not_read_as_characters() {
    // `#|#|#`: the second `#|` opens a nested comment, so neither is closed.
    let (_, diags) = ttdl_lang::syntax::read(0, "#|#|#");
    assert!(
        diags
            .iter()
            .any(|d| d.message.starts_with("unterminated block comment")),
        "{diags:?}"
    );
    assert!(ttdl_lang::syntax::is_incomplete("#|#|#"));
}
