//! Management of an engine's resources through its [`EngineResourceSlot`] (SPEC R4, R5):
//! statistics, `trim`, clearing the runtime caches, clearing poison.
//!
//! # Never waiting on a session
//!
//! Every function here locks the slot mutex, which is only ever held for `O(1)` moves or
//! another short management step, so it returns in bounded time. While a session has the
//! resources checked out it fails at once with [`ManagementError::Busy`]; after the checkout
//! is returned it works again. A poisoned slot mutex is reported as
//! [`ManagementError::Poisoned`] (checkouts recover it; management does not hide it).
//!
//! # All or nothing
//!
//! A change over several resources (`trim` touches the buffer pool and the N-ary scratch)
//! resolves every resource first — the slot `Ready`, the scratch leased with a non-waiting
//! `try_lock` — and only then changes anything, so one busy or poisoned resource aborts the
//! whole change with nothing half-applied.
//!
//! # Lock order
//!
//! slot mutex → N-ary scratch mutex (`try_lock` only). Buffers released by `trim` are freed
//! after the slot mutex is unlocked.

#[cfg(test)]
mod tests;

use std::sync::MutexGuard;

use crate::slot::SlotState;
use crate::{
    BufferPoolStats, EngineResourceSlot, EngineResources, ManagementError, PlanCacheStats,
    ResourceKind, ResourceLimits, ResourceSlot, WorkspaceError,
};

fn workspace_error(e: WorkspaceError) -> ManagementError {
    match e {
        WorkspaceError::Poisoned => {
            ManagementError::Poisoned { resource: ResourceKind::ContractionWorkspaces }
        }
        _ => ManagementError::Busy,
    }
}

