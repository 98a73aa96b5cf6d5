//! Unit tests of the owner marker: uniqueness, nesting, unwinding and per-thread isolation.

use super::{ExecutionOwnerGuard, current_owner, fresh_execution_owner, has_active_execution};
use std::collections::HashSet;

#[test]
fn owners_are_unique_across_threads() {
    let handles: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                (0..1000).map(|_| fresh_execution_owner().unwrap().get()).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for handle in handles {
        for id in handle.join().unwrap() {
            assert!(seen.insert(id), "owner id {id} handed out twice");
        }
    }
}

#[test]
fn marker_is_restored_on_unwind() {
    let outer = fresh_execution_owner().unwrap();
    let _outer_guard = ExecutionOwnerGuard::enter(outer);
    let result = std::panic::catch_unwind(|| {
        let inner = ExecutionOwnerGuard::enter(outer);
        assert_eq!(inner.previous(), Some(outer));
        panic!("unwind through the guard");
    });
    assert!(result.is_err());
    assert_eq!(current_owner(), Some(outer));
}

#[test]
fn marker_is_per_thread() {
    let owner = fresh_execution_owner().unwrap();
    let _guard = ExecutionOwnerGuard::enter(owner);
    let other = std::thread::spawn(|| (has_active_execution(), fresh_execution_owner().is_some()))
        .join()
        .unwrap();
    assert_eq!(other, (false, true));
    assert!(fresh_execution_owner().is_none());
}
