//! A4 with a real rayon pool: a worker thread never parks on the arbiter. One binary because the
//! pool-worker probe is process-global.

// Helpers outside #[test] fns unwrap too: a failed unwrap is a failed test (see clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cpus, owner, within};
use holdfast_arbiter::{
    AdmissionError, AdmissionMode, ResourceArbiter, register_pool_worker_probe,
};
use std::time::Duration;

fn is_rayon_worker() -> bool {
    rayon::current_thread_index().is_some()
}

#[test]
fn rayon_worker_gets_contended_instead_of_parking() {
    let _ = register_pool_worker_probe(is_rayon_worker);
    within(|| {
        let arbiter = ResourceArbiter::global();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let held = arbiter.acquire(&cpus(&[900]), owner(), AdmissionMode::Wait).unwrap();

        // Wait and deadline requests from workers become tries: Contended at once.
        for mode in [AdmissionMode::Wait, AdmissionMode::timeout(common::WATCHDOG)] {
            let result = pool.install(|| arbiter.acquire(&cpus(&[900]), owner(), mode).map(drop));
            assert!(matches!(result, Err(AdmissionError::Contended { .. })), "{result:?}");
        }
        // Inside the global pool too (the probe sees every rayon pool).
        let (a, b) = rayon::join(
            || arbiter.acquire(&cpus(&[900]), owner(), AdmissionMode::Wait).map(drop),
            || arbiter.acquire(&cpus(&[901]), owner(), AdmissionMode::Wait).map(drop),
        );
        // `rayon::join` called from a non-worker runs on the global pool's workers.
        assert!(matches!(a, Err(AdmissionError::Contended { .. })), "{a:?}");
        // A worker whose request is free is admitted: the probe only matters when queueing.
        assert!(b.is_ok(), "{b:?}");

        // A non-worker still waits (here until its deadline).
        let result = arbiter.acquire(
            &cpus(&[900]),
            owner(),
            AdmissionMode::timeout(Duration::from_millis(20)),
        );
        assert!(matches!(result, Err(AdmissionError::TimedOut { .. })), "{result:?}");
        drop(held);
        assert_eq!(arbiter.snapshot().unwrap().holders, 0);
    });
}
