//! One lane of a phase run: its admission, its view ([`PhaseLane`]), its report and its
//! telemetry ([`LaneStats`]).
//!
//! `run_lane` is what the provider's lane crew calls on each lane's thread (lane 0 on the phase's
//! caller, the others on the crew's parked workers). It enters the lane through the crate's one
//! child admission (`child::enter_child`, on the lane's permit joined when the phase opened,
//! borrowed: mark the thread with the session's owner, check the lane's private resources out),
//! builds the operation view (`child::with_child_view`, serial), wraps it in a [`PhaseLane`] and
//! runs the caller's body. A panic in the body is caught here, inside the admission: the view's
//! buffer-pool loan has already made the pool whole while unwinding, and the resources go back
//! to their slot as the admission is released. Every outcome — done, failed, panicked, refused —
//! is reported to the caller instead of being thrown across the pool.

use std::any::Any;
use std::ops::{Deref, DerefMut};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use holdfast_arbiter::ResourcePermit;
use holdfast_resources::EngineResourceSlot;

use crate::admission::BorrowedAdmission;
use crate::child::{enter_child, with_child_view};
use crate::engine::CpuEngine;
use crate::view::{OpCounters, ResourceCounters};
use crate::{CpuExecSession, SessionEntryError};

/// No lane has failed yet (the first-failure index's initial value).
pub(crate) const NO_LANE: usize = usize::MAX;

/// What every lane of one run shares: the engine, the lanes' admissions, slots and telemetry,
/// and the run's cancellation state.
pub(crate) struct LaneContext<'r> {
    pub(crate) engine: &'r Arc<CpuEngine>,
    /// Lane `i`'s joined permit is `admissions[i]`.
    pub(crate) admissions: &'r [ResourcePermit],
    pub(crate) slots: &'r [EngineResourceSlot],
    pub(crate) stats: &'r [LaneStats],
    pub(crate) cancel: &'r AtomicBool,
    pub(crate) first_failure: &'r AtomicUsize,
}

/// True for the lane that runs inline on the phase's caller: lane 0, whatever the budget (the
/// provider's lane crew runs lane 0 on its caller).
pub(crate) fn is_inline(lane: usize) -> bool {
    lane == 0
}

impl LaneContext<'_> {
    /// Records `lane`'s failure: first failure wins the index; peers are told to stop.
    fn fail(&self, lane: usize) {
        let _ =
            self.first_failure.compare_exchange(NO_LANE, lane, Ordering::AcqRel, Ordering::Acquire);
        self.cancel.store(true, Ordering::Release);
    }
}

/// How one lane's run ended.
pub(crate) enum LaneOutcome<E> {
    /// The body returned `Ok`.
    Done,
    /// The body returned an error.
    Failed(E),
    /// The body panicked; the payload is resumed by the caller after every lane is joined.
    Panicked(Box<dyn Any + Send>),
    /// The lane could not enter the run (its resources were not available); its body did not run.
    Refused(SessionEntryError),
}

/// One lane's report to the caller of [`CpuPhase::run`](super::CpuPhase::run).
pub(crate) struct LaneReport<E> {
    pub(crate) outcome: LaneOutcome<E>,
    /// Operations run this time and the resources' counters after the run (`None` if refused).
    counters: Option<(u64, ResourceCounters)>,
}

impl<E> LaneReport<E> {
    /// Operations the lane ran in this run.
    pub(crate) fn operations(&self) -> u64 {
        self.counters.map_or(0, |(ops, _)| ops)
    }
}

/// Runs lane `lane` of a run: admission, view, body, report. Never panics out (module docs).
pub(crate) fn run_lane<E, F>(cx: &LaneContext<'_>, lane: usize, body: &F) -> LaneReport<E>
where
    F: Fn(usize, &mut PhaseLane<'_, '_>) -> Result<(), E>,
{
    let (Some(admission), Some(slot), Some(&before)) =
        (cx.admissions.get(lane), cx.slots.get(lane), cx.stats.get(lane))
    else {
        // Unreachable: the crew runs lanes 0..threads and the set has `threads` lanes.
        cx.fail(lane);
        let what = "the phase's lane set";
        return refused(SessionEntryError::ResourcePoisoned { what });
    };
    let admitted = enter_child(admission, slot).map(|mut admission: BorrowedAdmission<'_, '_>| {
        let mut counters = OpCounters::default();
        let ran = catch_unwind(AssertUnwindSafe(|| {
            with_child_view(cx.engine, &mut admission, &mut counters, |view| {
                let mut lane_view = PhaseLane {
                    view,
                    lane,
                    lanes: cx.slots.len(),
                    cancel: cx.cancel,
                    inline: is_inline(lane),
                    before,
                };
                body(lane, &mut lane_view)
            })
        }));
        let resources = ResourceCounters::of(&admission);
        // No affinity to restore: a child's release cannot fail.
        let _ = admission.release();
        (ran, (counters.operations, resources))
    });
    match admitted {
        Ok((ran, counters)) => {
            let outcome = match ran {
                Ok(Ok(())) => LaneOutcome::Done,
                Ok(Err(error)) => {
                    cx.fail(lane);
                    LaneOutcome::Failed(error)
                }
                Err(payload) => {
                    cx.fail(lane);
                    LaneOutcome::Panicked(payload)
                }
            };
            LaneReport { outcome, counters: Some(counters) }
        }
        Err(source) => {
            cx.fail(lane);
            refused(source)
        }
    }
}

fn refused<E>(source: SessionEntryError) -> LaneReport<E> {
    LaneReport { outcome: LaneOutcome::Refused(source), counters: None }
}

/// The view one lane gets for one run: the normal operation view ([`CpuExecSession`], through
/// `Deref`) over the lane's own resources, plus the run's cancellation flag and the lane's
/// telemetry. Built per lane per run; it cannot escape the lane's body.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, OpError, Tensor};
///
/// let backend = CpuBackend::builder().private_arbiter().build()?;
/// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let mut session = backend.open_session()?;
/// session.phase(|phase| {
///     phase.run(|lane, view| {
///         assert_eq!(view.lane(), lane);
///         assert!(lane < view.lanes());
///         let s = view.add(a.read(), a.read())?; // any view operation
///         assert_eq!(s.as_slice(), &[2.0, 4.0]);
///         assert_eq!(view.stats().operations, 1);
///         assert!(!view.cancelled());
///         Ok::<(), OpError>(())
///     })
/// })??;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PhaseLane<'l, 's> {
    view: &'l mut CpuExecSession<'s>,
    lane: usize,
    lanes: usize,
    cancel: &'l AtomicBool,
    inline: bool,
    /// The lane's telemetry at the start of this run.
    before: LaneStats,
}

