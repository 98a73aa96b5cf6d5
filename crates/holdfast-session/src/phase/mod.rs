//! [`CpuPhase`]: a phase lease (SPEC B1) — a held session lends its engine's worker pool to an
//! outer scheduler for a phase, without giving up its admission.
//!
//! A phase is opened by [`CpuHeldSession::phase`](crate::CpuHeldSession::phase), which borrows the
//! session mutably: while the phase lives the root's own operations are parked (the borrow
//! checker, not a runtime flag, keeps them out). The phase opens the provider's lane crew
//! ([`CpuDomain::lane_crew`](holdfast_provider::CpuDomain::lane_crew)) for its whole length, so
//! the pool's workers stay hot between runs, and [`CpuPhase::run`] runs one **lane** per thread of
//! the engine's budget through it ([`LaneCrew::run`](holdfast_provider::LaneCrew::run)): lane 0
//! inline on the caller (the session's owner thread), lane `i` on pool worker `i`.
//!
//! # Invariants
//!
//! - **Admission.** Every lane is admitted as a reentrant child of the session's owner: when the
//!   phase opens, one permit per lane joins the session's reservation (`arbiter.join`, never a
//!   wait), held until the phase ends; in every run, each lane enters through the crate's one
//!   child admission (`child::enter_child`, shared with child handles) on its permit, borrowed:
//!   it marks its thread with the session's owner and checks its private resources out. No run touches the
//!   arbiter. The session's own permit is held for the whole phase, so an unrelated opener is
//!   `Contended` (try) or waits (wait) while lanes run.
//! - **Resources.** Each lane owns one private
//!   [`EngineResources`](holdfast_resources::EngineResources) in its own slot, built once — at the session's first phase — and kept by the session, so
//!   every run of every later phase of that session finds its lane's buffer pool and plan caches
//!   warm. They never touch the session's checked-out resources.
//! - **Concurrency.** At most `threads` lanes run at once: lane 0 on the caller and one per
//!   parked crew worker (`threads - 1` of them); the pool's remaining worker runs no lane. A
//!   one-thread budget has no pool: the caller is the one lane. Lane 0 runs on the owner's
//!   thread, whose marker is already the session's owner: the child entry marks it again with the
//!   same owner and restores it after the lane.
//! - **Failure.** A lane that returns an error, panics or cannot enter the run sets the run's
//!   cancel flag ([`PhaseLane::cancelled`]); every lane is joined before [`CpuPhase::run`] returns
//!   or resumes a panic. Precedence: a panic is resumed first, then a session (admission) error,
//!   then a lane error. Nothing of a failed run outlives it, so the phase (and the session) runs
//!   again at once.
//!
//! # Memory ordering
//!
//! The cancel flag is a hint: it is stored with `Release` by a failing lane and loaded with
//! `Acquire` by its peers, so a peer that sees it set also sees what the failing lane wrote before
//! failing. The order of failures is recorded with one `compare_exchange` (`AcqRel`) on the
//! run's first-failure index. Lane reports (results, counters, panics) are handed back through the
//! crew's join (each worker's `Release` done report, `Acquire`d by the caller; see the provider's
//! `lanes` module), which happens-before [`CpuPhase::run`] reads them; lane telemetry is then
//! updated by the caller in plain integers.

mod lane;
#[cfg(test)]
mod tests;

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use holdfast_arbiter::{OwnerId, ResourcePermit};
use holdfast_provider::LaneCrew;
use holdfast_resources::{EngineResourceSlot, EngineResources};

pub use lane::{LaneStats, PhaseLane};

use crate::SessionEntryError;
use crate::engine::CpuEngine;
use crate::error::{CpuPhaseError, PhaseRunError};
use lane::{LaneContext, LaneOutcome, LaneReport, NO_LANE, is_inline, run_lane};

/// The private resources and telemetry of a session's lanes, built at its first phase.
#[derive(Debug)]
pub(crate) struct LaneSet {
    /// One slot per lane (lane `i` checks out `slots[i]`).
    slots: Box<[EngineResourceSlot]>,
    /// Per-lane telemetry since the set was built.
    stats: Box<[LaneStats]>,
    /// Lane resources built for this session (the budget, once).
    built: u64,
}

impl LaneSet {
    /// Builds private resources for `lanes` lanes (one per thread of the budget).
    pub(crate) fn new(lanes: usize) -> Self {
        LaneSet {
            slots: (0..lanes)
                .map(|_| EngineResourceSlot::new(EngineResources::for_child_execution()))
                .collect(),
            stats: (0..lanes).map(LaneStats::for_lane).collect(),
            built: lanes as u64,
        }
    }
}

/// What a session's phases did, for [`SessionStats`](crate::SessionStats): plain counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PhaseTotals {
    /// Runs of every phase of the session.
    pub(crate) runs: u64,
    /// Operations run by every lane of those runs.
    pub(crate) lane_operations: u64,
}

