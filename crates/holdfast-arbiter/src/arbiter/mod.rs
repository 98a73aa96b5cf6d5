//! The public admission facade: [`ResourceArbiter`], [`AdmissionMode`], [`ResourcePermit`] and the
//! pool-worker probe.
//!
//! The arbiter is a cheap handle on a private core (`crate::core`). [`ResourceArbiter::global`] is
//! the process-wide arbiter every engine uses by default, so that two engines over overlapping
//! CPUs never run at once (SPEC A2); [`ResourceArbiter::new`] builds a private one (tests, or a
//! backend that must not meet others).
//!
//! # Re-entry and pool workers (A4)
//!
//! Both checks happen before any blocking step:
//! - a root admission ([`ResourceArbiter::acquire`], any mode) from a thread whose owner marker
//!   is set fails with [`AdmissionError::Reentered`] at once: the thread could be waiting for its
//!   own reservation. Children use [`ResourceArbiter::join`] instead;
//! - a thread that is a worker of a thread pool never parks on the arbiter: when its request would
//!   have to queue it fails with [`AdmissionError::Contended`] instead (a parked worker could hold
//!   up the very pool job that would release the CPUs).
//!
//! The arbiter knows nothing about rayon (it depends on std and thiserror only), so "is this
//! thread a pool worker?" is a *probe* the pool layer registers once with
//! [`register_pool_worker_probe`] (for rayon: `|| rayon::current_thread_index().is_some()`), or
//! sets per arbiter with [`ResourceArbiter::with_pool_worker_probe`]. A probe was chosen over a
//! thread-local flag set by a pool's start handler because it recognises workers of *every* rayon
//! pool, including the global pool and pools built by user code. The probe runs only when a
//! request would queue, so the uncontended path never pays for it.

use crate::core::state::Request;
use crate::core::{Core, Wait};
use crate::error::{AdmissionError, ReentryCause};
use crate::owner::{OwnerId, current_owner};
use crate::permit::{CoreRef, ResourcePermit};
use holdfast_cpuset::CpuSet;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long an admission may wait.
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::AdmissionMode;
/// use std::time::Duration;
///
/// let mode = AdmissionMode::timeout(Duration::from_millis(10));
/// assert!(matches!(mode, AdmissionMode::Deadline(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdmissionMode {
    /// Wait in FIFO order until admitted.
    Wait,
    /// Fail at once with [`AdmissionError::Contended`] if the request cannot be admitted now.
    Try,
    /// Wait until admitted or until the instant passes, then fail with
    /// [`AdmissionError::TimedOut`] reporting the time waited.
    Deadline(Instant),
}

impl AdmissionMode {
    /// A deadline `timeout` from now (saturating: an unrepresentable instant means "wait").
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::AdmissionMode;
    /// use std::time::Duration;
    ///
    /// assert_eq!(AdmissionMode::timeout(Duration::MAX), AdmissionMode::Wait);
    /// ```
    #[must_use]
    pub fn timeout(timeout: Duration) -> Self {
        Instant::now().checked_add(timeout).map_or(Self::Wait, Self::Deadline)
    }
}

/// The probe registered for the whole process, see [`register_pool_worker_probe`].
static POOL_WORKER_PROBE: OnceLock<fn() -> bool> = OnceLock::new();

/// Registers, once per process, the probe that tells whether the calling thread is a thread-pool
/// worker. Returns `false` (and keeps the first probe) when one was already registered.
///
/// A worker never parks on an arbiter: a waiting request from it becomes a try (A4).
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::register_pool_worker_probe;
///
/// fn never_a_worker() -> bool { false }
/// let _first = register_pool_worker_probe(never_a_worker);
/// assert!(!register_pool_worker_probe(never_a_worker));
/// ```
pub fn register_pool_worker_probe(probe: fn() -> bool) -> bool {
    POOL_WORKER_PROBE.set(probe).is_ok()
}

/// Admission of CPU-set requests: FIFO between conflicting requests, concurrent for disjoint ones.
///
/// A cheap handle (`Clone` shares the same arbiter).
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{fresh_execution_owner, AdmissionMode, CpuSet, ResourceArbiter};
///
/// let arbiter = ResourceArbiter::new();
/// let cpus = CpuSet::from_cpus([0, 1])?;
///
/// let owner = fresh_execution_owner().unwrap();
/// let permit = arbiter.acquire(&cpus, owner, AdmissionMode::Wait)?;
/// assert_eq!(permit.owner(), owner);
///
/// // A disjoint request is admitted while the first is held.
/// let other = arbiter.acquire(&CpuSet::from_cpus([2])?, fresh_execution_owner().unwrap(), AdmissionMode::Try)?;
/// drop((permit, other));
/// assert_eq!(arbiter.snapshot()?.holders, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ResourceArbiter {
    core: CoreRef,
    probe: Option<fn() -> bool>,
}

