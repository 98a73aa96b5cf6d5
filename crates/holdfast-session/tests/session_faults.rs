//! Fault injection at every release step of a held session (issue 10;
//! `docs/design/held-session.md` §2, §5, §6). The release order is checkout, owner marker,
//! affinity, permit; each test interrupts it at one step with a real fault and checks the outcome
//! the design note promises: every later step still runs, the resources go back exactly once, a
//! queued opener is admitted and never sees a vacant slot, and the engine works afterwards.
//!
//! | step | fault | where else it is covered |
//! |---|---|---|
//! | operation (inside the loan) | panic with pooled outputs taken, one partially written and recycled during the unwind | `held/tests.rs` (one buffer), `resources/src/loan/tests.rs` (pool level) |
//! | 1 → 2: after checkout, before the owner marker | `holdfast_resources::fault::panic_after_next_returns`: close, drop, scoped entry, shared-scope arm | — |
//! | open, after the checkout is taken | `holdfast_resources::fault::panic_after_next_takes`: held root, scoped entry, child entry | — |
//! | 3: affinity restore | `holdfast_affinity::fault::fail_next_restores(2)` (finish *and* its drop retry fail) with a queued opener; a failing restore while a panic unwinds the session | `session_affinity.rs` (one failure: close, drop, scoped and shared arms) |
//! | 4: permit | release is infallible, also on a poisoned arbiter | `holdfast-arbiter` `arbiter/tests.rs` |
//!
//! One binary of its own: it changes the test threads' CPU binding, and its faults are per thread.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

#[path = "support/recycle.rs"]
mod recycle;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::time::Duration;

use holdfast_affinity::{CpuSet, bind_current_thread, fault as affinity_fault, thread_binding};
use holdfast_resources::fault::{self as resources_fault, InjectedFault};
use holdfast_session::{
    CpuBackend, CpuHeldSessionError, CpuThreadExecution, SessionEntryError, Tensor,
    current_cpu_execution,
};
use recycle::RecycleOnDrop;

/// Bound on anything that would hang if a release step were skipped.
const WATCHDOG: Duration = Duration::from_secs(30);

/// A backend on one CPU of the caller's binding (so that affinity restoration is observable),
/// or over the whole binding on a one-CPU machine; and the caller's binding.
fn backend() -> (CpuBackend, CpuSet) {
    let current = thread_binding().unwrap();
    let cpus = if current.len() >= 2 {
        CpuSet::from_cpus([current.first().unwrap()]).unwrap()
    } else {
        current
    };
    let backend = CpuBackend::builder().cpus(cpus).threads(1).private_arbiter().build().unwrap();
    (backend, current)
}

fn v2() -> Tensor<f64> {
    Tensor::from_vec([2], vec![1.0, 2.0]).unwrap()
}

/// A scoped entry queued on another thread behind the current holder; its result (the add of
/// [`v2`] with itself) is read with [`Queued::result`].
struct Queued(mpsc::Receiver<Result<Vec<f64>, String>>);

impl Queued {
    fn start(backend: &CpuBackend) -> Queued {
        let (started_tx, started_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let other = backend.clone();
        std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            let outcome = other.with_backend_session(|v| v.add(v2().read(), v2().read()));
            let result = match outcome {
                Ok(Ok(t)) => Ok(t.as_slice().to_vec()),
                other => Err(format!("{other:?}")),
            };
            let _ = done_tx.send(result);
        });
        started_rx.recv_timeout(WATCHDOG).unwrap();
        // Let it queue (not a timing assertion: the outcome must be the same either way).
        std::thread::sleep(Duration::from_millis(30));
        Queued(done_rx)
    }

    /// The queued entry's result; fails (never hangs) if it is not admitted.
    fn result(self) -> Vec<f64> {
        self.0
            .recv_timeout(WATCHDOG)
            .expect("the queued opener was never admitted: the permit was not released")
            .unwrap_or_else(|e| panic!("the queued opener failed (vacant slot?): {e}"))
    }
}

/// Runs `f`, which must panic with the injected fault `expected`.
fn expect_fault<R: std::fmt::Debug>(expected: InjectedFault, f: impl FnOnce() -> R) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => panic!("expected the injected fault {expected:?}, got {r:?}"),
        Err(payload) => assert_eq!(
            payload.downcast_ref::<InjectedFault>(),
            Some(&expected),
            "a panic other than the injected fault"
        ),
    }
}

/// Everything a finished entry must have released: marker, affinity, resources (exactly
/// `returns` times), and a management call that is neither busy nor poisoned.
fn assert_released(backend: &CpuBackend, original: &CpuSet, returns: u64) {
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle, "owner marker restored");
    assert_eq!(&thread_binding().unwrap(), original, "caller's CPU mask restored");
    assert_eq!(backend.resource_returns(), returns, "each checkout returned exactly once");
    let stats = backend.buffer_pool_stats().expect("resources back in the slot, slot not poisoned");
    assert_eq!(stats.in_flight, 0, "no buffer in flight");
}

