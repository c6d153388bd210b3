//! Properties of the evaluator checked on random inputs.

use proptest::prelude::*;
use ttdl_lang::Interpreter;

fn eval(src: &str) -> Result<String, String> {
    let mut i = Interpreter::default();
    i.eval_source("prop.ttdl", src)
        .map_err(|d| d.first().map(|d| d.code.clone()).unwrap_or_default())
}

/// A random datum: integers, symbols, strings and nested lists.
fn datum() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        "[a-z][a-z0-9-]{0,6}".prop_filter("not nil", |s| s != "nil"),
        "[a-z ]{0,8}".prop_map(|s| format!("\"{s}\"")),
        Just("#t".to_string()),
        Just("#f".to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(ttdl_lang::syntax::format_float),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop::collection::vec(inner, 1..5).prop_map(|items| format!("({})", items.join(" ")))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// What the evaluator prints, the reader reads back as the same value (floats included:
    /// `1e20` prints as `1e20`, not as digits that would read back as an integer).
    #[test]
    fn printed_values_read_back(d in datum()) {
        let once = eval(&format!("'{d}")).unwrap();
        let twice = eval(&format!("'{once}")).unwrap();
        prop_assert_eq!(once, twice);
    }

    /// Integer arithmetic is exact or a diagnostic, never a wrapped answer.
    #[test]
    fn arithmetic_is_checked(a in any::<i64>(), b in any::<i64>()) {
        let cases = [
            ("+", a.checked_add(b)),
            ("-", a.checked_sub(b)),
            ("*", a.checked_mul(b)),
            ("quotient", if b == 0 { None } else { a.checked_div(b) }),
        ];
        for (op, expected) in cases {
            let got = eval(&format!("({op} {a} {b})"));
            match expected {
                Some(v) => prop_assert_eq!(got, Ok(v.to_string())),
                None => prop_assert!(matches!(got.as_ref().map_err(String::as_str), Err("overflow" | "div-zero")), "{op}: {got:?}"),
            }
        }
    }

    /// Quoted data prints back as it was written.
    #[test]
    fn quote_prints_back(d in datum()) {
        prop_assert_eq!(eval(&format!("'{d}")), Ok(d.clone()));
        prop_assert_eq!(eval(&format!("(equal? '{d} (car (list '{d})))")), Ok("#t".to_string()));
    }

    /// List builtins agree with Rust on random integer lists.
    #[test]
    fn list_builtins(xs in prop::collection::vec(-1000i64..1000, 0..30)) {
        let l = xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ");
        let sum: i64 = xs.iter().sum();
        prop_assert_eq!(eval(&format!("(reduce + 0 '({l}))")), Ok(sum.to_string()));
        prop_assert_eq!(eval(&format!("(length '({l}))")), Ok(xs.len().to_string()));
        let rev: Vec<String> = xs.iter().rev().map(|x| x.to_string()).collect();
        let rev_text = if rev.is_empty() { "nil".to_string() } else { format!("({})", rev.join(" ")) };
        prop_assert_eq!(eval(&format!("(reverse '({l}))")), Ok(rev_text));
        let evens = xs.iter().filter(|x| *x % 2 == 0).count();
        prop_assert_eq!(eval(&format!("(length (filter even? '({l})))")), Ok(evens.to_string()));
    }
}
