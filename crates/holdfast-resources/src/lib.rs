//! Engine resources of holdfast (layer 2): the buffer pool, plan caches and contraction
//! workspaces an engine owns, and the resource slot a session checks them out of by value
//! (SPEC §4, R1–R8).
//!
//! | module | owns | invariant |
//! | --- | --- | --- |
//! | `pool` | [`BufferPool`] (the kernels' [`KernelAlloc`](holdfast_kernels::KernelAlloc)) | retained bytes ≤ the retention limit; best fit; no allocation on a hit |
//! | `loan` | [`BufferPoolLoan`] | on unwind the pool holds the same buffers as before the operation (R6) |
//! | `cache` | [`GemmAnalysisCache`], [`EinsumPlanCache`] | keyed by content; bounded by entries and bytes; LRU (R8, B3) |
//! | `workspaces` | [`ContractionWorkspaces`] | leased with `try_lock` only; poison is reported, never reused silently (R7) |
//! | `slot` | [`EngineResourceSlot`], [`EngineResourceCheckout`] | a vacant slot means "checked out"; the box returns exactly once (R2–R4) |
//! | `management` | statistics, `trim`, cache clears | never waits on a session: `Busy` in bounded time; all or nothing (R5) |
//! | `fault` (feature `fault-injection`) | test seams: a panic right after a checkout's take or return | a fault fires only when asked, on the asking thread; never during an unwind |
//!
//! This crate knows nothing of sessions, admission or affinity (SPEC L1). Nothing on the
//! per-operation path locks or uses atomics: the pool and caches are plain values used through
//! `&mut` by the one owner that has checked the resources out.
//!
//! # Examples
//!
//! ```
//! use holdfast_kernels::{Par, matmul};
//! use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources, ManagementError};
//! use holdfast_tensor::Tensor;
//!
//! let slot = EngineResourceSlot::new(EngineResources::default());
//! let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
//! {
//!     let mut checkout = EngineResourceCheckout::take(&slot).expect("ready");
//!     let resources = &mut *checkout;
//!     let mut loan = resources.buffers.loan();
//!     let c = matmul::matmul(a.read(), a.read(), &mut loan, Par::Seq)?;
//!     loan.finish();
//!     assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
//!     assert_eq!(slot.buffer_pool_len(), Err(ManagementError::Busy));
//! }
//! assert_eq!(slot.buffer_pool_stats()?.misses, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Unsafe
//!
//! None.

#![forbid(unsafe_code)]

mod cache;
mod error;
#[cfg(feature = "fault-injection")]
pub mod fault;
mod loan;
mod management;
mod pool;
mod resources;
mod slot;
mod workspaces;

pub use cache::{
    CacheLimits, EinsumHandle, EinsumPlanCache, GemmAnalysisCache, GemmKey, PlanCacheStats,
};
pub use error::{ManagementError, ResourceKind, WorkspaceError};
pub use loan::BufferPoolLoan;
pub use pool::{BufferPool, BufferPoolStats, DEFAULT_RETENTION_LIMIT, ReleasedBuffers};
pub use resources::{EngineResources, ResourceLimits};
pub use slot::{EngineResourceCheckout, EngineResourceSlot, ResourceSlot, SlotCounters};
pub use workspaces::{ContractionWorkspaces, Workspace, WorkspaceLease};
