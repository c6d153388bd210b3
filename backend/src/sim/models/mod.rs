//! The hardware models, one folder each; [`crate::sim::registry`] lists them by name.

pub mod circuit;
pub mod compiled;
pub mod multihop;
pub mod path_reservation;
pub mod pms;
pub mod router;
pub mod scheduled;
pub mod store_forward;
pub mod warp;
pub mod wormhole;
