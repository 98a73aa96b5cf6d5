//! Admission errors and the holder description they carry.
//!
//! One error type for the domain (`AdmissionError`); each variant carries what a caller needs to
//! report or retry: who holds the CPUs, how long the caller waited, why re-entry was refused.

use crate::owner::OwnerId;
use std::fmt;
use std::time::Duration;

/// Who holds a reservation that blocked a request: the owner id and, where known, the thread that
/// made the reservation.
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{fresh_execution_owner, AdmissionError, AdmissionMode, CpuSet, ResourceArbiter};
///
/// let arbiter = ResourceArbiter::new();
/// let cpus = CpuSet::from_cpus([0])?;
/// let owner = fresh_execution_owner().unwrap();
/// let _held = arbiter.acquire(&cpus, owner, AdmissionMode::Wait)?;
///
/// let other = fresh_execution_owner().unwrap();
/// match arbiter.acquire(&cpus, other, AdmissionMode::Try) {
///     Err(AdmissionError::Contended { holder: Some(holder), .. }) => {
///         assert_eq!(holder.owner(), owner);
///         assert_eq!(holder.thread_name(), std::thread::current().name());
///     }
///     other => panic!("expected Contended, got {other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Holder {
    pub(crate) owner: OwnerId,
    pub(crate) thread: Option<std::thread::Thread>,
}

impl Holder {
    /// The owner holding the reservation.
    #[must_use]
    pub const fn owner(&self) -> OwnerId {
        self.owner
    }

    /// The name of the thread that made the reservation, if it has one and it is known.
    #[must_use]
    pub fn thread_name(&self) -> Option<&str> {
        self.thread.as_ref().and_then(std::thread::Thread::name)
    }

    /// The id of the thread that made the reservation, if known.
    #[must_use]
    pub fn thread_id(&self) -> Option<std::thread::ThreadId> {
        self.thread.as_ref().map(std::thread::Thread::id)
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "owner {}", self.owner)?;
        match &self.thread {
            Some(thread) => match thread.name() {
                Some(name) => write!(f, " on thread '{name}'"),
                None => write!(f, " on thread {:?}", thread.id()),
            },
            None => Ok(()),
        }
    }
}

/// Why a re-entry was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReentryCause {
    /// The calling thread already runs an execution (its owner marker is set): a root admission
    /// from it could wait on itself.
    MarkerSet,
    /// A child tried to join an owner that no longer holds a reservation.
    OwnerGone,
    /// An active owner asked for CPUs outside its own reservation.
    OutsideReservation,
}

impl fmt::Display for ReentryCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MarkerSet => "an execution is already active on this thread",
            Self::OwnerGone => "the owner no longer holds a reservation",
            Self::OutsideReservation => "the request reaches outside the owner's reservation",
        })
    }
}

/// Why an admission failed.
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{fresh_execution_owner, AdmissionError, ResourceArbiter};
///
/// let arbiter = ResourceArbiter::new();
/// let gone = fresh_execution_owner().unwrap();
/// let err = arbiter.join(gone).unwrap_err();
/// assert!(matches!(err, AdmissionError::Reentered { owner, .. } if owner == gone));
/// assert!(err.to_string().contains("no longer holds a reservation"));
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdmissionError {
    /// Re-entry refused before any blocking step (A4, A6).
    #[error("re-entry refused for owner {owner}: {cause}")]
    Reentered {
        /// For [`ReentryCause::MarkerSet`] the owner active on this thread; otherwise the owner
        /// the request named.
        owner: OwnerId,
        /// Why the re-entry was refused.
        cause: ReentryCause,
    },
    /// The CPUs are held or queued for by a conflicting request and the request could not wait
    /// (try mode, or the caller is a thread-pool worker).
    #[error("CPUs are busy{}{}", holder_suffix(holder.as_ref()), waiters_suffix(*waiters_ahead))]
    Contended {
        /// The first conflicting holder, where one exists (the request may instead be blocked
        /// only by an older conflicting waiter).
        holder: Option<Holder>,
        /// Conflicting requests already queued ahead of this one.
        waiters_ahead: usize,
    },
    /// The deadline passed before the request was admitted; the request was withdrawn.
    #[error("timed out after {waited:?} waiting for CPUs{}", holder_suffix(holder.as_ref()))]
    TimedOut {
        /// How long the caller waited before giving up.
        waited: Duration,
        /// The first conflicting holder at the time of the timeout, where one exists.
        holder: Option<Holder>,
    },
    /// The arbiter's state is poisoned: a thread panicked while it held the arbiter lock (A5).
    /// Reported as `ResourcePoisoned` by the session layer.
    #[error("admission state is poisoned: a thread panicked inside the arbiter")]
    Poisoned,
}

fn holder_suffix(holder: Option<&Holder>) -> String {
    holder.map(|h| format!(" (held by {h})")).unwrap_or_default()
}

fn waiters_suffix(waiters: usize) -> String {
    if waiters == 0 { String::new() } else { format!(", {waiters} conflicting request(s) queued") }
}
