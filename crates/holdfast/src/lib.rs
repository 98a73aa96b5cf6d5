//! holdfast: tensor operations on the CPU inside sessions that own their admission.
//!
//! A caller opens a [`CpuHeldSession`] on a [`CpuBackend`]; the session owns the engine's
//! admission, its buffer pool and plan caches (checked out by value), the thread's execution-owner
//! marker and the caller's narrowed CPU affinity, and runs many operations for nearly the cost of
//! the bare kernel until it is closed or dropped.
//!
//! This crate re-exports the public API of the workspace (SPEC §6 "Public API"). It is a library
//! only: the `holdfast` program lives in `holdfast-cli`, so a consumer of this crate compiles no
//! argument parser, progress bar, `.npy` or JSON crate.
//!
//! # Features
//!
//! - `ndarray` (off by default): `TensorRead::from_ndarray` borrows an `ndarray::ArrayView`
//!   (contiguous in memory, any axis order) without a copy, `TensorRead::to_ndarray` lends a
//!   view back, `Tensor::from_ndarray` takes an `Array`'s buffer (one counted copy unless it is
//!   in standard layout) and `Tensor::into_ndarray` returns one (no copy for a dense row-major
//!   tensor). Views with gaps or negative strides are typed errors that name the fix.
//!
//! ```
//! use holdfast::{CpuBackend, Tensor};
//!
//! let backend = CpuBackend::builder().threads(1).build()?;
//! let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
//!
//! let mut session = backend.open_session()?;
//! let c = session.with_session(|v| v.matmul(a.read(), a.read()))?;
//! let t = session.with_session(|v| v.einsum("ij->ji", &[c.read()]))?;
//! let stats = session.close()?;
//!
//! assert_eq!(t.as_slice(), &[7.0, 15.0, 10.0, 22.0]);
//! assert_eq!(stats.operations, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use holdfast_session::{
    BufferPoolStats, BuildError, CpuBackend, CpuBackendBuilder, CpuExecSession, CpuHeldSession,
    CpuHeldSessionError, CpuSet, CpuThreadExecution, LinalgElement, ManagementError, OpError,
    ParallelMode, PlanCacheStats, ReentryCause, ReentryReason, ResourceLimits, SessionEntryError,
    SessionStats, Svd, Truncation, current_cpu_execution,
};
pub use holdfast_tensor::{
    AllocationDomain, DType, Element, ProviderId, Readiness, Tensor, TensorError, TensorRead, c32,
    c64,
};

/// The layers, for callers who need more than the facade.
pub mod layers {
    pub use holdfast_affinity as affinity;
    pub use holdfast_arbiter as arbiter;
    pub use holdfast_cpuset as cpuset;
    pub use holdfast_kernels as kernels;
    pub use holdfast_provider as provider;
    pub use holdfast_resources as resources;
    pub use holdfast_session as session;
    pub use holdfast_tensor as tensor;
}

/// The README's example, compiled and run as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
