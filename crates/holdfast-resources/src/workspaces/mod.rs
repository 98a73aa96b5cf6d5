//! [`ContractionWorkspaces`]: the N-ary contraction scratch, leased without waiting (SPEC R7).
//!
//! # Locking and poison
//!
//! The scratch sits behind a `std::sync::Mutex` that is only ever taken with `try_lock`:
//! a lease either succeeds at once or fails with [`WorkspaceError::Busy`]; nothing here waits.
//! The lease is the one lock that may be held across a kernel (the "numerical leases" class of
//! the lock graph): for the duration of one N-ary call, never across a join or an admission
//! wait.
//!
//! If an operation panics while it holds the lease, the mutex is poisoned and every later lease
//! fails with [`WorkspaceError::Poisoned`]: the scratch is never reused silently after a panic.
//! [`ContractionWorkspaces::reset_poisoned`] (a management step) discards the scratch and
//! clears the poison.
//!
//! # Memory ordering
//!
//! The mutex's acquire/release is the only synchronisation; the scratch is plain data.

#[cfg(test)]
mod tests;

use std::any::Any;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, TryLockError};

use holdfast_tensor::{DType, Element};

use crate::WorkspaceError;

/// Growable scratch buffers, one per element type.
///
/// # Examples
///
/// ```
/// use holdfast_resources::ContractionWorkspaces;
///
/// let ws = ContractionWorkspaces::new();
/// let mut lease = ws.lease()?;
/// let s: &mut [f64] = lease.scratch(8);
/// s.fill(1.0);
/// assert_eq!(lease.capacity_bytes(), 64);
/// # Ok::<(), holdfast_resources::WorkspaceError>(())
/// ```
#[derive(Debug, Default)]
pub struct Workspace {
    f32: Vec<f32>,
    f64: Vec<f64>,
    c32: Vec<holdfast_tensor::c32>,
    c64: Vec<holdfast_tensor::c64>,
    leases: u64,
    grows: u64,
}

impl Workspace {
    /// Scratch of `len` elements with unspecified (initialised) contents; grows, zero-filled,
    /// when it is too short. The slice of one element type is reused from one call to the next.
    ///
    /// # Examples
    ///
    /// See [`Workspace`].
    pub fn scratch<T: Element>(&mut self, len: usize) -> &mut [T] {
        let any: &mut dyn Any = match T::DTYPE {
            DType::F32 => &mut self.f32,
            DType::C32 => &mut self.c32,
            DType::C64 => &mut self.c64,
            _ => &mut self.f64,
        };
        match any.downcast_mut::<Vec<T>>() {
            Some(v) => {
                if v.len() < len {
                    self.grows += 1;
                    v.resize(len, T::ZERO);
                }
                &mut v[..len]
            }
            None => &mut [],
        }
    }

    /// Capacity bytes of the scratch buffers.
    ///
    /// # Examples
    ///
    /// See [`Workspace`].
    pub fn capacity_bytes(&self) -> usize {
        self.f32.capacity() * 4
            + self.f64.capacity() * 8
            + self.c32.capacity() * 8
            + self.c64.capacity() * 16
    }

    /// Leases granted so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::ContractionWorkspaces;
    ///
    /// let ws = ContractionWorkspaces::new();
    /// drop(ws.lease()?);
    /// assert_eq!(ws.lease()?.leases(), 2);
    /// # Ok::<(), holdfast_resources::WorkspaceError>(())
    /// ```
    pub fn leases(&self) -> u64 {
        self.leases
    }

    /// Times a scratch buffer had to grow (a lease that did not grow one reused it).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::ContractionWorkspaces;
    ///
    /// let ws = ContractionWorkspaces::new();
    /// ws.lease()?.scratch::<f32>(4);
    /// ws.lease()?.scratch::<f32>(2);
    /// assert_eq!(ws.lease()?.grows(), 1);
    /// # Ok::<(), holdfast_resources::WorkspaceError>(())
    /// ```
    pub fn grows(&self) -> u64 {
        self.grows
    }

