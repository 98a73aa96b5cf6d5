//! The admission guard: what it holds while entered, and that every way out (release, drop,
//! a refused entry) gives back the same things in the same order.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::Arc;

use holdfast_affinity::Topology;
use holdfast_arbiter::{
    AdmissionMode, ResourceArbiter, ResourcePermit, current_owner, fresh_execution_owner,
    has_active_execution,
};
use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};

use super::{Admission, EnterError, OwnedAdmission};

fn permit(arbiter: &ResourceArbiter) -> ResourcePermit {
    let cpus = Topology::get().unwrap().allowed();
    arbiter.acquire(cpus, fresh_execution_owner().unwrap(), AdmissionMode::Try).unwrap()
}

fn slot() -> EngineResourceSlot {
    EngineResourceSlot::new(EngineResources::for_child_execution())
}

fn holders(arbiter: &ResourceArbiter) -> usize {
    arbiter.snapshot().unwrap().holders
}

#[test]
fn enter_holds_all_four_and_release_returns_them() {
    let (arbiter, slot) = (ResourceArbiter::new(), slot());
    let permit = permit(&arbiter);
    let owner = permit.owner();
    let cpus = *Topology::get().unwrap().allowed();
    let admission = OwnedAdmission::enter(permit, Some(&cpus), &slot).unwrap();
    assert_eq!((current_owner(), admission.owner()), (Some(owner), owner));
    assert!(slot.is_checked_out(), "resources are checked out");
    assert_eq!(holders(&arbiter), 1);
    admission.release().unwrap();
    assert!(!slot.is_checked_out() && !has_active_execution());
    assert_eq!(holders(&arbiter), 0);
}

#[test]
fn a_drop_releases_what_release_does() {
    let (arbiter, slot) = (ResourceArbiter::new(), slot());
    let admission = OwnedAdmission::enter(permit(&arbiter), None, &slot).unwrap();
    drop(admission);
    assert!(!slot.is_checked_out() && !has_active_execution());
    assert_eq!(holders(&arbiter), 0);
}

#[test]
fn an_unavailable_slot_undoes_the_marker_and_drops_the_permit() {
    let (arbiter, slot) = (ResourceArbiter::new(), slot());
    let taken = EngineResourceCheckout::take(&slot).unwrap();
    let cpus = *Topology::get().unwrap().allowed();
    let refused = OwnedAdmission::enter(permit(&arbiter), Some(&cpus), &slot);
    assert!(matches!(refused, Err(EnterError::SlotUnavailable)));
    assert!(!has_active_execution(), "the marker is undone");
    assert_eq!(holders(&arbiter), 0, "the permit is dropped");
    drop(taken);
    assert!(!slot.is_checked_out());
}

#[test]
fn every_permit_form_is_one_guard() {
    let (arbiter, slot) = (ResourceArbiter::new(), slot());
    let shared = Arc::new(permit(&arbiter));
    let owner = shared.owner();
    let admission = Admission::enter(Arc::clone(&shared), None, &slot).unwrap();
    assert_eq!(admission.owner(), owner);
    admission.release().unwrap();
    let borrowed = Admission::enter(&*shared, None, &slot).unwrap();
    assert_eq!(current_owner(), Some(owner));
    drop(borrowed);
    assert_eq!(holders(&arbiter), 1, "the shared permit outlives both admissions");
    drop(shared);
    assert_eq!(holders(&arbiter), 0);
}
