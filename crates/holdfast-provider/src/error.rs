//! [`ProviderError`]: why a CPU domain could not be built.

use holdfast_affinity::{AffinityError, CpuSet};

/// A CPU domain that cannot be built as asked.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::CpuSet;
/// use holdfast_provider::{CpuDomain, ProviderError};
///
/// let err = CpuDomain::new(CpuSet::new(), 1).unwrap_err();
/// assert!(matches!(err, ProviderError::EmptyCpuSet));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The domain names no CPU.
    #[error("a CPU domain needs at least one CPU")]
    EmptyCpuSet,
    /// A thread budget of zero.
    #[error("a CPU domain needs a thread budget of at least one")]
    ZeroThreads,
    /// More threads than CPUs would oversubscribe the domain.
    #[error("a thread budget of {threads} oversubscribes the domain's {cpus} CPUs")]
    Oversubscribed {
        /// The budget asked for.
        threads: usize,
        /// CPUs in the domain.
        cpus: usize,
    },
    /// The domain's CPUs are not all allowed for this process: some lie outside the process's
    /// affinity mask or its cgroup's cpuset (see
    /// [`Topology::allowed`](holdfast_affinity::Topology::allowed)).
    #[error(
        "the requested CPUs ({requested}) are not all among the CPUs this process may run on \
         ({allowed}); CPUs {outside} are outside"
    )]
    CpusNotAllowed {
        /// The CPUs asked for.
        requested: Box<CpuSet>,
        /// The CPUs this process may run on.
        allowed: Box<CpuSet>,
        /// `requested` minus `allowed`.
        outside: Box<CpuSet>,
    },
    /// The topology could not be read.
    #[error("cannot read the CPU topology: {0}")]
    Topology(#[source] AffinityError),
    /// rayon could not start the worker pool.
    #[error("cannot start the domain's worker pool: {0}")]
    Pool(#[source] rayon::ThreadPoolBuildError),
}
