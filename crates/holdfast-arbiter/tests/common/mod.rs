//! Helpers shared by the arbiter's integration tests: a deadlock watchdog and bounded polling.
// Each test binary uses a subset of the helpers; `pub` is local to the test crate.
#![allow(dead_code, unreachable_pub)]

use holdfast_arbiter::{CpuSet, OwnerId, fresh_execution_owner};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Generous bound on anything that would hang if the arbiter lost a wake-up.
pub const WATCHDOG: Duration = Duration::from_secs(30);

/// Runs `f` on a fresh thread; fails (never hangs) if it does not finish within [`WATCHDOG`], and
/// re-raises its panic if it panicked.
pub fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        let _finished = tx; // dropped on return and on unwind alike
        f()
    });
    match rx.recv_timeout(WATCHDOG) {
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("deadlock: the watched call did not return"),
        _ => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
    }
}

/// Polls `cond` until it holds; fails after [`WATCHDOG`].
pub fn eventually(mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < WATCHDOG, "condition never became true");
        std::thread::yield_now();
    }
}

pub fn cpus(list: &[usize]) -> CpuSet {
    CpuSet::from_cpus(list.iter().copied()).unwrap()
}

pub fn owner() -> OwnerId {
    fresh_execution_owner().unwrap()
}
