//! [`CpuHeldSession`]: a standalone-root session that owns its admission until closed or dropped.
//!
//! # Ownership and release order (S4)
//!
//! The session's state is a struct with **no `Drop` impl** anywhere on the way: the admission
//! (`OwnedAdmission`: checkout, owner marker, affinity, permit, in release order, see
//! `crate::admission`), then the telemetry, then `lanes`, the private resources of the session's
//! phase lanes (built at its first [`CpuHeldSession::phase`]). Field order is drop order: the
//! admission is released first, whole, so an opener woken by its permit finds the slot `Ready`;
//! the lanes' resources are not the engine's and are freed after, without a queued opener
//! waiting for that. [`CpuHeldSession::close`] destructures the same fields and releases them in
//! the same order through `Admission::release`, adding only the report of a failed restore.
//!
//! # The operation path
//!
//! [`CpuHeldSession::with_session`] builds one [`CpuExecSession`] view over the checked-out
//! resources inside a buffer-pool loan (`crate::view::with_view`), runs the callback, and drops
//! the view. It takes no lock (the resources are owned by value), reads no clock, clones no
//! handle, and counts in plain integers (B2, B4).

#[cfg(test)]
mod tests;

use std::marker::PhantomData;
use std::time::Duration;

use holdfast_affinity::SystemCalls;
use holdfast_provider::CpuOperationEntry;

use crate::admission::OwnedAdmission;
use crate::phase::{LaneSet, PhaseTotals, lease};
use crate::view::{OpCounters, ResourceCounters, ViewOrigin, with_view};
use crate::{
    CpuBackend, CpuExecSession, CpuHeldSessionError, CpuPhase, CpuPhaseError, SessionStats,
};

/// A held CPU session: many operations for one admission (SPEC §6).
///
/// `!Send + !Sync`: its owner marker and affinity belong to the opening thread. It borrows its
/// backend, so it cannot outlive it.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, Tensor};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// let x = Tensor::<f64>::from_vec([2, 2], vec![1.0, 0.0, 0.0, 1.0])?;
/// let mut session = backend.open_session()?;
/// let mut acc = x.clone();
/// for _ in 0..10 {
///     acc = session.with_session(|v| v.matmul(acc.read(), x.read()))?;
/// }
/// let stats = session.close()?;
/// assert_eq!(acc.as_slice(), x.as_slice());
/// assert_eq!(stats.operations, 10);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// It cannot cross threads:
///
/// ```compile_fail
/// use holdfast_session::CpuBackend;
/// fn send<T: Send>(_: T) {}
/// let backend = CpuBackend::builder().threads(1).build().unwrap();
/// send(backend.open_session().unwrap());
/// ```
#[derive(Debug)]
pub struct CpuHeldSession<'b> {
    state: HeldSessionState<'b>,
}

/// What a held session owns. Field order is release order (module docs); no `Drop` impl.
#[derive(Debug)]
struct HeldSessionState<'b> {
    backend: &'b CpuBackend,
    admission: OwnedAdmission<'b>,
    telemetry: Telemetry,
    /// Private resources of the phase lanes: `None` until the first phase.
    lanes: Option<LaneSet>,
    _not_send_sync: PhantomData<*const ()>,
}

/// Plain counters and the baselines that session statistics are measured from.
#[derive(Debug, Clone, Copy)]
struct Telemetry {
    ops: OpCounters,
    admission_wait: Duration,
    /// Affinity system calls on this thread before the open.
    syscalls_at_open: u64,
    /// The resources' pool and plan-cache counters at open.
    resources_at_open: ResourceCounters,
    /// What the session's phases did.
    phases: PhaseTotals,
}

/// Everything an open produced, handed to [`CpuHeldSession::new`].
pub(crate) struct OpenedAdmission<'b> {
    pub(crate) backend: &'b CpuBackend,
    pub(crate) admission: OwnedAdmission<'b>,
    pub(crate) admission_wait: Duration,
    pub(crate) syscalls_before: SystemCalls,
}

