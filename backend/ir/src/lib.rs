//! What the language and the backend share, and nothing else: the traffic a program produces
//! (tasks with their operation chains, messages with size, release, deadline and phase) and the
//! networks it runs on (topologies, coordinates, links, ports, specs like `mesh:4x4`).
//!
//! The language writes a [`Traffic`]; the backend places, routes and schedules it. Keeping the
//! two apart here means compiling the evaluator does not compile the schedulers or simulators.

pub mod config;
pub mod iterations;
pub mod limits;
pub mod settings;
pub mod topology;
pub mod traffic;

pub use topology::{Network, NetworkSpec, NodeId};
pub use traffic::{
    Dests, Label, Labels, Message, MsgId, Op, Placement, Route, Routing, Target, Task, TaskId,
    Traffic,
};
