//! [`ResourcePermit`]: one admitted reservation of the arbiter, released by its drop (A1).
//!
//! A permit is made only by the arbiter's `acquire` (a root's reservation) or `join` (a child's
//! share of an active owner's reservation). It names the core it was admitted on (the
//! process-wide one, or an arbiter's private one), so its release reaches the right queue
//! without going through the arbiter handle.

use std::fmt;
use std::sync::Arc;

use crate::core::Core;
use crate::core::state::Ticket;
use crate::owner::OwnerId;

/// Which core an arbiter (or permit) points at.
#[derive(Clone)]
pub(crate) enum CoreRef {
    /// The process-wide core: no reference count to maintain.
    Global(&'static Core),
    /// A private core.
    Private(Arc<Core>),
}

impl CoreRef {
    #[inline]
    pub(crate) fn get(&self) -> &Core {
        match self {
            Self::Global(core) => core,
            Self::Private(core) => core,
        }
    }
}

/// One admitted reservation (or one joined permit of it). Not `Clone`; dropping it releases the
/// reservation — removes the request and wakes the admissible waiters — and cannot fail (A1).
/// `Send + Sync`, so a shared scope may hold it in an `Arc`.
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{fresh_execution_owner, AdmissionMode, CpuSet, ResourceArbiter};
///
/// let arbiter = ResourceArbiter::new();
/// let cpus = CpuSet::from_cpus([3])?;
/// let permit = arbiter.acquire(&cpus, fresh_execution_owner().unwrap(), AdmissionMode::Wait)?;
/// assert!(arbiter.acquire(&cpus, fresh_execution_owner().unwrap(), AdmissionMode::Try).is_err());
/// drop(permit);
/// assert!(arbiter.acquire(&cpus, fresh_execution_owner().unwrap(), AdmissionMode::Try).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "the reservation is released as soon as the permit is dropped"]
pub struct ResourcePermit {
    core: CoreRef,
    ticket: Ticket,
    owner: OwnerId,
    joined: bool,
}

impl ResourcePermit {
    /// The permit of `ticket`, admitted on `core` for `owner` (`joined` for a child's).
    pub(crate) fn new(core: CoreRef, ticket: Ticket, owner: OwnerId, joined: bool) -> Self {
        ResourcePermit { core, ticket, owner, joined }
    }

    /// The owner this permit admits.
    #[must_use]
    pub const fn owner(&self) -> OwnerId {
        self.owner
    }

    /// Whether this permit joined an owner's existing reservation (child shape) rather than
    /// making it.
    #[must_use]
    pub const fn is_joined(&self) -> bool {
        self.joined
    }
}

impl Drop for ResourcePermit {
    fn drop(&mut self) {
        // Infallible: a poisoned state is recovered, see `Core::release`.
        self.core.get().release(self.ticket);
    }
}

impl fmt::Debug for ResourcePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourcePermit")
            .field("owner", &self.owner)
            .field("ticket", &self.ticket)
            .field("joined", &self.joined)
            .finish_non_exhaustive()
    }
}
