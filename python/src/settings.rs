//! Plan settings given as Python keyword arguments (SPEC §3's names: `network`, `mapping`,
//! `place`, `route`, `schedule`, `lp_solver`, `ports`, `latency`, `setup`, `buffer`, `timing`,
//! `throughput`, `seed`, `effort`), turned into the pipeline's [`Overrides`] in one function,
//! [`settings_from_kwargs`], with the same ranges the command line's flags check.
//!
//! This module knows nothing of Python: the module converts each keyword's value to a
//! [`Value`] first, so the conversion and its errors are tested by `cargo test`.

use std::fmt;

use ttdl_backend::pipeline::Overrides;

/// A keyword argument's value, as Python gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    /// `None`: the setting is left to the script's `(target …)`, then to the defaults.
    None,
    /// Anything else, by its Python type name.
    Other(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Value::None => write!(f, "None"),
            Value::Other(t) => write!(f, "a value of type {t}"),
        }
    }
}

/// What the keyword arguments ask a plan for.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Everything the pipeline takes per plan.
    pub overrides: Overrides,
    /// The canned mapping to place with (a `define-mapping` name), which the session holds
    /// rather than the pipeline's overrides.
    pub mapping: Option<String>,
}

/// How a setting's value is read and checked.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A name the pipeline checks (`mesh:4x4`, `anneal`, …).
    Text,
    /// A whole number in `lo..=hi` (the command line's range for the same flag).
    Int {
        lo: i64,
        hi: i64,
    },
    Flag,
    /// In SPEC §3's table, but no planner of this build reads it yet.
    Unavailable,
}

/// SPEC §3's settings, as keyword names, with how each is read.
const SETTINGS: &[(&str, Kind)] = &[
    ("network", Kind::Text),
    ("mapping", Kind::Text),
    ("place", Kind::Text),
    ("route", Kind::Text),
    ("schedule", Kind::Text),
    ("lp_solver", Kind::Text),
    ("ports", Kind::Int { lo: 1, hi: 64 }),
    ("latency", Kind::Int { lo: 0, hi: 65_536 }),
    ("setup", Kind::Int { lo: 0, hi: 65_536 }),
    ("buffer", Kind::Unavailable),
    ("timing", Kind::Text),
    ("throughput", Kind::Flag),
    (
        "seed",
        Kind::Int {
            lo: 0,
            hi: i64::MAX,
        },
    ),
    ("effort", Kind::Unavailable),
];

/// Whether `name` is one of SPEC §3's plan settings (the rest of `simulate`'s keywords are the
/// model's own options).
pub fn is_setting(name: &str) -> bool {
    SETTINGS.iter().any(|(n, _)| *n == name)
}

/// The settings' names, in SPEC §3's order.
pub fn names() -> Vec<&'static str> {
    SETTINGS.iter().map(|(n, _)| *n).collect()
}

/// Turns keyword arguments into plan settings; an unknown name, a value of the wrong type or
/// out of range is refused with a message that says what would be accepted.
pub fn settings_from_kwargs(kwargs: &[(String, Value)]) -> Result<Settings, String> {
    let mut s = Settings::default();
    let o = &mut s.overrides;
    for (name, value) in kwargs {
        let Some(&(_, kind)) = SETTINGS.iter().find(|(n, _)| n == name) else {
            return Err(unknown(name));
        };
        if *value == Value::None {
            continue;
        }
        match kind {
            Kind::Unavailable => {
                return Err(format!(
                    "the setting `{name}` is not available in this version of ttdl"
                ))
            }
            Kind::Text => {
                let Value::Str(text) = value else {
                    return Err(format!("`{name}` takes a string, not {value}"));
                };
                let text = Some(text.clone());
                match name.as_str() {
                    "network" => o.network = text,
                    "mapping" => s.mapping = text,
                    "place" => o.place = text,
                    "route" => o.route = text,
                    "schedule" => o.schedule = text,
                    "lp_solver" => o.lp_solver = text,
                    _ => o.timing = text,
                }
            }
            Kind::Int { lo, hi } => {
                let n = match value {
                    Value::Int(n) => *n,
                    _ => return Err(format!("`{name}` takes a whole number, not {value}")),
                };
                if n < lo || n > hi {
                    return Err(if hi == i64::MAX {
                        format!("`{name}` must be at least {lo}, not {n}")
                    } else {
                        format!("`{name}` must be from {lo} to {hi}, not {n}")
                    });
                }
                // In range, so these conversions cannot fail.
                let u = u64::try_from(n).unwrap_or_default();
                match name.as_str() {
                    "ports" => o.ports = u32::try_from(n).ok(),
                    "latency" => o.latency = Some(u),
                    "setup" => o.setup = Some(u),
                    _ => o.seed = Some(u),
                }
            }
            Kind::Flag => {
                let Value::Bool(b) = value else {
                    return Err(format!("`{name}` takes True or False, not {value}"));
                };
                o.throughput = *b;
            }
        }
    }
    Ok(s)
}

