//! The entries of [`CpuBackend`]: held roots, scoped entries (three arms) and shared scopes.
//!
//! Every check that can refuse an entry as a re-entry runs before the first step that can block
//! (A4): child handle, open shared scope, owner marker.

use std::sync::Arc;
use std::time::{Duration, Instant};

use holdfast_arbiter::{
    AdmissionError, AdmissionMode, ResourcePermit, current_owner, fresh_execution_owner,
    has_active_execution,
};
use holdfast_provider::CpuOperationEntry;

use crate::admission::{Admission, EnterError, SharedAdmission};
use crate::error::ReentryReason;
use crate::held::OpenedAdmission;
use crate::scope::{ScopeFrame, enter_scope, open_scope, scope_is_open};
use crate::view::{OpCounters, ViewOrigin, with_view};
use crate::{CpuBackend, CpuExecSession, CpuHeldSession, CpuHeldSessionError, SessionEntryError};

impl CpuBackend {
    /// Opens a held session, waiting in FIFO order while another owner holds the engine.
    ///
    /// The session owns the admission, the engine's resources, this thread's owner marker and the
    /// narrowed CPU affinity until [`close`](CpuHeldSession::close) or drop.
    ///
    /// # Errors
    ///
    /// [`SessionEntryError::Reentered`] at once (before any wait) when this thread already runs an
    /// execution, inside a shared scope, or on a child handle; [`SessionEntryError::ResourcePoisoned`]
    /// for poisoned admission state; [`SessionEntryError::Contended`] when this thread is a pool
    /// worker that would have to wait; [`SessionEntryError::Executor`] when the affinity cannot be
    /// narrowed.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::CpuBackend;
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let session = backend.open_session()?;
    /// assert_eq!(session.stats().operations, 0);
    /// session.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_session(&self) -> Result<CpuHeldSession<'_>, SessionEntryError> {
        self.open_with(AdmissionMode::Wait)
    }

    /// Opens a held session if the engine is free now.
    ///
    /// # Errors
    ///
    /// [`SessionEntryError::Contended`] (naming the holder) when the engine is held or queued
    /// for; otherwise as [`open_session`](Self::open_session).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, SessionEntryError};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let held = backend.try_open_session()?;
    /// let other = backend.clone();
    /// let refused = std::thread::spawn(move || matches!(
    ///     other.try_open_session(), Err(SessionEntryError::Contended { .. })
    /// )).join().unwrap();
    /// assert!(refused);
    /// held.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_open_session(&self) -> Result<CpuHeldSession<'_>, SessionEntryError> {
        self.open_with(AdmissionMode::Try)
    }

    /// Opens a held session, waiting at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`SessionEntryError::TimedOut`] with the time waited; otherwise as
    /// [`open_session`](Self::open_session).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use holdfast_session::{CpuBackend, SessionEntryError};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let held = backend.open_session()?;
    /// let other = backend.clone();
    /// let timed_out = std::thread::spawn(move || {
    ///     matches!(
    ///         other.open_session_timeout(Duration::from_millis(20)),
    ///         Err(SessionEntryError::TimedOut { .. })
    ///     )
    /// }).join().unwrap();
    /// assert!(timed_out, "the first session holds the engine past the deadline");
    /// held.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_session_timeout(
        &self,
        timeout: Duration,
    ) -> Result<CpuHeldSession<'_>, SessionEntryError> {
        self.open_with(AdmissionMode::timeout(timeout))
    }

    /// The one implementation of root admission, affinity, owner marker and checkout (S2).
    fn open_with(&self, mode: AdmissionMode) -> Result<CpuHeldSession<'_>, SessionEntryError> {
        if self.child.is_some() {
            return Err(reentered(ReentryReason::ChildHandle));
        }
        if scope_is_open() {
            return Err(reentered(ReentryReason::InsideSharedScope));
        }
        if has_active_execution() {
            return Err(reentered(ReentryReason::ExecutionActive));
        }
        let owner = fresh_execution_owner().ok_or(reentered(ReentryReason::ExecutionActive))?;
        let engine = &*self.engine;
        let syscalls_before = holdfast_affinity::system_calls();
        // Uncontended admission first: it is granted exactly when a waiting one would be granted
        // at once (no conflicting holder or waiter), and it reads no clock. Only a request that
        // has to queue measures its wait.
        let (permit, admission_wait) =
            match engine.arbiter.acquire(engine.domain.cpus(), owner, AdmissionMode::Try) {
                Ok(permit) => (permit, Duration::ZERO),
                Err(AdmissionError::Contended { .. }) if mode != AdmissionMode::Try => {
                    let started = Instant::now();
                    let permit = engine.arbiter.acquire(engine.domain.cpus(), owner, mode)?;
                    (permit, started.elapsed())
                }
                Err(e) => return Err(e.into()),
            };
        let admission = enter_engine(permit, engine)?;
        Ok(CpuHeldSession::new(OpenedAdmission {
            backend: self,
            admission,
            admission_wait,
            syscalls_before,
        }))
    }

    /// Runs `f` with one operation view, admitted for this call only.
    ///
    /// The arm depends on where it is called (module docs): with no scope open, it opens a held
    /// session, runs `f` through it and closes it (S2); inside a shared scope of this engine it
    /// uses the scope's admission; on a child handle it joins the parent's owner with private
    /// resources and never waits.
    ///
    /// # Error precedence (S7)
    ///
    /// `f`'s value is returned unchanged inside `Ok`, whatever it is (a `Result` of the
    /// caller's own error type included). If releasing fails (the caller's CPU affinity cannot be
    /// restored), the call returns `Err(SessionEntryError::Executor)` **even though `f` ran**,
    /// and `f`'s value is dropped: a restoration failure outranks the work's result, because the
    /// calling thread is left on the wrong CPUs. Resources, owner marker and admission are
    /// released in every case.
    ///
    /// # Errors
    ///
    /// As [`open_session`](Self::open_session) before `f` runs; [`SessionEntryError::Executor`]
    /// after it, as above. On a child handle: [`SessionEntryError::Reentered`] when the parent's
    /// execution has ended, [`SessionEntryError::Contended`] when the child's private resources are
    /// in use by another entry of the same child.
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates after everything is released.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f64>::from_vec([3], vec![1.0, 2.0, 3.0])?;
    /// let s = backend.with_backend_session(|v| v.sum(a.read(), &[0]))??;
    /// assert_eq!(s.as_slice(), &[6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_backend_session<R>(
        &self,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R,
    ) -> Result<R, SessionEntryError> {
        if let Some(child) = &self.child {
            return self.run_child(child, f);
        }
        if let Some((engine, _, permit)) = open_scope()
            && engine == self.engine.id()
        {
            return self.run_shared(permit, f);
        }
        let mut session = self.open_session()?;
        let value = session.with_session(f);
        match session.close() {
            Ok(_) => Ok(value),
            Err(CpuHeldSessionError::Restore { source }) => {
                Err(SessionEntryError::Executor { source })
            }
        }
    }

    /// The shared-scope arm: the scope's admission, the engine's resources for one callback.
    fn run_shared<R>(
        &self,
        permit: Arc<ResourcePermit>,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R,
    ) -> Result<R, SessionEntryError> {
        if has_active_execution() {
            return Err(reentered(ReentryReason::ExecutionActive));
        }
        let engine = &self.engine;
        let mut admission: SharedAdmission<'_> = enter_engine(permit, engine)?;
        let mut counters = OpCounters::default();
        let entry = CpuOperationEntry::new(&engine.domain, engine.mode);
        let origin = ViewOrigin { engine, owner: admission.owner() };
        let value = with_view(&mut admission, entry, &mut counters, origin, f);
        admission.release().map(|()| value).map_err(|source| SessionEntryError::Executor { source })
    }

    /// Holds one admission of this engine for every scoped entry inside `f` (a shared scope).
    ///
    /// Inside `f`, [`with_backend_session`](Self::with_backend_session) on this engine uses the
    /// scope's admission instead of queueing again, and [`current_cpu_execution`](crate::current_cpu_execution)
    /// reports `SharedScope` between entries. A held root cannot be opened inside (S3). A nested
    /// scope on the same engine reuses this one.
    ///
    /// # Errors
    ///
    /// [`SessionEntryError::Reentered`] when this thread runs an execution, has a scope open on
    /// another engine, or this is a child handle; otherwise as [`open_session`](Self::open_session).
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates after the scope's admission is released.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, SessionEntryError, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
    /// let (x, refused) = backend.with_execution_scope(|| {
    ///     let x = backend.with_backend_session(|v| v.add(a.read(), a.read()));
    ///     let refused = matches!(backend.open_session(), Err(SessionEntryError::Reentered { .. }));
    ///     (x, refused)
    /// })?;
    /// assert_eq!(x??.as_slice(), &[2.0, 4.0]);
    /// assert!(refused);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_execution_scope<R>(&self, f: impl FnOnce() -> R) -> Result<R, SessionEntryError> {
        if self.child.is_some() {
            return Err(reentered(ReentryReason::ChildHandle));
        }
        if has_active_execution() {
            return Err(reentered(ReentryReason::ExecutionActive));
        }
        if let Some((engine, ..)) = open_scope() {
            return if engine == self.engine.id() {
                Ok(f())
            } else {
                Err(reentered(ReentryReason::InsideSharedScope))
            };
        }
        let owner = fresh_execution_owner().ok_or(reentered(ReentryReason::ExecutionActive))?;
        let engine = &*self.engine;
        let permit = engine.arbiter.acquire(engine.domain.cpus(), owner, AdmissionMode::Wait)?;
        let _frame =
            enter_scope(ScopeFrame { engine: engine.id(), owner, permit: Arc::new(permit) });
        Ok(f())
    }
}

/// Enters an admission of `engine` itself (a root's or a shared scope's): the caller's affinity
/// narrowed to the engine's CPUs, the engine's resources.
///
/// # Errors
///
/// [`SessionEntryError::Executor`] when the affinity cannot be narrowed;
/// [`SessionEntryError::ResourcePoisoned`] when the engine's slot is not `Ready` (unreachable
/// while the engine invariant holds: an admitted opener finds it `Ready`; reported, never a
/// panic).
fn enter_engine<P: std::borrow::Borrow<ResourcePermit>>(
    permit: P,
    engine: &crate::engine::CpuEngine,
) -> Result<Admission<'_, P>, SessionEntryError> {
    Admission::enter(permit, Some(engine.domain.cpus()), &engine.resources).map_err(|e| match e {
        EnterError::Affinity(source) => SessionEntryError::Executor { source },
        EnterError::SlotUnavailable => {
            SessionEntryError::ResourcePoisoned { what: "the engine resource slot" }
        }
    })
}

fn reentered(cause: ReentryReason) -> SessionEntryError {
    SessionEntryError::Reentered { owner: current_owner(), cause }
}
