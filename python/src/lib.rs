//! TTDL for Python (SPEC §6): the extension module `ttdl._ttdl`, which the pure-Python package
//! `ttdl` wraps with `Session`, `Plan` and DataFrames.
//!
//! Every figure comes from the same [`ttdl_session::Session`] the command line and the REPL
//! hold — `load_file`, `eval_source`, `plan`, `simulate`, `compare`, `render` — and every table
//! from the JSON the command line writes (`Plan::to_json`, `report::compare::json`); this crate
//! only converts keyword arguments ([`settings`]) and carries text across.
//!
//! The Python module itself is behind the `python` feature (maturin turns it on), so the
//! workspace builds and tests without a Python interpreter or its headers.

pub mod settings;

#[cfg(feature = "python")]
mod module;
