//! [`EngineResources`]: the reusable numerical resources of one engine (SPEC R1), and their
//! configuration ([`ResourceLimits`]).
//!
//! The fields are public so that an operation can borrow them separately (the buffer pool as
//! the kernel's allocator, a cache as its plan store). One owner at a time holds the value: the
//! engine's [`EngineResourceSlot`](crate::EngineResourceSlot) while idle, a session's
//! [`EngineResourceCheckout`](crate::EngineResourceCheckout) while checked out, or a child
//! execution that owns private resources ([`EngineResources::for_child_execution`]).

use holdfast_kernels::linalg::LinalgScratch;

use crate::{
    BufferPool, CacheLimits, ContractionWorkspaces, DEFAULT_RETENTION_LIMIT, EinsumPlanCache,
    GemmAnalysisCache,
};

/// Bounds of an [`EngineResources`].
///
/// # Examples
///
/// ```
/// use holdfast_resources::{EngineResources, ResourceLimits};
///
/// let limits = ResourceLimits { buffer_retention_bytes: 1 << 20, ..ResourceLimits::default() };
/// let r = EngineResources::with_limits(limits);
/// assert_eq!(r.buffers.retention_limit(), 1 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Retention limit of the buffer pool, in bytes.
    pub buffer_retention_bytes: usize,
    /// Bounds of the GEMM analysis cache.
    pub gemm_analysis_cache: CacheLimits,
    /// Bounds of the indexed (einsum) plan cache.
    pub indexed_plan_cache: CacheLimits,
    /// Whether N-ary contraction scratch is created up front (otherwise on first use).
    pub nary_workspaces: bool,
}

impl Default for ResourceLimits {
    /// The engine's defaults: 100 MiB of buffers, 256 GEMM plans / 1 MiB, 1024 einsum plans /
    /// 16 MiB, N-ary scratch up front.
    fn default() -> Self {
        ResourceLimits {
            buffer_retention_bytes: DEFAULT_RETENTION_LIMIT,
            gemm_analysis_cache: CacheLimits::new(256, 1 << 20),
            indexed_plan_cache: CacheLimits::default(),
            nary_workspaces: true,
        }
    }
}

impl ResourceLimits {
    /// The smaller defaults of a child execution: 16 MiB of buffers, 64 GEMM plans / 256 KiB,
    /// 128 einsum plans / 2 MiB, N-ary scratch on first use.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::ResourceLimits;
    ///
    /// assert!(ResourceLimits::child().buffer_retention_bytes < ResourceLimits::default().buffer_retention_bytes);
    /// ```
    pub const fn child() -> Self {
        ResourceLimits {
            buffer_retention_bytes: 16 << 20,
            gemm_analysis_cache: CacheLimits::new(64, 256 << 10),
            indexed_plan_cache: CacheLimits::new(128, 2 << 20),
            nary_workspaces: false,
        }
    }
}

/// The reusable numerical resources of one engine (SPEC R1).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{Par, einsum::einsum_cached};
/// use holdfast_resources::EngineResources;
/// use holdfast_tensor::Tensor;
///
/// let mut r = EngineResources::default();
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// // Split borrows: the cache is the plan store, a loan on the pool the allocator.
/// let EngineResources { buffers, indexed_plan_cache, .. } = &mut r;
/// let mut loan = buffers.loan();
/// let c = einsum_cached("ij,jk->ik", &[a.read(), a.read()], None, indexed_plan_cache, &mut loan, Par::Seq)?;
/// loan.finish();
/// assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EngineResources {
    /// The per-dtype buffer pool (the kernels' allocator).
    pub buffers: BufferPool,
    /// Validated matrix products by operand layouts.
    pub gemm_analysis_cache: GemmAnalysisCache,
    /// Prepared einsum plans by content key (the kernels' plan store).
    pub indexed_plan_cache: EinsumPlanCache,
    /// faer's workspace for factorizations (SVD, QR, eigh, solve), grown to the largest request
    /// and reused, so a warm factorization allocates nothing (SPEC T4).
    pub linalg: LinalgScratch,
    /// N-ary contraction scratch; `None` until first needed (see
    /// [`nary_workspaces`](Self::nary_workspaces)).
    pub nary: Option<ContractionWorkspaces>,
    /// Times the runtime caches were cleared ([`clear_runtime_caches`](Self::clear_runtime_caches)).
    pub runtime_clears: u64,
}

impl Default for EngineResources {
    fn default() -> Self {
        Self::with_limits(ResourceLimits::default())
    }
}

impl EngineResources {
    /// Resources with `limits`.
    ///
    /// # Examples
    ///
    /// See [`ResourceLimits`].
    pub fn with_limits(limits: ResourceLimits) -> Self {
        EngineResources {
            buffers: BufferPool::with_retention_limit(limits.buffer_retention_bytes),
            gemm_analysis_cache: GemmAnalysisCache::new(limits.gemm_analysis_cache),
            indexed_plan_cache: EinsumPlanCache::new(limits.indexed_plan_cache),
            linalg: LinalgScratch::new(),
            nary: limits.nary_workspaces.then(ContractionWorkspaces::new),
            runtime_clears: 0,
        }
    }

    /// Fresh private resources for a child execution (an entry that joins its parent's owner
    /// and must not touch the parent's checked-out resources), with [`ResourceLimits::child`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::EngineResources;
    ///
    /// let child = EngineResources::for_child_execution();
    /// assert!(child.buffers.is_empty() && child.nary.is_none());
    /// ```
    pub fn for_child_execution() -> Self {
        Self::with_limits(ResourceLimits::child())
    }

    /// Applies `limits`: the buffer retention limit and both caches' bounds (evicting what no
    /// longer fits); creates the N-ary scratch when `limits.nary_workspaces` asks for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{CacheLimits, EngineResources, ResourceLimits};
    ///
    /// let mut r = EngineResources::for_child_execution();
    /// r.set_limits(ResourceLimits { indexed_plan_cache: CacheLimits::new(8, 1 << 16), ..ResourceLimits::child() });
    /// assert_eq!(r.indexed_plan_cache.limits().max_entries, 8);
    /// ```
    pub fn set_limits(&mut self, limits: ResourceLimits) {
        self.buffers.set_retention_limit(limits.buffer_retention_bytes);
        self.gemm_analysis_cache.set_limits(limits.gemm_analysis_cache);
        self.indexed_plan_cache.set_limits(limits.indexed_plan_cache);
        if limits.nary_workspaces {
            self.nary_workspaces();
        }
    }

    /// The N-ary contraction scratch, created on first use.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::EngineResources;
    ///
    /// let mut child = EngineResources::for_child_execution();
    /// assert!(child.nary_workspaces().lease().is_ok());
    /// assert!(child.nary.is_some());
    /// ```
    pub fn nary_workspaces(&mut self) -> &ContractionWorkspaces {
        self.nary.get_or_insert_with(ContractionWorkspaces::new)
    }

    /// Drops every cached plan (GEMM analyses and einsum plans) and counts a runtime clear.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::EngineResources;
    ///
    /// let mut r = EngineResources::default();
    /// r.clear_runtime_caches();
    /// assert_eq!(r.runtime_clears, 1);
    /// assert_eq!(r.indexed_plan_cache.stats().clears, 1);
    /// ```
    pub fn clear_runtime_caches(&mut self) {
        self.gemm_analysis_cache.clear();
        self.indexed_plan_cache.clear();
        self.runtime_clears += 1;
    }
}