impl ResourceArbiter {
    /// The process-wide arbiter, created on first use.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::ResourceArbiter;
    /// assert!(std::ptr::eq(ResourceArbiter::global(), ResourceArbiter::global()));
    /// ```
    #[must_use]
    pub fn global() -> &'static Self {
        static CORE: OnceLock<Core> = OnceLock::new();
        static GLOBAL: OnceLock<ResourceArbiter> = OnceLock::new();
        GLOBAL.get_or_init(|| Self {
            core: CoreRef::Global(CORE.get_or_init(Core::new)),
            probe: None,
        })
    }

    /// A private arbiter, independent of the global one.
    ///
    /// # Examples
    ///
    /// ```
    /// let arbiter = holdfast_arbiter::ResourceArbiter::new();
    /// assert_eq!(arbiter.snapshot()?.waiters, 0);
    /// # Ok::<(), holdfast_arbiter::AdmissionError>(())
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self { core: CoreRef::Private(Arc::new(Core::new())), probe: None }
    }

    /// Uses `probe` instead of the process-wide probe to tell pool workers apart.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, AdmissionError, AdmissionMode, CpuSet, ResourceArbiter};
    ///
    /// let arbiter = ResourceArbiter::new().with_pool_worker_probe(|| true);
    /// let cpus = CpuSet::from_cpus([0])?;
    /// let _held = arbiter.acquire(&cpus, fresh_execution_owner().unwrap(), AdmissionMode::Wait)?;
    /// // Would have to wait, but "this thread is a worker": Contended instead of parking.
    /// let second = arbiter.acquire(&cpus, fresh_execution_owner().unwrap(), AdmissionMode::Wait);
    /// assert!(matches!(second, Err(AdmissionError::Contended { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_pool_worker_probe(mut self, probe: fn() -> bool) -> Self {
        self.probe = Some(probe);
        self
    }

    fn may_park(&self) -> bool {
        let probe = self.probe.or_else(|| POOL_WORKER_PROBE.get().copied());
        !probe.is_some_and(|is_worker| is_worker())
    }

    /// Admits a root request for `owner` over the CPUs of `request`.
    ///
    /// If `owner` already holds a reservation covering `request`, the new permit joins it without
    /// queueing (reentrant child shape, A6). Otherwise the request is admitted at once when it
    /// conflicts with no reservation and no queued request; else it queues FIFO (or fails, as
    /// `mode` says).
    ///
    /// # Errors
    ///
    /// - [`AdmissionError::Reentered`] when this thread's owner marker is set (checked first,
    ///   before any lock or wait), or when `owner` is active and `request` reaches outside its
    ///   reservation;
    /// - [`AdmissionError::Contended`] in [`AdmissionMode::Try`], or when the caller is a pool
    ///   worker and would have to wait;
    /// - [`AdmissionError::TimedOut`] when the deadline passes first;
    /// - [`AdmissionError::Poisoned`] when the arbiter state is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, AdmissionError, AdmissionMode, CpuSet, ResourceArbiter};
    /// use std::time::Duration;
    ///
    /// let arbiter = ResourceArbiter::new();
    /// let cpus = CpuSet::from_cpus([0])?;
    /// let _held = arbiter.acquire(&cpus, fresh_execution_owner().unwrap(), AdmissionMode::Wait)?;
    ///
    /// let late = fresh_execution_owner().unwrap();
    /// let mode = AdmissionMode::timeout(Duration::from_millis(5));
    /// match arbiter.acquire(&cpus, late, mode) {
    ///     Err(AdmissionError::TimedOut { waited, .. }) => assert!(waited > Duration::ZERO),
    ///     other => panic!("expected TimedOut, got {other:?}"),
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn acquire(
        &self,
        request: &CpuSet,
        owner: OwnerId,
        mode: AdmissionMode,
    ) -> Result<ResourcePermit, AdmissionError> {
        if let Some(active) = current_owner() {
            return Err(AdmissionError::Reentered {
                owner: active,
                cause: ReentryCause::MarkerSet,
            });
        }
        let wait = match mode {
            AdmissionMode::Wait => Wait::Forever,
            AdmissionMode::Try => Wait::Never,
            AdmissionMode::Deadline(deadline) => Wait::Until(deadline),
        };
        let request = Request { mask: request, owner, thread: crate::registry::current() };
        let admitted = self.core.get().admit(request, wait, || self.may_park())?;
        Ok(ResourcePermit::new(self.core.clone(), admitted.ticket, owner, admitted.joined))
    }

    /// Joins `owner`'s active reservation (child shape, A6): never waits, whatever this thread's
    /// marker says. The reservation lasts until its last permit, root or joined, is dropped.
    ///
    /// # Errors
    ///
    /// - [`AdmissionError::Reentered`] with [`ReentryCause::OwnerGone`] when `owner` holds no
    ///   reservation;
    /// - [`AdmissionError::Poisoned`] when the arbiter state is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, AdmissionMode, CpuSet, ResourceArbiter};
    ///
    /// let arbiter = ResourceArbiter::new();
    /// let owner = fresh_execution_owner().unwrap();
    /// let root = arbiter.acquire(&CpuSet::from_cpus([0])?, owner, AdmissionMode::Wait)?;
    /// let child = arbiter.join(owner)?;
    /// assert!(child.is_joined());
    /// drop(root);
    /// drop(child);
    /// assert!(arbiter.join(owner).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join(&self, owner: OwnerId) -> Result<ResourcePermit, AdmissionError> {
        match self.core.get().join(owner)? {
            Some(ticket) => Ok(ResourcePermit::new(self.core.clone(), ticket, owner, true)),
            None => Err(AdmissionError::Reentered { owner, cause: ReentryCause::OwnerGone }),
        }
    }

    /// Counts of reservations, queued requests and parked threads, for diagnostics and tests.
    ///
    /// # Errors
    ///
    /// [`AdmissionError::Poisoned`] when the arbiter state is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// let snapshot = holdfast_arbiter::ResourceArbiter::new().snapshot()?;
    /// assert_eq!((snapshot.holders, snapshot.waiters, snapshot.parked), (0, 0, 0));
    /// # Ok::<(), holdfast_arbiter::AdmissionError>(())
    /// ```
    pub fn snapshot(&self) -> Result<ArbiterSnapshot, AdmissionError> {
        let (holders, waiters, parked) = self.core.get().snapshot()?;
        Ok(ArbiterSnapshot { holders, waiters, parked })
    }

    /// Acquisitions of this arbiter's internal mutex so far: every admission, join, release and
    /// snapshot takes it once. The global arbiter counts those of every engine in the process.
    ///
    /// Reading it takes no lock. Measurements use the difference of two readings to prove
    /// that a path does not touch admission at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, AdmissionMode, CpuSet, ResourceArbiter};
    ///
    /// let arbiter = ResourceArbiter::new();
    /// let before = arbiter.lock_acquisitions();
    /// let permit = arbiter.acquire(&CpuSet::from_cpus([0])?, fresh_execution_owner().unwrap(), AdmissionMode::Wait)?;
    /// drop(permit);
    /// assert_eq!(arbiter.lock_acquisitions() - before, 2, "one to admit, one to release");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lock_acquisitions(&self) -> u64 {
        self.core.get().lock_acquisitions()
    }

    /// Test hook (cargo feature `test-hooks`, off by default): the ticket of `owner`'s active
    /// reservation, or `None` when `owner` holds none.
    ///
    /// Tickets are taken in arrival order (`docs/design/admission.md`), so a stress test that
    /// logs the ticket of each reservation while it holds it can check FIFO admission from the
    /// outside: among requests that all conflict, the logged tickets must increase. Takes the
    /// arbiter's mutex once; no admission path calls it.
    ///
    /// # Errors
    ///
    /// [`AdmissionError::Poisoned`] when the arbiter state is poisoned.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, AdmissionMode, CpuSet, ResourceArbiter};
    ///
    /// let arbiter = ResourceArbiter::new();
    /// let cpus = CpuSet::from_cpus([0])?;
    /// let (first, second) = (fresh_execution_owner().unwrap(), fresh_execution_owner().unwrap());
    /// let p1 = arbiter.acquire(&cpus, first, AdmissionMode::Wait)?;
    /// let t1 = arbiter.reservation_ticket(first)?.unwrap();
    /// drop(p1);
    /// assert_eq!(arbiter.reservation_ticket(first)?, None);
    /// let _p2 = arbiter.acquire(&cpus, second, AdmissionMode::Wait)?;
    /// assert!(arbiter.reservation_ticket(second)?.unwrap() > t1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "test-hooks")]
    pub fn reservation_ticket(&self, owner: OwnerId) -> Result<Option<u64>, AdmissionError> {
        self.core.get().reservation_ticket(owner)
    }

    /// Condition-variable broadcasts made by this arbiter so far.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn notifies_for_test(&self) -> usize {
        self.core.get().notifies()
    }

    /// Poisons the private core (test seam for A5).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn poison_for_test(&self) {
        self.core.get().poison_for_test();
    }
}

impl Default for ResourceArbiter {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ResourceArbiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.core {
            CoreRef::Global(_) => "global",
            CoreRef::Private(_) => "private",
        };
        f.debug_struct("ResourceArbiter").field("kind", &kind).finish_non_exhaustive()
    }
}

/// Counts describing an arbiter at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArbiterSnapshot {
    /// Active reservations (a joined owner counts once).
    pub holders: usize,
    /// Queued requests.
    pub waiters: usize,
    /// Threads blocked waiting for admission.
    pub parked: usize,
}

#[cfg(test)]
mod tests;
