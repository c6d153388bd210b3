//! Hardware models. Each model runs the *same* task programs (compute, non-blocking send,
//! blocking receive) against a network behind the [`NetworkModel`] trait.
//!
//! - `models/<model>/`: one folder per hardware model (wormhole, circuit, store_forward,
//!   path_reservation, multihop, compiled, pms, scheduled), each registered by one line in
//!   [`registry`] with its options declared there;
//! - `optical/`: Yuan's optical TDM torus, routing and channel assignment, and the analytic
//!   multi-hop model;
//! - `aapc/`: the all-to-all personalized communication phases, built once for the optical
//!   models and the compiled model's ordered-AAPC scheduler;
//! - `drive/`: what drives a model — a program's tasks ([`drive::program`], the
//!   execution-driven core), synthetic traffic at an offered load, the Poisson arrivals of the
//!   optical models ([`drive::poisson`]), Ding's command files;
//! - here: the model trait, the routing geometry and paths the models share (dimension order as
//!   the planner routes, [`crate::topology::grid::dor_legs`]), options, latency statistics,
//!   sweeps and their plots.
//!
//! The contract between the execution-driven core and a model: the core injects a packet when a
//! task sends (multicasts are split into unicasts for dynamic models), then calls [`NetworkModel::step`]
//! for every cycle at which the model has work ([`NetworkModel::next_event`] lets the core skip idle
//! stretches); the model reports each packet once, when its last word has been ejected.

use serde::{Deserialize, Serialize};

pub mod aapc;
pub mod drive;
pub mod energy;
pub mod event;
pub mod geometry;
pub mod models;
pub mod optical;
pub mod options;
pub mod packets;
pub mod paths;
pub mod plot;
pub mod registry;
pub mod slots;
pub mod stats;
pub mod sweep;

use crate::topology::NodeId;
use crate::traffic::{MsgId, TaskId};

pub use options::{ModelError, ModelOptions};

/// A unit of traffic handed to a model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Unique per run; the core uses it to find who is waiting.
    pub id: u64,
    pub src: NodeId,
    pub dst: NodeId,
    /// Length in words (= flits, = slots' worth of data, per the model's unit).
    pub size: u64,
    /// Cycle at which the sender handed it over.
    pub created: u64,
}

/// A packet fully delivered at cycle `at` (its last word ejected at the destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub packet: u64,
    pub at: u64,
}

/// A network model, advanced cycle by cycle (or event by event) by the core.
pub trait NetworkModel {
    /// Name as shown in tables (`wormhole`, `path-reservation d=4 …`).
    fn name(&self) -> String;
    /// Hand over a packet at cycle `now`.
    fn inject(&mut self, now: u64, packet: Packet);
    /// Advance through cycle `now` (called with strictly increasing `now`), appending deliveries.
    fn step(&mut self, now: u64, delivered: &mut Vec<Delivery>);
    /// The next cycle ≥ `now` at which the model has anything to do, or `None` when idle.
    fn next_event(&self, now: u64) -> Option<u64>;
    /// Word-cycles each directed link carried so far (by link id of the network), if tracked.
    fn link_busy(&self) -> Vec<u64> {
        Vec::new()
    }
    /// Like [`NetworkModel::inject`], also naming the program message and destination task the
    /// packet carries (the execution-driven core calls this; models that follow a precomputed
    /// plan, like the scheduled replay, override it to find their plan entry).
    fn inject_for(&mut self, now: u64, packet: Packet, msg: MsgId, dst_task: TaskId) {
        let _ = (msg, dst_task);
        self.inject(now, packet)
    }
    /// Why the model can make no more progress although it holds packets (a deadlock), if it can
    /// tell; the core then stops with this message instead of running to its cycle limit.
    fn stalled(&self, now: u64) -> Option<String> {
        let _ = now;
        None
    }
    /// Whether messages between two tasks of one node are handed to the model (the scheduled
    /// replay, whose plan passes them through the switch) instead of copied through memory by
    /// the core.
    fn carries_local(&self) -> bool {
        false
    }
    /// A counter that grows whenever the model does anything (a word crosses a link, a header
    /// takes a resource): when packets are held, none is delivered and this still grows, the
    /// run is a livelock rather than a deadlock. Defaults to the words links carried.
    fn progress(&self) -> u64 {
        self.link_busy().iter().sum()
    }
    /// The hardware whose parts the run's energy prices (SPEC §5): by default a router per
    /// node with a port per link plus the node's own, and no input buffers.
    fn hardware(&self, network: &crate::topology::Network) -> energy::Hardware {
        energy::Hardware::of_network(network, 0)
    }
    /// What the hardware did, when the model counts its events; `None`: the driver derives them
    /// from the words the links carried ([`energy::from_links`]).
    fn activity(&self) -> Option<energy::Activity> {
        None
    }
    /// Packets sent when the model cuts messages into several (`packet=N`); `None`: one per
    /// message copy handed over.
    fn packets(&self) -> Option<u64> {
        None
    }
    /// The most words that waited at one switch input in one cycle, for a model whose switches
    /// hold words by a plan (the scheduled replay, SPEC §2 `buffered_max`); `None` otherwise.
    fn buffered_max(&self) -> Option<u64> {
        None
    }
}