impl EngineResourceSlot {
    /// Locks the slot for management: counts the acquisition, reports poison.
    fn lock_managed(&self) -> Result<MutexGuard<'_, SlotState>, ManagementError> {
        let mut g = self
            .state
            .lock()
            .map_err(|_| ManagementError::Poisoned { resource: ResourceKind::Slot })?;
        g.counters.lock_acquisitions += 1;
        Ok(g)
    }

    /// Runs the short management step `f` on the resources, under the slot mutex (crate
    /// private: an arbitrary closure must never run a kernel under the slot mutex). Nothing is
    /// done when the slot is checked out or poisoned.
    pub(crate) fn with_resources<R>(
        &self,
        f: impl FnOnce(&mut EngineResources) -> Result<R, ManagementError>,
    ) -> Result<R, ManagementError> {
        let mut g = self.lock_managed()?;
        match &mut g.slot {
            ResourceSlot::Ready(r) => f(r),
            ResourceSlot::CheckedOut => Err(ManagementError::Busy),
        }
    }

    /// Changes the bounds of the resources (buffer retention, cache bounds; N-ary scratch is
    /// created if asked for and absent), evicting what no longer fits.
    ///
    /// # Errors
    ///
    /// [`ManagementError::Busy`] while checked out; [`ManagementError::Poisoned`] for a
    /// poisoned slot.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources, ResourceLimits};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// slot.set_limits(ResourceLimits { buffer_retention_bytes: 1 << 20, ..ResourceLimits::default() })?;
    /// assert_eq!(slot.buffer_pool_stats()?.retention_limit, 1 << 20);
    /// # Ok::<(), holdfast_resources::ManagementError>(())
    /// ```
    pub fn set_limits(&self, limits: ResourceLimits) -> Result<(), ManagementError> {
        self.with_resources(|r| {
            r.set_limits(limits);
            Ok(())
        })
    }

    /// Number of buffers the engine's pool retains.
    ///
    /// # Errors
    ///
    /// [`ManagementError::Busy`] while checked out; [`ManagementError::Poisoned`] for a
    /// poisoned slot.
    ///
    /// # Examples
    ///
    /// See [`ManagementError`].
    pub fn buffer_pool_len(&self) -> Result<usize, ManagementError> {
        self.with_resources(|r| Ok(r.buffers.len()))
    }

    /// Statistics of the engine's buffer pool.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// assert_eq!(slot.buffer_pool_stats()?.len, 0);
    /// # Ok::<(), holdfast_resources::ManagementError>(())
    /// ```
    pub fn buffer_pool_stats(&self) -> Result<BufferPoolStats, ManagementError> {
        self.with_resources(|r| Ok(r.buffers.stats()))
    }

    /// Statistics of the engine's indexed (einsum) plan cache.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// assert_eq!(slot.indexed_plan_cache_stats()?.entries, 0);
    /// # Ok::<(), holdfast_resources::ManagementError>(())
    /// ```
    pub fn indexed_plan_cache_stats(&self) -> Result<PlanCacheStats, ManagementError> {
        self.with_resources(|r| Ok(r.indexed_plan_cache.stats()))
    }

    /// Statistics of the engine's GEMM analysis cache.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// assert_eq!(slot.gemm_analysis_cache_stats()?.hits, 0);
    /// # Ok::<(), holdfast_resources::ManagementError>(())
    /// ```
    pub fn gemm_analysis_cache_stats(&self) -> Result<PlanCacheStats, ManagementError> {
        self.with_resources(|r| Ok(r.gemm_analysis_cache.stats()))
    }

    /// Releases retained memory: every pooled buffer, the factorization workspace and the N-ary
    /// scratch (plan caches are
    /// kept; see [`clear_runtime_caches`](Self::clear_runtime_caches)). All or nothing: a
    /// busy or poisoned scratch aborts it before anything is released.
    ///
    /// # Errors
    ///
    /// [`ManagementError::Busy`] while checked out (or the scratch is leased);
    /// [`ManagementError::Poisoned`] for a poisoned slot or scratch.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::{EngineResourceSlot, EngineResources};
    ///
    /// let mut r = EngineResources::default();
    /// r.buffers.give(Vec::<f64>::with_capacity(64));
    /// let slot = EngineResourceSlot::new(r);
    /// slot.trim()?;
    /// assert_eq!(slot.buffer_pool_len()?, 0);
    /// # Ok::<(), holdfast_resources::ManagementError>(())
    /// ```
    pub fn trim(&self) -> Result<(), ManagementError> {
        let released = self.with_resources(|r| {
            let EngineResources { buffers, linalg, nary, .. } = r;
            // Resolve every resource first.
            let scratch = match nary {
                Some(ws) => Some(ws.try_guard().map_err(workspace_error)?),
                None => None,
            };
            // Then apply, infallibly.
            let released = buffers.trim();
            linalg.release();
            if let Some(mut scratch) = scratch {
                scratch.release();
            }
            Ok(released)
        })?;
        drop(released); // freed outside the slot mutex
        Ok(())
    }

    /// Drops every cached plan (GEMM analyses and einsum plans) and counts a runtime clear.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// slot.clear_runtime_caches()?;
    /// assert_eq!(slot.indexed_plan_cache_stats()?.clears, 1);
    /// # Ok::<(), holdfast_resources::ManagementError>(())
    /// ```
    pub fn clear_runtime_caches(&self) -> Result<(), ManagementError> {
        self.with_resources(|r| {
            r.clear_runtime_caches();
            Ok(())
        })
    }

    /// Clears the poison of the slot mutex and of the N-ary scratch (whose contents are
    /// discarded). All or nothing.
    ///
    /// # Errors
    ///
    /// [`ManagementError::Busy`] while checked out (or the scratch is leased); nothing is
    /// cleared then.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources, ManagementError};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// slot.poison_for_tests();
    /// assert!(matches!(slot.buffer_pool_len(), Err(ManagementError::Poisoned { .. })));
    /// slot.clear_poison()?;
    /// assert_eq!(slot.buffer_pool_len()?, 0);
    /// # Ok::<(), ManagementError>(())
    /// ```
    pub fn clear_poison(&self) -> Result<(), ManagementError> {
        let mut g = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.counters.lock_acquisitions += 1;
        match &g.slot {
            ResourceSlot::CheckedOut => return Err(ManagementError::Busy),
            ResourceSlot::Ready(r) => {
                if let Some(ws) = &r.nary {
                    ws.reset_poisoned().map_err(|_| ManagementError::Busy)?;
                }
            }
        }
        self.state.clear_poison();
        Ok(())
    }
}
