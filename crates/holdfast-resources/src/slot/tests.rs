//! Unit tests of the `slot` module: exactly-once return on success, error and unwind; refusal
//! while checked out; poison recovery; exclusivity under contention.

use std::panic::{AssertUnwindSafe, catch_unwind};

use holdfast_kernels::KernelAlloc;

use crate::{EngineResourceCheckout, EngineResourceSlot, EngineResources};

fn slot() -> EngineResourceSlot {
    EngineResourceSlot::new(EngineResources::default())
}

#[test]
fn returned_exactly_once_on_success() {
    let slot = slot();
    let mut c = EngineResourceCheckout::take(&slot).unwrap();
    c.runtime_clears = 7;
    drop(c);
    let k = slot.counters();
    assert_eq!((k.takes, k.returns, k.lock_acquisitions), (1, 1, 2));
    let c = EngineResourceCheckout::take(&slot).unwrap();
    assert_eq!(c.runtime_clears, 7, "the same box came back");
}

#[test]
fn returned_exactly_once_on_error() {
    let slot = slot();
    let op = |fail: bool| -> Result<u32, String> {
        let mut c = EngineResourceCheckout::take(&slot).ok_or("busy")?;
        let v: Vec<f64> = c.buffers.take(4);
        c.buffers.give(v);
        if fail { Err("operation failed".into()) } else { Ok(1) }
    };
    assert!(op(true).is_err());
    assert_eq!(slot.counters().returns, 1);
    assert_eq!(op(false), Ok(1));
    assert_eq!(slot.counters().returns, 2);
    assert_eq!(slot.buffer_pool_len(), Ok(1));
}

#[test]
fn returned_exactly_once_on_unwind() {
    let slot = slot();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _c = EngineResourceCheckout::take(&slot).unwrap();
        panic!("operation panicked");
    }));
    assert!(r.is_err());
    let k = slot.counters();
    assert_eq!((k.takes, k.returns), (1, 1));
    assert!(!slot.is_checked_out());
    assert!(!slot.is_poisoned(), "the slot mutex is not held across the operation");
}

#[test]
fn a_second_take_is_refused_without_waiting() {
    let slot = slot();
    let c = EngineResourceCheckout::take(&slot).unwrap();
    assert!(slot.is_checked_out());
    std::thread::scope(|s| {
        assert!(s.spawn(|| EngineResourceCheckout::take(&slot).is_none()).join().unwrap());
    });
    assert!(EngineResourceCheckout::take(&slot).is_none());
    drop(c);
    let k = slot.counters();
    assert_eq!((k.takes, k.returns, k.refused_takes), (1, 1, 2));
}

#[test]
fn checkout_and_return_recover_a_poisoned_slot() {
    let slot = slot();
    slot.poison_for_tests();
    assert!(slot.is_poisoned());
    let c = EngineResourceCheckout::take(&slot).expect("checkout recovers poison");
    drop(c);
    let k = slot.counters();
    assert_eq!((k.takes, k.returns, k.poison_recoveries), (1, 1, 2));
    assert!(slot.is_poisoned(), "poison stays visible to management");
}

#[test]
fn checkouts_are_exclusive_under_contention() {
    let slot = slot();
    let per_thread = 2000;
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut done = 0;
                while done < per_thread {
                    if let Some(mut c) = EngineResourceCheckout::take(&slot) {
                        // Non-atomic read-modify-write on the exclusively owned box.
                        let v = c.runtime_clears;
                        std::hint::black_box(&mut *c);
                        c.runtime_clears = v + 1;
                        done += 1;
                    } else {
                        std::thread::yield_now();
                    }
                }
            });
        }
    });
    let k = slot.counters();
    assert_eq!(k.takes, 4 * per_thread);
    assert_eq!(k.returns, k.takes);
    let c = EngineResourceCheckout::take(&slot).unwrap();
    assert_eq!(c.runtime_clears, 4 * per_thread);
}
