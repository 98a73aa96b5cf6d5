//! Reentrant children (SPEC A6): a child handle's entries, and the one child admission shared by
//! child handles and the lanes of a phase lease.
//!
//! A child runs *inside* an execution that is already admitted: it joins the parent's owner at
//! the arbiter (never a wait: the parent's reservation is already granted), marks its thread
//! with that owner, and uses private resources so that it never competes with the parent for
//! the engine's slot. It changes no affinity (it runs where its parent, or the pool worker,
//! already runs) and never installs the pool (it is part of its parent's operation).
//!
//! | child | permit | resources |
//! |---|---|---|
//! | a child handle's [`with_backend_session`](crate::CpuBackend::with_backend_session) | joined per entry, owned by the entry | the handle's private slot |
//! | a lane of a phase run (`crate::phase`) | joined once when the phase opens, borrowed by each run | the lane's private slot |
//!
//! Both enter through [`enter_child`], which builds the crate's one [`Admission`] without
//! affinity: its release order (resources, marker, permit) is the admission module's.

use std::borrow::Borrow;
use std::sync::Arc;

use holdfast_arbiter::{OwnerId, ResourcePermit};
use holdfast_provider::{CpuOperationEntry, ParallelMode};
use holdfast_resources::{EngineResourceSlot, EngineResources};

use crate::admission::{Admission, EnterError};
use crate::engine::CpuEngine;
use crate::view::{OpCounters, ViewOrigin, with_view};
use crate::{CpuBackend, CpuExecSession, SessionEntryError};

/// What a child handle carries: the owner it joins and its private resources.
#[derive(Debug)]
pub(crate) struct ChildContext {
    pub(crate) owner: OwnerId,
    pub(crate) resources: EngineResourceSlot,
}

impl CpuBackend {
    /// A child handle on `engine` joining `owner` (from
    /// [`CpuExecSession::child_execution`]), with fresh private resources.
    pub(crate) fn child_of(engine: &Arc<CpuEngine>, owner: OwnerId) -> Self {
        let child = ChildContext {
            owner,
            resources: EngineResourceSlot::new(EngineResources::for_child_execution()),
        };
        CpuBackend { engine: Arc::clone(engine), child: Some(Arc::new(child)) }
    }

    /// The child arm of [`with_backend_session`](CpuBackend::with_backend_session): joins the
    /// parent's owner (never waits), runs `f` on the handle's private resources, serial.
    pub(crate) fn run_child<R>(
        &self,
        child: &ChildContext,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R,
    ) -> Result<R, SessionEntryError> {
        // `OwnerGone` once the parent has ended.
        let permit = self.engine.arbiter.join(child.owner)?;
        let mut admission = enter_child(permit, &child.resources)?;
        let mut counters = OpCounters::default();
        let value = with_child_view(&self.engine, &mut admission, &mut counters, f);
        // No affinity to restore: a child's release cannot fail.
        let _ = admission.release();
        Ok(value)
    }
}

/// Enters a child admission under `permit` on the private `resources`: owner marker, checkout.
///
/// # Errors
///
/// [`SessionEntryError::Contended`] when the private resources are checked out by another
/// entry (never a wait).
pub(crate) fn enter_child<P: Borrow<ResourcePermit>>(
    permit: P,
    resources: &EngineResourceSlot,
) -> Result<Admission<'_, P>, SessionEntryError> {
    Admission::enter(permit, None, resources).map_err(|e| match e {
        EnterError::SlotUnavailable => {
            SessionEntryError::Contended { holder: None, waiters_ahead: 0 }
        }
        // Unreachable without an affinity request; reported all the same.
        EnterError::Affinity(source) => SessionEntryError::Executor { source },
    })
}

/// Runs `f` with a serial view over a child admission's resources: a child is part of its
/// parent's operation and never installs the pool itself.
pub(crate) fn with_child_view<P: Borrow<ResourcePermit>, R>(
    engine: &Arc<CpuEngine>,
    admission: &mut Admission<'_, P>,
    counters: &mut OpCounters,
    f: impl FnOnce(&mut CpuExecSession<'_>) -> R,
) -> R {
    let origin = ViewOrigin { engine, owner: admission.owner() };
    let entry = CpuOperationEntry::new(&engine.domain, ParallelMode::Serial);
    with_view(admission, entry, counters, origin, f)
}
