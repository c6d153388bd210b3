//! The session: an interpreter with the standard library loaded, and the whole way from a script
//! to a verified plan, a simulation or a comparison (the `ttdl-session` crate, which the REPL
//! shares).

pub use ttdl_session::*;
