//! [`SessionStats`]: the telemetry of one held session (B2).
//!
//! Every field is a plain integer kept in the session (or derived at read time from the
//! session's own resources), so counting takes no lock and no atomic operation.

use std::time::Duration;

/// What one held session did, as returned by [`CpuHeldSession::stats`](crate::CpuHeldSession::stats)
/// and [`CpuHeldSession::close`](crate::CpuHeldSession::close).
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, Tensor};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let mut session = backend.open_session()?;
/// for _ in 0..3 {
///     session.with_session(|v| v.add(a.read(), a.read()))?;
/// }
/// let stats = session.close()?;
/// assert_eq!(stats.operations, 3);
/// assert_eq!(stats.pool_installs, 0, "tiny adds never install the pool");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionStats {
    /// Time spent waiting for admission when the session opened.
    pub admission_wait: Duration,
    /// Operations run through [`with_session`](crate::CpuHeldSession::with_session).
    pub operations: u64,
    /// Lower-library calls that installed the engine's pool.
    pub pool_installs: u64,
    /// Lower-library calls that ran inline on the session's thread.
    pub inline_runs: u64,
    /// Buffers the pool served from its retained set.
    pub buffer_hits: u64,
    /// Buffers the pool had to allocate.
    pub buffer_misses: u64,
    /// Bytes the pool currently retains for reuse.
    pub buffer_retained_bytes: u64,
    /// Contraction plans found in the session's plan caches.
    pub plan_hits: u64,
    /// Contraction plans prepared (cache misses).
    pub plan_misses: u64,
    /// Affinity system calls (reads and writes) made by the session's open and close.
    pub affinity_syscalls: u64,
    /// Runs of the session's phase leases ([`CpuPhase::run`](crate::CpuPhase::run)).
    pub phase_runs: u64,
    /// Operations run by phase lanes (not counted in `operations`).
    pub lane_operations: u64,
}
