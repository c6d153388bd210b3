//! `key=value` options of a hardware model (`wormhole vc=2 buf=4 arb=oldest`).
//!
//! Each model declares its options once, as a table of [`OptionSpec`] (key, type and range,
//! default, help); parsing checks every written option against the table before the model is
//! built (an unknown key, a value of the wrong type or out of range is an error naming the
//! model's options), the model's constructor reads them by key with the declared default, and
//! `--help` prints the same table.

use std::fmt;

/// Why a model could not be built or run: a message a user can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError(pub String);

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

impl ModelError {
    pub fn new(msg: impl Into<String>) -> Self {
        ModelError(msg.into())
    }
}

/// What values an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// An integer in `lo..=hi`.
    Int { lo: u64, hi: u64 },
    /// A finite real number.
    Real,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Free text the model parses itself.
    Text,
    /// A plan setting, checked by its row of the settings table.
    Setting(&'static ttdl_ir::settings::Setting),
}

/// The default of an option: a value, or one the model works out from the network or its other
/// options (described in words for `--help`, supplied by the model when it reads the option).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionDefault {
    Is(&'static str),
    Depends(&'static str),
}

/// One option of a model, declared once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    pub key: &'static str,
    pub kind: OptionKind,
    pub default: OptionDefault,
    pub help: &'static str,
}

/// An integer option in `lo..=hi` with a fixed default.
pub const fn int(
    key: &'static str,
    default: &'static str,
    lo: u64,
    hi: u64,
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        key,
        kind: OptionKind::Int { lo, hi },
        default: OptionDefault::Is(default),
        help,
    }
}

/// An integer option whose default the model works out (`how` says how, for `--help`).
pub const fn int_depends(
    key: &'static str,
    how: &'static str,
    lo: u64,
    hi: u64,
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        key,
        kind: OptionKind::Int { lo, hi },
        default: OptionDefault::Depends(how),
        help,
    }
}

/// A plan setting of the settings table as an option: its key, kind, default and help.
pub const fn setting(s: &'static ttdl_ir::settings::Setting) -> OptionSpec {
    OptionSpec {
        key: s.key,
        kind: OptionKind::Setting(s),
        default: match s.default {
            ttdl_ir::settings::DefaultValue::Is(d) => OptionDefault::Is(d),
            ttdl_ir::settings::DefaultValue::Depends(d) => OptionDefault::Depends(d),
        },
        help: s.help,
    }
}

/// A real option.
pub const fn real(key: &'static str, default: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        key,
        kind: OptionKind::Real,
        default: OptionDefault::Is(default),
        help,
    }
}

/// A choice among words; the default is the first unless `default` names another.
pub const fn choice(
    key: &'static str,
    default: &'static str,
    words: &'static [&'static str],
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        key,
        kind: OptionKind::Choice(words),
        default: OptionDefault::Is(default),
        help,
    }
}

/// A model option's choice bound to the enum it selects: each word is declared once, beside its
/// variant (by [`choice_enum!`]), so the option's word list, its help and the model's reading of
/// it cannot disagree, and a new variant cannot fall through to another's behaviour.
pub trait Choice: Copy + 'static {
    /// The words a user writes, in declaration order.
    const WORDS: &'static [&'static str];
    /// The variant of each word, in the same order.
    const VARIANTS: &'static [Self];

    /// The variant a word names, if any.
    fn from_word(word: &str) -> Option<Self> {
        Self::WORDS
            .iter()
            .position(|&w| w == word)
            .map(|i| Self::VARIANTS[i])
    }

    /// The word of a variant.
    fn word(self) -> &'static str
    where
        Self: PartialEq,
    {
        Self::VARIANTS
            .iter()
            .position(|&v| v == self)
            .map_or("", |i| Self::WORDS[i])
    }
}

/// Declares an enum whose variants are the words of a model option ([`Choice`]):
/// `choice_enum! { pub enum Arb { Oldest = "oldest", Fifo = "fifo" } }`.
macro_rules! choice_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($(#[$vmeta])* $variant),+ }
        impl $crate::sim::options::Choice for $name {
            const WORDS: &'static [&'static str] = &[$($word),+];
            const VARIANTS: &'static [Self] = &[$($name::$variant),+];
        }
    };
}
pub(crate) use choice_enum;

/// A choice whose default the model works out.
pub const fn choice_depends(
    key: &'static str,
    how: &'static str,
    words: &'static [&'static str],
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        key,
        kind: OptionKind::Choice(words),
        default: OptionDefault::Depends(how),
        help,
    }
}

/// Free text with a default.
pub const fn text(key: &'static str, default: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        key,
        kind: OptionKind::Text,
        default: OptionDefault::Is(default),
        help,
    }
}