/// The engine still runs correct operations in a new session.
fn assert_usable(backend: &CpuBackend) {
    let mut s = backend.open_session().unwrap();
    let r = s
        .with_session(|v| {
            v.matmul(
                Tensor::from_vec([1, 2], vec![1.0, 2.0]).unwrap().read(),
                Tensor::from_vec([2, 1], vec![3.0, 4.0]).unwrap().read(),
            )
        })
        .unwrap();
    assert_eq!(r.as_slice(), &[11.0]);
    s.close().unwrap();
}

// --- Release step 1 → 2: a panic after the checkout returned, before the owner marker. ---

#[test]
fn a_panic_after_the_checkout_returns_in_close_still_releases_marker_affinity_and_permit() {
    let (backend, original) = backend();
    let mut session = backend.open_session().unwrap();
    session.with_session(|v| v.add(v2().read(), v2().read())).unwrap();
    let queued = Queued::start(&backend);
    resources_fault::panic_after_next_returns(1);
    expect_fault(InjectedFault::AfterReturn, || session.close());
    assert_eq!(queued.result(), [2.0, 4.0], "the queued opener found the resources Ready");
    assert_released(&backend, &original, 2);
    assert_usable(&backend);
}

#[test]
fn a_panic_after_the_checkout_returns_in_drop_still_releases_marker_affinity_and_permit() {
    let (backend, original) = backend();
    let session = backend.open_session().unwrap();
    let queued = Queued::start(&backend);
    resources_fault::panic_after_next_returns(1);
    // The drop glue keeps dropping the later fields (owner, affinity, permit) in field order.
    expect_fault(InjectedFault::AfterReturn, || drop(session));
    assert_eq!(queued.result(), [2.0, 4.0]);
    assert_released(&backend, &original, 2);
    assert_usable(&backend);
}

#[test]
fn a_panic_after_the_checkout_returns_in_a_scoped_entry_propagates_after_every_release() {
    let (backend, original) = backend();
    resources_fault::panic_after_next_returns(1);
    expect_fault(InjectedFault::AfterReturn, || {
        backend.with_backend_session(|v| v.scale(v2().read(), 2.0))
    });
    assert_released(&backend, &original, 1);
    // The shared-scope arm releases the same way; the scope's own admission goes with the unwind.
    resources_fault::panic_after_next_returns(1);
    expect_fault(InjectedFault::AfterReturn, || {
        backend.with_execution_scope(|| backend.with_backend_session(|v| v.scale(v2().read(), 2.0)))
    });
    assert_released(&backend, &original, 2);
    let queued = Queued::start(&backend);
    assert_eq!(queued.result(), [2.0, 4.0], "the scope's admission was released");
    assert_usable(&backend);
}

// --- Open: a panic right after the checkout is taken (the last acquisition step). ---

#[test]
fn a_panic_right_after_the_checkout_is_taken_unwinds_the_open_in_reverse_order() {
    let (backend, original) = backend();
    resources_fault::panic_after_next_takes(1);
    expect_fault(InjectedFault::AfterTake, || backend.open_session().map(|s| s.stats()));
    assert_released(&backend, &original, 1);
    resources_fault::panic_after_next_takes(1);
    expect_fault(InjectedFault::AfterTake, || backend.with_backend_session(|_| ()));
    assert_released(&backend, &original, 2);
    let queued = Queued::start(&backend);
    assert_eq!(queued.result(), [2.0, 4.0]);
    assert_usable(&backend);
}

#[test]
fn a_panic_taking_a_child_checkout_leaves_the_parent_session_whole() {
    let (backend, original) = backend();
    let mut session = backend.open_session().unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        session.with_session(|v| {
            let child = v.child_execution();
            resources_fault::panic_after_next_takes(1);
            child.with_backend_session(|cv| cv.add(v2().read(), v2().read()))
        })
    }));
    let payload = caught.expect_err("the child's checkout panicked");
    assert_eq!(payload.downcast_ref::<InjectedFault>(), Some(&InjectedFault::AfterTake));
    // The child restored the parent's marker, not the idle one, and released only its join.
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Active);
    let inner = session
        .with_session(|v| {
            v.child_execution().with_backend_session(|cv| cv.add(v2().read(), v2().read()))
        })
        .unwrap()
        .unwrap();
    assert_eq!(inner.as_slice(), &[2.0, 4.0], "a new child joins the same owner");
    session.close().unwrap();
    assert_released(&backend, &original, 1);
    assert_usable(&backend);
}

