//! [`CpuEngine`]: one CPU execution domain with its admission and its resources.
//!
//! # Invariants
//!
//! - The resource slot is created `Ready` with the engine, so a vacant slot always means
//!   "checked out by the current admission holder", never "not yet created" (R2).
//! - Only a holder of the engine's admission checks the slot out (a held session, a scoped entry
//!   or a shared scope's entry); child entries use private resources. So an admitted opener
//!   always finds the slot `Ready`: a session returns its resources before it releases its
//!   admission (S4).
//! - Everything else here is immutable after construction.

use holdfast_arbiter::ResourceArbiter;
use holdfast_provider::{CpuDomain, ParallelMode};
use holdfast_resources::EngineResourceSlot;

/// One CPU engine: domain facts, admission, and the resource slot. Shared by the
/// [`CpuBackend`](crate::CpuBackend) handles built for it.
#[derive(Debug)]
pub(crate) struct CpuEngine {
    pub(crate) domain: CpuDomain,
    pub(crate) mode: ParallelMode,
    /// Admits owners; the engine's request is its domain's CPU set.
    pub(crate) arbiter: ResourceArbiter,
    pub(crate) resources: EngineResourceSlot,
    /// The NUMA node the engine was placed on (OS index), when it was built for one.
    pub(crate) numa_node: Option<usize>,
}

impl CpuEngine {
    /// A stable identity for this engine while it lives (its address).
    pub(crate) fn id(&self) -> u64 {
        std::ptr::from_ref(self) as usize as u64
    }
}
