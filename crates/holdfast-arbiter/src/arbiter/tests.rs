//! Unit tests of the facade: re-entry, modes, joins, holder reports and poison.
//!
//! Anything that could block forever if broken runs under [`within`], a generous watchdog that
//! turns a hang into a test failure.
//!
//! Not built for the loom model run: these tests use real threads and clocks.
#![cfg(not(loom))]

use super::{AdmissionMode, ResourceArbiter};
use crate::error::{AdmissionError, ReentryCause};
use crate::owner::{ExecutionOwnerGuard, OwnerId, fresh_execution_owner};
use holdfast_cpuset::CpuSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WATCHDOG: Duration = Duration::from_secs(20);

/// Runs `f` on a fresh thread; fails the test if it does not finish within [`WATCHDOG`], and
/// re-raises its panic if it panicked.
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
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

/// Polls `cond` until it holds (bounded by the watchdog).
fn eventually(mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < WATCHDOG, "condition never became true");
        std::thread::yield_now();
    }
}

fn cpus(list: &[usize]) -> CpuSet {
    CpuSet::from_cpus(list.iter().copied()).unwrap()
}

fn owner() -> OwnerId {
    fresh_execution_owner().unwrap()
}

#[test]
fn reentry_is_refused_before_blocking() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let me = owner();
        let other = owner();
        let _permit = arbiter.acquire(&cpus(&[0]), me, AdmissionMode::Wait).unwrap();
        let _marker = ExecutionOwnerGuard::enter(me);
        // Same CPUs, wait mode: would deadlock on itself if it were allowed to queue.
        for mode in [AdmissionMode::Wait, AdmissionMode::Try, AdmissionMode::timeout(WATCHDOG)] {
            let err = arbiter.acquire(&cpus(&[0]), other, mode).unwrap_err();
            assert!(
                matches!(err, AdmissionError::Reentered { owner, cause: ReentryCause::MarkerSet } if owner == me),
                "{err:?}"
            );
        }
        // Nothing was queued.
        assert_eq!(arbiter.snapshot().unwrap().waiters, 0);
        // A child joins without waiting, marker or not.
        assert!(arbiter.join(me).unwrap().is_joined());
    });
}

#[test]
fn try_reports_the_holder() {
    let arbiter = ResourceArbiter::new();
    let holder = owner();
    let arbiter2 = arbiter.clone();
    let (held_tx, held_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("holder-thread".into())
        .spawn(move || {
            let _permit = arbiter2.acquire(&cpus(&[1, 2]), holder, AdmissionMode::Wait).unwrap();
            held_tx.send(()).unwrap();
            let _ = done_rx.recv_timeout(WATCHDOG);
        })
        .unwrap();
    held_rx.recv_timeout(WATCHDOG).unwrap();
    let err = arbiter.acquire(&cpus(&[2, 3]), owner(), AdmissionMode::Try).unwrap_err();
    match &err {
        AdmissionError::Contended { holder: Some(h), waiters_ahead: 0 } => {
            assert_eq!(h.owner(), holder);
            assert_eq!(h.thread_name(), Some("holder-thread"));
        }
        other => panic!("expected Contended with holder, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("holder-thread") && message.contains(&holder.to_string()),
        "{message}"
    );
    done_tx.send(()).unwrap();
    thread.join().unwrap();
    assert!(arbiter.acquire(&cpus(&[2, 3]), owner(), AdmissionMode::Try).is_ok());
}

#[test]
fn deadline_reports_the_time_waited_and_withdraws() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let _held = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        let before = Instant::now();
        let deadline = before + Duration::from_millis(30);
        let err =
            arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Deadline(deadline)).unwrap_err();
        let elapsed = before.elapsed();
        match err {
            AdmissionError::TimedOut { waited, holder } => {
                assert!(waited > Duration::ZERO && waited <= elapsed, "{waited:?} vs {elapsed:?}");
                assert!(holder.is_some());
            }
            other => panic!("expected TimedOut, got {other:?}"),
        }
        assert!(Instant::now() >= deadline);
        assert_eq!(arbiter.snapshot().unwrap().waiters, 0, "timed-out request left in the queue");
        // A deadline already in the past does not queue at all.
        let err =
            arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Deadline(before)).unwrap_err();
        assert!(matches!(err, AdmissionError::TimedOut { waited: Duration::ZERO, .. }), "{err:?}");
    });
}

#[test]
fn withdrawn_waiter_lets_the_younger_one_through() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let _held = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        // Older waiter on {0,1}: gives up after a short deadline.
        let a = arbiter.clone();
        let older = std::thread::spawn(move || {
            let mode = AdmissionMode::timeout(Duration::from_millis(50));
            a.acquire(&cpus(&[0, 1]), owner(), mode).map(drop)
        });
        eventually(|| arbiter.snapshot().unwrap().waiters == 1);
        // Younger waiter on {1}: blocked only by the older waiter, so it waits ...
        let b = arbiter.clone();
        let younger = std::thread::spawn(move || {
            b.acquire(&cpus(&[1]), owner(), AdmissionMode::Wait).map(|p| p.owner())
        });
        // ... and is admitted once the older one withdraws, while {0} is still held.
        assert!(matches!(older.join().unwrap(), Err(AdmissionError::TimedOut { .. })));
        assert!(younger.join().unwrap().is_ok());
    });
}