impl OptionSpec {
    /// `vc=1`, `vc=(2 on tori)`, `arb=oldest|fifo` — the short form `--help` and errors use.
    pub fn short(&self) -> String {
        let default = match self.default {
            OptionDefault::Is(v) => v.to_string(),
            OptionDefault::Depends(how) => format!("({how})"),
        };
        let words = match self.kind {
            OptionKind::Choice(words) => Some(words),
            OptionKind::Setting(s) => match s.kind {
                ttdl_ir::settings::Kind::Choice(words) => Some(words),
                _ => None,
            },
            _ => None,
        };
        match words {
            Some(words) => {
                // The default first, then the others (a default that depends is said in words).
                let mut all = vec![default.clone()];
                all.extend(
                    words
                        .iter()
                        .filter(|w| **w != default)
                        .map(|w| w.to_string()),
                );
                format!("{}={}", self.key, all.join("|"))
            }
            None => format!("{}={default}", self.key),
        }
    }

    /// Checks a written value against the declared type and range.
    fn check(&self, value: &str) -> Result<(), ModelError> {
        let key = self.key;
        match self.kind {
            OptionKind::Int { lo, hi } => {
                let v = value.parse::<u64>().map_err(|_| {
                    ModelError(format!(
                        "option `{key}={value}`: expected a non-negative integer"
                    ))
                })?;
                if v < lo || v > hi {
                    return Err(ModelError(format!(
                        "option `{key}={v}`: must be between {lo} and {hi}"
                    )));
                }
            }
            OptionKind::Real => {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| {
                        ModelError(format!("option `{key}={value}`: expected a number"))
                    })?;
            }
            OptionKind::Choice(words) => {
                if !words.contains(&value) {
                    return Err(ModelError(format!(
                        "option `{key}={value}`: expected one of {}",
                        words.join(", ")
                    )));
                }
            }
            OptionKind::Text => {}
            OptionKind::Setting(s) => {
                s.parse(value)
                    .map_err(|e| ModelError(format!("option `{key}={value}`: {e}")))?;
            }
        }
        Ok(())
    }
}

