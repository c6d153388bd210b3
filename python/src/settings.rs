//! Plan settings given as Python keyword arguments (SPEC §3's names: `network`, `mapping`,
//! `place`, `route`, `schedule`, `lp_solver`, `ports`, `latency`, `setup`, `buffer`, `timing`,
//! `throughput`, `seed`, `effort`: the settings table's rows, by their keys), checked by the
//! table and turned into the pipeline's settings in one function, [`settings_from_kwargs`].
//!
//! This module knows nothing of Python: the module converts each keyword's value to a
//! [`Value`] first, so the conversion and its errors are tested by `cargo test`.

use std::fmt;

use ttdl_backend::pipeline::Settings as PlanSettings;
use ttdl_ir::settings::{Kind, Setting, SETTINGS};

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
    pub overrides: PlanSettings,
    /// The canned mapping to place with (a `define-mapping` name), which the session holds
    /// rather than the pipeline's settings.
    pub mapping: Option<String>,
}

/// The settings table's row a keyword names: its key (`lp_solver`, as Python spells it) or
/// its name.
fn row(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == name || s.name == name)
}

/// Whether `name` is one of SPEC §3's plan settings (the rest of `simulate`'s keywords are the
/// model's own options).
pub fn is_setting(name: &str) -> bool {
    row(name).is_some()
}

/// The settings' keyword names, in the table's order.
pub fn names() -> Vec<&'static str> {
    SETTINGS.iter().map(|s| s.key).collect()
}

/// Turns keyword arguments into plan settings through the settings table: an unknown name, a
/// value of the wrong type or out of range is refused with the table's words, the same the
/// command line and the REPL print.
pub fn settings_from_kwargs(kwargs: &[(String, Value)]) -> Result<Settings, String> {
    let mut s = Settings::default();
    for (name, value) in kwargs {
        let Some(row) = row(name) else {
            return Err(unknown(name));
        };
        let text = match (value, row.kind) {
            (Value::None, _) => continue,
            (Value::Bool(b), Kind::Flag) => if *b { "on" } else { "off" }.to_string(),
            (Value::Bool(_), _) | (Value::Other(_), _) => {
                return Err(format!("`{}` {}, not {value}", row.key, row.expected()))
            }
            (Value::Int(n), _) if *n < 0 => {
                return Err(format!("`{}` {}, not {n}", row.key, row.expected()))
            }
            (Value::Int(n), _) => n.to_string(),
            (Value::Str(t), _) => t.clone(),
        };
        if row.name == "mapping" {
            let v = row.parse(&text).map_err(|e| e.to_string())?;
            s.mapping = Some(v.to_string());
            continue;
        }
        s.overrides
            .set(row.name, &text)
            .map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// "unknown setting `netwrok`: did you mean `network`?", else the list of settings.
fn unknown(name: &str) -> String {
    match ttdl_ir::settings::did_you_mean(name, SETTINGS.iter().map(|s| s.key)) {
        Some(n) => format!("unknown setting `{name}`: did you mean `{n}`?"),
        None => format!(
            "unknown setting `{name}`; the settings are {}",
            names().join(", ")
        ),
    }
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
    fn every_setting_reaches_the_plan_settings() {
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
        assert_eq!(o.word("network"), Some("mesh:4x4"));
        assert_eq!(s.mapping.as_deref(), Some("row-major"));
        assert_eq!(o.word("place"), Some("anneal"));
        assert_eq!(o.word("route"), Some("reroute"));
        assert_eq!(o.word("schedule"), Some("lp"));
        assert_eq!(o.word("lp-solver"), Some("microlp"));
        assert_eq!(
            (
                o.int("ports"),
                o.int("latency"),
                o.int("setup"),
                o.int("seed")
            ),
            (Some(2), Some(1), Some(3), Some(7))
        );
        assert_eq!(o.word("timing"), Some("thesis"));
        assert_eq!(o.flag("throughput"), Some(true));
    }

    #[test]
    fn none_leaves_a_setting_to_the_script() {
        let s = settings_from_kwargs(&kw(&[("network", Value::None), ("seed", Value::None)]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.mapping.is_none());
        assert!(s.overrides.is_empty());
    }

    #[test]
    fn a_misspelled_name_is_refused_with_a_suggestion() {
        let e =
            settings_from_kwargs(&kw(&[("netwrok", Value::Str("mesh:2x2".into()))])).unwrap_err();
        assert_eq!(e, "unknown setting `netwrok`: did you mean `network`?");
        let e = settings_from_kwargs(&kw(&[("lpsolver", Value::Str("highs".into()))])).unwrap_err();
        assert_eq!(e, "unknown setting `lpsolver`: did you mean `lp_solver`?");
        let e = settings_from_kwargs(&kw(&[("colour", Value::Bool(true))])).unwrap_err();
        assert!(e.starts_with("unknown setting `colour`; the settings are network, mapping,"));
    }

    #[test]
    fn wrong_types_and_ranges_are_refused_as_every_front_end_refuses_them() {
        let cases = [
            ("ports", Value::Int(0), "`ports` takes a whole number from 1 to 64, not `0`"),
            ("ports", Value::Int(65), "`ports` takes a whole number from 1 to 64, not `65`"),
            ("seed", Value::Int(-1), "`seed` takes a whole number from 0, not -1"),
            ("throughput", Value::Int(7), "`throughput` takes on or off, not `7`"),
            (
                "place",
                Value::Other("list".into()),
                "`place` takes one of best, mapping, identity, random, anneal, not a value of type list",
            ),
        ];
        for (name, value, want) in cases {
            let e = settings_from_kwargs(&kw(&[(name, value)])).unwrap_err();
            assert_eq!(e, want);
        }
    }

    #[test]
    fn model_options_are_not_settings() {
        assert!(is_setting("lp_solver"));
        assert!(!is_setting("vc"));
        assert!(!is_setting("buf"));
    }
}
