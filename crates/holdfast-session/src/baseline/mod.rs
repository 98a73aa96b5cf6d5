//! The naive baseline of SPEC M1 and W5: what a session's operations cost without owning their
//! admission. [`NaiveBaseline`] keeps its own resources behind a `Mutex`, locks it for every call
//! and installs a rayon pool around every call, whatever its size; inside, the operation runs on
//! the same view, kernels, plans and parallelism decision as in a session.
//!
//! It exists to be measured against (`holdfast demo`, `holdfast bench`, `holdfast dmrg
//! --compare`), not to be used: it takes no admission, so it makes none of the arbiter's promises
//! (two baselines, or a baseline beside a session, may run on the same CPUs at once), and it
//! narrows no affinity.
//!
//! Invariant: the resources behind the mutex are whole between calls. A panic inside a call
//! poisons the mutex but leaves them whole (the view's loan gives every buffer back while
//! unwinding), so the next call takes them back from the poisoned lock.

use std::sync::{Mutex, MutexGuard, PoisonError};

use holdfast_arbiter::{OwnerId, fresh_execution_owner};
use holdfast_provider::CpuOperationEntry;
use holdfast_resources::{EngineResources, ResourceLimits};

use crate::CpuBackend;
use crate::view::{CpuExecSession, OpCounters, ViewOrigin, with_view};

#[cfg(test)]
mod tests;

/// Why a [`NaiveBaseline`] could not be built.
///
/// # Examples
///
/// ```
/// use holdfast_session::{BaselineError, CpuBackend, NaiveBaseline, ResourceLimits};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let _session = backend.open_session()?;
/// let refused = NaiveBaseline::new(&backend, ResourceLimits::default());
/// assert!(matches!(refused, Err(BaselineError::InsideExecution)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// Built on a thread that runs an execution: the baseline's views need an owner id of
    /// their own, which is only issued outside any execution.
    #[error("a naive baseline is built outside any execution")]
    InsideExecution,
    /// The engine has no pool (a one-thread budget) and the baseline's own one-thread pool
    /// could not start.
    #[error("cannot start the naive baseline's one-thread pool: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
}

/// Calls and locks counted by a [`NaiveBaseline`] since it was built.
///
/// # Examples
///
/// ```
/// use holdfast_session::{BaselineStats, CpuBackend, NaiveBaseline, ResourceLimits};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let naive = NaiveBaseline::new(&backend, ResourceLimits::default())?;
/// assert_eq!(naive.stats(), BaselineStats::default());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BaselineStats {
    /// Calls of [`NaiveBaseline::with_view`].
    pub calls: u64,
    /// Acquisitions of the resource mutex (one per call).
    pub locks: u64,
    /// Pool installs (one per call).
    pub installs: u64,
    /// Operations the views ran.
    pub operations: u64,
}

/// The state behind the baseline's mutex.
#[derive(Debug)]
struct Locked {
    resources: EngineResources,
    counters: OpCounters,
    stats: BaselineStats,
}

/// The pool a baseline installs: the engine's, or its own one-thread pool when the engine has
/// none.
#[derive(Debug)]
enum BaselinePool<'b> {
    Engine(&'b rayon::ThreadPool),
    Own(rayon::ThreadPool),
}

/// The naive baseline on one backend's engine: a `Mutex` around resources of its own, locked for
/// every call, and the engine's pool installed around every call.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, NaiveBaseline, ResourceLimits, Tensor};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let naive = NaiveBaseline::new(&backend, ResourceLimits::default())?;
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let c = naive.with_view(|v| v.matmul(a.read(), a.read()))?;
/// assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
/// let stats = naive.stats();
/// assert_eq!((stats.locks, stats.installs, stats.operations), (1, 1, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NaiveBaseline<'b> {
    backend: &'b CpuBackend,
    pool: BaselinePool<'b>,
    owner: OwnerId,
    locked: Mutex<Locked>,
}

impl<'b> NaiveBaseline<'b> {
    /// A baseline on `backend`'s engine (its domain, pool and parallel mode), with fresh
    /// resources bounded by `limits`.
    ///
    /// # Errors
    ///
    /// [`BaselineError::InsideExecution`] on a thread that runs an execution;
    /// [`BaselineError::Pool`] when the engine has no pool and a one-thread pool cannot start.
    pub fn new(backend: &'b CpuBackend, limits: ResourceLimits) -> Result<Self, BaselineError> {
        let owner = fresh_execution_owner().ok_or(BaselineError::InsideExecution)?;
        let pool = match backend.engine.domain.pool() {
            Some(pool) => BaselinePool::Engine(pool),
            None => BaselinePool::Own(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|i| format!("holdfast-naive-{i}"))
                    .build()?,
            ),
        };
        let locked = Locked {
            resources: EngineResources::with_limits(limits),
            counters: OpCounters::default(),
            stats: BaselineStats::default(),
        };
        Ok(NaiveBaseline { backend, pool, owner, locked: Mutex::new(locked) })
    }

    /// Runs `f` on a view over the baseline's resources: the mutex locked, then the pool
    /// installed, then the view built, for this call alone.
    ///
    /// A view's [`child_execution`](CpuExecSession::child_execution) names an owner the arbiter
    /// never admitted, so its entries are refused.
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates, after the view's buffers went back to the baseline's pool.
    pub fn with_view<R: Send>(&self, f: impl FnOnce(&mut CpuExecSession<'_>) -> R + Send) -> R {
        let mut guard = self.lock();
        let locked = &mut *guard;
        locked.stats.calls += 1;
        locked.stats.locks += 1;
        let engine = &self.backend.engine;
        let origin = ViewOrigin { engine, owner: self.owner };
        let pool = match &self.pool {
            BaselinePool::Engine(pool) => *pool,
            BaselinePool::Own(pool) => pool,
        };
        let Locked { resources, counters, stats } = locked;
        let before = counters.operations;
        let value = pool.install(|| {
            // Counted where it happened: on the installed pool's thread.
            stats.installs += 1;
            let entry = CpuOperationEntry::new(&engine.domain, engine.mode);
            with_view(resources, entry, counters, origin, f)
        });
        stats.operations += counters.operations - before;
        value
    }

    /// The calls, locks, installs and operations counted so far.
    pub fn stats(&self) -> BaselineStats {
        self.lock().stats
    }

    /// Runs `f` on the baseline's resources (for their statistics, or to empty them).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, NaiveBaseline, ResourceLimits, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let naive = NaiveBaseline::new(&backend, ResourceLimits::default())?;
    /// let a = Tensor::<f64>::from_vec([4], vec![1.0; 4])?;
    /// let sum = naive.with_view(|v| v.add(a.read(), a.read()))?;
    /// naive.with_view(|v| v.recycle(sum));
    /// assert_eq!(naive.with_resources(|r| r.buffers.stats().len), 1);
    /// let _released = naive.with_resources(|r| r.buffers.trim());
    /// assert_eq!(naive.with_resources(|r| r.buffers.stats().len), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_resources<R>(&self, f: impl FnOnce(&mut EngineResources) -> R) -> R {
        f(&mut self.lock().resources)
    }

    /// The mutex, taken back from a panic (see the module's invariant).
    fn lock(&self) -> MutexGuard<'_, Locked> {
        self.locked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