/// "unknown setting `netwrok`; did you mean `network`?", else the list of settings.
fn unknown(name: &str) -> String {
    let best = SETTINGS
        .iter()
        .map(|(n, _)| (distance(name, n), *n))
        .min()
        .filter(|(d, n)| *d <= (n.len() / 3).max(2));
    match best {
        Some((_, n)) => format!("unknown setting `{name}`; did you mean `{n}`?"),
        None => format!(
            "unknown setting `{name}`; the settings are {}",
            names().join(", ")
        ),
    }
}

/// Levenshtein distance between two names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn every_supported_setting_reaches_the_overrides() {
        let s = settings_from_kwargs(&kw(&[
            ("network", Value::Str("mesh:4x4".into())),
            ("mapping", Value::Str("row-major".into())),
            ("place", Value::Str("anneal".into())),
            ("route", Value::Str("reroute".into())),
            ("schedule", Value::Str("lp".into())),
            ("lp_solver", Value::Str("microlp".into())),
            ("ports", Value::Int(2)),
            ("latency", Value::Int(1)),
            ("setup", Value::Int(3)),
            ("timing", Value::Str("thesis".into())),
            ("throughput", Value::Bool(true)),
            ("seed", Value::Int(7)),
        ]))
        .unwrap_or_else(|e| panic!("{e}"));
        let o = &s.overrides;
        assert_eq!(o.network.as_deref(), Some("mesh:4x4"));
        assert_eq!(s.mapping.as_deref(), Some("row-major"));
        assert_eq!(o.place.as_deref(), Some("anneal"));
        assert_eq!(o.route.as_deref(), Some("reroute"));
        assert_eq!(o.schedule.as_deref(), Some("lp"));
        assert_eq!(o.lp_solver.as_deref(), Some("microlp"));
        assert_eq!(
            (o.ports, o.latency, o.setup, o.seed),
            (Some(2), Some(1), Some(3), Some(7))
        );
        assert_eq!(o.timing.as_deref(), Some("thesis"));
        assert!(o.throughput);
    }

    #[test]
    fn none_leaves_a_setting_to_the_script() {
        let s = settings_from_kwargs(&kw(&[("network", Value::None), ("seed", Value::None)]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.mapping.is_none());
        assert!(s.overrides.network.is_none() && s.overrides.seed.is_none());
    }

    #[test]
    fn a_misspelled_name_is_refused_with_a_suggestion() {
        let e =
            settings_from_kwargs(&kw(&[("netwrok", Value::Str("mesh:2x2".into()))])).unwrap_err();
        assert_eq!(e, "unknown setting `netwrok`; did you mean `network`?");
        let e = settings_from_kwargs(&kw(&[("lpsolver", Value::Str("highs".into()))])).unwrap_err();
        assert_eq!(e, "unknown setting `lpsolver`; did you mean `lp_solver`?");
        let e = settings_from_kwargs(&kw(&[("colour", Value::Bool(true))])).unwrap_err();
        assert!(e.starts_with("unknown setting `colour`; the settings are network, mapping,"));
    }

    #[test]
    fn wrong_types_and_ranges_are_refused() {
        let cases = [
            (
                "ports",
                Value::Int(0),
                "`ports` must be from 1 to 64, not 0",
            ),
            (
                "ports",
                Value::Int(65),
                "`ports` must be from 1 to 64, not 65",
            ),
            (
                "latency",
                Value::Int(70_000),
                "`latency` must be from 0 to 65536, not 70000",
            ),
            ("seed", Value::Int(-1), "`seed` must be at least 0, not -1"),
            (
                "seed",
                Value::Str("3".into()),
                "`seed` takes a whole number, not \"3\"",
            ),
            ("network", Value::Int(4), "`network` takes a string, not 4"),
            (
                "throughput",
                Value::Int(1),
                "`throughput` takes True or False, not 1",
            ),
            (
                "place",
                Value::Other("list".into()),
                "`place` takes a string, not a value of type list",
            ),
        ];
        for (name, value, want) in cases {
            let e = settings_from_kwargs(&kw(&[(name, value)])).unwrap_err();
            assert_eq!(e, want);
        }
    }

    #[test]
    fn settings_no_planner_reads_yet_say_so() {
        for name in ["buffer", "effort"] {
            assert!(is_setting(name));
            let e = settings_from_kwargs(&kw(&[(name, Value::Int(4))])).unwrap_err();
            assert!(e.contains("not available"), "{e}");
        }
    }

    #[test]
    fn model_options_are_not_settings() {
        assert!(is_setting("lp_solver"));
        assert!(!is_setting("vc"));
        assert!(!is_setting("buf"));
    }
}
