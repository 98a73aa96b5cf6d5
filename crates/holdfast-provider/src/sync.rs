//! The synchronisation primitives of the lane crew (`lanes/crew.rs`, `lanes/sleeper.rs`), in one
//! place.
//!
//! Every atomic, fence, cell shared between threads, park and unpark of the crew goes through
//! this module, so that the model-checking build (`RUSTFLAGS="--cfg loom" cargo test --lib loom`)
//! can swap them for loom's instrumented versions, as the arbiter's `sync.rs` and tokio's
//! `loom/mod.rs` do. Only `cfg(all(test, loom))` switches: an ordinary build with `--cfg loom`
//! (of a downstream crate, say) keeps std.
//!
//! Loom models `SeqCst` fences faithfully but treats `SeqCst` loads and stores as `AcqRel`, so a
//! protocol that needs a single total order (the sleeper's announce/re-check against the waker's
//! write/read) states it with [`fence`]`(SeqCst)`, which both builds honour.
//!
//! [`OnceLock`] stays std's in both builds: a sleeper's waiting thread is registered once, by
//! that thread, before it first waits, and read by wakers only to unpark it; its ordering is not
//! part of any protocol the model checks.
//!
//! Invariant: the crew's modules name no `std::sync::atomic` type, `std::cell::UnsafeCell` or
//! `std::thread::{park, current}` directly. The domain's two atomics stay std's: a start-up
//! counter of unbound workers, and the crew flag, one compare-exchange that admits one crew at a
//! time and orders nothing else.

pub(crate) use std::sync::OnceLock;
pub(crate) use std::sync::atomic::Ordering;

#[cfg(not(all(test, loom)))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize, fence};
#[cfg(not(all(test, loom)))]
pub(crate) use std::thread::{Thread, current, park};

#[cfg(all(test, loom))]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(all(test, loom))]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize, fence};
#[cfg(all(test, loom))]
pub(crate) use loom::thread::{Thread, current, park};

/// True in the model-checking build: waiters then skip their timed spin and yield phases and
/// park at once (loom explores every interleaving of the park protocol instead).
pub(crate) const MODEL: bool = cfg!(all(test, loom));

/// std's `UnsafeCell` behind loom's closure-scoped access API (`with`, `with_mut`), so that the
/// model build can check every access for a data race.
#[cfg(not(all(test, loom)))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(all(test, loom)))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer for reading the value.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer for writing the value.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }

    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}
