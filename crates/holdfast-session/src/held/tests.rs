//! Tests of the held session: re-entry, release, management while held, fairness, panics,
//! telemetry and the lock-free operation path.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use holdfast_arbiter::has_active_execution;
use holdfast_resources::ManagementError;
use holdfast_tensor::Tensor;

use crate::{
    CpuBackend, CpuThreadExecution, OpError, ReentryReason, SessionEntryError,
    current_cpu_execution,
};

fn backend() -> CpuBackend {
    CpuBackend::builder().threads(1).private_arbiter().build().unwrap()
}

fn m2() -> Tensor<f64> {
    Tensor::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap()
}

#[test]
fn reentry_inside_a_held_session_is_refused_and_the_session_keeps_working() {
    let b = backend();
    let a = m2();
    let mut s = b.open_session().unwrap();
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Active);
    let nested = b.open_session();
    assert!(
        matches!(
            nested,
            Err(SessionEntryError::Reentered { cause: ReentryReason::ExecutionActive, .. })
        ),
        "{nested:?}"
    );
    assert!(matches!(b.try_open_session(), Err(SessionEntryError::Reentered { .. })));
    assert!(matches!(
        b.open_session_timeout(Duration::from_secs(60)),
        Err(SessionEntryError::Reentered { .. })
    ));
    let scoped = b.with_backend_session(|_| ());
    assert!(matches!(scoped, Err(SessionEntryError::Reentered { .. })), "{scoped:?}");
    // A scoped entry from inside an operation is refused too, before blocking.
    let inner = s.with_session(|_| b.with_backend_session(|_| ()));
    assert!(matches!(inner, Err(SessionEntryError::Reentered { .. })));
    // Another engine (a different backend) on the same thread: the thread runs an execution.
    let other = backend();
    assert!(matches!(other.open_session(), Err(SessionEntryError::Reentered { .. })));
    let c = s.with_session(|v| v.matmul(a.read(), a.read())).unwrap();
    assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    s.close().unwrap();
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
}

#[test]
fn drop_releases_what_close_releases_and_a_session_reopens_at_once() {
    let b = backend();
    for explicit_close in [true, false] {
        let s = b.open_session().unwrap();
        assert!(has_active_execution());
        assert!(matches!(b.buffer_pool_len(), Err(ManagementError::Busy)));
        if explicit_close {
            s.close().unwrap();
        } else {
            drop(s);
        }
        assert!(!has_active_execution(), "owner marker restored");
        assert_eq!(b.buffer_pool_len().unwrap(), 0, "resources back in the slot");
        // Admission released: another thread can take the engine with `try` at once.
        let other = b.clone();
        std::thread::spawn(move || other.try_open_session().map(|s| s.close().is_ok()))
            .join()
            .unwrap()
            .unwrap();
    }
    assert_eq!(b.resource_returns(), 4, "exactly one return per checkout");
}

#[test]
fn management_is_busy_while_held_and_correct_after_close() {
    let b = backend();
    let a = m2();
    let mut s = b.open_session().unwrap();
    let r = s.with_session(|v| v.add(a.read(), a.read())).unwrap();
    let other = b.clone();
    let started = Instant::now();
    let outcomes = std::thread::spawn(move || {
        (
            other.buffer_pool_len(),
            other.buffer_pool_stats().map(|_| ()),
            other.indexed_plan_cache_stats().map(|_| ()),
            other.trim(),
            other.clear_runtime_caches(),
        )
    })
    .join()
    .unwrap();
    // Bounded: management never waits on the session (a generous bound, not a timing claim).
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(outcomes.0, Err(ManagementError::Busy)));
    assert!(matches!(outcomes.1, Err(ManagementError::Busy)));
    assert!(matches!(outcomes.2, Err(ManagementError::Busy)));
    assert!(matches!(outcomes.3, Err(ManagementError::Busy)));
    assert!(matches!(outcomes.4, Err(ManagementError::Busy)));
    s.close().unwrap();
    // Give the pool something to retain, then management reports it.
    drop(r);
    assert_eq!(b.buffer_pool_stats().unwrap().misses, 1);
    b.trim().unwrap();
    assert_eq!(b.buffer_pool_len().unwrap(), 0);
}

#[test]
fn a_queued_scoped_entry_runs_after_close_and_never_sees_a_vacant_slot() {
    let b = backend();
    let s = b.open_session().unwrap();
    let (tx, rx) = mpsc::channel();
    let other = b.clone();
    let waiter = std::thread::spawn(move || {
        tx.send(()).unwrap();
        other.with_backend_session(|v| {
            let a = Tensor::<f64>::from_vec([1], vec![2.0]).unwrap();
            v.scale(a.read(), 3.0).map(|t| t.as_slice()[0])
        })
    });
    rx.recv().unwrap();
    // Let the waiter queue (not a timing assertion: the outcome is the same either way).
    std::thread::sleep(Duration::from_millis(50));
    s.close().unwrap();
    let outcome = waiter.join().unwrap();
    assert!(matches!(outcome, Ok(Ok(v)) if v == 6.0), "{outcome:?}");
    assert_eq!(b.resource_returns(), 2);
}