/// A phase lease on a held session's engine: runs lanes on the engine's pool under the session's
/// owner. Built by [`CpuHeldSession::phase`](crate::CpuHeldSession::phase) for the length of its
/// callback; `!Send + !Sync` like the session it borrows.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use holdfast_session::{CpuBackend, OpError, Tensor};
///
/// let backend = CpuBackend::builder().private_arbiter().build()?;
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let mut session = backend.open_session()?;
/// let done = AtomicUsize::new(0);
/// session.phase(|phase| {
///     phase.run(|_lane, view| {
///         // Lanes pull work from a shared counter until it runs out.
///         while done.fetch_add(1, Ordering::Relaxed) < 16 {
///             let c = view.matmul(a.read(), a.read())?;
///             view.recycle(c);
///         }
///         Ok::<(), OpError>(())
///     })
/// })??;
/// let ran: u64 = session.stats().lane_operations;
/// assert_eq!(ran, 16);
/// session.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A phase cannot outlive its callback:
///
/// ```compile_fail
/// use holdfast_session::CpuBackend;
/// let backend = CpuBackend::builder().threads(1).build().unwrap();
/// let mut session = backend.open_session().unwrap();
/// let escaped = session.phase(|phase| phase).unwrap();
/// ```
///
/// Nor cross threads, like its session:
///
/// ```compile_fail
/// use holdfast_session::CpuBackend;
/// fn send<T: Send>(_: T) {}
/// let backend = CpuBackend::builder().threads(1).build().unwrap();
/// let mut session = backend.open_session().unwrap();
/// session.phase(|phase| send(phase)).unwrap();
/// ```
#[derive(Debug)]
pub struct CpuPhase<'p> {
    engine: &'p Arc<CpuEngine>,
    owner: OwnerId,
    /// One joined permit per lane (the lanes' child admissions), released when the phase ends.
    admissions: Vec<ResourcePermit>,
    /// The provider's lane crew, open for the whole phase (its workers stay hot between runs).
    crew: &'p LaneCrew<'p>,
    /// The lanes' private resources, shared with the lanes during a run.
    slots: &'p [EngineResourceSlot],
    /// The lanes' telemetry: read by the lanes during a run, updated by the caller after it.
    stats: &'p mut [LaneStats],
    built: u64,
    totals: &'p mut PhaseTotals,
    runs: u64,
    _not_send_sync: PhantomData<*const ()>,
}

