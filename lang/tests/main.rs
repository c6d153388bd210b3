//! Integration tests of the language: reader, evaluator, streams, diagnostics.
//!
//! One binary for the whole suite: one link instead of one per file. Run one part with
//! `cargo test -p ttdl-lang --test all <module>::`.

mod comm;
mod comm_props;
mod comm_scripts;
mod eval_comm;
mod eval_core;
mod eval_diagnostics;
mod eval_native;
mod eval_props;
mod reader;
mod reader_render;
mod reader_roundtrip;
