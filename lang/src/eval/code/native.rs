//! Procedure bodies compiled to machine code (see the module's notes below).

use std::cell::Cell;

thread_local! {
    /// Whether procedure bodies may be compiled to machine code on this thread.
    static NATIVE: Cell<bool> = const { Cell::new(!cfg!(miri)) };
}

/// Turns compiling procedure bodies to machine code on or off for this thread (on by default,
/// off under Miri, which cannot run generated code). Off, every body runs as closures; the
/// answers, errors and step counts are the same either way, which is what this switch is for:
/// comparing the two, and measuring one beside the other.
pub fn set_native(on: bool) {
    NATIVE.with(|n| n.set(on && !cfg!(miri)));
}

/// Whether bodies may be compiled to machine code on this thread.
pub fn native_enabled() -> bool {
    NATIVE.with(Cell::get)
}
