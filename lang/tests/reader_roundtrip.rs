//! Property: printing any datum and reading it back gives the same datum (spans aside).

use proptest::prelude::*;
use ttdl_lang::syntax::{print_datum, read};
use ttdl_lang::{Datum, Sexpr, Span};

fn strip(d: &Datum) -> Datum {
    match d {
        Datum::List(xs) => Datum::List(
            xs.iter()
                .map(|x| Sexpr::new(strip(&x.datum), Span::default()))
                .collect(),
        ),
        d => d.clone(),
    }
}

fn symbol_name() -> impl Strategy<Value = String> {
    "[a-zA-Z*+!<>=/?&%$^~_.-][a-zA-Z0-9*+!<>=/?&%$^~_.:#|λ-]{0,8}".prop_filter(
        "must not read as a number or nil",
        |s| {
            let b = s.as_bytes();
            let unsigned = if matches!(b[0], b'+' | b'-') {
                &b[1..]
            } else {
                b
            };
            let numeric = match unsigned {
                [d, ..] if d.is_ascii_digit() => true,
                [b'.', d, ..] if d.is_ascii_digit() => true,
                _ => false,
            };
            !numeric && s != "nil" && !s.starts_with("|#")
        },
    )
}

fn datum() -> impl Strategy<Value = Datum> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Datum::Int),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Datum::Float),
        any::<String>().prop_map(Datum::Str),
        any::<bool>().prop_map(Datum::Bool),
        Just(Datum::Nil),
        symbol_name().prop_map(Datum::Symbol),
        symbol_name().prop_map(Datum::Keyword),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(|xs| {
            Datum::List(
                xs.into_iter()
                    .map(|d| Sexpr::new(d, Span::default()))
                    .collect(),
            )
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn print_then_read(d in datum()) {
        let text = print_datum(&d);
        let (items, diags) = read(0, &text);
        prop_assert!(diags.is_empty(), "{text}: {diags:?}");
        prop_assert_eq!(items.len(), 1, "{}", text);
        prop_assert_eq!(strip(&items[0].datum), d);
    }

    #[test]
    fn several_data_separated_by_comments(a in datum(), b in datum()) {
        let text = format!("{} ; c\n#| x |#{}", print_datum(&a), print_datum(&b));
        let (items, diags) = read(0, &text);
        prop_assert!(diags.is_empty(), "{text}: {diags:?}");
        let got: Vec<Datum> = items.iter().map(|x| strip(&x.datum)).collect();
        prop_assert_eq!(got, vec![a, b]);
    }

    #[test]
    fn never_panics(text in "[()\"';`,#|a-z0-9 .:\\\\\n-]{0,60}") {
        let _ = read(0, &text);
        let _ = ttdl_lang::syntax::is_incomplete(&text);
    }
}