impl<'b> CpuHeldSession<'b> {
    pub(crate) fn new(opened: OpenedAdmission<'b>) -> Self {
        let telemetry = Telemetry {
            ops: OpCounters::default(),
            admission_wait: opened.admission_wait,
            syscalls_at_open: opened.syscalls_before.reads + opened.syscalls_before.writes,
            resources_at_open: ResourceCounters::of(&opened.admission),
            phases: PhaseTotals::default(),
        };
        CpuHeldSession {
            state: HeldSessionState {
                backend: opened.backend,
                admission: opened.admission,
                telemetry,
                lanes: None,
                _not_send_sync: PhantomData,
            },
        }
    }

    /// Runs `f` with one operation view over the session's resources (S5).
    ///
    /// The view lives only for the call (it cannot escape `f`). Buffers `f`'s operations take
    /// from the pool are accounted in a loan: if `f` panics, the panic propagates and the pool is
    /// whole again at once (S10); the session stays usable.
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f32>::from_vec([3], vec![1.0, 2.0, 3.0])?;
    /// let mut session = backend.open_session()?;
    /// let (s, p) = session.with_session(|v| -> Result<_, holdfast_session::OpError> {
    ///     Ok((v.sum(a.read(), &[0])?, v.mul(a.read(), a.read())?))
    /// })?;
    /// assert_eq!((s.as_slice(), p.as_slice()), (&[6.0f32][..], &[1.0f32, 4.0, 9.0][..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_session<R>(&mut self, f: impl FnOnce(&mut CpuExecSession<'_>) -> R) -> R {
        let state = &mut self.state;
        let engine = &state.backend.engine;
        let entry = CpuOperationEntry::new(&engine.domain, engine.mode);
        let origin = ViewOrigin { engine, owner: state.admission.owner() };
        with_view(&mut state.admission, entry, &mut state.telemetry.ops, origin, f)
    }

    /// Opens a phase lease (SPEC B1): lends the engine's worker pool to `f` for a phase, without
    /// giving up the session. `f` gets a [`CpuPhase`] whose [`run`](CpuPhase::run) runs one lane
    /// per thread of the budget, each admitted — once, when the phase opens — as a reentrant child
    /// of this session's owner (never waiting), with its own resources. The session is borrowed
    /// mutably for the phase, so its own operations are parked until `f` returns; its admission,
    /// owner marker, affinity and resources stay held, and an unrelated opener keeps queueing (or
    /// gets `Contended`).
    ///
    /// The lanes' resources are built at the session's first phase (one
    /// [`EngineResources`](holdfast_resources::EngineResources) per lane) and kept until the
    /// session closes: every run of this and later phases reuses them warm.
    ///
    /// # Errors
    ///
    /// [`CpuPhaseError::PoolWorker`] when the calling thread is a worker of the engine's own pool
    /// (a phase parks that pool's workers for its whole length, and the caller would be parking
    /// its own pool from inside one of them), checked before anything else;
    /// [`CpuPhaseError::Admission`] when a lane cannot join the session's owner (poisoned
    /// admission state). `f` does not run in either case.
    ///
    /// # Panics
    ///
    /// A panic in `f` (or resumed from a lane by [`CpuPhase::run`]) propagates; the session stays
    /// usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use holdfast_session::{CpuBackend, OpError, Tensor};
    ///
    /// let backend = CpuBackend::builder().private_arbiter().build()?;
    /// let x = Tensor::<f64>::from_vec([2, 2], vec![1.0, 1.0, 0.0, 1.0])?;
    /// let mut session = backend.open_session()?;
    /// // A held stage ...
    /// let x2 = session.with_session(|v| v.matmul(x.read(), x.read()))?;
    /// // ... then a phase: every lane contracts its own instance.
    /// let traces = Mutex::new(vec![0.0; backend.threads()]);
    /// session.phase(|phase| {
    ///     phase.run(|lane, view| {
    ///         let t = view.einsum("ij,ji->", &[x2.read(), x.read()])?;
    ///         traces.lock().unwrap()[lane] = t.as_slice()[0];
    ///         Ok::<(), OpError>(())
    ///     })
    /// })??;
    /// assert!(traces.into_inner()?.iter().all(|&t| t == 2.0));
    /// // ... and the session's own operations resume.
    /// session.with_session(|v| v.add(x.read(), x.read()))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn phase<R>(&mut self, f: impl FnOnce(&mut CpuPhase<'_>) -> R) -> Result<R, CpuPhaseError> {
        let state = &mut self.state;
        let engine = &state.backend.engine;
        if let Some(worker) = engine.domain.pool().and_then(rayon::ThreadPool::current_thread_index)
        {
            return Err(CpuPhaseError::PoolWorker { worker });
        }
        let lanes = state.lanes.get_or_insert_with(|| LaneSet::new(engine.domain.threads()));
        let owner = state.admission.owner();
        lease(engine, owner, lanes, &mut state.telemetry.phases, f)
    }

    /// What the session has done so far (B2).
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// let session = backend.open_session()?;
    /// assert_eq!(session.stats().operations, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> SessionStats {
        let t = &self.state.telemetry;
        let (open, now) = (t.resources_at_open, ResourceCounters::of(&self.state.admission));
        let retained = self.state.admission.buffers.stats().retained_bytes;
        let calls = holdfast_affinity::system_calls();
        SessionStats {
            admission_wait: t.admission_wait,
            operations: t.ops.operations,
            pool_installs: t.ops.routes.installs,
            inline_runs: t.ops.routes.inline + t.ops.routes.in_pool,
            buffer_hits: now.buffer_hits - open.buffer_hits,
            buffer_misses: now.buffer_misses - open.buffer_misses,
            buffer_retained_bytes: retained as u64,
            plan_hits: now.plan_hits - open.plan_hits,
            plan_misses: now.plan_misses - open.plan_misses,
            affinity_syscalls: (calls.reads + calls.writes) - t.syscalls_at_open,
            phase_runs: t.phases.runs,
            lane_operations: t.phases.lane_operations,
        }
    }

    /// The owner id this session admitted.
    pub fn owner(&self) -> holdfast_arbiter::OwnerId {
        self.state.admission.owner()
    }

    /// Closes the session: releases resources, owner marker, affinity and admission, in that
    /// order (the same order as a drop), and returns the session's statistics.
    ///
    /// # Errors
    ///
    /// [`CpuHeldSessionError::Restore`] when the caller's CPU affinity cannot be restored.
    /// Everything else is released all the same.
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// let stats = backend.open_session()?.close()?;
    /// assert_eq!(stats.operations, 0);
    /// let _again = backend.open_session()?; // reopens at once
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn close(self) -> Result<SessionStats, CpuHeldSessionError> {
        let stats = self.stats();
        // `lanes` is bound before `admission`: should the release panic, `lanes` still drops
        // after it, as in a plain drop.
        let HeldSessionState { backend: _, telemetry: _, _not_send_sync: _, lanes, admission } =
            self.state;
        let restored = admission.release();
        drop(lanes);
        restored.map(|()| stats).map_err(|source| CpuHeldSessionError::Restore { source })
    }
}

/// Compile-time proof that a held session is neither `Send` nor `Sync` (the ambiguity idiom:
/// if it were `Send`, the blanket impl below would make `NotSend::check` ambiguous).
#[allow(dead_code, reason = "compile-time assertion only")]
const _: () = {
    trait AmbiguousIfSend<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSend<()> for T {}
    struct IsSend;
    impl<T: ?Sized + Send> AmbiguousIfSend<IsSend> for T {}
    trait AmbiguousIfSync<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfSync<()> for T {}
    struct IsSync;
    impl<T: ?Sized + Sync> AmbiguousIfSync<IsSync> for T {}
    fn assert() {
        <CpuHeldSession<'static> as AmbiguousIfSend<_>>::check();
        <CpuHeldSession<'static> as AmbiguousIfSync<_>>::check();
    }
};
