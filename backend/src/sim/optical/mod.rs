//! The optical TDM network of Yuan's models: the torus and its links, the AAPC phases, routing
//! and channel assignment, and the analytic model of multi-hop networks.

pub mod aapc;
pub mod analytic;
pub mod rca;
pub mod torus;
