//! Held sessions and scoped entries on a narrowed CPU domain: the caller's affinity is narrowed
//! for the session and restored at close, a failed restore is reported with the documented
//! precedence (S6, S7), and nothing else is lost. One binary because it changes the test thread's
//! CPU binding.
#![allow(clippy::unwrap_used, reason = "test helpers: a failed setup is a failed test")]

use holdfast_affinity::{CpuSet, fault, thread_binding};
use holdfast_session::{
    CpuBackend, CpuHeldSessionError, CpuThreadExecution, SessionEntryError, Tensor,
    current_cpu_execution,
};

/// A backend on one CPU of the caller's binding, or `None` (with a message) on a one-CPU machine
/// where no narrowing is possible.
fn narrowed() -> Option<(CpuBackend, CpuSet)> {
    let current = thread_binding().unwrap();
    if current.len() < 2 {
        eprintln!("skipped: narrowing needs at least two CPUs");
        return None;
    }
    let one = CpuSet::from_cpus([current.first().unwrap()]).unwrap();
    let backend = CpuBackend::builder().cpus(one).threads(1).private_arbiter().build().unwrap();
    Some((backend, current))
}

#[derive(Debug, PartialEq)]
struct AppError(&'static str);

#[test]
fn a_session_narrows_the_caller_and_close_restores_it() {
    let Some((backend, original)) = narrowed() else { return };
    let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0]).unwrap();
    let mut session = backend.open_session().unwrap();
    assert_eq!(thread_binding().unwrap(), *backend.cpus());
    session.with_session(|v| v.add(a.read(), a.read())).unwrap();
    let stats = session.close().unwrap();
    assert_eq!(thread_binding().unwrap(), original);
    assert!(stats.affinity_syscalls >= 2, "one narrowing and one restore: {stats:?}");
}

#[test]
fn a_failed_restore_is_reported_by_close_and_everything_else_is_released() {
    let Some((backend, original)) = narrowed() else { return };
    let session = backend.open_session().unwrap();
    fault::fail_next_restores(1); // finish fails; the guard's drop retry repairs the mask
    let err = session.close().unwrap_err();
    assert!(matches!(err, CpuHeldSessionError::Restore { .. }), "{err}");
    assert_eq!(thread_binding().unwrap(), original, "the drop retry restored the mask");
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle, "owner marker restored");
    assert_eq!(backend.buffer_pool_len().unwrap(), 0, "resources returned");
    assert_eq!(backend.resource_returns(), 1, "exactly once");
    backend.open_session().unwrap().close().unwrap();
}

#[test]
fn dropping_a_session_with_a_failing_restore_never_panics() {
    let Some((backend, original)) = narrowed() else { return };
    let session = backend.open_session().unwrap();
    fault::fail_next_restores(1); // the drop path's only attempt fails: diagnostics, no panic
    drop(session);
    fault::fail_next_restores(0);
    assert_eq!(backend.resource_returns(), 1);
    // The thread stays narrowed (best effort failed); repair it for the other tests.
    holdfast_affinity::bind_current_thread(&original).unwrap();
    backend.open_session().unwrap().close().unwrap();
}

#[test]
fn scoped_entry_error_contract() {
    let Some((backend, original)) = narrowed() else { return };
    // A callback that returns no Result: its value, unchanged.
    assert_eq!(backend.with_backend_session(|_| 42).unwrap(), 42);
    // The application's own error type: returned unchanged inside Ok.
    let app: Result<Result<(), AppError>, _> =
        backend.with_backend_session(|_| Err(AppError("bad input")));
    assert_eq!(app.unwrap(), Err(AppError("bad input")));
    // Work failure and close failure together: the restore failure wins (documented), the
    // callback's value is dropped, and everything is released.
    fault::fail_next_restores(1);
    let both: Result<Result<(), AppError>, _> =
        backend.with_backend_session(|_| Err(AppError("work failed")));
    assert!(matches!(both, Err(SessionEntryError::Executor { .. })), "{both:?}");
    assert_eq!(thread_binding().unwrap(), original);
    // Work success and close failure: the same.
    fault::fail_next_restores(1);
    let ok_then_fail = backend.with_backend_session(|_| 7);
    assert!(matches!(ok_then_fail, Err(SessionEntryError::Executor { .. })));
    assert_eq!(backend.resource_returns(), 4, "one return per entry, on every path");
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
}

#[test]
fn the_shared_scope_arm_reports_restore_failures_the_same_way() {
    let Some((backend, original)) = narrowed() else { return };
    let outcome = backend
        .with_execution_scope(|| {
            fault::fail_next_restores(1);
            backend.with_backend_session(|_| "value")
        })
        .unwrap();
    assert!(matches!(outcome, Err(SessionEntryError::Executor { .. })), "{outcome:?}");
    assert_eq!(thread_binding().unwrap(), original);
    assert_eq!(backend.resource_returns(), 1);
}
