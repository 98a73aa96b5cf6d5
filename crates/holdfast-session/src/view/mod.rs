//! [`CpuExecSession`]: the per-operation view, and [`with_view`], the single place a
//! view is built (shared by the held session, the shared-scope arm and the child arm).
//!
//! # The operation path (S5, S9, B4, B5)
//!
//! A view borrows the checked-out resources split into their parts: a [`BufferPoolLoan`] on the
//! pool (the kernels' allocator), the GEMM analysis cache, the einsum plan cache, the
//! factorization workspace. Each operation:
//!
//! 1. validates access (S9): every input must be host memory and ready, checked before any
//!    kernel, shortcut or plan lookup, and rejected with a typed [`OpError`];
//! 2. looks its plan up by content (B3) where the family has one: the GEMM cache's
//!    `bind` (the operands checked once, against the plan) or the einsum store's
//!    [`PlanStore::lookup`], the same lookup the kernels' `einsum_cached` makes;
//! 3. picks its route ([`CpuOperationEntry::route`]: inline, or the engine's pool, installed
//!    only above the family's threshold, B5) and counts itself in plain integers;
//! 4. calls the kernel on that route.
//!
//! Data flows down once: plan, route, kernel. The kernel's error comes back unchanged.
//!
//! No lock, no clock, no handle clone (a child handle is derived only by
//! [`CpuExecSession::child_execution`]), and no allocation a warm pool could serve.

mod linalg;
mod pointwise;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use holdfast_arbiter::OwnerId;
use holdfast_kernels::einsum::PlanStore;
use holdfast_kernels::linalg::LinalgScratch;
use holdfast_kernels::{Family, KernelAlloc, KernelError, Par};
use holdfast_provider::{CpuOperationEntry, RouteCounters};
use holdfast_resources::{BufferPoolLoan, EinsumPlanCache, EngineResources, GemmAnalysisCache};
use holdfast_tensor::{Element, Tensor, TensorError, TensorRead};

use crate::engine::CpuEngine;
use crate::{CpuBackend, OpError};

/// Plain per-session operation counters (no atomics).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OpCounters {
    pub(crate) operations: u64,
    pub(crate) routes: RouteCounters,
}

/// Cumulative counters of one set of resources: buffer-pool and plan-cache (einsum plus GEMM)
/// hits and misses since the resources were built. Plain reads, no lock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResourceCounters {
    pub(crate) buffer_hits: u64,
    pub(crate) buffer_misses: u64,
    pub(crate) plan_hits: u64,
    pub(crate) plan_misses: u64,
}

impl ResourceCounters {
    fn read(
        pool: &holdfast_resources::BufferPool,
        gemm: &GemmAnalysisCache,
        plans: &EinsumPlanCache,
    ) -> Self {
        let pool = pool.stats();
        let (einsum, gemm) = (plans.stats(), gemm.stats());
        ResourceCounters {
            buffer_hits: pool.hits,
            buffer_misses: pool.misses,
            plan_hits: einsum.hits + gemm.hits,
            plan_misses: einsum.misses + gemm.misses,
        }
    }

    /// The counters of `resources`.
    pub(crate) fn of(resources: &EngineResources) -> Self {
        Self::read(
            &resources.buffers,
            &resources.gemm_analysis_cache,
            &resources.indexed_plan_cache,
        )
    }
}

/// Where a view comes from: the engine and the owner its entries run as.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ViewOrigin<'e> {
    pub(crate) engine: &'e Arc<CpuEngine>,
    pub(crate) owner: OwnerId,
}

