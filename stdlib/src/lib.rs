//! TTDL's standard library, written in TTDL and loaded before every script.

/// The library's source files in load order: (name, text).
pub const SOURCES: &[(&str, &str)] = &[];
