//! TTDL's backend: the traffic IR and everything after it — topologies, placement, routing,
//! scheduling, switch programs, hardware-model simulators and reports. It does not know the
//! language exists: a tasks file (Minsky Fig 5-5) is enough to drive it.

pub mod anneal;
pub mod array;
pub mod metrics;
pub mod pipeline;
pub mod place;
pub mod progress;
pub mod report;
pub mod route;
pub mod schedule;
pub mod sim;
pub mod switch;
pub mod tasks_file;

// The shared IR, at the paths the backend has always used.
pub use topology::{Network, NetworkSpec, NodeId};
pub use traffic::{Message, MsgId, Op, Placement, Route, Routing, Target, Task, TaskId, Traffic};
pub use ttdl_ir::{topology, traffic};