// --- Release step 3: the affinity restore fails. ---

#[test]
fn a_restore_that_fails_twice_reports_restore_and_still_admits_the_queued_opener() {
    let (backend, original) = backend();
    if backend.cpus() == &original {
        eprintln!("skipped: narrowing needs at least two CPUs");
        return;
    }
    let session = backend.open_session().unwrap();
    let queued = Queued::start(&backend);
    affinity_fault::fail_next_restores(2); // `finish` fails, and so does its drop's retry
    let err = session.close().unwrap_err();
    assert!(matches!(err, CpuHeldSessionError::Restore { .. }), "{err}");
    assert_eq!(queued.result(), [2.0, 4.0], "permit released after the failed restore");
    assert_eq!(thread_binding().unwrap(), *backend.cpus(), "best effort failed: still narrowed");
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle, "owner marker restored");
    assert_eq!(backend.resource_returns(), 2);
    bind_current_thread(&original).unwrap();
    assert_usable(&backend);
    assert_eq!(thread_binding().unwrap(), original);
}

#[test]
fn a_failing_restore_while_a_panic_unwinds_the_session_neither_aborts_nor_leaks() {
    let (backend, original) = backend();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let mut session = backend.open_session().unwrap();
        session.with_session(|v| v.add(v2().read(), v2().read())).unwrap();
        affinity_fault::fail_next_restores(2); // the drop path's only attempt fails
        std::panic::panic_any("work failed with the session open");
    }));
    assert_eq!(
        caught.unwrap_err().downcast_ref::<&str>(),
        Some(&"work failed with the session open")
    );
    affinity_fault::fail_next_restores(0);
    // A second panic would have aborted the process; everything else was released.
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
    assert_eq!(backend.resource_returns(), 1);
    bind_current_thread(&original).unwrap();
    assert_released(&backend, &original, 1);
    assert_usable(&backend);
}

// --- Inside the loan: a panic with pooled outputs taken, one partially written. ---

#[test]
fn a_panic_inside_the_loan_with_partially_written_outputs_keeps_the_pool_whole() {
    let (backend, original) = backend();
    let a = Tensor::<f64>::from_vec([4, 4], (0..16).map(f64::from).collect()).unwrap();
    let mut session = backend.open_session().unwrap();
    // Warm the pool with two retained 16-element buffers.
    let (x, y) = session
        .with_session(|v| (v.add(a.read(), a.read()).unwrap(), v.mul(a.read(), a.read()).unwrap()));
    session.with_session(|v| {
        v.recycle(x);
        v.recycle(y);
    });
    let before = session.stats().buffer_retained_bytes;
    let caught = catch_unwind(AssertUnwindSafe(|| {
        session.with_session(|v| {
            let _kept = v.add(a.read(), a.read()).unwrap(); // pooled, dropped by the unwind
            let mut half = v.sub(a.read(), a.read()).unwrap(); // pooled, then half overwritten
            half.as_mut_slice()[..8].fill(f64::NAN);
            let _give_back = RecycleOnDrop { view: v, out: Some(half) };
            std::panic::panic_any("interrupted while writing the outputs");
        })
    }));
    assert_eq!(
        caught.unwrap_err().downcast_ref::<&str>(),
        Some(&"interrupted while writing the outputs")
    );
    assert_eq!(session.stats().buffer_retained_bytes, before, "the pool is whole at once");
    // The session keeps running correct operations, and the pool serves it.
    let c = session.with_session(|v| v.sub(a.read(), a.read())).unwrap();
    assert!(c.as_slice().iter().all(|&x| x == 0.0), "{:?}", c.as_slice());
    let stats = session.close().unwrap();
    assert_eq!(stats.buffer_hits, 3, "two hits before the panic, one after (a replenished buffer)");
    let pool = backend.buffer_pool_stats().unwrap();
    assert_eq!(pool.in_flight, 0);
    assert_eq!(pool.replenished, 2, "both pooled outputs replaced by fresh buffers");
    assert_eq!(pool.discarded, 1, "the partially written output was dropped, never retained");
    assert_released(&backend, &original, 1);
    assert_usable(&backend);
}

#[test]
fn entries_refused_after_a_fault_are_typed_and_never_wait() {
    // After every fault above the engine is idle; a child handle kept past its parent is
    // refused at once (its owner is gone), not left waiting on the arbiter.
    let (backend, _) = backend();
    let mut session = backend.open_session().unwrap();
    let child = session.with_session(|v| v.child_execution());
    resources_fault::panic_after_next_returns(1);
    expect_fault(InjectedFault::AfterReturn, || session.close());
    let refused = child.with_backend_session(|_| ());
    assert!(matches!(refused, Err(SessionEntryError::Reentered { .. })), "{refused:?}");
}
