//! [`CpuDomain`]: the immutable facts of one CPU execution domain.
//!
//! # Invariants
//!
//! - The CPU set is non-empty and allowed for the process; the thread budget is between one and
//!   the number of CPUs.
//! - A pool exists exactly when the budget is above one. Its workers are named
//!   `holdfast-worker-{i}` and bind themselves to the domain's CPUs when they start; a worker that
//!   cannot bind keeps running unbound (binding is placement, not correctness) and the failure is
//!   counted in [`CpuDomain::unbound_workers`].
//! - Nothing here changes after construction but the "a lane crew is open" flag, which
//!   [`CpuDomain::lane_crew`] holds for a crew's life; so a domain is shared freely between the
//!   handles of one engine.

#[cfg(test)]
mod tests;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use holdfast_affinity::{CpuSet, Topology};

use crate::ProviderError;

/// One CPU execution domain: a CPU set, a thread budget and (budget > 1) its worker pool.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::Topology;
/// use holdfast_provider::CpuDomain;
///
/// let allowed = *Topology::get()?.allowed();
/// let domain = CpuDomain::new(allowed, 1)?;
/// assert_eq!(domain.threads(), 1);
/// assert!(domain.pool().is_none(), "a one-thread domain runs everything inline");
/// assert_eq!(domain.cpus(), &allowed);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CpuDomain {
    cpus: CpuSet,
    threads: NonZeroUsize,
    pool: Option<rayon::ThreadPool>,
    /// Workers whose binding to `cpus` failed (written once per worker at start-up).
    unbound: Arc<AtomicUsize>,
    /// True while a lane crew is open on the pool (`crate::lanes`): the only state a domain
    /// changes after construction.
    crew_open: AtomicBool,
}

impl CpuDomain {
    /// A domain over `cpus` with a budget of `threads`; builds the worker pool when `threads > 1`.
    ///
    /// # Errors
    ///
    /// [`ProviderError::EmptyCpuSet`], [`ProviderError::ZeroThreads`],
    /// [`ProviderError::Oversubscribed`] (more threads than CPUs),
    /// [`ProviderError::CpusNotAllowed`], [`ProviderError::Topology`] or
    /// [`ProviderError::Pool`].
    pub fn new(cpus: CpuSet, threads: usize) -> Result<Self, ProviderError> {
        if cpus.is_empty() {
            return Err(ProviderError::EmptyCpuSet);
        }
        let threads = NonZeroUsize::new(threads).ok_or(ProviderError::ZeroThreads)?;
        if threads.get() > cpus.len() {
            return Err(ProviderError::Oversubscribed { threads: threads.get(), cpus: cpus.len() });
        }
        let topology = Topology::get().map_err(ProviderError::Topology)?;
        let allowed = *topology.allowed();
        if !cpus.is_subset(&allowed) {
            return Err(ProviderError::CpusNotAllowed {
                requested: Box::new(cpus),
                allowed: Box::new(allowed),
                outside: Box::new(cpus - allowed),
            });
        }
        let unbound = Arc::new(AtomicUsize::new(0));
        let pool = if threads.get() > 1 {
            let worker_cpus = cpus;
            let worker_unbound = Arc::clone(&unbound);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads.get())
                .thread_name(|i| format!("holdfast-worker-{i}"))
                .start_handler(move |_| {
                    if holdfast_affinity::bind_current_thread(&worker_cpus).is_err() {
                        worker_unbound.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .build()
                .map_err(ProviderError::Pool)?;
            Some(pool)
        } else {
            None
        };
        Ok(CpuDomain { cpus, threads, pool, unbound, crew_open: AtomicBool::new(false) })
    }

    /// A domain over every CPU the process may use, with all of them as the thread budget.
    ///
    /// # Errors
    ///
    /// As [`CpuDomain::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_provider::CpuDomain;
    ///
    /// let domain = CpuDomain::process_default()?;
    /// assert_eq!(domain.threads(), domain.cpus().len());
    /// # Ok::<(), holdfast_provider::ProviderError>(())
    /// ```
    pub fn process_default() -> Result<Self, ProviderError> {
        let allowed = *Topology::get().map_err(ProviderError::Topology)?.allowed();
        let threads = allowed.len();
        Self::new(allowed, threads)
    }

    /// The domain's CPUs.
    pub fn cpus(&self) -> &CpuSet {
        &self.cpus
    }

    /// The thread budget (at least one).
    pub fn threads(&self) -> usize {
        self.threads.get()
    }

    /// The worker pool, present exactly when the budget is above one.
    pub fn pool(&self) -> Option<&rayon::ThreadPool> {
        self.pool.as_ref()
    }

    /// True when the calling thread is one of this domain's pool workers.
    pub fn is_own_worker(&self) -> bool {
        self.pool.as_ref().is_some_and(|p| p.current_thread_index().is_some())
    }

    /// Workers that started without being bound to the domain's CPUs.
    pub fn unbound_workers(&self) -> usize {
        self.unbound.load(Ordering::Relaxed)
    }

    /// The "a lane crew is open" flag (`crate::lanes`).
    pub(crate) fn crew_flag(&self) -> &AtomicBool {
        &self.crew_open
    }
}
