//! The engine's resource slot and the checkout that moves its resources out by value
//! (SPEC R2–R4).
//!
//! # Protocol
//!
//! - [`EngineResourceSlot`] is created with the engine and starts [`ResourceSlot::Ready`]; a
//!   [`ResourceSlot::CheckedOut`] slot therefore always means "checked out", never "not yet
//!   created".
//! - [`EngineResourceCheckout::take`] locks the slot mutex, moves the `Box<EngineResources>` out
//!   (leaving `CheckedOut`) and unlocks: a pointer move, no allocation. It returns `None` when
//!   the slot is already checked out; it never waits for the resources to come back.
//! - Dropping the checkout (on success, on an error path or during unwinding) locks the slot
//!   again and moves the box back, exactly once: the box lives in an `Option` that `Drop`
//!   empties. `Drop` never panics (the only exception is the test seam of the
//!   `fault-injection` feature, which panics *after* the box is back and never during an
//!   unwind).
//! - Checkout and return **recover** a poisoned slot mutex (the slot's state is a plain enum
//!   that every critical section leaves consistent); management **reports** poison
//!   ([`ManagementError::Poisoned`](crate::ManagementError::Poisoned)) until
//!   [`EngineResourceSlot::clear_poison`].
//!
//! # Locking and memory ordering
//!
//! The slot mutex is held only for `O(1)` moves (take, return) or a short management step; it
//! is never held while an operation, kernel, join or admission wait runs, and nothing else is
//! locked while it is held (except, by management, the N-ary scratch with a non-waiting
//! `try_lock`). The mutex's acquire/release orders the box's contents between the thread that
//! returns it and the thread that takes it next. Counters ([`SlotCounters`]) are plain integers
//! updated under the lock, not atomics.

#[cfg(test)]
mod tests;

use std::mem;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

use crate::EngineResources;

/// The state of an engine's resources.
///
/// # Examples
///
/// ```
/// use holdfast_resources::{EngineResources, ResourceSlot};
///
/// let slot = ResourceSlot::Ready(Box::new(EngineResources::default()));
/// assert!(slot.is_ready());
/// assert!(!ResourceSlot::CheckedOut.is_ready());
/// ```
#[derive(Debug)]
pub enum ResourceSlot {
    /// The resources are in the slot.
    Ready(Box<EngineResources>),
    /// A checkout holds them.
    CheckedOut,
}

impl ResourceSlot {
    /// True for [`ResourceSlot::Ready`].
    ///
    /// # Examples
    ///
    /// See [`ResourceSlot`].
    pub fn is_ready(&self) -> bool {
        matches!(self, ResourceSlot::Ready(_))
    }
}

/// Counters of a slot, for tests and telemetry (plain integers updated under the slot mutex).
///
/// # Examples
///
/// ```
/// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
///
/// let slot = EngineResourceSlot::new(EngineResources::default());
/// drop(EngineResourceCheckout::take(&slot));
/// let c = slot.counters();
/// assert_eq!((c.takes, c.returns, c.lock_acquisitions), (1, 1, 2));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlotCounters {
    /// Acquisitions of the slot mutex by checkouts, returns and management (reading the
    /// counters is not counted).
    pub lock_acquisitions: u64,
    /// Successful checkouts.
    pub takes: u64,
    /// Returns of a checked-out box.
    pub returns: u64,
    /// Checkouts refused because the slot was checked out.
    pub refused_takes: u64,
    /// Checkouts or returns that recovered a poisoned slot mutex.
    pub poison_recoveries: u64,
}

/// What the slot mutex protects.
#[derive(Debug)]
pub(crate) struct SlotState {
    pub(crate) slot: ResourceSlot,
    pub(crate) counters: SlotCounters,
}

/// An engine's resources behind a short mutex: `Ready` while idle, `CheckedOut` while a session
/// holds them.
///
/// The mutex is held only for `O(1)` moves (checkout and return) or a short management step,
/// never while an operation runs. Checkouts recover a poisoned mutex; management reports it.
///
/// # Examples
///
/// ```
/// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
///
/// let slot = EngineResourceSlot::new(EngineResources::default());
/// {
///     let mut checkout = EngineResourceCheckout::take(&slot).expect("ready");
///     checkout.runtime_clears += 1; // the resources, by value, no lock held
///     assert!(EngineResourceCheckout::take(&slot).is_none());
/// } // returned here
/// assert_eq!(slot.counters().returns, 1);
/// ```
#[derive(Debug)]
pub struct EngineResourceSlot {
    pub(crate) state: Mutex<SlotState>,
}

impl EngineResourceSlot {
    /// A `Ready` slot holding `resources`.
    ///
    /// # Examples
    ///
    /// See [`EngineResourceSlot`].
    pub fn new(resources: EngineResources) -> Self {
        EngineResourceSlot {
            state: Mutex::new(SlotState {
                slot: ResourceSlot::Ready(Box::new(resources)),
                counters: SlotCounters::default(),
            }),
        }
    }

    /// The counters so far (recovers a poisoned mutex; not counted as an acquisition).
    ///
    /// # Examples
    ///
    /// See [`SlotCounters`].
    pub fn counters(&self) -> SlotCounters {
        match self.state.lock() {
            Ok(g) => g.counters,
            Err(p) => p.into_inner().counters,
        }
    }

