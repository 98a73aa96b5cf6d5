//! `CallerAffinityGuard`: narrows the calling thread to an engine's CPUs for a scope and restores
//! its binding afterwards (SPEC F1, F2).
//!
//! Invariants:
//! - the guard never widens a binding: it binds to `current ∩ domain`, never to `domain`;
//! - it makes no system call when nothing would change: a domain covering the process's allowed
//!   set is skipped without even reading the binding (every binding is a subset of the allowed
//!   set); otherwise the binding is read once and written only if the intersection differs;
//! - it records the binding to restore only when it changed it, so an unchanged guard's `finish`
//!   and drop do nothing;
//! - it is `!Send`: a binding belongs to the thread that set it;
//! - `Drop` never panics: a failed restoration is retried once, best-effort, and reported on
//!   stderr with write errors ignored (`eprintln!` could panic while unwinding and abort).

use crate::backend;
use crate::error::AffinityError;
use crate::fault;
use crate::topology::Topology;
use holdfast_cpuset::CpuSet;
use std::fmt;
use std::io::Write;
use std::marker::PhantomData;

/// Narrows the calling thread's CPU binding for its lifetime.
///
/// `!Send` and `!Sync`:
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<holdfast_affinity::CallerAffinityGuard>();
/// ```
///
/// # Examples
///
/// ```
/// use holdfast_affinity::{thread_binding, CallerAffinityGuard, CpuSet};
///
/// let before = thread_binding()?;
/// let domain = CpuSet::from_cpus([before.first().unwrap()])?; // one CPU the caller may use
/// let guard = CallerAffinityGuard::enter(&domain)?;
/// assert_eq!(thread_binding()?, before & domain);
/// guard.finish()?;
/// assert_eq!(thread_binding()?, before);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "the binding is restored as soon as the guard is dropped"]
pub struct CallerAffinityGuard {
    /// The binding to restore; `None` when the guard changed nothing or already restored it.
    /// Boxed so that the guard (and `Result<Self, _>`) is one word: the unchanged path moves
    /// nothing large, and the box is only allocated on the path that pays for system calls.
    saved: Option<Box<CpuSet>>,
    /// Makes the guard `!Send + !Sync`.
    _not_send: PhantomData<*const ()>,
}

impl CallerAffinityGuard {
    /// Narrows the calling thread to `current ∩ cpus`.
    ///
    /// # Errors
    ///
    /// - [`AffinityError::EmptyIntersection`] when the thread may run on none of `cpus` (the
    ///   binding is left as it was);
    /// - [`AffinityError::Topology`], [`AffinityError::Query`] or [`AffinityError::Bind`] when
    ///   the topology, the binding read or the binding change fails (the binding is left as it
    ///   was).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::{AffinityError, CallerAffinityGuard, CpuSet, Topology};
    ///
    /// // A domain the caller cannot run on is a typed error, not an empty binding.
    /// let outside = CpuSet::from_cpus([CpuSet::MAX_CPUS - 1])?;
    /// if !Topology::get()?.allowed().contains(CpuSet::MAX_CPUS - 1) {
    ///     let err = CallerAffinityGuard::enter(&outside).unwrap_err();
    ///     assert!(matches!(err, AffinityError::EmptyIntersection { .. }));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn enter(cpus: &CpuSet) -> Result<Self, AffinityError> {
        if Topology::get()?.is_covered_by(cpus) {
            return Ok(Self::unchanged());
        }
        Self::enter_narrowing(cpus)
    }

    /// The slow path of [`CallerAffinityGuard::enter`]: read, intersect, maybe bind.
    #[cold]
    fn enter_narrowing(cpus: &CpuSet) -> Result<Self, AffinityError> {
        let current = backend::thread_binding()?;
        let narrowed = current & *cpus;
        if narrowed.is_empty() {
            return Err(AffinityError::EmptyIntersection {
                current: Box::new(current),
                requested: Box::new(*cpus),
            });
        }
        if narrowed == current {
            return Ok(Self::unchanged());
        }
        backend::bind_thread(&narrowed)
            .map_err(|reason| AffinityError::Bind { target: Box::new(narrowed), reason })?;
        Ok(Self { saved: Some(Box::new(current)), _not_send: PhantomData })
    }

    const fn unchanged() -> Self {
        Self { saved: None, _not_send: PhantomData }
    }

    /// Whether entering changed the thread's binding (and finishing will restore it).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::{CallerAffinityGuard, Topology};
    /// let guard = CallerAffinityGuard::enter(Topology::get()?.allowed())?;
    /// assert!(!guard.changed());
    /// # Ok::<(), holdfast_affinity::AffinityError>(())
    /// ```
    #[must_use]
    pub const fn changed(&self) -> bool {
        self.saved.is_some()
    }

    /// Restores the binding the thread had at `enter`: the one fallible cleanup step.
    ///
    /// On failure the guard is dropped as `finish` returns, and its drop retries the restoration
    /// once (best-effort, see the type's docs); the error reports the first attempt.
    ///
    /// # Errors
    ///
    /// [`AffinityError::Restore`] when the binding cannot be restored.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::{CallerAffinityGuard, Topology};
    /// CallerAffinityGuard::enter(Topology::get()?.allowed())?.finish()?;
    /// # Ok::<(), holdfast_affinity::AffinityError>(())
    /// ```
    #[inline]
    pub fn finish(mut self) -> Result<(), AffinityError> {
        if self.saved.is_none() {
            // Nothing to restore and nothing owned: skip the drop glue on the hot path.
            std::mem::forget(self);
            return Ok(());
        }
        self.restore()
    }

    /// One restoration attempt; clears `saved` on success.
    fn restore(&mut self) -> Result<(), AffinityError> {
        let Some(target) = &self.saved else { return Ok(()) };
        if fault::take_restore_failure() {
            return Err(AffinityError::Restore {
                target: target.clone(),
                reason: "injected restore failure (holdfast_affinity::fault)".to_owned(),
            });
        }
        backend::bind_thread(target)
            .map_err(|reason| AffinityError::Restore { target: target.clone(), reason })?;
        self.saved = None;
        Ok(())
    }
}

impl Drop for CallerAffinityGuard {
    #[inline]
    fn drop(&mut self) {
        if self.saved.is_some()
            && let Err(err) = self.restore()
        {
            // Best-effort diagnostics: ignore write errors, never panic.
            let _ = writeln!(std::io::stderr(), "holdfast-affinity: {err}");
        }
    }
}

impl fmt::Debug for CallerAffinityGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallerAffinityGuard").field("restores", &self.saved).finish()
    }
}
