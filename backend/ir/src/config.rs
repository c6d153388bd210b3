//! The value types of a plan's configuration, shared by the language (which checks a script's
//! `(target …)` against them, with its span) and the backend (which acts on them): how tasks
//! are placed, messages routed and scheduled, and deadlines timed. Each is a choice among
//! words; a word that is not one of them is an [`UnknownChoice`] naming the choices.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A setting that is not one of its choices: ``unknown timing `x`: expected port or thesis``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`: expected {choices}")]
pub struct UnknownChoice {
    pub what: &'static str,
    pub value: String,
    pub choices: &'static str,
}

/// A closed set of named choices: the enum, its names, `Display` and `FromStr`.
macro_rules! choices {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal, $choices:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $word)] $variant ),+
        }

        impl $name {
            /// Every choice, in the order `--help` lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every choice's word, in the same order (the settings table's choices).
            pub const NAMES: &'static [&'static str] = &[$($word),+];

            /// The word a user writes.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = UnknownChoice;
            fn from_str(s: &str) -> Result<Self, UnknownChoice> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|c| c.name() == s)
                    .ok_or_else(|| UnknownChoice {
                        what: $what,
                        value: s.to_string(),
                        choices: $choices,
                    })
            }
        }
    };
}

choices! {
    /// How tasks are placed on the network's nodes (Minsky §4.2.1).
    PlaceMethod, "placement method", "one of best, mapping, identity, random, anneal" {
        /// Each of mapping (when every task has one), identity and anneal, planned; the placement
        /// whose schedule is best is kept (the default when the script names no mapping).
        Best = "best",
        /// The canned mapping the script names (`target :mapping`).
        Mapping = "mapping",
        /// Task i on node i.
        Identity = "identity",
        /// A seeded random permutation.
        Random = "random",
        /// Simulated annealing of the fine placement cost (word-hops × link and port overload
        /// inside the release–deadline windows, Minsky §4.2.1).
        Anneal = "anneal",
    }
}

choices! {
    /// How messages are routed (Minsky §4.2.2).
    RouteMethod, "routing method", "one of dor, random, shortest, reroute" {
        /// Dimension order, balanced on tori.
        Dor = "dor",
        /// A seeded random minimal path.
        Random = "random",
        /// A shortest path on any graph.
        Shortest = "shortest",
        /// Rerouting by annealing to relieve overloaded links.
        Reroute = "reroute",
    }
}

choices! {
    /// Which scheduler times the messages (`--schedule`).
    ScheduleMethod, "scheduler", "lp, exact, milp or best" {
        /// Minsky §4.2.4: the linear program.
        Lp = "lp",
        /// The cycle-level list scheduler.
        Exact = "exact",
        /// The exact scheduler's plan, then the time-indexed MILP (HiGHS, the `highs` feature)
        /// for the optimum on small programs.
        Milp = "milp",
        /// Both; the better valid schedule wins.
        Best = "best",
    }
}

choices! {
    /// Which linear-programming solver the LP scheduler uses (`--lp-solver`).
    LpSolverKind, "LP solver", "microlp or highs" {
        /// The pure-Rust simplex of the `microlp` crate (the default).
        MicroLp = "microlp",
        /// HiGHS, when built with the `highs` feature.
        Highs = "highs",
    }
}

#[allow(clippy::derivable_impls)] // the enum is made by `choices!`, which derives no Default
impl Default for LpSolverKind {
    fn default() -> Self {
        LpSolverKind::MicroLp
    }
}

choices! {
    /// How releases and deadlines are timed before scheduling (SPEC §2).
    TimingModel, "timing", "port or thesis" {
        /// Each node's injection and ejection ports serialize its messages (the default).
        Port = "port",
        /// Minsky's instant-write timing: a message arrives `size` cycles after release,
        /// whatever else its node sends, and compute after a write delays the write (Fig 4-3).
        Thesis = "thesis",
    }
}

#[allow(clippy::derivable_impls)] // the enum is made by `choices!`, which derives no Default
impl Default for TimingModel {
    fn default() -> Self {
        TimingModel::Port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_words_name_the_choices() {
        for m in PlaceMethod::ALL {
            assert_eq!(m.name().parse::<PlaceMethod>(), Ok(*m));
        }
        assert_eq!("exact".parse::<ScheduleMethod>(), Ok(ScheduleMethod::Exact));
        let e = "zigzag".parse::<RouteMethod>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown routing method `zigzag`: expected one of dor, random, shortest, reroute"
        );
        assert_eq!(
            serde_json::to_string(&ScheduleMethod::Best).unwrap(),
            "\"best\""
        );
    }
}
