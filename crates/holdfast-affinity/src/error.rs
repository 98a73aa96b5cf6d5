//! `AffinityError`: everything that can go wrong loading the topology or binding the caller.

use holdfast_cpuset::CpuSet;

/// Why a topology load, a binding read or a binding change failed.
///
/// Operating-system failures carry the backend's message (hwloc or libc) as text, so that the
/// error is `Clone + Eq` and the once-per-process topology result can be handed to every caller.
/// CPU sets are boxed to keep the error (and every `Result` carrying it) small: errors are rare,
/// and the guard's success path returns through registers.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::{AffinityError, CpuSet};
///
/// let err = AffinityError::EmptyIntersection {
///     current: Box::new("0-1".parse()?),
///     requested: Box::new("4-5".parse()?),
/// };
/// assert!(err.to_string().contains("0-1"));
/// # Ok::<(), holdfast_affinity::CpuSetError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AffinityError {
    /// The calling thread may not run on any CPU of the requested domain.
    #[error(
        "the calling thread's CPUs ({current}) and the requested CPUs ({requested}) do not intersect"
    )]
    EmptyIntersection {
        /// The caller's binding when it entered.
        current: Box<CpuSet>,
        /// The domain it asked to be narrowed to.
        requested: Box<CpuSet>,
    },
    /// The caller's binding could not be read.
    #[error("cannot read the calling thread's CPU binding: {reason}")]
    Query {
        /// The backend's message.
        reason: String,
    },
    /// The caller could not be bound to the narrowed set.
    #[error("cannot bind the calling thread to CPUs {target}: {reason}")]
    Bind {
        /// The set the guard tried to bind to.
        target: Box<CpuSet>,
        /// The backend's message.
        reason: String,
    },
    /// The caller's original binding could not be restored.
    #[error("cannot restore the calling thread's CPU binding to {target}: {reason}")]
    Restore {
        /// The binding the guard tried to restore.
        target: Box<CpuSet>,
        /// The backend's message.
        reason: String,
    },
    /// The topology could not be loaded.
    #[error("cannot load the CPU topology: {reason}")]
    Topology {
        /// The backend's message.
        reason: String,
    },
}
