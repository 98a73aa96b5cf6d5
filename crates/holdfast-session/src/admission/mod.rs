//! [`Admission`]: one thread's admission of an engine, as one guard in release order (SPEC S2, S4).
//!
//! Every way into an engine — a held session, a scoped entry inside a shared scope, a child
//! handle's entry, a lane of a phase lease — holds the same four things while it runs:
//!
//! 1. `checkout`: a set of resources taken out of its slot (the engine's, or a child's private
//!    ones);
//! 2. `owner`: the thread's execution-owner marker, set to the admitted owner;
//! 3. `affinity`: the caller's CPU mask narrowed to the engine's CPUs (roots and shared entries;
//!    a child runs where its parent already runs and changes nothing);
//! 4. `permit`: the arbiter's reservation (last, so a queued opener woken by its release always
//!    finds the slot `Ready`).
//!
//! [`Admission`] owns them in that order. It has **no `Drop` impl**: its fields' declaration
//! order is the release order of a drop (on unwind too), and [`Admission::release`] destructures
//! the same fields and releases them in the same order, adding only the report of a failed
//! affinity restore. Nothing else in the crate releases an admission by hand, so the order is
//! written once, here.
//!
//! The permit comes in three forms, one guard type over all of them (as a semaphore has a
//! borrowed and an owned permit over one implementation):
//!
//! | form | permit | used by |
//! |---|---|---|
//! | [`OwnedAdmission`] | `ResourcePermit` (acquired or joined for this admission) | held sessions, child-handle entries |
//! | [`SharedAdmission`] | `Arc<ResourcePermit>` (a share of a shared scope's permit) | scoped entries inside a shared scope |
//! | [`BorrowedAdmission`] | `&ResourcePermit` (a lane's permit, owned by its phase) | phase lanes |
//!
//! Acquisition is the reverse of release: the caller obtains the permit (it decides how: a FIFO
//! acquire, a join, a scope's share), then [`Admission::enter`] narrows the affinity, sets the
//! marker and takes the checkout. When a step fails, the steps already taken are undone in
//! release order before the error is returned.

use std::borrow::Borrow;
use std::ops::{Deref, DerefMut};

use holdfast_affinity::{AffinityError, CallerAffinityGuard, CpuSet};
use holdfast_arbiter::{ExecutionOwnerGuard, OwnerId, ResourcePermit};
use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};

/// One admission of an engine held by the calling thread: checkout, owner marker, affinity and
/// permit, declared (and so released) in that order. See the module docs.
#[derive(Debug)]
pub(crate) struct Admission<'r, P: Borrow<ResourcePermit>> {
    checkout: EngineResourceCheckout<'r>,
    owner: ExecutionOwnerGuard,
    /// `None` for a child's admission: no affinity change.
    affinity: Option<CallerAffinityGuard>,
    permit: P,
}

/// An admission that owns its permit (held sessions, child-handle entries).
pub(crate) type OwnedAdmission<'r> = Admission<'r, ResourcePermit>;

/// An admission on a share of a shared scope's permit.
pub(crate) type SharedAdmission<'r> = Admission<'r, std::sync::Arc<ResourcePermit>>;

/// An admission on a permit owned elsewhere for longer (a phase lane's).
pub(crate) type BorrowedAdmission<'r, 'p> = Admission<'r, &'p ResourcePermit>;

/// Why [`Admission::enter`] failed. The steps already taken have been undone.
#[derive(Debug)]
pub(crate) enum EnterError {
    /// The caller's affinity could not be narrowed to the engine's CPUs.
    Affinity(AffinityError),
    /// The resource slot was not `Ready` (checked out by another entry, or poisoned).
    SlotUnavailable,
}

impl<'r, P: Borrow<ResourcePermit>> Admission<'r, P> {
    /// Enters an admission under `permit`: narrows the caller's affinity to `cpus` (none for a
    /// child: `None`), marks the thread with the permit's owner and checks `slot`'s resources
    /// out, in that order.
    ///
    /// # Errors
    ///
    /// [`EnterError::Affinity`] when the narrowing fails (nothing else was done);
    /// [`EnterError::SlotUnavailable`] when the slot has nothing to check out (marker and
    /// affinity are undone). The permit is dropped, last, in either case.
    #[inline]
    pub(crate) fn enter(
        permit: P,
        cpus: Option<&CpuSet>,
        slot: &'r EngineResourceSlot,
    ) -> Result<Self, EnterError> {
        let affinity = match cpus {
            Some(cpus) => Some(CallerAffinityGuard::enter(cpus).map_err(EnterError::Affinity)?),
            None => None,
        };
        let owner = ExecutionOwnerGuard::enter(permit.borrow().owner());
        let Some(checkout) = EngineResourceCheckout::take(slot) else {
            // Release order: marker, affinity (a restore failure cannot be reported better
            // than the refusal itself), then the permit as it drops.
            drop(owner);
            if let Some(affinity) = affinity {
                let _ = affinity.finish();
            }
            return Err(EnterError::SlotUnavailable);
        };
        Ok(Admission { checkout, owner, affinity, permit })
    }

    /// The owner this admission runs as.
    #[inline]
    pub(crate) fn owner(&self) -> OwnerId {
        self.permit.borrow().owner()
    }

    /// Releases everything in release order: resources back into their slot, owner marker,
    /// affinity (restored), permit.
    ///
    /// # Errors
    ///
    /// The affinity restore's error; everything is released all the same.
    #[inline]
    pub(crate) fn release(self) -> Result<(), AffinityError> {
        // The bindings are declared in the reverse of the release order: should a step panic,
        // the locals still alive drop in reverse declaration order, the release order again.
        let Admission { permit, affinity, owner, checkout } = self;
        drop(checkout);
        drop(owner);
        let restored = affinity.map_or(Ok(()), CallerAffinityGuard::finish);
        drop(permit);
        restored
    }
}

impl<P: Borrow<ResourcePermit>> Deref for Admission<'_, P> {
    type Target = EngineResources;

    #[inline]
    fn deref(&self) -> &EngineResources {
        &self.checkout
    }
}

impl<P: Borrow<ResourcePermit>> DerefMut for Admission<'_, P> {
    #[inline]
    fn deref_mut(&mut self) -> &mut EngineResources {
        &mut self.checkout
    }
}

#[cfg(test)]
mod tests;
