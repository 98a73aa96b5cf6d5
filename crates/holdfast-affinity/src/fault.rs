//! Fault injection for tests (SPEC F4): make the next restorations of a
//! [`CallerAffinityGuard`](crate::CallerAffinityGuard) fail.
//!
//! The seam is always compiled so that tests of higher layers (a session's `close` reporting
//! `Restore`, SPEC S6) can use it without a cargo feature. It is per thread, so tests running in
//! parallel do not see each other's faults, and it costs one thread-local read on the restore
//! path only, which runs only after the guard actually changed the binding. Production code never
//! calls it.

use std::cell::Cell;

thread_local! {
    /// Restorations still to fail on this thread.
    static RESTORE_FAILURES: Cell<u32> = const { Cell::new(0) };
}

/// Makes the next `count` restoration attempts on the calling thread fail with
/// [`AffinityError::Restore`](crate::AffinityError::Restore) (replacing any count left).
///
/// A guard whose `finish` fails retries once on drop, so `count = 1` exercises "finish reports,
/// drop repairs", and `count = 2` "finish reports, drop fails too and writes a diagnostic".
///
/// # Examples
///
/// ```
/// use holdfast_affinity::{fault, thread_binding, AffinityError, CallerAffinityGuard, CpuSet};
///
/// let before = thread_binding()?;
/// if before.len() >= 2 {
///     let guard = CallerAffinityGuard::enter(&CpuSet::from_cpus([before.first().unwrap()])?)?;
///     fault::fail_next_restores(1);
///     assert!(matches!(guard.finish(), Err(AffinityError::Restore { .. })));
///     assert_eq!(thread_binding()?, before); // the drop's retry succeeded
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fail_next_restores(count: u32) {
    RESTORE_FAILURES.with(|c| c.set(count));
}

/// Restorations still set to fail on the calling thread.
///
/// # Examples
///
/// ```
/// holdfast_affinity::fault::fail_next_restores(0);
/// assert_eq!(holdfast_affinity::fault::pending_restore_failures(), 0);
/// ```
#[must_use]
pub fn pending_restore_failures() -> u32 {
    RESTORE_FAILURES.with(Cell::get)
}

/// Consumes one injected failure, if any is pending.
pub(crate) fn take_restore_failure() -> bool {
    RESTORE_FAILURES
        .try_with(|c| {
            let pending = c.get();
            if pending > 0 {
                c.set(pending - 1);
            }
            pending > 0
        })
        .unwrap_or(false)
}
