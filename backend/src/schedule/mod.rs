//! Time scheduling: every message (or fragment) gets the cycles at which it holds each link of its
//! route (Minsky §4.2.4).

use serde::{Deserialize, Serialize};

use crate::topology::NodeId;
use crate::traffic::MsgId;

/// What a fragment holds: a network link or a processor port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Resource {
    Link { from: NodeId, to: NodeId },
    Inject(NodeId),
    Eject(NodeId),
}

/// A message fragment holding one resource for cycles `start ≤ t < end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Hold {
    pub msg: MsgId,
    pub resource: Resource,
    pub start: u64,
    pub end: u64,
}