/// Builds one view over `resources`, runs `f` with it inside a buffer-pool loan, and drops it.
///
/// On normal return the loan is finished (buffers in flight belong to the results); if `f`
/// panics, the loan's drop replenishes the pool while unwinding (R6, S10).
pub(crate) fn with_view<R>(
    resources: &mut EngineResources,
    entry: CpuOperationEntry<'_>,
    counters: &mut OpCounters,
    origin: ViewOrigin<'_>,
    f: impl FnOnce(&mut CpuExecSession<'_>) -> R,
) -> R {
    let EngineResources { buffers, gemm_analysis_cache, indexed_plan_cache, linalg, .. } =
        resources;
    let mut view = CpuExecSession {
        loan: buffers.loan(),
        gemm: gemm_analysis_cache,
        plans: indexed_plan_cache,
        linalg,
        entry,
        counters,
        origin,
    };
    let value = f(&mut view);
    view.loan.finish();
    value
}

/// The view of one operation on a session's resources. Built by the session for the length of
/// one callback; it cannot escape it.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, Tensor};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let a = Tensor::<f64>::from_vec([2, 3], (1..=6).map(f64::from).collect())?;
/// let b = Tensor::<f64>::from_vec([3], vec![1.0, 0.0, -1.0])?;
/// let mut session = backend.open_session()?;
/// let r = session.with_session(|v| v.einsum("ij,j->i", &[a.read(), b.read()]))?;
/// assert_eq!(r.as_slice(), &[-2.0, -2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A view cannot outlive its callback:
///
/// ```compile_fail
/// use holdfast_session::CpuBackend;
/// let backend = CpuBackend::builder().threads(1).build().unwrap();
/// let mut session = backend.open_session().unwrap();
/// let escaped = session.with_session(|v| v);
/// ```
#[derive(Debug)]
pub struct CpuExecSession<'s> {
    loan: BufferPoolLoan<'s>,
    gemm: &'s mut GemmAnalysisCache,
    plans: &'s mut EinsumPlanCache,
    linalg: &'s mut LinalgScratch,
    entry: CpuOperationEntry<'s>,
    counters: &'s mut OpCounters,
    origin: ViewOrigin<'s>,
}

/// Rejects foreign-domain or pending inputs (S9), before anything else looks at them.
pub(super) fn check_access<'v, 'a: 'v, T: Element>(
    operands: impl IntoIterator<Item = &'v TensorRead<'a, T>>,
) -> Result<(), OpError> {
    for (operand, t) in operands.into_iter().enumerate() {
        if !t.domain().is_host() {
            return Err(OpError::ForeignStorage { operand, domain: t.domain() });
        }
        if !t.readiness().is_ready() {
            return Err(OpError::PendingStorage { operand });
        }
    }
    Ok(())
}

pub(super) fn size_of_op(n: usize) -> u64 {
    n as u64
}

