//! `key=value` options of a hardware model (`wormhole vc=2 buf=4 arb=oldest`), parsed once and
//! read by the model's constructor; a key nobody read is an error, so typos do not pass silently.

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

/// The options given to one model, in the order written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelOptions {
    pairs: Vec<(String, String)>,
    used: Vec<bool>,
}

impl ModelOptions {
    /// Parses words of the form `key=value` (commas also separate: `vc=2,buf=4`).
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Self, ModelError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for word in words.into_iter().flat_map(|w| w.split(',')) {
            let word = word.trim();
            if word.is_empty() {
                continue;
            }
            let (k, v) = word.split_once('=').ok_or_else(|| {
                ModelError(format!("model option `{word}` should be written key=value"))
            })?;
            let k = k.trim().to_string();
            if let Some(slot) = pairs.iter_mut().find(|(pk, _)| *pk == k) {
                slot.1 = v.trim().to_string();
            } else {
                pairs.push((k, v.trim().to_string()));
            }
        }
        let used = vec![false; pairs.len()];
        Ok(ModelOptions { pairs, used })
    }

    fn take(&mut self, key: &str) -> Option<String> {
        let i = self.pairs.iter().position(|(k, _)| k == key)?;
        self.used[i] = true;
        Some(self.pairs[i].1.clone())
    }

    /// A non-negative integer option.
    pub fn u64(&mut self, key: &str, default: u64) -> Result<u64, ModelError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<u64>().map_err(|_| {
                ModelError(format!(
                    "option `{key}={v}`: expected a non-negative integer"
                ))
            }),
        }
    }

    /// An integer option that must lie in `lo..=hi`.
    pub fn u64_in(&mut self, key: &str, default: u64, lo: u64, hi: u64) -> Result<u64, ModelError> {
        let v = self.u64(key, default)?;
        if v < lo || v > hi {
            return Err(ModelError(format!(
                "option `{key}={v}`: must be between {lo} and {hi}"
            )));
        }
        Ok(v)
    }

    /// A real-valued option.
    pub fn f64(&mut self, key: &str, default: f64) -> Result<f64, ModelError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| ModelError(format!("option `{key}={v}`: expected a number"))),
        }
    }

    /// One of a fixed set of words; the first of `allowed` is not implied, `default` is.
    pub fn choice(
        &mut self,
        key: &str,
        default: &str,
        allowed: &[&str],
    ) -> Result<String, ModelError> {
        let v = self.take(key).unwrap_or_else(|| default.to_string());
        if allowed.contains(&v.as_str()) {
            Ok(v)
        } else {
            Err(ModelError(format!(
                "option `{key}={v}`: expected one of {}",
                allowed.join(", ")
            )))
        }
    }

    /// A free-form string option.
    pub fn string(&mut self, key: &str, default: &str) -> String {
        self.take(key).unwrap_or_else(|| default.to_string())
    }

    /// Errors on any option no reader asked for, naming the model's known options.
    pub fn finish(&self, model: &str, known: &str) -> Result<(), ModelError> {
        let unknown: Vec<&str> = self
            .pairs
            .iter()
            .zip(&self.used)
            .filter(|(_, &u)| !u)
            .map(|((k, _), _)| k.as_str())
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(ModelError(format!(
                "model `{model}` has no option {}; its options are: {known}",
                unknown
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
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

    #[test]
    fn parse_read_and_reject_unknown() {
        let mut o = ModelOptions::parse(["vc=2", "buf=4,arb=fifo"]).unwrap();
        assert_eq!(o.u64("vc", 1).unwrap(), 2);
        assert_eq!(o.u64("buf", 1).unwrap(), 4);
        assert_eq!(o.u64("delay", 7).unwrap(), 7);
        assert!(o.finish("wormhole", "vc buf").is_err());
        assert_eq!(
            o.choice("arb", "oldest", &["oldest", "fifo"]).unwrap(),
            "fifo"
        );
        assert!(o.finish("wormhole", "vc buf arb").is_ok());
        assert!(ModelOptions::parse(["vc"]).is_err());
        let mut bad = ModelOptions::parse(["vc=x"]).unwrap();
        assert!(bad.u64("vc", 1).is_err());
    }
}