    /// Releases the scratch memory (the counters stay).
    pub(crate) fn release(&mut self) {
        self.f32 = Vec::new();
        self.f64 = Vec::new();
        self.c32 = Vec::new();
        self.c64 = Vec::new();
    }
}

/// The engine's N-ary contraction scratch (SPEC R7).
///
/// Leased with `try_lock` only: a lease succeeds at once or fails with
/// [`WorkspaceError::Busy`]. A panic during a lease poisons it: every later lease fails with
/// [`WorkspaceError::Poisoned`] until [`reset_poisoned`](Self::reset_poisoned) discards the
/// scratch, so it is never reused silently after a panic.
///
/// # Examples
///
/// ```
/// use std::panic::{AssertUnwindSafe, catch_unwind};
/// use holdfast_resources::{ContractionWorkspaces, WorkspaceError};
///
/// let ws = ContractionWorkspaces::new();
/// let _ = catch_unwind(AssertUnwindSafe(|| {
///     let _lease = ws.lease().unwrap();
///     panic!("a contraction fails while holding the scratch");
/// }));
/// assert_eq!(ws.lease().err(), Some(WorkspaceError::Poisoned));
/// assert!(ws.reset_poisoned()?);
/// assert!(ws.lease().is_ok());
/// # Ok::<(), WorkspaceError>(())
/// ```
#[derive(Debug, Default)]
pub struct ContractionWorkspaces {
    inner: Mutex<Workspace>,
}

impl ContractionWorkspaces {
    /// Empty scratch (allocates nothing until used).
    ///
    /// # Examples
    ///
    /// See [`ContractionWorkspaces`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Leases the scratch for one N-ary call, without waiting.
    ///
    /// # Errors
    ///
    /// [`WorkspaceError::Busy`] while another lease is alive; [`WorkspaceError::Poisoned`] after
    /// an operation panicked holding a lease, until [`reset_poisoned`](Self::reset_poisoned).
    ///
    /// # Examples
    ///
    /// See [`WorkspaceError`].
    #[inline]
    pub fn lease(&self) -> Result<WorkspaceLease<'_>, WorkspaceError> {
        let mut guard = self.try_guard()?;
        guard.leases += 1;
        Ok(WorkspaceLease { guard })
    }

    /// True when a panic during a lease has poisoned the scratch.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::ContractionWorkspaces;
    ///
    /// assert!(!ContractionWorkspaces::new().is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Discards the scratch of a poisoned lease and clears the poison; returns whether it was
    /// poisoned.
    ///
    /// # Errors
    ///
    /// [`WorkspaceError::Busy`] while a lease is alive.
    ///
    /// # Examples
    ///
    /// See [`ContractionWorkspaces`].
    pub fn reset_poisoned(&self) -> Result<bool, WorkspaceError> {
        match self.inner.try_lock() {
            Ok(_) => Ok(false),
            Err(TryLockError::WouldBlock) => Err(WorkspaceError::Busy),
            Err(TryLockError::Poisoned(e)) => {
                e.into_inner().release();
                self.inner.clear_poison();
                Ok(true)
            }
        }
    }

    /// The scratch, locked without waiting (management resolves this before changing
    /// anything).
    pub(crate) fn try_guard(&self) -> Result<MutexGuard<'_, Workspace>, WorkspaceError> {
        match self.inner.try_lock() {
            Ok(g) => Ok(g),
            Err(TryLockError::WouldBlock) => Err(WorkspaceError::Busy),
            Err(TryLockError::Poisoned(_)) => Err(WorkspaceError::Poisoned),
        }
    }
}

/// A lease of the [`ContractionWorkspaces`] for one N-ary call; derefs to [`Workspace`].
///
/// # Examples
///
/// See [`ContractionWorkspaces`].
#[derive(Debug)]
#[must_use = "the scratch is released when the lease is dropped"]
pub struct WorkspaceLease<'a> {
    guard: MutexGuard<'a, Workspace>,
}

impl Deref for WorkspaceLease<'_> {
    type Target = Workspace;

    fn deref(&self) -> &Workspace {
        &self.guard
    }
}

impl DerefMut for WorkspaceLease<'_> {
    fn deref_mut(&mut self) -> &mut Workspace {
        &mut self.guard
    }
}
