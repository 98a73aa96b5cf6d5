//! Unit tests of the `management` module: `Busy` in bounded time while checked out, working
//! again after the return, poison reported, all-or-nothing changes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use holdfast_kernels::KernelAlloc;

use crate::{
    EngineResourceCheckout, EngineResourceSlot, EngineResources, ManagementError, ResourceKind,
};

fn warm_slot() -> EngineResourceSlot {
    let mut r = EngineResources::default();
    for cap in [8, 16, 32] {
        r.buffers.give(Vec::<f64>::with_capacity(cap));
    }
    EngineResourceSlot::new(r)
}

#[test]
fn busy_in_bounded_time_while_checked_out_and_working_after() {
    let slot = warm_slot();
    let checked_out = Barrier::new(2);
    let measured = Barrier::new(2);
    std::thread::scope(|s| {
        s.spawn(|| {
            let _c = EngineResourceCheckout::take(&slot).unwrap();
            checked_out.wait();
            measured.wait(); // the "session" holds the resources until management is done
        });
        checked_out.wait();
        let start = Instant::now();
        for _ in 0..100 {
            assert_eq!(slot.buffer_pool_len(), Err(ManagementError::Busy));
            assert_eq!(slot.buffer_pool_stats(), Err(ManagementError::Busy));
            assert_eq!(slot.indexed_plan_cache_stats(), Err(ManagementError::Busy));
            assert_eq!(slot.trim(), Err(ManagementError::Busy));
            assert_eq!(slot.clear_runtime_caches(), Err(ManagementError::Busy));
        }
        assert!(start.elapsed() < Duration::from_secs(1), "took {:?}", start.elapsed());
        measured.wait();
    });
    assert_eq!(slot.buffer_pool_len(), Ok(3));
    assert_eq!(slot.buffer_pool_stats().unwrap().retained_bytes, 56 * 8);
    slot.trim().unwrap();
    assert_eq!(slot.buffer_pool_len(), Ok(0));
}

#[test]
fn a_poisoned_slot_is_reported_and_can_be_cleared() {
    let slot = warm_slot();
    slot.poison_for_tests();
    let poisoned = Err(ManagementError::Poisoned { resource: ResourceKind::Slot });
    assert_eq!(slot.buffer_pool_len(), poisoned);
    assert_eq!(slot.trim(), poisoned.map(|_| ()));
    drop(EngineResourceCheckout::take(&slot).unwrap()); // checkout still works
    slot.clear_poison().unwrap();
    assert_eq!(slot.buffer_pool_len(), Ok(3));
}

#[test]
fn trim_with_a_poisoned_scratch_changes_nothing() {
    let slot = warm_slot();
    {
        let mut c = EngineResourceCheckout::take(&slot).unwrap();
        let ws = c.nary_workspaces();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _lease = ws.lease().unwrap();
            panic!("N-ary contraction failed");
        }));
        assert!(r.is_err());
    }
    assert_eq!(
        slot.trim(),
        Err(ManagementError::Poisoned { resource: ResourceKind::ContractionWorkspaces })
    );
    assert_eq!(slot.buffer_pool_len(), Ok(3), "nothing half-applied");
    slot.clear_poison().unwrap();
    slot.trim().unwrap();
    assert_eq!(slot.buffer_pool_len(), Ok(0));
}

#[test]
fn clearing_poison_while_checked_out_is_busy() {
    let slot = warm_slot();
    slot.poison_for_tests();
    let c = EngineResourceCheckout::take(&slot).unwrap();
    assert_eq!(slot.clear_poison(), Err(ManagementError::Busy));
    assert!(slot.is_poisoned());
    drop(c);
    assert_eq!(slot.clear_poison(), Ok(()));
}

#[test]
fn clear_runtime_caches_counts() {
    let slot = warm_slot();
    slot.clear_runtime_caches().unwrap();
    slot.clear_runtime_caches().unwrap();
    let c = EngineResourceCheckout::take(&slot).unwrap();
    assert_eq!(c.runtime_clears, 2);
    assert_eq!(c.gemm_analysis_cache.stats().clears, 2);
}

#[test]
fn management_counts_its_lock_acquisitions() {
    let slot = warm_slot();
    let before = slot.counters().lock_acquisitions;
    let _ = slot.buffer_pool_len();
    assert_eq!(slot.counters().lock_acquisitions, before + 1);
    let mut c = EngineResourceCheckout::take(&slot).unwrap();
    let mark = slot.counters().lock_acquisitions;
    for _ in 0..1000 {
        let v: Vec<f64> = c.buffers.take(8);
        c.buffers.give(v);
    }
    assert_eq!(slot.counters().lock_acquisitions, mark, "held operations take no slot lock");
}
