//! Fault injection for tests of higher layers (cargo feature `fault-injection`, off by default):
//! make the next resource checkout, or the next return, panic at a chosen point.
//!
//! The held session's release order (`docs/design/held-session.md` §2) is checkout, owner
//! marker, affinity, permit. These seams let a test interrupt it *between* steps with a real
//! panic and check that every later step still runs:
//!
//! - [`panic_after_next_returns`]: the next checkout returns its box to the slot, then panics
//!   ("a panic after checkout and before the owner marker"). The slot is `Ready` again before the
//!   panic starts, so nothing is lost, and it never fires while the thread is already unwinding
//!   (a second panic would abort).
//! - [`panic_after_next_takes`]: the next checkout moves the box out, builds its guard, then
//!   panics while the guard is a live local, so the unwind returns the box (a panic at the last
//!   step of an open).
//!
//! Faults are per thread, so tests running in parallel do not see each other's. The payload is an
//! [`InjectedFault`], so a test can tell the injected panic from any other. Without the feature
//! this module is not compiled and the checkout paths carry no check at all; with it, each take
//! and return reads one thread-local.

use std::cell::Cell;

/// The panic payload of an injected fault (`std::panic::panic_any`).
///
/// # Examples
///
/// ```
/// use std::panic::{AssertUnwindSafe, catch_unwind};
/// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
/// use holdfast_resources::fault::{self, InjectedFault};
///
/// let slot = EngineResourceSlot::new(EngineResources::default());
/// fault::panic_after_next_returns(1);
/// let caught = catch_unwind(AssertUnwindSafe(|| drop(EngineResourceCheckout::take(&slot))));
/// let payload = caught.unwrap_err();
/// assert_eq!(payload.downcast_ref::<InjectedFault>(), Some(&InjectedFault::AfterReturn));
/// assert_eq!(slot.counters().returns, 1, "returned before the panic");
/// assert!(!slot.is_checked_out());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InjectedFault {
    /// Raised by a checkout right after it moved the resources out.
    AfterTake,
    /// Raised by a checkout's drop right after the resources went back into the slot.
    AfterReturn,
}

thread_local! {
    /// Checkouts still to panic after their take, on this thread.
    static AFTER_TAKE: Cell<u32> = const { Cell::new(0) };
    /// Checkout returns still to panic after the return, on this thread.
    static AFTER_RETURN: Cell<u32> = const { Cell::new(0) };
}

/// Makes the next `count` checkouts on the calling thread panic with
/// [`InjectedFault::AfterTake`] right after taking the resources (replacing any count left).
/// The checkout is a live local when the panic starts, so the unwind returns the resources.
///
/// # Examples
///
/// ```
/// use std::panic::{AssertUnwindSafe, catch_unwind};
/// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources, fault};
///
/// let slot = EngineResourceSlot::new(EngineResources::default());
/// fault::panic_after_next_takes(1);
/// assert!(catch_unwind(AssertUnwindSafe(|| EngineResourceCheckout::take(&slot).is_some())).is_err());
/// let c = slot.counters();
/// assert_eq!((c.takes, c.returns), (1, 1));
/// ```
pub fn panic_after_next_takes(count: u32) {
    AFTER_TAKE.with(|c| c.set(count));
}

/// Makes the next `count` checkout returns on the calling thread panic with
/// [`InjectedFault::AfterReturn`] right after the resources are back in their slot (replacing
/// any count left). A return that runs while the thread is already panicking does not fire and
/// does not consume a count.
///
/// # Examples
///
/// See [`InjectedFault`].
pub fn panic_after_next_returns(count: u32) {
    AFTER_RETURN.with(|c| c.set(count));
}

/// Consumes one pending fault of `cell`, if any.
fn take_one(cell: &'static std::thread::LocalKey<Cell<u32>>) -> bool {
    cell.try_with(|c| {
        let pending = c.get();
        if pending > 0 {
            c.set(pending - 1);
        }
        pending > 0
    })
    .unwrap_or(false)
}

/// Called by `EngineResourceCheckout::take` once the guard is built.
pub(crate) fn after_take() {
    if take_one(&AFTER_TAKE) {
        std::panic::panic_any(InjectedFault::AfterTake);
    }
}

/// Called by the checkout's `Drop` once the box is back in the slot.
pub(crate) fn after_return() {
    if !std::thread::panicking() && take_one(&AFTER_RETURN) {
        std::panic::panic_any(InjectedFault::AfterReturn);
    }
}