impl CpuExecSession<'_> {
    /// Runs one kernel call through the provider route for `family` at `size`.
    fn run<R: Send>(
        &mut self,
        family: Family,
        size: u64,
        f: impl FnOnce(&mut BufferPoolLoan<'_>, Par) -> Result<R, KernelError> + Send,
    ) -> Result<R, OpError> {
        self.counters.operations += 1;
        let loan = &mut self.loan;
        // The error is converted inside the closure, where the kernel's result is made: the
        // output is then written once, into the caller's slot, not copied between result types.
        self.entry.with_native_parallelism(family, size, &mut self.counters.routes, |par| {
            f(loan, par).map_err(OpError::from)
        })
    }

    /// The matrix product of 2-D operands, or the batched product of 3-D ones (K4), with the
    /// output from the session's pool and the analysis from its plan cache.
    ///
    /// # Errors
    ///
    /// As [`scale`](Self::scale); [`OpError::Kernel`] for shapes that cannot be multiplied.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let c = backend.with_backend_session(|v| v.matmul(a.read(), a.read().transpose()))??;
    /// assert_eq!(c.as_slice(), &[5.0, 11.0, 11.0, 25.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "SPEC API: every operation takes its views by value"
    )]
    pub fn matmul<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
    ) -> Result<Tensor<T>, OpError> {
        check_access([&a, &b])?;
        let plan = self.gemm.bind(&a, &b)?;
        self.counters.operations += 1;
        let route = self.entry.route(Family::Gemm, plan.flops(), &mut self.counters.routes);
        let loan = &mut self.loan;
        route.run(|par| plan.execute_as(loan, par))
    }

    /// [`matmul`](Self::matmul) into a caller-owned output of the right shape: no allocation at
    /// all.
    ///
    /// # Errors
    ///
    /// As [`matmul`](Self::matmul); [`OpError::BadOutput`] when `out` is foreign or pending;
    /// [`OpError::Kernel`] when `out` has the wrong shape or is not dense row-major.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let mut out = Tensor::<f64>::zeros([2, 2]);
    /// let mut session = backend.open_session()?;
    /// session.with_session(|v| v.matmul_into(a.read(), a.read(), &mut out))?;
    /// assert_eq!(out.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "SPEC API: every operation takes its views by value"
    )]
    pub fn matmul_into<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
        out: &mut Tensor<T>,
    ) -> Result<(), OpError> {
        check_access([&a, &b])?;
        if !out.domain().is_host() {
            return Err(OpError::BadOutput("in foreign memory"));
        }
        if !out.readiness().is_ready() {
            return Err(OpError::BadOutput("pending"));
        }
        let plan = self.gemm.bind(&a, &b)?;
        self.counters.operations += 1;
        let route = self.entry.route(Family::Gemm, plan.flops(), &mut self.counters.routes);
        Ok(route.run(|par| plan.execute_into(out, par))?)
    }

    /// numpy-style einsum (K5) with a greedy path, the plan cached in the session by content.
    ///
    /// # Errors
    ///
    /// As [`scale`](Self::scale) for any operand; [`OpError::Kernel`] for a malformed spec, a
    /// label/rank mismatch, a wrong operand count or inconsistent dimensions.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let tr = backend.with_backend_session(|v| v.einsum("ii", &[a.read()]))??;
    /// assert_eq!(tr.as_slice(), &[5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn einsum<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
    ) -> Result<Tensor<T>, OpError> {
        self.einsum_inner(spec, operands, None)
    }

    /// einsum following an opt_einsum-format `path` (pairs of positions in the current operand
    /// list; each result is appended).
    ///
    /// # Errors
    ///
    /// As [`einsum`](Self::einsum); [`OpError::Kernel`] for an out-of-range or repeated path
    /// index or an incomplete path.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let m = Tensor::<f64>::from_vec([2, 2], vec![1.0, 1.0, 0.0, 1.0])?;
    /// let r = backend.with_backend_session(|v| {
    ///     v.einsum_with_path("ij,jk,kl->il", &[m.read(), m.read(), m.read()], &[(0, 1), (0, 1)])
    /// })??;
    /// assert_eq!(r.as_slice(), &[1.0, 3.0, 0.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn einsum_with_path<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: &[(usize, usize)],
    ) -> Result<Tensor<T>, OpError> {
        self.einsum_inner(spec, operands, Some(path))
    }

    /// einsum following a path in opt_einsum's general format: each step names one or more
    /// positions in the current operand list, which are removed, contracted together, and their
    /// result appended (a one-operand step sums that operand's own labels, or only moves it to
    /// the end). The path runs as the equivalent pair path, planned and cached like
    /// [`einsum_with_path`](Self::einsum_with_path)'s.
    ///
    /// # Errors
    ///
    /// As [`einsum_with_path`](Self::einsum_with_path); [`OpError::Kernel`] also for a step
    /// naming no operand.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let m = Tensor::<f64>::from_vec([2, 2], vec![1.0, 1.0, 0.0, 1.0])?;
    /// let ops = [m.read(), m.read(), m.read()];
    /// // numpy's `optimize=['einsum_path', (1,), (0, 1, 2)]`.
    /// let steps: [&[usize]; 2] = [&[1], &[0, 1, 2]];
    /// let r = backend.with_backend_session(|v| v.einsum_with_steps("ij,jk,kl->il", &ops, &steps))??;
    /// assert_eq!(r.as_slice(), &[1.0, 3.0, 0.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn einsum_with_steps<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        steps: &[&[usize]],
    ) -> Result<Tensor<T>, OpError> {
        let pairs = holdfast_kernels::einsum::pairs_of_steps(operands.len(), steps)?;
        self.einsum_inner(spec, operands, Some(&pairs))
    }

    fn einsum_inner<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Result<Tensor<T>, OpError> {
        check_access(operands)?;
        let matched = self.plans.lookup_matched(spec, operands, path)?;
        self.counters.operations += 1;
        let route = self.entry.route(
            Family::Contraction,
            matched.plan().flops(),
            &mut self.counters.routes,
        );
        let loan = &mut self.loan;
        route.run(|par| matched.execute_as(loan, par))
    }

    /// A child handle on this session's engine: its scoped entries join this session's owner
    /// instead of queueing behind it, never wait, and use private resources (A6). Derived only
    /// when asked: operations that do not call this clone nothing (B4).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
    /// let mut session = backend.open_session()?;
    /// let inner = session.with_session(|v| {
    ///     let child = v.child_execution();
    ///     child.with_backend_session(|cv| cv.add(a.read(), a.read()))
    /// })??;
    /// assert_eq!(inner.as_slice(), &[2.0, 4.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn child_execution(&self) -> CpuBackend {
        CpuBackend::child_of(self.origin.engine, self.origin.owner)
    }

    /// Gives `tensor`'s buffer back to the session's pool, so a later output of the same size is
    /// served without allocating.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([4], vec![1.0; 4])?;
    /// let mut session = backend.open_session()?;
    /// for _ in 0..10 {
    ///     let t = session.with_session(|v| v.add(a.read(), a.read()))?;
    ///     session.with_session(|v| v.recycle(t));
    /// }
    /// assert_eq!(session.close()?.buffer_misses, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    // Always inlined: the caller's tensor is then read where it lies, its buffer only, instead
    // of being copied whole into an argument slot a moment after the operation wrote it.
    #[inline(always)]
    pub fn recycle<T: Element>(&mut self, tensor: Tensor<T>) {
        self.loan.give(tensor.into_storage());
    }

    /// A tensor of zeros of `shape` (row-major), its buffer from the session's pool (numpy's
    /// `zeros`): a scratch or output an algorithm fills itself, served without allocating once
    /// the pool holds a buffer of its size.
    ///
    /// # Errors
    ///
    /// [`OpError::Tensor`] when the product of `shape` does not fit in `usize`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::CpuBackend;
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let mut session = backend.open_session()?;
    /// let spent = session.with_session(|v| v.zeros::<f64>(&[2, 3]))?;
    /// assert_eq!(spent.shape(), &[2, 3]);
    /// assert_eq!(spent.as_slice(), &[0.0; 6]);
    /// session.with_session(|v| v.recycle(spent));
    /// let again = session.with_session(|v| v.zeros::<f64>(&[3, 2]))?;
    /// assert_eq!(session.stats().buffer_hits, 1);
    /// # drop(again);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn zeros<T: Element>(&mut self, shape: &[usize]) -> Result<Tensor<T>, OpError> {
        let numel = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| TensorError::ShapeOverflow { shape: shape.to_vec() })?;
        self.counters.operations += 1;
        let buffer = self.loan.take_zeroed::<T>(numel);
        Ok(Tensor::from_shape_vec(shape, buffer)?)
    }

    /// Operations this view's session has run so far.
    pub fn operations(&self) -> u64 {
        self.counters.operations
    }

    /// The cumulative counters of the resources this view borrows (lane telemetry).
    pub(crate) fn resource_counters(&self) -> ResourceCounters {
        ResourceCounters::read(&self.loan, self.gemm, self.plans)
    }
}
