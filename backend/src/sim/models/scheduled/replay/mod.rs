//! The `scheduled` model: the plan from `ttdl run`, replayed cycle by cycle from the switch
//! programs (Minsky Fig 5-9), moving actual words.
//!
//! Each processor pushes a message's words into its `DownFifo` in the cycles the schedule gives
//! its injection; each switch runs its `SWITCH` instructions, taking, in each cycle of an
//! instruction, the next word of that message waiting at the instruction's input and putting it
//! on the output (a link to the next switch, or the `UpFifo` to the processor). A word crossing a
//! link is usable at the next switch after the switch latency (0: the same cycle, the thesis's
//! circuit model). The replay fails loudly if an instruction finds no word to move, if a link
//! carries two words in one cycle, or if a message arrives incomplete, out of order or later than
//! planned; otherwise it reports when each message arrived and when each task finished, by
//! running the task programs against those arrivals.
//!
//! The instructions are the holds that leave a switch, each on a step of its message's route,
//! exactly as [`crate::switch::build`] lists them for `--out` (Fig 5-9); the replay reads them
//! from the holds and the routes rather than from that listing, which would keep a second copy of
//! the plan. It runs in named steps, each its own module:
//! 1. [`wiring`]: every step of every route numbered once (its read cursor and the word queue it
//!    fills), and the instructions and injections listed in start order;
//! 2. [`cycles`]: the cycles themselves, moving words and counting what waits;
//! 3. [`outcome`]: what arrived, checked against the plan, and the task programs run on it.

mod cycles;
mod outcome;
mod wiring;

use serde::{Deserialize, Serialize};

use crate::progress::Progress;
use crate::schedule::{Problem, Schedule, ScheduleError};
use crate::topology::Network;
use crate::traffic::{Placement, Routing, Traffic};

/// What the replay saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Per message: the cycle after its last word reached its last destination.
    pub delivered: Vec<u64>,
    /// Per message: the cycle its sender released it (program order, against these arrivals).
    pub released: Vec<u64>,
    /// Per message: `delivered − released`.
    pub latency: Vec<u64>,
    /// Per task: the cycle its program ended.
    pub task_finish: Vec<u64>,
    /// The last task finish or delivery.
    pub completion: u64,
    /// Words moved across links (word-hops).
    pub word_hops: u64,
    /// Most words waiting at one switch input in one cycle (SPEC §2): words that crossed the
    /// hop into the switch at least the switch latency ago and have not left on every hop after
    /// it. A node's injection ports count as one input. The plan's `buffered_max`.
    pub max_buffered: u64,
    /// Cycles simulated.
    pub cycles: u64,
}

impl ReplayReport {
    pub fn mean_latency(&self) -> f64 {
        if self.latency.is_empty() {
            0.0
        } else {
            self.latency.iter().sum::<u64>() as f64 / self.latency.len() as f64
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("replay: {0}")]
    Mismatch(String),
    #[error("interrupted")]
    Interrupted,
}

/// A [`ReplayError::Mismatch`]: the programs did not do what the plan says.
fn mismatch<T>(why: String) -> Result<T, ReplayError> {
    Err(ReplayError::Mismatch(why))
}

/// Replays a schedule: runs its switch programs cycle by cycle.
pub fn replay(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    schedule: &Schedule,
) -> Result<ReplayReport, ReplayError> {
    replay_with_progress(
        traffic,
        network,
        placement,
        routing,
        schedule,
        &Progress::none(),
    )
}

/// [`replay`], reporting the cycles replayed to `progress` and stopping when it is cancelled.
pub fn replay_with_progress(
    traffic: &Traffic,
    network: &Network,
    placement: &Placement,
    routing: &Routing,
    schedule: &Schedule,
    progress: &Progress,
) -> Result<ReplayReport, ReplayError> {
    let problem = Problem::new(traffic, network, placement, routing, schedule.hardware)?;
    run_with_progress(&problem, schedule, progress)
}

/// Executes the switch programs of `schedule` on `problem`'s routes (with the schedule's
/// injections as the processors' sends).
///
/// The state is dense: every step of every route (a read cursor, and the word queue it fills)
/// and every output port gets an index once, before the first cycle, and each cycle touches only
/// arrays. A queue keeps a list of its words only while some reader has yet to take them (with a
/// switch latency or several readers), so memory follows the words in flight, not the words moved.
pub fn run(problem: &Problem, schedule: &Schedule) -> Result<ReplayReport, ReplayError> {
    run_with_progress(problem, schedule, &Progress::none())
}

/// [`run`], reporting the cycles replayed to `progress` and stopping when it is cancelled.
pub fn run_with_progress(
    problem: &Problem,
    schedule: &Schedule,
    progress: &Progress,
) -> Result<ReplayReport, ReplayError> {
    let wired = wiring::wire(problem, &schedule.holds)?;
    let moved = cycles::execute(problem, &schedule.holds, wired, schedule.hardware, progress)?;
    outcome::report(problem, schedule, moved)
}
