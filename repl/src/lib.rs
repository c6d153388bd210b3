//! The interactive loop. Its core, [`Repl::handle`], is a plain function from session + input to
//! [`Output`], so tests need no terminal; [`run`] wraps it in a rustyline editor with history,
//! completion, bracket highlighting and multi-line input.
//!
//! `ttdl repl [FILE]`.

mod editor;
mod session;
mod summary;

pub use editor::{history_path, run, run_piped, show, EditorOptions};
pub use session::{Output, Repl, ReplOptions, Status, COMMANDS};
pub use summary::traffic_summary;
