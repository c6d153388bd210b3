//! Integration tests of the command line and the whole pipeline: goldens, diagnostics, invariants, fuzzing.
//!
//! One binary for the whole suite: one link instead of one per file. Run one part with
//! `cargo test -p ttdl --test all <module>::`.

mod anynet;
mod array;
mod benchmarks;
mod bounds;
mod diagnostics;
mod examples;
mod fidelity;
mod follow;
mod import;
mod invariants;
mod no_panic;
mod periodic;
mod run_cli;
mod settings;
mod support;
