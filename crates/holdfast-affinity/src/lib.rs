//! CPU topology and caller affinity of holdfast (layer 1).
//!
//! Owns the [`CpuSet`] value type, the process's [`Topology`] facts (loaded once) and
//! [`CallerAffinityGuard`], which narrows the calling thread to an engine's CPUs and restores it
//! afterwards. Every hwloc call of the workspace goes through this crate (module `backend`).
//!
//! # Backends
//!
//! With the default feature `hwloc`, topology and binding use hwlocality over the system hwloc
//! library. Without it (Linux only), binding uses libc's `sched_getaffinity`/`sched_setaffinity`
//! and topology comes from `/sys`. The public API is the same; [`Topology::backend`] tells which
//! one is active.
//!
//! # Talking to the arbiter
//!
//! This crate and `holdfast-arbiter` do not know each other (SPEC L1); both speak the layer-0
//! [`CpuSet`] of `holdfast-cpuset`, re-exported here, so an engine's CPUs are its admission
//! request as they are.
//!
//! # Examples
//!
//! ```
//! use holdfast_affinity::{CallerAffinityGuard, Topology};
//!
//! let topology = Topology::get()?; // loaded once per process
//! for (node, cpus) in topology.allowed_per_numa_node() {
//!     let guard = CallerAffinityGuard::enter(&cpus)?; // narrows to this node's CPUs
//!     // ... run work placed on `node` ...
//!     guard.finish()?; // restores the caller's binding
//!     # let _ = node;
//! }
//! # Ok::<(), holdfast_affinity::AffinityError>(())
//! ```

mod backend;
mod error;
pub mod fault;
mod guard;
mod topology;

pub use backend::{SystemCalls, bind_current_thread, system_calls, thread_binding};
pub use error::AffinityError;
pub use guard::CallerAffinityGuard;
pub use holdfast_cpuset::{CpuSet, CpuSetError};
pub use topology::{NumaNode, Topology};
