//! Execution owners and the thread-local owner marker (SPEC A3).
//!
//! An [`OwnerId`] names one root execution (a held session, a scoped entry, a shared scope). The
//! marker is a thread-local `Option<OwnerId>`: set while an execution is active on the thread,
//! restored by [`ExecutionOwnerGuard`] on drop. The arbiter reads it to refuse re-entry before any
//! blocking step (A4).
//!
//! Invariants:
//! - owner ids handed out by [`fresh_execution_owner`] are unique in the process and never zero;
//! - an [`ExecutionOwnerGuard`] is `!Send`: it restores the marker of the thread that set it;
//! - guards nest LIFO: dropping one restores exactly the value seen at its `enter`.
//!
//! # Memory ordering
//!
//! The id counter is a `Relaxed` `fetch_add`: only uniqueness is needed, and an atomic RMW gives
//! it in every ordering. The marker is thread-local and needs no ordering at all.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// The identity of one root execution, unique in the process.
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::fresh_execution_owner;
///
/// let a = fresh_execution_owner().expect("no execution active on this thread");
/// let b = fresh_execution_owner().expect("no execution active on this thread");
/// assert_ne!(a, b);
/// assert!(a.get() > 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(NonZeroU64);

impl OwnerId {
    /// The raw id.
    ///
    /// # Examples
    ///
    /// ```
    /// let owner = holdfast_arbiter::fresh_execution_owner().unwrap();
    /// assert_ne!(owner.get(), 0);
    /// ```
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Debug for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OwnerId({})", self.0)
    }
}

impl fmt::Display for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Next owner id; starts at 1 so that the `NonZeroU64` conversion only fails after 2^64 ids.
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The execution owner active on this thread, if any.
    static EXECUTION_OWNER: Cell<Option<OwnerId>> = const { Cell::new(None) };
}

/// A new, unique owner id, or `None` when an execution is already active on this thread (a nested
/// root must not be minted: the caller should refuse with `Reentered` or join the active owner).
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{fresh_execution_owner, ExecutionOwnerGuard};
///
/// let owner = fresh_execution_owner().unwrap();
/// let _guard = ExecutionOwnerGuard::enter(owner);
/// assert_eq!(fresh_execution_owner(), None);
/// ```
#[must_use]
pub fn fresh_execution_owner() -> Option<OwnerId> {
    if current_owner().is_some() {
        return None;
    }
    NonZeroU64::new(NEXT_OWNER.fetch_add(1, Ordering::Relaxed)).map(OwnerId)
}

/// The owner whose execution is active on this thread, if any.
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{current_owner, fresh_execution_owner, ExecutionOwnerGuard};
///
/// assert_eq!(current_owner(), None);
/// let owner = fresh_execution_owner().unwrap();
/// let guard = ExecutionOwnerGuard::enter(owner);
/// assert_eq!(current_owner(), Some(owner));
/// drop(guard);
/// assert_eq!(current_owner(), None);
/// ```
#[must_use]
#[inline]
pub fn current_owner() -> Option<OwnerId> {
    EXECUTION_OWNER.with(Cell::get)
}

/// Whether an execution (held session, scoped entry, shared scope) is active on this thread.
///
/// # Examples
///
/// ```
/// assert!(!holdfast_arbiter::has_active_execution());
/// ```
#[must_use]
#[inline]
pub fn has_active_execution() -> bool {
    current_owner().is_some()
}

/// Sets this thread's owner marker for its lifetime and restores the previous value on drop.
///
/// `!Send` and `!Sync`: the marker belongs to the thread that set it.
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<holdfast_arbiter::ExecutionOwnerGuard>();
/// ```
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::{current_owner, fresh_execution_owner, ExecutionOwnerGuard};
///
/// let outer = fresh_execution_owner().unwrap();
/// let inner = fresh_execution_owner().unwrap();
/// let a = ExecutionOwnerGuard::enter(outer);
/// {
///     let _b = ExecutionOwnerGuard::enter(inner);
///     assert_eq!(current_owner(), Some(inner));
/// }
/// assert_eq!(current_owner(), Some(outer));
/// drop(a);
/// assert_eq!(current_owner(), None);
/// ```
#[must_use = "the marker is restored as soon as the guard is dropped"]
pub struct ExecutionOwnerGuard {
    owner: OwnerId,
    previous: Option<OwnerId>,
    /// Makes the guard `!Send + !Sync`.
    _not_send: PhantomData<*const ()>,
}

impl ExecutionOwnerGuard {
    /// Marks `owner` as the execution active on this thread until the guard is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, has_active_execution, ExecutionOwnerGuard};
    ///
    /// let guard = ExecutionOwnerGuard::enter(fresh_execution_owner().unwrap());
    /// assert!(has_active_execution());
    /// drop(guard);
    /// assert!(!has_active_execution());
    /// ```
    #[inline]
    pub fn enter(owner: OwnerId) -> Self {
        let previous = EXECUTION_OWNER.with(|cell| cell.replace(Some(owner)));
        Self { owner, previous, _not_send: PhantomData }
    }

    /// The owner this guard marks.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, ExecutionOwnerGuard};
    /// let owner = fresh_execution_owner().unwrap();
    /// assert_eq!(ExecutionOwnerGuard::enter(owner).owner(), owner);
    /// ```
    #[must_use]
    pub const fn owner(&self) -> OwnerId {
        self.owner
    }

    /// The marker value this guard restores on drop.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::{fresh_execution_owner, ExecutionOwnerGuard};
    /// assert_eq!(ExecutionOwnerGuard::enter(fresh_execution_owner().unwrap()).previous(), None);
    /// ```
    #[must_use]
    pub const fn previous(&self) -> Option<OwnerId> {
        self.previous
    }
}

impl Drop for ExecutionOwnerGuard {
    #[inline]
    fn drop(&mut self) {
        // `try_with`: during thread teardown the key may already be gone; nothing to restore then.
        let _ = EXECUTION_OWNER.try_with(|cell| cell.set(self.previous));
    }
}

impl fmt::Debug for ExecutionOwnerGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutionOwnerGuard")
            .field("owner", &self.owner)
            .field("previous", &self.previous)
            .finish()
    }
}

#[cfg(test)]
mod tests;
