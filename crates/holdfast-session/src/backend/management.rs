//! Management of a backend's engine resources (R5): never waits on a session.
//!
//! Each function takes the slot mutex briefly. While a session (or a scoped entry) has the
//! resources checked out, it returns [`ManagementError::Busy`] at once; after the session closes
//! it works again. A poisoned slot is reported as [`ManagementError::Poisoned`].

use holdfast_resources::{BufferPoolStats, ManagementError, PlanCacheStats};

use crate::CpuBackend;

impl CpuBackend {
    /// Buffers the engine's pool retains.
    ///
    /// # Errors
    ///
    /// [`ManagementError::Busy`] while a session holds the resources;
    /// [`ManagementError::Poisoned`] for a poisoned slot.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, ManagementError};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// assert_eq!(backend.buffer_pool_len()?, 0);
    /// let session = backend.open_session()?;
    /// assert!(matches!(backend.buffer_pool_len(), Err(ManagementError::Busy)));
    /// session.close()?;
    /// assert!(backend.buffer_pool_len().is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn buffer_pool_len(&self) -> Result<usize, ManagementError> {
        self.engine.resources.buffer_pool_len()
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
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// assert_eq!(backend.buffer_pool_stats()?.len, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn buffer_pool_stats(&self) -> Result<BufferPoolStats, ManagementError> {
        self.engine.resources.buffer_pool_stats()
    }

    /// Statistics of the engine's einsum plan cache.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len).
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// assert_eq!(backend.indexed_plan_cache_stats()?.entries, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn indexed_plan_cache_stats(&self) -> Result<PlanCacheStats, ManagementError> {
        self.engine.resources.indexed_plan_cache_stats()
    }

    /// Statistics of the engine's matrix-product analysis cache.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len).
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// assert_eq!(backend.gemm_analysis_cache_stats()?.entries, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gemm_analysis_cache_stats(&self) -> Result<PlanCacheStats, ManagementError> {
        self.engine.resources.gemm_analysis_cache_stats()
    }

    /// Releases every buffer the engine's pool retains.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len); nothing is changed on error.
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// backend.trim()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn trim(&self) -> Result<(), ManagementError> {
        self.engine.resources.trim()
    }

    /// Drops every cached plan of the engine.
    ///
    /// # Errors
    ///
    /// As [`buffer_pool_len`](Self::buffer_pool_len); nothing is changed on error.
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// backend.clear_runtime_caches()?;
    /// assert_eq!(backend.indexed_plan_cache_stats()?.clears, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear_runtime_caches(&self) -> Result<(), ManagementError> {
        self.engine.resources.clear_runtime_caches()
    }

    /// Times the engine's resource slot mutex was acquired (checkouts, returns, management).
    /// Tests use it to prove the operation path takes no lock.
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// let before = backend.slot_lock_acquisitions();
    /// backend.buffer_pool_len()?;
    /// assert_eq!(backend.slot_lock_acquisitions(), before + 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn slot_lock_acquisitions(&self) -> u64 {
        self.engine.resources.counters().lock_acquisitions
    }

    /// Times the engine's resources went back into their slot (one per checkout).
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// backend.open_session()?.close()?;
    /// assert_eq!(backend.resource_returns(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resource_returns(&self) -> u64 {
        self.engine.resources.counters().returns
    }

    /// Times the engine's admission arbiter took its internal lock (admissions, joins,
    /// releases). With the process-wide arbiter (the default) this counts every engine's; a
    /// backend built with [`private_arbiter`](crate::CpuBackendBuilder::private_arbiter) counts
    /// its own. Measurements use it to prove a held session's operations never touch admission.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
    /// let mut session = backend.open_session()?;
    /// let before = backend.arbiter_lock_acquisitions();
    /// for _ in 0..100 {
    ///     session.with_session(|v| v.add(a.read(), a.read()))?;
    /// }
    /// assert_eq!(backend.arbiter_lock_acquisitions(), before, "operations take no admission lock");
    /// session.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn arbiter_lock_acquisitions(&self) -> u64 {
        self.engine.arbiter.lock_acquisitions()
    }
}
