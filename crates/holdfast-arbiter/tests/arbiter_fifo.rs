//! FIFO admission with real threads: conflicting waiters are admitted in arrival order, a
//! request disjoint from every older waiter passes, a conflicting younger one does not.

// Helpers outside #[test] fns unwrap too: a failed unwrap is a failed test (see clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cpus, eventually, owner, within};
use holdfast_arbiter::{AdmissionMode, ResourceArbiter};
use std::sync::{Arc, Mutex, mpsc};

/// Spawns a thread that waits for `set`, records `name` when admitted, then holds the permit
/// until told to release it.
fn waiter(
    arbiter: &ResourceArbiter,
    set: &'static [usize],
    name: &'static str,
    log: &Arc<Mutex<Vec<&'static str>>>,
) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (arbiter, log) = (arbiter.clone(), Arc::clone(log));
    let handle = std::thread::spawn(move || {
        let permit = arbiter.acquire(&cpus(set), owner(), AdmissionMode::Wait).unwrap();
        log.lock().unwrap().push(name);
        let _ = release_rx.recv_timeout(common::WATCHDOG);
        drop(permit);
    });
    (release_tx, handle)
}

#[test]
fn conflicting_waiters_are_admitted_in_arrival_order() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let holder = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        let names = ["w0", "w1", "w2", "w3", "w4", "w5"];
        let mut waiters = Vec::new();
        for (queued, name) in names.iter().enumerate() {
            waiters.push(waiter(&arbiter, &[0], name, &log));
            // Start the next one only once this one is queued: arrival order is known.
            eventually(|| arbiter.snapshot().unwrap().waiters == queued + 1);
        }
        drop(holder);
        for (admitted, (release, _)) in waiters.iter().enumerate() {
            eventually(|| log.lock().unwrap().len() == admitted + 1);
            release.send(()).unwrap();
        }
        for (_, handle) in waiters {
            handle.join().unwrap();
        }
        assert_eq!(*log.lock().unwrap(), names);
        assert_eq!(arbiter.snapshot().unwrap().holders, 0);
    });
}

#[test]
fn disjoint_request_passes_conflicting_younger_one_waits() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let holder = arbiter.acquire(&cpus(&[0]), owner(), AdmissionMode::Wait).unwrap();
        // A wants {0,1}: blocked by the holder.
        let (release_a, a) = waiter(&arbiter, &[0, 1], "A", &log);
        eventually(|| arbiter.snapshot().unwrap().waiters == 1);
        // B wants {1}: free, but the older waiter A wants it too, so B queues behind A.
        let (release_b, b) = waiter(&arbiter, &[1], "B", &log);
        eventually(|| arbiter.snapshot().unwrap().waiters == 2);
        // C wants {2}: disjoint from the holder and every waiter, so it passes at once.
        let c = arbiter.acquire(&cpus(&[2]), owner(), AdmissionMode::Try).unwrap();
        assert!(log.lock().unwrap().is_empty());

        drop(holder);
        eventually(|| log.lock().unwrap().len() == 1);
        assert_eq!(*log.lock().unwrap(), ["A"]);
        assert_eq!(arbiter.snapshot().unwrap().waiters, 1, "B overtook nothing and still waits");
        release_a.send(()).unwrap();
        eventually(|| log.lock().unwrap().len() == 2);
        assert_eq!(*log.lock().unwrap(), ["A", "B"]);
        release_b.send(()).unwrap();
        a.join().unwrap();
        b.join().unwrap();
        drop(c);
        let snapshot = arbiter.snapshot().unwrap();
        assert_eq!((snapshot.holders, snapshot.waiters, snapshot.parked), (0, 0, 0));
    });
}
