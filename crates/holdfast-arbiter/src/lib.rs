//! Admission arbiter of holdfast (layer 1): who may run on an engine, and in what order.
//!
//! Owns engine reservations ([`ResourcePermit`]), FIFO admission between conflicting CPU-set
//! requests ([`ResourceArbiter`], requests are [`CpuSet`]s), and the thread-local execution-owner
//! marker ([`ExecutionOwnerGuard`]). Of the holdfast crates it depends only on the layer-0 value
//! crate `holdfast-cpuset` (never on affinity or kernels, SPEC L1); otherwise on std and
//! thiserror. Two requests conflict when their CPU sets overlap.
//!
//! The protocol (request, queue, FIFO rule, wake-up, poison, pool workers, memory ordering) is
//! written up in `docs/design/admission.md`.
//!
//! # Examples
//!
//! A root execution: mint an owner, get admitted, mark the thread, run, release in reverse order.
//!
//! ```
//! use holdfast_arbiter::{
//!     fresh_execution_owner, AdmissionError, AdmissionMode, CpuSet, ExecutionOwnerGuard,
//!     ResourceArbiter,
//! };
//!
//! let arbiter = ResourceArbiter::new(); // or ResourceArbiter::global()
//! let cpus = CpuSet::from_cpus([0, 1])?;
//! let owner = fresh_execution_owner().expect("no execution active here");
//! let permit = arbiter.acquire(&cpus, owner, AdmissionMode::Wait)?;
//! let marker = ExecutionOwnerGuard::enter(owner);
//!
//! // Re-entry from the same thread is refused before blocking ...
//! let again = arbiter.acquire(&cpus, owner, AdmissionMode::Wait);
//! assert!(matches!(again, Err(AdmissionError::Reentered { .. })));
//! // ... while a child joins its owner without waiting.
//! let child = arbiter.join(owner)?;
//!
//! drop(child);
//! drop(marker);
//! drop(permit);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arbiter;
mod core;
mod error;
mod owner;
mod permit;
mod registry;
mod sync;

pub use arbiter::{AdmissionMode, ArbiterSnapshot, ResourceArbiter, register_pool_worker_probe};
pub use error::{AdmissionError, Holder, ReentryCause};
// The request value, re-exported so that a caller of the arbiter needs no second import.
pub use holdfast_cpuset::{CpuSet, CpuSetError};
pub use owner::{
    ExecutionOwnerGuard, OwnerId, current_owner, fresh_execution_owner, has_active_execution,
};
pub use permit::ResourcePermit;
