//! [`MpsError`]: why an algorithm of this crate stopped.

use holdfast::{OpError, SessionEntryError};

/// Why an MPS algorithm stopped. Bad parameters are refused before any operation runs.
///
/// # Examples
///
/// ```
/// use holdfast::CpuBackend;
/// use holdfast_mps::{DmrgConfig, Model, MpsError, dmrg};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let mut session = backend.open_session()?;
/// let err = dmrg(&mut session, &Model::Tfim { j: 1.0, h: 1.0 }, 1, &DmrgConfig::new(vec![8]));
/// assert!(matches!(err, Err(MpsError::TooFewSites { sites: 1 })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MpsError {
    /// A chain needs at least two sites.
    #[error("a chain needs at least 2 sites, got {sites}")]
    TooFewSites {
        /// The number of sites asked for.
        sites: usize,
    },
    /// A parameter that cannot be used.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// An operation of the session failed.
    #[error(transparent)]
    Op(#[from] OpError),
    /// A scoped entry was not admitted.
    #[error(transparent)]
    Entry(#[from] SessionEntryError),
    /// A tensor could not be built.
    #[error(transparent)]
    Tensor(#[from] holdfast::TensorError),
}
