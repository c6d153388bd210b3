//! The optical TDM network of Yuan's models: the torus and its links, routing and channel
//! assignment (from the AAPC phases of [`crate::sim::aapc`]), and the analytic model of multi-hop networks.

pub mod analytic;
pub mod rca;
pub mod torus;

/// Why an optical construction or run cannot go ahead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpticalError {
    /// The network is not one the optical models are defined on.
    #[error("{0}")]
    Network(String),
    /// A parameter is out of its range.
    #[error("{0}")]
    Parameter(String),
    /// A construction broke its own invariant (found by its check; a bug).
    #[error("{0}")]
    Broken(String),
}

impl From<OpticalError> for crate::sim::ModelError {
    fn from(e: OpticalError) -> Self {
        crate::sim::ModelError(e.to_string())
    }
}
