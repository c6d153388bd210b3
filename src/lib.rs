//! TTDL: the embedding API and the command line.
//!
//! `ttdl::Session` evaluates TTDL (with the standard library loaded) and hands the resulting
//! `Traffic` to the backend.

pub mod cli;
pub mod session;