    /// True while a checkout holds the resources (recovers a poisoned mutex).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// let c = EngineResourceCheckout::take(&slot);
    /// assert!(slot.is_checked_out());
    /// drop(c);
    /// assert!(!slot.is_checked_out());
    /// ```
    pub fn is_checked_out(&self) -> bool {
        match self.state.lock() {
            Ok(g) => !g.slot.is_ready(),
            Err(p) => !p.into_inner().slot.is_ready(),
        }
    }

    /// True when a panic poisoned the slot mutex (management reports it until
    /// [`clear_poison`](Self::clear_poison)).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceSlot, EngineResources};
    ///
    /// assert!(!EngineResourceSlot::new(EngineResources::default()).is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.state.is_poisoned()
    }

    /// Poisons the slot mutex by panicking while holding it (for tests of the poison paths;
    /// the slot's state stays consistent).
    #[doc(hidden)]
    pub fn poison_for_tests(&self) {
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let _g = self.state.lock();
                panic!("poisoning the engine resource slot for a test");
            })
            .join()
        });
    }

    /// Locks the slot for a checkout or return: counts the acquisition and recovers poison.
    #[inline]
    fn lock_recover(&self) -> MutexGuard<'_, SlotState> {
        let mut g = match self.state.lock() {
            Ok(g) => g,
            Err(p) => {
                let mut g = p.into_inner();
                g.counters.poison_recoveries += 1;
                g
            }
        };
        g.counters.lock_acquisitions += 1;
        g
    }

    /// Moves the box out, or `None` when checked out.
    #[inline]
    fn take_box(&self) -> Option<Box<EngineResources>> {
        let mut g = self.lock_recover();
        match mem::replace(&mut g.slot, ResourceSlot::CheckedOut) {
            ResourceSlot::Ready(b) => {
                g.counters.takes += 1;
                Some(b)
            }
            ResourceSlot::CheckedOut => {
                g.counters.refused_takes += 1;
                None
            }
        }
    }

    /// Moves the box back.
    #[inline]
    fn return_box(&self, resources: Box<EngineResources>) {
        let mut g = self.lock_recover();
        // The slot is `CheckedOut` here: only a checkout's `Drop` returns, once.
        let previous = mem::replace(&mut g.slot, ResourceSlot::Ready(resources));
        g.counters.returns += 1;
        drop(g);
        drop(previous);
    }
}

/// The engine's resources checked out by value from an [`EngineResourceSlot`] (borrowed form);
/// derefs to [`EngineResources`] and returns them on drop, exactly once.
///
/// # Examples
///
/// ```
/// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
///
/// let slot = EngineResourceSlot::new(EngineResources::default());
/// let run = || -> Result<(), &'static str> {
///     let _checkout = EngineResourceCheckout::take(&slot).ok_or("busy")?;
///     Err("the operation failed") // the checkout is returned on this path too
/// };
/// assert!(run().is_err());
/// assert_eq!(slot.counters().returns, 1);
/// assert!(EngineResourceCheckout::take(&slot).is_some());
/// ```
#[derive(Debug)]
#[must_use = "the resources go back to the slot when the checkout is dropped"]
pub struct EngineResourceCheckout<'a> {
    slot: &'a EngineResourceSlot,
    /// `Some` from `take` until `Drop` moves it back.
    resources: Option<Box<EngineResources>>,
}

impl<'a> EngineResourceCheckout<'a> {
    /// Checks the resources out of `slot` under a short lock, without allocating; `None` when
    /// they are already checked out (it never waits for them). A poisoned slot mutex is
    /// recovered.
    ///
    /// # Examples
    ///
    /// See [`EngineResourceCheckout`].
    #[inline]
    pub fn take(slot: &'a EngineResourceSlot) -> Option<Self> {
        let resources = slot.take_box()?;
        let checkout = EngineResourceCheckout { slot, resources: Some(resources) };
        #[cfg(feature = "fault-injection")]
        crate::fault::after_take();
        Some(checkout)
    }

    /// The slot the resources go back to.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
    ///
    /// let slot = EngineResourceSlot::new(EngineResources::default());
    /// let c = EngineResourceCheckout::take(&slot).expect("ready");
    /// assert!(std::ptr::eq(c.slot(), &slot));
    /// ```
    pub fn slot(&self) -> &'a EngineResourceSlot {
        self.slot
    }
}

impl Deref for EngineResourceCheckout<'_> {
    type Target = EngineResources;

    #[inline]
    #[allow(clippy::expect_used, reason = "invariant: `resources` is Some until Drop")]
    fn deref(&self) -> &EngineResources {
        self.resources.as_deref().expect("a live checkout holds its resources")
    }
}

impl DerefMut for EngineResourceCheckout<'_> {
    #[inline]
    #[allow(clippy::expect_used, reason = "invariant: `resources` is Some until Drop")]
    fn deref_mut(&mut self) -> &mut EngineResources {
        self.resources.as_deref_mut().expect("a live checkout holds its resources")
    }
}

impl Drop for EngineResourceCheckout<'_> {
    fn drop(&mut self) {
        if let Some(resources) = self.resources.take() {
            self.slot.return_box(resources);
            #[cfg(feature = "fault-injection")]
            crate::fault::after_return();
        }
    }
}
