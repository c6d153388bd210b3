//! Every plan setting, declared once (SPEC §3): name, type, default, range and help in one row of
//! [`SETTINGS`]. The command line's flags (`run`, `simulate`, `compare`), the REPL's `:set` and
//! `:show`, the keywords of a script's `(target …)`, the `scheduled` model's `key=value` options
//! and the plan document's `config` are all made from this table and read values through
//! [`Settings::set`], so a setting has the same name, default and refusal whichever door it comes
//! in by. Adding a setting is one row here plus the code that acts on it.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::{LpSolverKind, PlaceMethod, RouteMethod, ScheduleMethod, TimingModel};
use crate::limits::Limits;
use crate::topology::NetworkSpec;

/// What values a setting takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A physical network spec such as `mesh:4x4`.
    Network,
    /// A name the script defines (a canned mapping).
    Name,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A whole number in `min..=max`.
    Int { min: u64, max: u64 },
    /// A whole number in `0..=max`, or `unbounded`.
    IntOrUnbounded { max: u64 },
    /// One of these words, or a time in whole seconds (`30` or `30s`).
    Level(&'static [&'static str]),
    /// On or off (a bare `--flag` on the command line).
    Flag,
}

/// A setting's default: a value, or one worked out from the program (said in words for help).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    Is(&'static str),
    Depends(&'static str),
}

/// One plan setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The word a user writes: `--lp-solver`, `:set lp-solver`, `(target … :lp-solver …)`.
    pub name: &'static str,
    /// The key of the plan document's `config` and of the `scheduled` model's options.
    pub key: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
    /// The placeholder `--help` shows for the value.
    pub value_name: &'static str,
    pub help: &'static str,
    /// A script's `(target …)` may set it.
    pub target: bool,
    /// The `scheduled` model takes it as a `key=value` option (the rest come from the program
    /// and its placement, which every model shares).
    pub model: bool,
}

const PLACE_DEFAULT: &str = "mapping when the script names one, else best";

