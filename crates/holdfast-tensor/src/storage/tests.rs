//! Unit tests of the storage facts and the per-thread copy counter.

use super::*;

#[test]
fn copy_counter_is_per_thread() {
    let before = copy_stats();
    record_copy(5);
    std::thread::spawn(|| record_copy(1000)).join().unwrap();
    assert_eq!(copy_stats().since(before), CopyStats { copies: 1, elements: 5 });
}

#[test]
fn provider_ids_are_nonzero() {
    assert!(ProviderId::new(0).is_none());
    assert_eq!(ProviderId::new(u64::MAX).map(ProviderId::get), Some(u64::MAX));
}

#[test]
fn defaults_are_host_and_ready() {
    assert!(AllocationDomain::default().is_host());
    assert!(Readiness::default().is_ready());
    assert!(!AllocationDomain::Foreign(ProviderId::new(1).unwrap()).is_host());
    assert!(!Readiness::Pending.is_ready());
}