#[test]
fn a_panic_inside_an_operation_leaves_the_pool_whole_and_the_session_usable() {
    let b = backend();
    let a = m2();
    let mut s = b.open_session().unwrap();
    // Warm the pool with one retained buffer of the right size.
    let warm = s.with_session(|v| v.add(a.read(), a.read())).unwrap();
    s.with_session(|v| v.recycle(warm));
    let retained = s.stats().buffer_retained_bytes;
    assert!(retained > 0);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.with_session(|v| {
            let _taken = v.add(a.read(), a.read()).unwrap(); // takes the pooled buffer
            panic!("operation failed midway");
        })
    }));
    assert!(caught.is_err());
    assert_eq!(s.stats().buffer_retained_bytes, retained, "accounting whole at once");
    let c = s.with_session(|v| v.matmul(a.read(), a.read())).unwrap();
    assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    s.close().unwrap();
    let mut again = b.open_session().unwrap();
    let d = again.with_session(|v| v.sub(a.read(), a.read())).unwrap();
    assert_eq!(d.as_slice(), &[0.0; 4]);
    again.close().unwrap();
    assert_eq!(b.resource_returns(), 2);
}

#[test]
fn a_panic_that_unwinds_the_whole_session_still_releases_everything() {
    let b = backend();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut s = b.open_session().unwrap();
        s.with_session(|_| panic!("boom"));
    }));
    assert!(caught.is_err());
    assert!(!has_active_execution());
    assert_eq!(b.resource_returns(), 1);
    b.open_session().unwrap().close().unwrap();
}

#[test]
fn the_operation_path_takes_no_slot_lock() {
    let b = backend();
    let a = m2();
    let mut out = Tensor::<f64>::zeros([2, 2]);
    let mut s = b.open_session().unwrap();
    let before = b.slot_lock_acquisitions();
    for _ in 0..1000 {
        s.with_session(|v| v.matmul_into(a.read(), a.read(), &mut out)).unwrap();
    }
    for _ in 0..1000 {
        let c = s.with_session(|v| v.matmul(a.read(), a.read())).unwrap();
        s.with_session(|v| v.recycle(c));
    }
    assert_eq!(b.slot_lock_acquisitions(), before, "0 slot-mutex acquisitions on 2000 operations");
    let stats = s.close().unwrap();
    assert_eq!(stats.operations, 2000);
    assert_eq!(stats.pool_installs, 0);
    assert_eq!(stats.plan_misses, 1, "one analysis, then cache hits");
    assert_eq!(stats.buffer_misses, 1, "one allocation, then the pool serves the output");
}

#[test]
fn telemetry_counts_operations_hits_and_misses() {
    let b = backend();
    let a = m2();
    let mut s = b.open_session().unwrap();
    for _ in 0..3 {
        let e = s.with_session(|v| v.einsum("ij,jk->ik", &[a.read(), a.read()])).unwrap();
        s.with_session(|v| v.recycle(e));
    }
    let st = s.stats();
    assert_eq!(st.operations, 3);
    assert_eq!((st.plan_misses, st.plan_hits), (1, 2));
    assert_eq!(st.inline_runs, 3);
    assert_eq!(st.affinity_syscalls, 0, "a domain of every allowed CPU changes no mask");
    let closed = s.close().unwrap();
    assert_eq!(closed, st);
}

#[test]
fn operation_errors_are_typed_and_leave_the_session_usable() {
    let b = backend();
    let a = m2();
    let v3 = Tensor::<f64>::zeros([3]);
    let mut s = b.open_session().unwrap();
    let err = s.with_session(|v| v.add(a.read(), v3.read())).unwrap_err();
    assert!(matches!(err, OpError::Kernel(_)), "{err}");
    let err = s.with_session(|v| v.einsum("ij,jk->", &[a.read()])).unwrap_err();
    assert!(matches!(err, OpError::Kernel(_)), "{err}");
    let err = s.with_session(|v| v.sum(a.read(), &[5])).unwrap_err();
    assert!(matches!(err, OpError::Kernel(_)), "{err}");
    let ok = s.with_session(|v| v.sum(a.read(), &[0, 1])).unwrap();
    assert_eq!(ok.as_slice(), &[10.0]);
    s.close().unwrap();
    assert_eq!(b.resource_returns(), 1);
}
