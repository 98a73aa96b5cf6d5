//! Admission arbiter of holdfast (layer 1): who may run on an engine, and in what order.
//!
//! Owns engine reservations ([`ResourcePermit`]), FIFO admission between conflicting CPU-set
//! requests ([`ResourceArbiter`], requests are [`CpuMask`]s), and the thread-local execution-owner
//! marker ([`ExecutionOwnerGuard`]). It depends on no other holdfast crate (SPEC L1) and on
//! nothing but std and thiserror.
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
//!     fresh_execution_owner, AdmissionError, AdmissionMode, CpuMask, ExecutionOwnerGuard,
//!     ResourceArbiter,
//! };
//!
//! let arbiter = ResourceArbiter::new(); // or ResourceArbiter::global()
//! let cpus = CpuMask::from_cpus([0, 1])?;
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
mod mask;
mod owner;
mod registry;
mod sync;

pub use arbiter::{
    AdmissionMode, ArbiterSnapshot, ResourceArbiter, ResourcePermit, register_pool_worker_probe,
};
pub use error::{AdmissionError, Holder, ReentryCause};
pub use mask::{CpuMask, CpuMaskError};
pub use owner::{
    ExecutionOwnerGuard, OwnerId, current_owner, fresh_execution_owner, has_active_execution,
};
