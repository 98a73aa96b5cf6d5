//! Tests of the lane fan-out: lane count and order, placement on the pool's workers, the inline
//! one-thread case, bounded concurrency and panic propagation after every lane returned.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use holdfast_affinity::Topology;

use crate::CpuDomain;

fn domain(threads: usize) -> CpuDomain {
    CpuDomain::new(*Topology::get().unwrap().allowed(), threads).unwrap()
}

#[test]
fn one_thread_runs_lane_zero_inline_on_the_caller() {
    let d = domain(1);
    let caller = std::thread::current().id();
    let lanes = d.fan_out_lanes(|lane| (lane, std::thread::current().id()));
    assert_eq!(lanes, vec![(0, caller)]);
}

#[test]
fn every_lane_runs_once_on_its_own_worker() {
    let n = Topology::get().unwrap().allowed().len();
    if n < 2 {
        return;
    }
    let d = domain(n);
    let pool = d.pool().unwrap();
    for _ in 0..20 {
        let lanes = d.fan_out_lanes(|lane| (lane, pool.current_thread_index()));
        let expected: Vec<_> = (0..n).map(|i| (i, Some(i))).collect();
        assert_eq!(lanes, expected);
    }
}

#[test]
fn concurrency_never_exceeds_the_budget_and_a_panic_surfaces_after_all_lanes() {
    let n = Topology::get().unwrap().allowed().len();
    if n < 2 {
        return;
    }
    let d = domain(n);
    let (active, peak, finished) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(20);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        d.fan_out_lanes(|lane| {
            let now = active.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            // Wait (bounded) until every lane is inside, so they overlap.
            while peak.load(Ordering::SeqCst) < n && Instant::now() < deadline {
                std::hint::spin_loop();
            }
            active.fetch_sub(1, Ordering::SeqCst);
            if lane == 0 {
                panic!("lane zero fails");
            }
            std::thread::sleep(Duration::from_millis(5));
            finished.fetch_add(1, Ordering::SeqCst);
        })
    }));
    let payload = outcome.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"lane zero fails"));
    assert_eq!(finished.load(Ordering::SeqCst), n - 1, "every other lane finished first");
    assert_eq!(peak.load(Ordering::SeqCst), n, "lanes overlapped, and never more than the budget");
}
