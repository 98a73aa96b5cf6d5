//! The session layer's errors: one enum per question a caller asks.
//!
//! - [`SessionEntryError`]: why an entry (held, scoped, shared scope) was not admitted.
//! - [`CpuHeldSessionError`]: why closing a held session failed (after releasing everything).
//! - [`OpError`]: why one operation of the view failed.
//! - [`CpuPhaseError`]: why a phase lease could not be opened.
//! - [`PhaseRunError`]: why a phase run failed (after every lane was joined).
//! - [`BuildError`]: why a backend could not be built.
//!
//! [`ManagementError`] comes from `holdfast-resources` and is re-exported unchanged.

use std::time::Duration;

use holdfast_affinity::AffinityError;
use holdfast_arbiter::{AdmissionError, Holder, OwnerId, ReentryCause};
use holdfast_kernels::KernelError;
use holdfast_provider::ProviderError;
use holdfast_tensor::{AllocationDomain, TensorError};

/// Why an entry into a backend was not admitted.
///
/// Unless the variant says otherwise, the callback of a scoped entry has **not** run.
/// [`SessionEntryError::Executor`] is the exception: a scoped entry reports a failure to restore
/// the caller's CPU affinity after its callback ran this way (see
/// [`CpuBackend::with_backend_session`](crate::CpuBackend::with_backend_session), error
/// precedence).
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, SessionEntryError};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let _held = backend.open_session()?;
/// // A second open on the same thread is refused before anything blocks.
/// assert!(matches!(backend.open_session(), Err(SessionEntryError::Reentered { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionEntryError {
    /// An execution is already active on this thread (a held session, a scoped entry, an open
    /// shared scope for a held root, or a child handle asked for a root), or a child's owner is
    /// gone. Refused before any blocking step (A4).
    #[error("session entry refused: {cause}")]
    Reentered {
        /// The owner active on this thread, or the owner a child named.
        owner: Option<OwnerId>,
        /// Why it was refused.
        cause: ReentryReason,
    },
    /// The engine's CPUs are held (or queued for) and the entry could not wait.
    #[error("engine busy{}", holder.as_ref().map(|h| format!(" (held by {h})")).unwrap_or_default())]
    Contended {
        /// The holder that blocked the entry, where known.
        holder: Option<Holder>,
        /// Conflicting requests queued ahead.
        waiters_ahead: usize,
    },
    /// The deadline passed before admission.
    #[error("timed out after {waited:?} waiting for the engine")]
    TimedOut {
        /// How long the caller waited.
        waited: Duration,
        /// The holder at the time of the timeout, where known.
        holder: Option<Holder>,
    },
    /// Admission or resource state is poisoned by an earlier panic (A5).
    #[error("{what} is poisoned by an earlier panic")]
    ResourcePoisoned {
        /// Which state.
        what: &'static str,
    },
    /// The executor could not be prepared or cleaned up: the caller's CPU affinity could not be
    /// narrowed or restored.
    #[error("executor failure: {source}")]
    Executor {
        /// The affinity failure.
        #[source]
        source: AffinityError,
    },
}

/// Why an entry was refused as a re-entry: the session's own checks, or the arbiter's cause.
///
/// The session checks the thread's owner marker itself, before anything can wait, and reports
/// a set marker as [`ExecutionActive`](Self::ExecutionActive); the arbiter's
/// [`ReentryCause::MarkerSet`] is the same fact and is reported under the same name. Every other
/// cause of the arbiter (a child joining an owner that has ended is
/// [`ReentryCause::OwnerGone`]) comes as [`Admission`](Self::Admission).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReentryReason {
    /// This thread already runs a held session or a scoped entry.
    ExecutionActive,
    /// A held root was asked for inside an open shared scope.
    InsideSharedScope,
    /// A child handle cannot open a held root.
    ChildHandle,
    /// The arbiter refused the request as a re-entry.
    Admission(ReentryCause),
}

impl std::fmt::Display for ReentryReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReentryReason::ExecutionActive => {
                f.write_str("an execution is already active on this thread")
            }
            ReentryReason::InsideSharedScope => {
                f.write_str("a held session cannot be opened inside a shared execution scope")
            }
            ReentryReason::ChildHandle => f.write_str("a child handle cannot open a held session"),
            ReentryReason::Admission(cause) => write!(f, "{cause}"),
        }
    }
}

impl From<AdmissionError> for SessionEntryError {
    fn from(e: AdmissionError) -> Self {
        match e {
            AdmissionError::Reentered { owner, cause } => {
                let cause = match cause {
                    ReentryCause::MarkerSet => ReentryReason::ExecutionActive,
                    other => ReentryReason::Admission(other),
                };
                SessionEntryError::Reentered { owner: Some(owner), cause }
            }
            AdmissionError::Contended { holder, waiters_ahead } => {
                SessionEntryError::Contended { holder, waiters_ahead }
            }
            AdmissionError::TimedOut { waited, holder } => {
                SessionEntryError::TimedOut { waited, holder }
            }
            _ => SessionEntryError::ResourcePoisoned { what: "the admission arbiter" },
        }
    }
}