/// Every plan setting, in the order help and `:show` list them.
pub const SETTINGS: &[Setting] = &[
    Setting {
        name: "network",
        key: "network",
        kind: Kind::Network,
        default: DefaultValue::Depends(
            "the script's target, else its logical network, else the smallest square mesh that holds its tasks",
        ),
        value_name: "KIND:ARGS",
        help: "physical network",
        target: false,
        model: false,
    },
    Setting {
        name: "mapping",
        key: "mapping",
        kind: Kind::Name,
        default: DefaultValue::Depends("none"),
        value_name: "NAME",
        help: "canned mapping to place with (a `define-mapping` name)",
        target: true,
        model: false,
    },
    Setting {
        name: "place",
        key: "place",
        kind: Kind::Choice(PlaceMethod::NAMES),
        default: DefaultValue::Depends(PLACE_DEFAULT),
        value_name: "HOW",
        help: "placement (best: the mapping if any, identity and anneal each scheduled, the best kept)",
        target: true,
        model: false,
    },
    Setting {
        name: "route",
        key: "route",
        kind: Kind::Choice(RouteMethod::NAMES),
        default: DefaultValue::Is("dor"),
        value_name: "HOW",
        help: "routing: dimension order, seeded random minimal, shortest path, or rerouting by annealing",
        target: true,
        model: true,
    },
    Setting {
        name: "schedule",
        key: "schedule",
        kind: Kind::Choice(ScheduleMethod::NAMES),
        default: DefaultValue::Is("best"),
        value_name: "HOW",
        help: "scheduler: Minsky's LP (§4.2.4), the cycle-level exact scheduler, the exact one then the time-indexed MILP for the optimum (small programs, HiGHS builds), or the best of them",
        target: true,
        model: true,
    },
    Setting {
        name: "lp-solver",
        key: "lp_solver",
        kind: Kind::Choice(LpSolverKind::NAMES),
        default: DefaultValue::Is("microlp"),
        value_name: "SOLVER",
        help: "LP solver of the lp and best schedulers (highs only in a build with the `highs` feature)",
        target: true,
        model: true,
    },
    Setting {
        name: "ports",
        key: "ports",
        kind: Kind::Int {
            min: 1,
            max: Limits::PORTS as u64,
        },
        default: DefaultValue::Is("1"),
        value_name: "N",
        help: "processor-network ports per node, each way",
        target: true,
        model: true,
    },
    Setting {
        name: "latency",
        key: "latency",
        kind: Kind::Int {
            min: 0,
            max: Limits::HOP_LATENCY,
        },
        default: DefaultValue::Is("0"),
        value_name: "CYCLES",
        help: "cycles a word takes through one switch (0: the thesis's circuit model)",
        target: true,
        model: true,
    },
    Setting {
        name: "setup",
        key: "setup",
        kind: Kind::Int {
            min: 0,
            max: Limits::HOP_LATENCY,
        },
        default: DefaultValue::Is("0"),
        value_name: "CYCLES",
        help: "set-up cycles every message's transfer pays before its words (Minsky §5.1.2: the NuMesh's Jacobi exchange is --setup 1); messages then go whole, so the LP scheduler is not used",
        target: true,
        model: true,
    },
    Setting {
        name: "buffer",
        key: "buffer",
        kind: Kind::IntOrUnbounded { max: 1 << 20 },
        default: DefaultValue::Is("2"),
        value_name: "WORDS",
        help: "words that may wait at one switch input (SPEC §2): 2 is the wormhole model's input buffer, 0 a bufferless switch (every message on a clear path, as TDM NoCs and Minsky §4.2.4), unbounded the idealisation",
        target: true,
        model: true,
    },
    Setting {
        name: "timing",
        key: "timing",
        kind: Kind::Choice(TimingModel::NAMES),
        default: DefaultValue::Is("port"),
        value_name: "HOW",
        help: "release and deadline timing: port (each node's ports serialize its messages) or thesis (Minsky's instant writes, Fig 4-3)",
        target: true,
        model: true,
    },
    Setting {
        name: "throughput",
        key: "throughput",
        kind: Kind::Flag,
        default: DefaultValue::Is("off"),
        value_name: "on|off",
        help: "route for throughput (Minsky §5.2): every deadline at least release + the period bound, so rerouting can spread messages over the period",
        target: true,
        model: false,
    },
    Setting {
        name: "follow",
        key: "follow",
        kind: Kind::Flag,
        default: DefaultValue::Is("on"),
        value_name: "on|off",
        help: "let a dynamic model's run order the plan: every model `compare` runs is run on the plan's placement, and when one finishes sooner the exact scheduler follows its order (programs of at most 2,000 messages); off plans with the scheduler's own orders only",
        target: true,
        model: true,
    },
    Setting {
        name: "seed",
        key: "seed",
        kind: Kind::Int {
            min: 0,
            max: u64::MAX,
        },
        default: DefaultValue::Is("1"),
        value_name: "N",
        help: "seed for every random choice (the same input and seed give byte-identical output)",
        target: true,
        model: false,
    },
    Setting {
        name: "effort",
        key: "effort",
        kind: Kind::Level(&["quick", "default", "thorough"]),
        default: DefaultValue::Is("default"),
        value_name: "LEVEL",
        help: "how hard the scheduler works on a plan: quick (its fixed orders only), default (an improvement phase of re-ordering the critical chain, skipped above 100,000 route steps; with --buffer 0, a search over clear paths when every task writes before it reads; a periodic slot table's solver, with a tenth of its budget where switches buffer), thorough (20 times as much, any size), or SECONDS (as many rounds as fit; not reproducible across machines)",
        target: true,
        model: true,
    },
];

/// A setting's value, checked against its row.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value {
    Int(u64),
    Word(String),
    Unbounded,
    Flag(bool),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Word(w) => f.write_str(w),
            Value::Unbounded => f.write_str("unbounded"),
            Value::Flag(true) => f.write_str("on"),
            Value::Flag(false) => f.write_str("off"),
        }
    }
}

impl Value {
    fn json(&self) -> serde_json::Value {
        match self {
            Value::Int(n) => (*n).into(),
            Value::Word(w) => w.as_str().into(),
            Value::Unbounded => "unbounded".into(),
            Value::Flag(b) => (*b).into(),
        }
    }
}

/// Why a setting was refused: the same words from every door (a front end adds where it came
/// from: `--ports`, `:set ports`, `:ports`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("unknown setting `{name}`{hint}")]
    Unknown { name: String, hint: String },
    #[error("`{setting}` {expected}, not `{value}`")]
    Bad {
        setting: &'static str,
        expected: String,
        value: String,
    },
}

