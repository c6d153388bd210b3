//! The TTDL language: reader, evaluator, streams, task graph and timing. It produces the backend's
//! `Traffic`; it does not know how schedules are made.

pub mod comm;
pub mod dag;
pub mod diagnostic;
pub mod eval;
pub mod interp;
pub mod sexpr;
pub mod span;
pub mod syntax;
pub mod tgff;
pub mod timing;

pub use diagnostic::{Diagnostic, Label, SourceMap};
pub use interp::{Interpreter, Limits};
pub use sexpr::{Datum, Sexpr};
pub use span::{FileId, Span, Spanned};