impl PhaseLane<'_, '_> {
    /// This lane's index, `0..lanes()`.
    pub fn lane(&self) -> usize {
        self.lane
    }

    /// The number of lanes in the run (the engine's thread budget).
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// True once a peer lane of this run has failed (error, panic, or refused entry): the
    /// lane should stop early. A hint; the lane decides what to return.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }

    /// True when this lane runs inline on the phase's caller: lane 0, whatever the budget (the
    /// other lanes run on the phase's parked pool workers).
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// The lane's telemetry so far: everything up to this run, plus this run (counted as run,
    /// with its operations and buffer/plan counters up to now).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, OpError, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
    /// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
    /// let mut session = backend.open_session()?;
    /// session.phase(|phase| {
    ///     phase.run(|lane, view| {
    ///         assert!(view.is_inline() && !view.cancelled() && lane == 0);
    ///         view.add(a.read(), a.read())?;
    ///         assert_eq!((view.stats().runs, view.stats().operations), (1, 1));
    ///         Ok::<(), OpError>(())
    ///     })
    /// })??;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> LaneStats {
        let mut now = self.before;
        now.runs += 1;
        now.inline_runs += u64::from(self.inline);
        now.operations += self.view.operations();
        now.set_resources(self.view.resource_counters());
        now
    }
}

impl<'s> Deref for PhaseLane<'_, 's> {
    type Target = CpuExecSession<'s>;

    fn deref(&self) -> &CpuExecSession<'s> {
        self.view
    }
}

impl<'s> DerefMut for PhaseLane<'_, 's> {
    fn deref_mut(&mut self) -> &mut CpuExecSession<'s> {
        self.view
    }
}

/// What one lane did since its resources were built (the session's first phase): plain counters
/// updated by the phase's caller after each run.
///
/// # Examples
///
/// See [`CpuPhase::lane_stats`](crate::CpuPhase::lane_stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaneStats {
    /// The lane's index.
    pub lane: usize,
    /// Runs in which the lane was admitted and its body ran.
    pub runs: u64,
    /// Of those, runs inline on the phase's caller (lane 0 runs there every time).
    pub inline_runs: u64,
    /// Operations the lane's views ran.
    pub operations: u64,
    /// Runs whose body returned an error.
    pub failures: u64,
    /// Runs whose body panicked.
    pub panics: u64,
    /// Runs the lane could not enter (its private resources were not available).
    pub refusals: u64,
    /// Buffers the lane's pool served from its retained set.
    pub buffer_hits: u64,
    /// Buffers the lane's pool had to allocate.
    pub buffer_misses: u64,
    /// Plans found in the lane's caches (einsum and GEMM).
    pub plan_hits: u64,
    /// Plans the lane prepared (cache misses).
    pub plan_misses: u64,
}

impl LaneStats {
    pub(crate) fn for_lane(lane: usize) -> Self {
        LaneStats { lane, ..LaneStats::default() }
    }

    fn set_resources(&mut self, r: ResourceCounters) {
        self.buffer_hits = r.buffer_hits;
        self.buffer_misses = r.buffer_misses;
        self.plan_hits = r.plan_hits;
        self.plan_misses = r.plan_misses;
    }

    /// Adds one run's report.
    pub(crate) fn record<E>(&mut self, report: &LaneReport<E>, inline: bool) {
        if let Some((ops, resources)) = report.counters {
            self.runs += 1;
            self.inline_runs += u64::from(inline);
            self.operations += ops;
            self.set_resources(resources);
        }
        match report.outcome {
            LaneOutcome::Done => {}
            LaneOutcome::Failed(_) => self.failures += 1,
            LaneOutcome::Panicked(_) => self.panics += 1,
            LaneOutcome::Refused(_) => self.refusals += 1,
        }
    }
}