/// The options of a model in their short form, one line: `vc=1 buf=2 arb=oldest|fifo`.
pub fn describe(specs: &[OptionSpec]) -> String {
    specs
        .iter()
        .map(OptionSpec::short)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The options of a model with their help, one per line (for `ttdl simulate --help`).
pub fn describe_long(specs: &[OptionSpec]) -> String {
    let width = specs.iter().map(|s| s.short().len()).max().unwrap_or(0);
    specs
        .iter()
        .map(|s| format!("{:<width$}  {}", s.short(), s.help))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The options given to one model, checked against its declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelOptions {
    specs: &'static [OptionSpec],
    /// Written values by key, in the order written.
    pairs: Vec<(String, String)>,
}

impl ModelOptions {
    /// Parses words of the form `key=value` (commas also separate: `vc=2,buf=4`) for a model
    /// with options `specs`: every key must be declared and every value fit its type.
    pub fn parse<'a>(
        model: &str,
        specs: &'static [OptionSpec],
        words: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, ModelError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for word in words.into_iter().flat_map(|w| w.split(',')) {
            let word = word.trim();
            if word.is_empty() {
                continue;
            }
            let (k, v) = word.split_once('=').ok_or_else(|| {
                ModelError(format!("model option `{word}` should be written key=value"))
            })?;
            let (k, v) = (k.trim(), v.trim());
            let spec = specs.iter().find(|s| s.key == k).ok_or_else(|| {
                ModelError(format!(
                    "model `{model}` has no option `{k}`; its options are: {}",
                    describe(specs)
                ))
            })?;
            spec.check(v)?;
            if let Some(slot) = pairs.iter_mut().find(|(pk, _)| pk == k) {
                slot.1 = v.to_string();
            } else {
                pairs.push((k.to_string(), v.to_string()));
            }
        }
        Ok(ModelOptions { specs, pairs })
    }

    fn spec(&self, key: &str) -> Result<&'static OptionSpec, ModelError> {
        self.specs
            .iter()
            .find(|s| s.key == key)
            .ok_or_else(|| ModelError(format!("internal: option `{key}` is not declared")))
    }

    fn written(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value written, else the declared default (`None` when the model works it out).
    fn value(&self, key: &str) -> Result<Option<&str>, ModelError> {
        let spec = self.spec(key)?;
        Ok(match (self.written(key), spec.default) {
            (Some(v), _) => Some(v),
            (None, OptionDefault::Is(d)) => Some(d),
            (None, OptionDefault::Depends(_)) => None,
        })
    }

    /// The text written for this option, if any.
    pub fn written_text(&self, key: &str) -> Option<&str> {
        self.written(key)
    }

    /// Whether the user wrote this option.
    pub fn is_set(&self, key: &str) -> bool {
        self.written(key).is_some()
    }

    /// An integer option with a declared default.
    pub fn int(&self, key: &str) -> Result<u64, ModelError> {
        match self.value(key)? {
            Some(v) => v
                .parse()
                .map_err(|_| ModelError(format!("internal: default of `{key}` is not an integer"))),
            None => Err(ModelError(format!(
                "internal: option `{key}` needs the model's default"
            ))),
        }
    }

    /// An integer option whose default the model works out: `default` unless written (a
    /// written value was range-checked at parse time; this one is the model's own).
    pub fn int_or(&self, key: &str, default: u64) -> Result<u64, ModelError> {
        match self.written(key) {
            Some(_) => self.int_written(key),
            None => {
                self.spec(key)?;
                Ok(default)
            }
        }
    }

    fn int_written(&self, key: &str) -> Result<u64, ModelError> {
        self.written(key)
            .unwrap_or_default()
            .parse()
            .map_err(|_| ModelError(format!("option `{key}`: expected a non-negative integer")))
    }

    /// A real option.
    pub fn real(&self, key: &str) -> Result<f64, ModelError> {
        match self.value(key)? {
            Some(v) => v
                .parse()
                .map_err(|_| ModelError(format!("internal: default of `{key}` is not a number"))),
            None => Err(ModelError(format!(
                "internal: option `{key}` needs the model's default"
            ))),
        }
    }

    /// A choice with a declared default.
    pub fn choice(&self, key: &str) -> Result<&str, ModelError> {
        self.value(key)?.ok_or_else(|| {
            ModelError(format!(
                "internal: option `{key}` needs the model's default"
            ))
        })
    }

    /// A choice read as the enum it is bound to ([`Choice`]).
    pub fn chosen<C: Choice>(&self, key: &str) -> Result<C, ModelError> {
        let word = self.choice(key)?;
        C::from_word(word).ok_or_else(|| {
            ModelError(format!(
                "internal: `{key}={word}` passed the option's check but names no variant"
            ))
        })
    }

    /// A choice whose default the model works out, read as its enum.
    pub fn chosen_or<C: Choice + PartialEq>(&self, key: &str, default: C) -> Result<C, ModelError> {
        let word = self.choice_or(key, default.word())?;
        C::from_word(word).ok_or_else(|| {
            ModelError(format!(
                "internal: `{key}={word}` passed the option's check but names no variant"
            ))
        })
    }

    /// A choice whose default the model works out.
    pub fn choice_or<'s>(&'s self, key: &str, default: &'s str) -> Result<&'s str, ModelError> {
        self.spec(key)?;
        Ok(self.written(key).unwrap_or(default))
    }

    /// A free-text option.
    pub fn text(&self, key: &str) -> Result<&str, ModelError> {
        self.choice(key)
    }

    /// The options as written, `k=v` joined by spaces (for names in tables).
    pub fn render(&self) -> String {
        self.pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    choice_enum! {
        enum Arb {
            Oldest = "oldest",
            Fifo = "fifo",
        }
    }

    #[test]
    fn a_choice_reads_the_variant_its_word_names() {
        assert_eq!(Arb::WORDS, &["oldest", "fifo"]);
        assert_eq!(Arb::from_word("fifo"), Some(Arb::Fifo));
        assert_eq!(Arb::from_word("rr"), None);
        assert_eq!(Arb::Oldest.word(), "oldest");
        const SPEC: &[OptionSpec] = &[choice("arb", "oldest", Arb::WORDS, "arbitration")];
        let opts = ModelOptions::parse("test", SPEC, ["arb=fifo"]).unwrap();
        assert_eq!(opts.chosen::<Arb>("arb").unwrap(), Arb::Fifo);
        let opts = ModelOptions::parse("test", SPEC, []).unwrap();
        assert_eq!(opts.chosen::<Arb>("arb").unwrap(), Arb::Oldest);
        assert!(ModelOptions::parse("test", SPEC, ["arb=rr"]).is_err());
    }

    const SPECS: &[OptionSpec] = &[
        int_depends("vc", "2 on tori", 1, 64, "virtual channels"),
        int("buf", "2", 1, 16, "buffer flits"),
        choice("arb", "oldest", &["oldest", "fifo"], "arbitration"),
        real("gamma", "1", "routing time"),
    ];

    #[test]
    fn declared_once_checked_at_parse() {
        let o = ModelOptions::parse("m", SPECS, ["vc=3", "arb=fifo"]).unwrap();
        assert_eq!(o.int_or("vc", 2).unwrap(), 3);
        assert_eq!(o.int("buf").unwrap(), 2);
        assert_eq!(o.choice("arb").unwrap(), "fifo");
        assert_eq!(o.real("gamma").unwrap(), 1.0);
        let d = ModelOptions::parse("m", SPECS, []).unwrap();
        assert_eq!(d.int_or("vc", 2).unwrap(), 2);
        assert!(!d.is_set("vc"));
        for bad in ["vc=0", "buf=x", "arb=lifo", "gamma=inf", "nope=1", "vc"] {
            assert!(ModelOptions::parse("m", SPECS, [bad]).is_err(), "{bad}");
        }
        let e = ModelOptions::parse("m", SPECS, ["nope=1"]).unwrap_err();
        assert_eq!(
            e.0,
            "model `m` has no option `nope`; its options are: vc=(2 on tori) buf=2 arb=oldest|fifo gamma=1"
        );
    }
}
