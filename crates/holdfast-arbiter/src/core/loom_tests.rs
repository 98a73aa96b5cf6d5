//! loom models of the arbiter core (SPEC B6): FIFO admission, no lost wake-up, exactly-once
//! release, with three threads.
//!
//! Run with (about a minute on 2 cores, see `docs/design/admission.md`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p holdfast-arbiter --release --lib loom
//! ```
//!
//! A lost wake-up shows up as a loom deadlock report (every thread blocked), a double or missing
//! release as a failed `release` assertion or a non-empty final snapshot, and a FIFO violation as
//! an admission order that is not the ticket order.

use super::state::{Request, Ticket};
use super::{Core, Wait};
use crate::owner::{OwnerId, fresh_execution_owner};
use holdfast_cpuset::CpuSet;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

fn mask(cpus: &[usize]) -> CpuSet {
    CpuSet::from_cpus(cpus.iter().copied()).unwrap()
}

fn request(owner: OwnerId, mask: &CpuSet) -> Request<'_> {
    Request { mask, owner, thread: None }
}

fn owners<const N: usize>() -> [OwnerId; N] {
    std::array::from_fn(|_| fresh_execution_owner().unwrap())
}

/// Three conflicting waiting requests: mutual exclusion, admission in ticket (submission) order,
/// every permit released once, nothing left behind.
#[test]
fn loom_conflicting_waiters_are_fifo_and_exclusive() {
    let [a, b, c] = owners::<3>();
    loom::model(move || {
        let core = Arc::new(Core::new());
        let inside = Arc::new(AtomicUsize::new(0));
        let order: Arc<Mutex<Vec<Ticket>>> = Arc::new(Mutex::new(Vec::new()));
        let run = {
            let (core, inside, order) = (core.clone(), inside.clone(), order.clone());
            move |owner: OwnerId, cpus: &'static [usize]| {
                let admitted =
                    core.admit(request(owner, &mask(cpus)), Wait::Forever, || true).unwrap();
                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                order.lock().unwrap().push(admitted.ticket);
                inside.fetch_sub(1, Ordering::SeqCst);
                assert!(core.release(admitted.ticket), "permit released twice or never held");
            }
        };
        let (run1, run2) = (run.clone(), run.clone());
        let t1 = thread::spawn(move || run1(b, &[0, 1]));
        let t2 = thread::spawn(move || run2(c, &[1]));
        run(a, &[0, 1]);
        t1.join().unwrap();
        t2.join().unwrap();
        let order = order.lock().unwrap().clone();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(order, sorted, "admitted out of FIFO order");
        assert_eq!(core.snapshot().unwrap(), (0, 0, 0));
    });
}

/// A holder, a try and a waiter race: the try never blocks, the waiter is always woken, and the
/// state drains.
#[test]
fn loom_try_and_wait_race_with_release() {
    let [a, b, c] = owners::<3>();
    loom::model(move || {
        let core = Arc::new(Core::new());
        let held = core.admit(request(a, &mask(&[0])), Wait::Forever, || true).unwrap();
        let try_core = core.clone();
        let trier = thread::spawn(move || {
            match try_core.admit(request(b, &mask(&[0])), Wait::Never, || true) {
                Ok(admitted) => assert!(try_core.release(admitted.ticket)),
                Err(err) => {
                    assert!(matches!(err, crate::AdmissionError::Contended { .. }), "{err:?}");
                }
            }
        });
        let wait_core = core.clone();
        let waiter = thread::spawn(move || {
            let admitted =
                wait_core.admit(request(c, &mask(&[0])), Wait::Forever, || true).unwrap();
            assert!(wait_core.release(admitted.ticket));
        });
        assert!(core.release(held.ticket));
        trier.join().unwrap();
        waiter.join().unwrap();
        assert_eq!(core.snapshot().unwrap(), (0, 0, 0));
    });
}

/// A child joins its owner while the root releases; a conflicting waiter is admitted only after
/// the last permit of the reservation (root or child) is gone.
#[test]
fn loom_join_extends_the_reservation() {
    let [root_owner, other] = owners::<2>();
    loom::model(move || {
        let core = Arc::new(Core::new());
        let inside = Arc::new(AtomicUsize::new(0));
        let root = core.admit(request(root_owner, &mask(&[0])), Wait::Forever, || true).unwrap();
        inside.fetch_add(1, Ordering::SeqCst);

        let (child_core, child_inside) = (core.clone(), inside.clone());
        let child = thread::spawn(move || {
            if let Some(ticket) = child_core.join(root_owner).unwrap() {
                child_inside.fetch_add(1, Ordering::SeqCst);
                child_inside.fetch_sub(1, Ordering::SeqCst);
                assert!(child_core.release(ticket));
            }
        });
        let (wait_core, wait_inside) = (core.clone(), inside.clone());
        let waiter = thread::spawn(move || {
            let admitted =
                wait_core.admit(request(other, &mask(&[0])), Wait::Forever, || true).unwrap();
            assert_eq!(wait_inside.load(Ordering::SeqCst), 0, "admitted inside a reservation");
            assert!(wait_core.release(admitted.ticket));
        });
        inside.fetch_sub(1, Ordering::SeqCst);
        assert!(core.release(root.ticket));
        child.join().unwrap();
        waiter.join().unwrap();
        assert_eq!(core.snapshot().unwrap(), (0, 0, 0));
    });
}