#[test]
fn disjoint_sets_are_admitted_concurrently() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(3));
        let handles: Vec<_> = [[0usize, 1], [2, 3], [4, 5]]
            .into_iter()
            .map(|set| {
                let arbiter = arbiter.clone();
                let barrier = std::sync::Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let permit =
                        arbiter.acquire(&cpus(&set), owner(), AdmissionMode::Wait).unwrap();
                    // Every thread holds its permit here at the same time.
                    barrier.wait();
                    let holders = arbiter.snapshot().unwrap().holders;
                    barrier.wait();
                    drop(permit);
                    holders
                })
            })
            .collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), 3);
        }
    });
}

#[test]
fn join_keeps_the_reservation_until_the_last_permit() {
    let arbiter = ResourceArbiter::new();
    let root_owner = owner();
    let root = arbiter.acquire(&cpus(&[0, 1]), root_owner, AdmissionMode::Wait).unwrap();
    let child = arbiter.join(root_owner).unwrap();
    // A covered request from the same owner joins too; one outside the reservation is refused.
    let covered = arbiter.acquire(&cpus(&[1]), root_owner, AdmissionMode::Try).unwrap();
    assert!(covered.is_joined());
    let outside = arbiter.acquire(&cpus(&[2]), root_owner, AdmissionMode::Try).unwrap_err();
    assert!(matches!(
        outside,
        AdmissionError::Reentered { cause: ReentryCause::OutsideReservation, .. }
    ));
    drop(root);
    drop(covered);
    assert!(matches!(
        arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Try),
        Err(AdmissionError::Contended { .. })
    ));
    drop(child);
    assert_eq!(arbiter.snapshot().unwrap().holders, 0);
    let gone = arbiter.join(root_owner).unwrap_err();
    assert!(matches!(gone, AdmissionError::Reentered { cause: ReentryCause::OwnerGone, .. }));
}

#[test]
fn poisoned_state_is_reported_not_panicked() {
    let arbiter = ResourceArbiter::new();
    let early = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
    arbiter.poison_for_test();
    for mode in [AdmissionMode::Wait, AdmissionMode::Try, AdmissionMode::timeout(WATCHDOG)] {
        let err = arbiter.acquire(&cpus(&[5]), owner(), mode).unwrap_err();
        assert!(matches!(err, AdmissionError::Poisoned), "{err:?}");
    }
    assert!(matches!(arbiter.join(early.owner()), Err(AdmissionError::Poisoned)));
    assert!(matches!(arbiter.snapshot(), Err(AdmissionError::Poisoned)));
    // Release is infallible, even on a poisoned state.
    drop(early);
}

#[test]
fn poison_while_waiting_is_reported_to_the_waiter() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let held = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        let a = arbiter.clone();
        let waiter = std::thread::spawn(move || {
            a.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).map(drop)
        });
        eventually(|| arbiter.snapshot().is_ok_and(|s| s.parked == 1));
        arbiter.poison_for_test();
        // The release grants the waiter and notifies it; it wakes on a poisoned lock.
        drop(held);
        assert!(matches!(waiter.join().unwrap(), Err(AdmissionError::Poisoned)));
    });
}

#[test]
fn permit_and_arbiter_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<super::ResourcePermit>();
    assert_send_sync::<ResourceArbiter>();
    assert_send_sync::<AdmissionError>();
}

#[test]
fn holder_thread_is_named_only_while_it_lives() {
    let arbiter = ResourceArbiter::new();
    let a = arbiter.clone();
    let holder = owner();
    // The permit outlives the thread that took it.
    let permit = std::thread::Builder::new()
        .name("short-lived".into())
        .spawn(move || a.acquire(&cpus(&[7]), holder, AdmissionMode::Wait).unwrap())
        .unwrap()
        .join()
        .unwrap();
    match arbiter.acquire(&cpus(&[7]), owner(), AdmissionMode::Try) {
        Err(AdmissionError::Contended { holder: Some(h), .. }) => {
            assert_eq!(h.owner(), holder);
            assert_eq!(h.thread_name(), None, "an exited thread is still reported");
        }
        other => panic!("expected Contended with holder, got {other:?}"),
    }
    drop(permit);
}

#[test]
fn release_without_waiter_does_not_broadcast() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        for _ in 0..100 {
            let permit = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
            let child = arbiter.join(permit.owner()).unwrap();
            drop(child);
            drop(permit);
        }
        // A timed-out waiter that unblocks nobody does not broadcast either.
        let held = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        let mode = AdmissionMode::timeout(Duration::from_millis(1));
        assert!(arbiter.acquire(&cpus(&[0]), owner(), mode).is_err());
        drop(held);
        assert_eq!(arbiter.notifies_for_test(), 0);

        // With a parked waiter, the release does broadcast.
        let held = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        let a = arbiter.clone();
        let waiter = std::thread::spawn(move || {
            a.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).map(drop)
        });
        eventually(|| arbiter.snapshot().unwrap().parked == 1);
        drop(held);
        waiter.join().unwrap().unwrap();
        assert_eq!(arbiter.notifies_for_test(), 1);
    });
}