/// Why [`CpuHeldSession::close`](crate::CpuHeldSession::close) failed. Resources, owner marker
/// and admission were released all the same.
///
/// # Examples
///
/// ```
/// use holdfast_session::CpuBackend;
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let stats = backend.open_session()?.close()?; // Ok unless the caller's mask cannot be restored
/// assert_eq!(stats.operations, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuHeldSessionError {
    /// The caller's CPU affinity could not be restored (the only fallible release step).
    #[error("could not restore the caller's CPU affinity: {source}")]
    Restore {
        /// The affinity failure.
        #[source]
        source: AffinityError,
    },
}

/// Why one operation failed. The session stays usable.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, OpError, Tensor};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let a = Tensor::<f64>::zeros([2, 3]);
/// let b = Tensor::<f64>::zeros([2, 3]);
/// let err = backend.with_backend_session(|v| v.matmul(a.read(), b.read()))?.unwrap_err();
/// assert!(matches!(err, OpError::Kernel(_)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// An input lives in another provider's memory (S9).
    #[error(
        "operand {operand} lives in foreign memory ({domain:?}); a CPU session reads host memory only"
    )]
    ForeignStorage {
        /// Position of the operand.
        operand: usize,
        /// Its allocation domain.
        domain: AllocationDomain,
    },
    /// An input is still being written by its producer (S9).
    #[error("operand {operand} is pending: its producer has not finished writing it")]
    PendingStorage {
        /// Position of the operand.
        operand: usize,
    },
    /// The caller-owned output is foreign or pending.
    #[error("the output tensor is {0}")]
    BadOutput(&'static str),
    /// Shape, spec, path or kernel failure.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A tensor could not be built.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// The N-ary contraction scratch is leased elsewhere or poisoned by an earlier panic (R7).
    #[error(transparent)]
    Workspace(#[from] holdfast_resources::WorkspaceError),
}

/// Why [`CpuHeldSession::phase`](crate::CpuHeldSession::phase) refused to open a phase. The
/// callback has not run; the session is unchanged.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, CpuPhaseError};
///
/// let backend = CpuBackend::builder().private_arbiter().build()?;
/// if let Some(pool) = backend.domain().pool() {
///     // A session opened on one of the engine's own workers cannot lend that pool.
///     let refused = pool.install(|| {
///         let mut session = backend.open_session().unwrap();
///         matches!(session.phase(|_| ()), Err(CpuPhaseError::PoolWorker { .. }))
///     });
///     assert!(refused);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuPhaseError {
    /// The caller is a worker of the engine's own pool: a phase parks that pool's workers for its
    /// whole length, so it cannot be opened from inside one of them. Refused before any work.
    #[error(
        "a phase cannot be opened from worker {worker} of the engine's own pool: \
         its workers are parked for the phase"
    )]
    PoolWorker {
        /// The caller's index in the engine's pool.
        worker: usize,
    },
    /// A lane could not join the session's owner as a reentrant child (poisoned admission state;
    /// the owner itself is active while the session is borrowed).
    #[error("phase lane {lane} could not be admitted: {source}")]
    Admission {
        /// The lane that could not be admitted.
        lane: usize,
        /// Why.
        #[source]
        source: SessionEntryError,
    },
}

/// Why a [`CpuPhase::run`](crate::CpuPhase::run) failed. Reported only after every lane of the
/// run has been joined; the phase can run again.
///
/// Precedence: a lane panic is resumed (not reported here) before anything else; a session error
/// (a lane that could not be admitted) outranks lane errors; among lane errors, the first lane to
/// fail is reported.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, PhaseRunError};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let mut session = backend.open_session()?;
/// let err = session.phase(|phase| phase.run(|_, _| Err("no work")))?.unwrap_err();
/// assert!(matches!(err, PhaseRunError::Lane { lane: 0, error: "no work", failed_lanes: 1 }));
/// assert_eq!(err.to_string(), "phase lane 0 failed: no work (1 lane(s) failed in this run)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PhaseRunError<E> {
    /// A lane could not enter the run (its private resources were not available; its body did
    /// not run).
    #[error("phase lane {lane} could not enter the run: {source}")]
    Session {
        /// The lane that was refused.
        lane: usize,
        /// Why.
        #[source]
        source: SessionEntryError,
    },
    /// A lane's body returned an error.
    #[error("phase lane {lane} failed: {error} ({failed_lanes} lane(s) failed in this run)")]
    Lane {
        /// The lane that failed first.
        lane: usize,
        /// Its error.
        error: E,
        /// Lanes whose body returned an error in this run (the first one included).
        failed_lanes: usize,
    },
}

/// Why a backend could not be built.
///
/// # Examples
///
/// ```
/// use holdfast_session::{BuildError, CpuBackend};
///
/// let err = CpuBackend::builder().threads(0).build().unwrap_err();
/// assert!(matches!(err, BuildError::Provider(_)));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The CPU domain could not be built.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The topology could not be read.
    #[error(transparent)]
    Affinity(#[from] AffinityError),
    /// The NUMA node asked for does not exist, or has none of the CPUs this process may use
    /// (within the builder's `cpus`, when both are given).
    #[error("NUMA node {node} has no usable CPUs (nodes with usable CPUs: {available:?})")]
    NumaNode {
        /// The node asked for (OS index).
        node: usize,
        /// The nodes that have usable CPUs (OS indices).
        available: Vec<usize>,
    },
}