/// Opens a phase over `lanes` under `owner` — one child admission per lane, and the domain's lane
/// crew for the whole phase — and runs `f` with it (called by
/// [`CpuHeldSession::phase`](crate::CpuHeldSession::phase) after its checks; the crew is closed,
/// and its workers released, when `f` returns or unwinds).
pub(crate) fn lease<R>(
    engine: &Arc<CpuEngine>,
    owner: OwnerId,
    lanes: &mut LaneSet,
    totals: &mut PhaseTotals,
    f: impl FnOnce(&mut CpuPhase<'_>) -> R,
) -> Result<R, CpuPhaseError> {
    let LaneSet { slots, stats, built } = lanes;
    let mut admissions = Vec::with_capacity(slots.len());
    for lane in 0..slots.len() {
        // The session's owner is active for as long as it is borrowed: the join never waits,
        // and fails only on poisoned admission state.
        let permit = engine
            .arbiter
            .join(owner)
            .map_err(|e| CpuPhaseError::Admission { lane, source: SessionEntryError::from(e) })?;
        admissions.push(permit);
    }
    // The lane site (docs/design/provider-routes.md): the crew lives as long as the phase.
    Ok(engine.domain.lane_crew(|crew| {
        let mut phase = CpuPhase {
            engine,
            owner,
            admissions,
            crew,
            slots,
            stats,
            built: *built,
            totals,
            runs: 0,
            _not_send_sync: PhantomData,
        };
        f(&mut phase)
    }))
}

impl CpuPhase<'_> {
    /// Runs `body(lane, view)` once for every lane `0..self.lanes()` — lane 0 inline on the
    /// caller, the others concurrently on the phase's parked pool workers — and returns once every
    /// lane has finished.
    ///
    /// Each lane is admitted as a reentrant child of the session's owner (it never waits) and
    /// gets a [`PhaseLane`]: the normal operation view over the lane's own resources (warm from
    /// earlier runs), plus [`PhaseLane::cancelled`] and the lane's telemetry. Lane operations run
    /// serially on the lane's thread (the lanes are the parallelism; they never install the
    /// pool).
    ///
    /// # Errors
    ///
    /// When a lane fails, the run's cancel flag is set for its peers and every lane is joined
    /// first; then [`PhaseRunError::Session`] when a lane could not enter the run (this outranks
    /// lane errors), else [`PhaseRunError::Lane`] with the error of the first lane that failed.
    /// The phase can run again after either.
    ///
    /// # Panics
    ///
    /// A panic in a lane cancels its peers and is resumed here after every lane has been joined
    /// (and before any error is returned). The lane's buffer accounting is whole again and its
    /// N-ary contraction scratch is discarded; the phase and the session stay usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, PhaseRunError};
    ///
    /// let backend = CpuBackend::builder().private_arbiter().build()?;
    /// let mut session = backend.open_session()?;
    /// session.phase(|phase| {
    ///     // Lane 0 fails; its peers see `cancelled()` and stop early.
    ///     let failed = phase.run(|lane, view| {
    ///         if lane == 0 { return Err("lane 0 gave up"); }
    ///         while !view.cancelled() { std::hint::spin_loop(); }
    ///         Ok(())
    ///     });
    ///     assert!(matches!(failed, Err(PhaseRunError::Lane { lane: 0, .. })));
    ///     // The phase runs again at once.
    ///     assert!(phase.run(|_, _| Ok::<(), ()>(())).is_ok());
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<E, F>(&mut self, body: F) -> Result<(), PhaseRunError<E>>
    where
        E: Send,
        F: Fn(usize, &mut PhaseLane<'_, '_>) -> Result<(), E> + Sync,
    {
        let cancel = AtomicBool::new(false);
        let first_failure = AtomicUsize::new(NO_LANE);
        let cx = LaneContext {
            engine: self.engine,
            admissions: &self.admissions,
            slots: self.slots,
            stats: self.stats,
            cancel: &cancel,
            first_failure: &first_failure,
        };
        // The only place a phase puts work on the pool's (parked) workers (provider-routes.md).
        let reports = self.crew.run(|lane| run_lane(&cx, lane, &body));
        // Every lane has been joined here.
        self.runs += 1;
        self.totals.runs += 1;
        for (lane, (stats, report)) in self.stats.iter_mut().zip(&reports).enumerate() {
            stats.record(report, is_inline(lane));
            self.totals.lane_operations += report.operations();
        }
        settle(reports, first_failure.into_inner())
    }

    /// The session's owner: every lane runs as a reentrant child of it.
    pub fn owner(&self) -> OwnerId {
        self.owner
    }

    /// The number of lanes of every run: the engine's thread budget.
    pub fn lanes(&self) -> usize {
        self.slots.len()
    }

    /// Runs of this phase so far (failed runs included).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, OpError};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let mut session = backend.open_session()?;
    /// session.phase(|phase| {
    ///     assert_eq!((phase.lanes(), phase.runs()), (1, 0));
    ///     phase.run(|_, _| Ok::<(), OpError>(())).unwrap();
    ///     assert_eq!(phase.runs(), 1);
    ///     // The lanes run as children of the owner the session marked on this thread.
    ///     assert_eq!(Some(phase.owner()), holdfast_arbiter::current_owner());
    /// })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Per-lane telemetry, in lane order, since the lanes' resources were built (the session's
    /// first phase).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, OpError, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f64>::from_vec([4], vec![1.0; 4])?;
    /// let mut session = backend.open_session()?;
    /// let stats = session.phase(|phase| -> Result<_, Box<dyn std::error::Error>> {
    ///     for _ in 0..3 {
    ///         phase.run(|_, view| {
    ///             let t = view.add(a.read(), a.read())?;
    ///             view.recycle(t); // back to the lane's own pool
    ///             Ok::<(), OpError>(())
    ///         })?;
    ///     }
    ///     Ok(phase.lane_stats()[0])
    /// })??;
    /// assert_eq!((stats.runs, stats.operations), (3, 3));
    /// assert_eq!((stats.buffer_misses, stats.buffer_hits), (1, 2), "warm across runs");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lane_stats(&self) -> &[LaneStats] {
        self.stats
    }

    /// Lane resources built for this session so far: the budget, once, at its first phase —
    /// runs and later phases reuse them.
    pub fn lane_resources_built(&self) -> u64 {
        self.built
    }
}

#[cfg(test)]
impl<'p> CpuPhase<'p> {
    /// The lanes' resource slots, for the length of the phase (tests inspect them, or hold one
    /// checked out to make a lane's admission fail).
    pub(crate) fn lane_slots(&self) -> &'p [EngineResourceSlot] {
        self.slots
    }
}

/// Turns the joined lanes' reports into the run's result: a panic is resumed first, then a
/// session (admission) error, then a lane error. Among several of one kind, the lane that failed
/// first wins, else the lowest lane.
fn settle<E>(reports: Vec<LaneReport<E>>, first: usize) -> Result<(), PhaseRunError<E>> {
    let mut panic = None;
    let mut refused = None;
    let mut failed = None;
    let mut failed_lanes = 0;
    for (lane, report) in reports.into_iter().enumerate() {
        let prefer = lane == first;
        match report.outcome {
            LaneOutcome::Done => {}
            LaneOutcome::Panicked(payload) => {
                if panic.is_none() || prefer {
                    panic = Some(payload);
                }
            }
            LaneOutcome::Refused(source) => {
                if refused.is_none() || prefer {
                    refused = Some((lane, source));
                }
            }
            LaneOutcome::Failed(error) => {
                failed_lanes += 1;
                if failed.is_none() || prefer {
                    failed = Some((lane, error));
                }
            }
        }
    }
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
    if let Some((lane, source)) = refused {
        return Err(PhaseRunError::Session { lane, source });
    }
    match failed {
        Some((lane, error)) => Err(PhaseRunError::Lane { lane, error, failed_lanes }),
        None => Ok(()),
    }
}