impl Setting {
    /// The row named `name` (a config or option key, `lp_solver`, also names `lp-solver`).
    pub fn find(name: &str) -> Result<&'static Setting, SettingError> {
        SETTINGS
            .iter()
            .find(|s| s.name == name || s.key == name)
            .ok_or_else(|| SettingError::Unknown {
                name: name.to_string(),
                hint: did_you_mean(name, SETTINGS.iter().map(|s| s.name))
                    .map(|s| format!(": did you mean `{s}`?"))
                    .unwrap_or_else(|| format!(" (the settings are {})", names())),
            })
    }

    /// What the setting takes, in words: "takes a whole number from 1 to 64".
    pub fn expected(&self) -> String {
        match self.kind {
            Kind::Network => "takes a network such as mesh:4x4 or torus:8x8".into(),
            Kind::Name => "takes a name".into(),
            Kind::Choice(words) => format!("takes one of {}", words.join(", ")),
            Kind::Int { min, max } if max == u64::MAX => {
                format!("takes a whole number from {min}")
            }
            Kind::Int { min, max } => format!("takes a whole number from {min} to {max}"),
            Kind::IntOrUnbounded { max } => {
                format!("takes a whole number from 0 to {max}, or unbounded")
            }
            Kind::Level(words) => {
                format!(
                    "takes one of {}, or a time in seconds (30s)",
                    words.join(", ")
                )
            }
            Kind::Flag => "takes on or off".into(),
        }
    }

    /// Checks `text` against the row: the value, or why not.
    pub fn parse(&'static self, text: &str) -> Result<Value, SettingError> {
        let text = text.trim();
        let bad = |why: Option<String>| SettingError::Bad {
            setting: self.name,
            expected: why.unwrap_or_else(|| self.expected()),
            value: text.to_string(),
        };
        let int = |t: &str| t.replace('_', "").parse::<u64>().ok();
        match self.kind {
            Kind::Network => text
                .parse::<NetworkSpec>()
                .map(|n| Value::Word(n.to_string()))
                .map_err(|e| bad(Some(format!("takes a network ({e})")))),
            Kind::Name if !text.is_empty() => Ok(Value::Word(text.to_string())),
            Kind::Name => Err(bad(None)),
            Kind::Choice(words) => match words.iter().find(|w| **w == text) {
                Some(w) => Ok(Value::Word((*w).to_string())),
                None => Err(bad(did_you_mean(text, words.iter().copied())
                    .map(|s| format!("{}: did you mean `{s}`?", self.expected())))),
            },
            Kind::Int { min, max } => match int(text) {
                Some(n) if (min..=max).contains(&n) => Ok(Value::Int(n)),
                _ => Err(bad(None)),
            },
            Kind::IntOrUnbounded { max } => match text {
                "unbounded" => Ok(Value::Unbounded),
                t => match int(t) {
                    Some(n) if n <= max => Ok(Value::Int(n)),
                    _ => Err(bad(None)),
                },
            },
            Kind::Level(words) => {
                if let Some(w) = words.iter().find(|w| **w == text) {
                    return Ok(Value::Word((*w).to_string()));
                }
                match int(text.strip_suffix('s').unwrap_or(text)) {
                    Some(n) if n > 0 => Ok(Value::Int(n)),
                    _ => Err(bad(None)),
                }
            }
            Kind::Flag => match text {
                "on" | "true" | "yes" | "1" => Ok(Value::Flag(true)),
                "off" | "false" | "no" | "0" => Ok(Value::Flag(false)),
                _ => Err(bad(None)),
            },
        }
    }

    /// The default as a value, when it does not depend on the program.
    pub fn default_value(&'static self) -> Option<Value> {
        match self.default {
            DefaultValue::Is(text) => self.parse(text).ok(),
            DefaultValue::Depends(_) => None,
        }
    }

    /// The default in words, for help and `:show`.
    pub fn default_text(&self) -> &'static str {
        match self.default {
            DefaultValue::Is(t) | DefaultValue::Depends(t) => t,
        }
    }

    /// The row's line of help, with its choices or range and its default.
    pub fn help_line(&self) -> String {
        let mut s = self.help.to_string();
        match self.kind {
            Kind::Network => s.push_str(&format!(
                ": {}",
                crate::topology::registry::TOPOLOGIES
                    .iter()
                    .map(|t| t.example())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Kind::Choice(words) | Kind::Level(words) => {
                s.push_str(&format!(": {}", words.join(" | ")));
                if matches!(self.kind, Kind::Level(_)) {
                    s.push_str(" | SECONDS");
                }
            }
            Kind::Int { min, max } if max != u64::MAX => s.push_str(&format!(", {min} to {max}")),
            Kind::IntOrUnbounded { max } => s.push_str(&format!(", 0 to {max} or unbounded")),
            _ => {}
        }
        s.push_str(&format!(" [default: {}]", self.default_text()));
        s
    }
}

/// Every setting's name, for messages.
pub fn names() -> String {
    SETTINGS
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest of `candidates` to `word`, when it is close enough to be a typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, c)| d <= 2.max(c.len() / 3) && d < c.len().max(word.len()))
        .min()
        .map(|(_, c)| c)
}

/// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, for "did you
/// mean": a swapped pair is the commonest typo (`prots`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Chosen settings, each checked against its row; a setting not chosen falls to the next source
/// (`a.or(b)`: a's choices, then b's), finally to the table's default.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Settings {
    values: BTreeMap<&'static str, Value>,
}

impl Settings {
    /// No setting chosen.
    pub fn new() -> Settings {
        Settings::default()
    }

    /// Every setting whose default does not depend on the program, at its default.
    pub fn defaults() -> Settings {
        let values = SETTINGS
            .iter()
            .filter_map(|s| s.default_value().map(|v| (s.name, v)))
            .collect();
        Settings { values }
    }

    /// Chooses `name` = `text`, checked against the table.
    pub fn set(&mut self, name: &str, text: &str) -> Result<&mut Settings, SettingError> {
        let row = Setting::find(name)?;
        let v = row.parse(text)?;
        self.values.insert(row.name, v);
        Ok(self)
    }

    /// [`Settings::set`], by value, for code that already holds a checked setting.
    pub fn with(mut self, name: &str, text: impl fmt::Display) -> Result<Settings, SettingError> {
        self.set(name, &text.to_string())?;
        Ok(self)
    }

    /// Forgets the choice of `name`.
    pub fn clear(&mut self, name: &str) -> Result<(), SettingError> {
        let row = Setting::find(name)?;
        self.values.remove(row.name);
        Ok(())
    }

    /// The chosen value of `name` (`None`: not chosen here).
    pub fn get(&self, name: &str) -> Option<&Value> {
        let row = SETTINGS.iter().find(|s| s.name == name || s.key == name)?;
        self.values.get(row.name)
    }

    /// A chosen word (a choice, a network, a name).
    pub fn word(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Value::Word(w) => Some(w),
            _ => None,
        }
    }

    /// A chosen whole number.
    pub fn int(&self, name: &str) -> Option<u64> {
        match self.get(name)? {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A chosen flag.
    pub fn flag(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            Value::Flag(b) => Some(*b),
            _ => None,
        }
    }

    /// A chosen choice as its enum.
    pub fn choice<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.word(name).and_then(|w| w.parse().ok())
    }

    /// These choices, each unchosen one taken from `base`.
    pub fn or(mut self, base: Settings) -> Settings {
        for (k, v) in base.values {
            self.values.entry(k).or_insert(v);
        }
        self
    }

    /// The chosen settings, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static Setting, &Value)> {
        SETTINGS
            .iter()
            .filter_map(|s| self.values.get(s.name).map(|v| (s, v)))
    }

    /// Nothing chosen.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// As a JSON object keyed by each row's `key`, in table order.
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        for (s, v) in self.iter() {
            map.insert(s.key.to_string(), v.json());
        }
        serde_json::Value::Object(map)
    }

    /// Reads a JSON object written by [`Settings::to_json`]; keys that are not settings are
    /// skipped when `strict` is false (a plan document's `config` also records how it was placed).
    pub fn from_json(
        map: &serde_json::Map<String, serde_json::Value>,
        strict: bool,
    ) -> Result<Settings, SettingError> {
        let mut s = Settings::new();
        for (k, v) in map {
            if Setting::find(k).is_err() && !strict {
                continue;
            }
            let text = match v {
                serde_json::Value::String(t) => t.clone(),
                serde_json::Value::Bool(b) => if *b { "on" } else { "off" }.to_string(),
                serde_json::Value::Null => continue,
                other => other.to_string(),
            };
            s.set(k, &text)?;
        }
        Ok(s)
    }
}

impl Serialize for Settings {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Settings, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        Settings::from_json(&map, true).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_a_value_of_its_row() {
        for s in SETTINGS {
            if let DefaultValue::Is(_) = s.default {
                assert!(s.default_value().is_some(), "{}", s.name);
            }
            assert!(s.key.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
        }
    }

    #[test]
    fn refusals_name_the_setting_and_what_it_takes() {
        let mut s = Settings::new();
        let e = s.set("ports", "0").unwrap_err().to_string();
        assert_eq!(e, "`ports` takes a whole number from 1 to 64, not `0`");
        let e = s.set("prots", "2").unwrap_err().to_string();
        assert_eq!(e, "unknown setting `prots`: did you mean `ports`?");
        let e = s.set("route", "dorr").unwrap_err().to_string();
        assert!(e.contains("did you mean `dor`?"), "{e}");
        s.set("lp_solver", "highs").unwrap();
        assert_eq!(s.word("lp-solver"), Some("highs"));
    }

    #[test]
    fn json_round_trips() {
        let s = Settings::new()
            .with("ports", 2)
            .unwrap()
            .with("throughput", "on")
            .unwrap()
            .with("network", "torus:4x4")
            .unwrap();
        let back: Settings = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
