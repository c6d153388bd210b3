//! TTDL: the embedding API and the command line.
//!
//! [`session::Session`] evaluates TTDL (with the standard library loaded) and takes the program
//! through the one pipeline of the backend: plan, simulate, compare. The command line is the
//! binary's own (`src/cli/`), a front end that parses and prints.

pub mod session;
