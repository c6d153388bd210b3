//! Positional numeric arguments of the examples.

/// Argument `i` (1-based) parsed as a number, `default` when absent; `what` names it in the error.
pub fn arg<T: std::str::FromStr>(i: usize, what: &str, default: T) -> Result<T, String> {
    match std::env::args().nth(i) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("{what} must be a number, not `{a}`")),
        None => Ok(default),
    }
}
