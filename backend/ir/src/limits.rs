//! Every limit TTDL enforces, in one place (in the manner of ketos's `RestrictConfig`).
//!
//! The fields of [`Limits`] are the evaluation budget a user or an embedder may raise (the CLI's
//! `--max-steps`, the REPL's `--max-steps`, `Session::with_budget`); the associated constants are
//! fixed bounds that keep a typo or a runaway from asking for terabytes, each far above what any
//! real program needs. Checks that trip them say which limit it was.

use serde::{Deserialize, Serialize};

/// The evaluation budget: what one evaluated source (a file, a REPL entry) may use.
///
/// What stops a runaway at the defaults is what grows without bound: the memory it takes
/// (`memory`: an infinitely consing loop stops within seconds) or the time it runs (`time`: a
/// loop that allocates nothing, `(define (f) (f)) (f)`, stops after a minute), or Ctrl-C in the
/// REPL. The step count is far beyond both (a billion steps take about 10 s), there for an
/// embedder that wants a deterministic bound, and to refuse at once a `dotimes` whose count
/// could never finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Evaluation steps in all (per evaluated source). `--max-steps` on the command line.
    pub steps: u64,
    /// Bytes of memory one evaluated source may take beyond what the process held when it
    /// started (its lists' cells, and on Linux the process's resident memory).
    /// `--max-memory` (MiB) on the command line.
    pub memory: u64,
    /// Wall-clock time one evaluated source may run. `--max-time` (seconds) on the command line.
    pub time: std::time::Duration,
    /// Nested (non-tail) call depth. `--max-depth` on the command line.
    pub depth: usize,
    /// Tasks a program may create.
    pub tasks: usize,
    /// Messages a program may send.
    pub messages: usize,
}

/// The defaults leave room for any program a user would write — Jacobi 2D on a 64×64 torus, 100
/// iterations (3.3 million stream operations) takes about 15 million steps and half a second; a
/// loop that conses 3.3 million `(src dst size)` records by tail recursion and sums them, 100
/// million steps and about 1 s — and stop a runaway by what it grows: 4 GiB of memory or a
/// minute of evaluation. 10¹¹ steps would take a quarter of an hour or more.
impl Default for Limits {
    fn default() -> Self {
        Limits {
            steps: 100_000_000_000,
            memory: 4 << 30,
            time: std::time::Duration::from_secs(60),
            depth: 10_000,
            tasks: 1 << 20,
            messages: 1 << 24,
        }
    }
}

impl Limits {
    // --- The language ---
    /// Lists nested deeper than this are refused by the reader: every later stage (reading,
    /// evaluating, dropping) walks data recursively, and no real program comes near it.
    pub const READER_DEPTH: usize = 1000;
    /// At most this many syntax errors are reported for one text (a binary file would give millions).
    pub const SYNTAX_ERRORS: usize = 100;
    /// Nested macro expansions allowed before the evaluator calls it runaway.
    pub const EXPANSION_DEPTH: usize = 1_000;
    /// How deeply a macro's result may nest (the reader allows [`Limits::READER_DEPTH`] in source).
    pub const EXPANSION_NESTING: usize = 4_000;
    /// Nesting of compiled code, macro expansions included.
    pub const CODE_NESTING: usize = 10_000;
    /// Largest list `range`/`iota` build: far beyond any communication description, small
    /// enough that a runaway cannot exhaust memory.
    pub const LIST_LENGTH: u64 = 10_000_000;
    /// Largest string `string-append` makes.
    pub const STRING_LENGTH: u64 = 1 << 26;

    // --- Programs ---
    /// Most words one program may send (every destination of a multicast counted): the
    /// schedulers and the flit-level models place or move every word, so this bounds their time
    /// and memory.
    pub const WORDS: u64 = 1 << 24;
    /// Latest cycle a release, deadline or total compute time may name (about 3·10¹⁴ cycles).
    pub const TIME: u64 = 1 << 48;
    /// Most tasks or phases a tasks file may announce: the counts size tables before any line
    /// backs them, so a typo must not ask for terabytes.
    pub const TASKS_FILE_COUNT: usize = 1 << 22;

    // --- Networks and hardware ---
    /// Largest crossbar: a crossbar of n nodes has n(n − 1) links (4,096 nodes: 16.8 million).
    pub const CROSSBAR_NODES: usize = 4096;
    /// Most processor–network ports per node a schedule may use (each is a lane the schedulers
    /// track cycle by cycle).
    pub const PORTS: u32 = 64;
    /// Longest per-switch latency, in cycles (`--latency`, the `scheduled` model's `latency`).
    pub const HOP_LATENCY: u64 = 65_536;

    // --- Simulation ---
    /// Most packets one synthetic or Poisson run may inject: keeps a run to minutes, far above
    /// any sweep of the seeds (Chittor §5.5 runs 10⁴-cycle windows).
    pub const SIM_PACKETS: f64 = 2e7;
    /// Most flits one synthetic run may inject.
    pub const SIM_FLITS: f64 = 1e9;
    /// Largest nodes × slots a Poisson run of the multi-hop model visits.
    pub const SIM_NODE_SLOTS: f64 = 1e9;
    /// Most points one sweep runs (each is a whole simulation).
    pub const SWEEP_POINTS: usize = 100_000;
    /// Most load points from `sweep --steps` or `--rates` (each a simulation per model and seed).
    pub const SWEEP_RATES: usize = 1_000;

    // --- What reports show (beyond these they say how much they left out) ---
    /// Rows beyond which a text table is cut.
    pub const TABLE_ROWS: usize = 200;
    /// Holds the HTML link×time chart draws (by message).
    pub const HTML_HOLDS: usize = 40_000;
    /// Message windows the HTML report shows.
    pub const HTML_WINDOWS: usize = 2_000;
    /// Subtasks the HTML task graph draws.
    pub const HTML_SUBTASKS: usize = 6_000;
    /// Snapshot intervals the HTML report steps through.
    pub const HTML_INTERVALS: usize = 64;
    /// Subtasks beyond which the DOT shows tasks rather than subtasks.
    pub const DOT_SUBTASKS: usize = 400;
    /// Task pairs beyond which the task-level DOT draws only the busiest ones (dot's layout grows
    /// with the square of the edges).
    pub const DOT_EDGES: usize = 600;
    /// Unmatched streams reported one by one before the rest are summed up in a note.
    pub const UNMATCHED_STREAMS: usize = 20;
    /// Longest source line a diagnostic shows whole.
    pub const SHOWN_LINE: usize = 400;
}
