//! One soak worker: a loop of random entries (held sessions opened by wait, try or deadline;
//! scoped entries; shared scopes; management calls; stale child handles), random checked
//! operations inside them (real, complex, factorizations, refusals), phase leases whose lanes run
//! checked operations, and injected panics and lane errors, until the run's end.
//!
//! Every expectation that fails returns an `Err` naming it; the worker then stops and the run
//! fails. Injected panics carry an [`Injected`] payload; any other panic is a failure.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::time::Duration;

use holdfast_arbiter::current_owner;

use super::recycle::RecycleOnDrop;
use holdfast_session::{
    CpuBackend, CpuHeldSession, CpuThreadExecution, ManagementError, SessionEntryError,
    current_cpu_execution,
};

use super::cases::{Case, Mix};
use super::histogram::Histogram;
use super::rng::Rng;
use super::shared::{Engine, Phase, Shared};
use super::tn::TnCase;

/// Where a panic was injected (the payload of every injected panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injected {
    /// In an operation callback, after the operation produced its output.
    AfterOp,
    /// In an operation callback, with the output recycled into the pool during the unwind (a
    /// possibly partially written buffer: it must be discarded, never retained).
    RecycleOnUnwind,
    /// In a child entry inside an operation.
    InChild,
    /// In a scoped entry's callback.
    InScoped,
    /// In a shared scope, between its entries.
    InScope,
    /// Unwinding through a whole held session (the drop path releases it).
    ThroughSession,
    /// In a phase lane, after its operations (resumed by the run after every lane joined).
    InLane,
}

/// Kinds of [`Injected`], in report order.
pub const INJECTED: [Injected; 7] = [
    Injected::AfterOp,
    Injected::RecycleOnUnwind,
    Injected::InChild,
    Injected::InScoped,
    Injected::InScope,
    Injected::ThroughSession,
    Injected::InLane,
];

/// The error an injected lane failure returns.
const LANE_ERROR: &str = "injected lane error";

/// The worker's knobs.
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub mix: Mix,
    /// Per mille of operations (and of entries) with an injected panic.
    pub panic_per_mille: u32,
}

/// What one worker did.
#[derive(Debug, Default, Clone)]
pub struct WorkerStats {
    pub operations: u64,
    pub held_opens: u64,
    pub try_refused: u64,
    pub deadline_timeouts: u64,
    pub scoped_entries: u64,
    pub scopes: u64,
    pub child_entries: u64,
    pub stale_child_refusals: u64,
    pub reentry_refusals: u64,
    pub management_ok: u64,
    pub management_busy: u64,
    pub closes: u64,
    pub drops: u64,
    /// Tensor-network cases run and checked (complex, factorizations, refusals).
    pub tn_operations: u64,
    /// Phase-lease runs (each running every lane), and those with an injected lane error.
    pub phase_runs: u64,
    pub lane_errors: u64,
    pub panics: [u64; INJECTED.len()],
    pub admission_wait: Histogram,
}

impl WorkerStats {
    pub fn merge(&mut self, o: &WorkerStats) {
        self.operations += o.operations;
        self.held_opens += o.held_opens;
        self.try_refused += o.try_refused;
        self.deadline_timeouts += o.deadline_timeouts;
        self.scoped_entries += o.scoped_entries;
        self.scopes += o.scopes;
        self.child_entries += o.child_entries;
        self.stale_child_refusals += o.stale_child_refusals;
        self.reentry_refusals += o.reentry_refusals;
        self.management_ok += o.management_ok;
        self.management_busy += o.management_busy;
        self.closes += o.closes;
        self.drops += o.drops;
        self.tn_operations += o.tn_operations;
        self.phase_runs += o.phase_runs;
        self.lane_errors += o.lane_errors;
        for (a, b) in self.panics.iter_mut().zip(&o.panics) {
            *a += b;
        }
        self.admission_wait.merge(&o.admission_wait);
    }

    fn count_panic(&mut self, kind: Injected) {
        let i = INJECTED.iter().position(|k| *k == kind).unwrap_or(0);
        self.panics[i] += 1;
    }
}

/// Silences the default panic message for injected panics (thousands of them), and only them.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Injected>().is_none() {
                default(info);
            }
        }));
    });
}

fn inject(kind: Injected) -> ! {
    std::panic::panic_any(kind)
}

/// Runs `f`, expecting either a normal return or the injected panic `kind`.
fn expect_injected<R>(kind: Injected, f: impl FnOnce() -> R) -> Result<Option<R>, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Ok(Some(r)),
        Err(payload) => match payload.downcast_ref::<Injected>() {
            Some(k) if *k == kind => Ok(None),
            Some(k) => Err(format!("injected {kind:?}, caught {k:?}")),
            None => Err(format!("unexpected panic: {}", describe(&*payload))),
        },
    }
}

fn describe(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string payload".to_owned()
    }
}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// One worker's state.
pub struct Worker<'a> {
    shared: &'a Shared,
    id: usize,
    rng: Rng,
    knobs: Knobs,
    stats: WorkerStats,
    /// A child handle kept past its parent's end: its entries must be refused.
    stale_child: Option<CpuBackend>,
}

impl<'a> Worker<'a> {
    pub fn new(shared: &'a Shared, id: usize, seed: u64, knobs: Knobs) -> Self {
        Worker {
            shared,
            id,
            rng: Rng::new(seed),
            knobs,
            stats: WorkerStats::default(),
            stale_child: None,
        }
    }

    /// Runs until the end of the soak or the first failure.
    pub fn run(mut self) -> Result<WorkerStats, String> {
        while !self.shared.should_stop() {
            self.shared.tick(self.id);
            let e = self.rng.below(self.shared.engines.len());
            let step = self.rng.below(100);
            let outcome = match step {
                0..=44 => self.held(e),
                45..=64 => self.scoped(e),
                65..=74 => self.scope(e),
                75..=94 => self.management(e),
                _ => self.stale_child_entry(),
            };
            self.shared.set_phase(self.id, Phase::Idle);
            outcome?;
            ensure!(
                current_cpu_execution() == CpuThreadExecution::Idle,
                "thread not idle after an entry ended: {:?}",
                current_cpu_execution()
            );
        }
        self.shared.set_phase(self.id, Phase::Done);
        Ok(self.stats)
    }

    fn engine(&self, e: usize) -> &'a Engine {
        &self.shared.engines[e]
    }

    fn panic_now(&mut self) -> bool {
        self.rng.chance(self.knobs.panic_per_mille)
    }

    /// A held session: open (wait, try or deadline), operations, close or drop.
    fn held(&mut self, e: usize) -> Result<(), String> {
        let engine = self.engine(e);
        let backend = &engine.backend;
        self.shared.set_phase(self.id, Phase::Opening);
        let mode = self.rng.below(10);
        let opened = match mode {
            0..=5 => backend.open_session(),
            6 | 7 => backend.try_open_session(),
            _ => {
                let timeout = *self.rng.pick(&[
                    Duration::ZERO,
                    Duration::from_micros(50),
                    Duration::from_millis(1),
                    Duration::from_millis(5),
                ]);
                backend.open_session_timeout(timeout)
            }
        };
        let session = match opened {
            Ok(s) => s,
            Err(SessionEntryError::Contended { .. }) if matches!(mode, 6 | 7) => {
                self.stats.try_refused += 1;
                return Ok(());
            }
            Err(SessionEntryError::TimedOut { .. }) if mode >= 8 => {
                self.stats.deadline_timeouts += 1;
                return Ok(());
            }
            Err(err) => return Err(format!("{}: open (mode {mode}) failed: {err}", engine.name)),
        };
        engine.checkouts.fetch_add(1, Ordering::Relaxed);
        self.stats.held_opens += 1;
        self.stats.admission_wait.record(session.stats().admission_wait);
        self.shared.set_phase(self.id, Phase::InSession);
        if self.panic_now() {
            // The whole session unwinds: the drop path releases it.
            let shared = self.shared;
            let result = {
                let me = &mut *self;
                expect_injected(Injected::ThroughSession, move || -> Result<(), String> {
                    let mut session = session;
                    let _hold = shared.hold_begin(current_owner())?;
                    me.operations(engine, &mut session)?;
                    inject(Injected::ThroughSession)
                })?
            };
            match result {
                Some(Err(e)) => return Err(e),
                Some(Ok(())) => return Err("the injected panic did not fire".into()),
                None => self.stats.count_panic(Injected::ThroughSession),
            }
        } else {
            let mut session = session;
            let hold = self.shared.hold_begin(current_owner())?;
            self.operations(engine, &mut session)?;
            if self.rng.chance(30) {
                self.stale_child = Some(session.with_session(|v| v.child_execution()));
            }
            self.shared.set_phase(self.id, Phase::Closing);
            drop(hold);
            if self.rng.chance(500) {
                session.close().map_err(|e| format!("{}: close failed: {e}", engine.name))?;
                self.stats.closes += 1;
            } else {
                drop(session);
                self.stats.drops += 1;
            }
        }
        self.after_release(engine)
    }

    /// A few operations in a held session, with re-entry and management probes.
    fn operations(
        &mut self,
        engine: &Engine,
        session: &mut CpuHeldSession<'_>,
    ) -> Result<(), String> {
        ensure!(
            current_cpu_execution() == CpuThreadExecution::Active,
            "a held session's thread is not Active"
        );
        for _ in 0..self.rng.range(1, 8) {
            self.shared.tick(self.id);
            self.session_op(session)?;
            if self.rng.chance(150) {
                let case = TnCase::random(&mut self.rng);
                session.with_session(|v| case.run_checked(v))?;
                self.stats.tn_operations += 1;
            }
            if self.rng.chance(30) {
                self.phase_run(session)?;
            }
            let retained = session.stats().buffer_retained_bytes;
            ensure!(
                retained <= engine.retention_limit as u64,
                "{}: {retained} retained bytes exceed the limit {}",
                engine.name,
                engine.retention_limit
            );
            if self.rng.chance(60) {
                // Management of the session's own engine while held: Busy at once.
                let busy = engine.backend.buffer_pool_stats();
                ensure!(
                    matches!(busy, Err(ManagementError::Busy)),
                    "management while held: {busy:?}"
                );
            }
            if self.rng.chance(40) {
                // Re-entry is refused before anything blocks (on any engine).
                let pick = self.rng.below(self.shared.engines.len());
                let other = &self.engine(pick).backend;
                let again = match self.rng.below(3) {
                    0 => other.open_session().map(drop),
                    1 => other.try_open_session().map(drop),
                    _ => other.with_backend_session(|_| ()),
                };
                ensure!(
                    matches!(again, Err(SessionEntryError::Reentered { .. })),
                    "re-entry inside a held session: {again:?}"
                );
                self.stats.reentry_refusals += 1;
            }
        }
        Ok(())
    }

    /// One checked operation in `session`, or one with an injected panic.
    fn session_op(&mut self, session: &mut CpuHeldSession<'_>) -> Result<(), String> {
        let case = Case::random(&mut self.rng, self.knobs.mix);
        if matches!(case.op, super::cases::Op::Child(_)) {
            self.stats.child_entries += 1;
        }
        if !self.panic_now() {
            let out = session.with_session(|v| case.run_checked(v))?;
            self.stats.operations += 1;
            if self.rng.chance(500) {
                session.with_session(|v| v.recycle(out));
            }
            return Ok(());
        }
        let kind =
            *self.rng.pick(&[Injected::AfterOp, Injected::RecycleOnUnwind, Injected::InChild]);
        let caught = expect_injected(kind, || {
            session.with_session(|v| -> Result<(), String> {
                match kind {
                    Injected::AfterOp => {
                        let _out = case.run(v)?;
                        inject(kind)
                    }
                    Injected::RecycleOnUnwind => {
                        let out = case.run(v)?;
                        let _give_back = RecycleOnDrop { view: v, out: Some(out) };
                        inject(kind)
                    }
                    _ => {
                        let child = v.child_execution();
                        let refused = child.with_backend_session(|cv| -> Result<(), String> {
                            let _out = case.run(cv)?;
                            inject(kind)
                        });
                        Err(format!("the child entry returned instead of panicking: {refused:?}"))
                    }
                }
            })
        })?;
        match caught {
            Some(Err(e)) => Err(e),
            Some(Ok(())) => Err("the injected panic did not fire".into()),
            None => {
                self.stats.count_panic(kind);
                Ok(())
            }
        }
    }

    /// One phase-lease run: every lane runs a few checked operations on its own resources; one
    /// lane may return an injected error (the run reports that lane) or panic (the run resumes
    /// the panic after joining every lane). Either way the phase runs again at once, and the
    /// session's own operations go on after it.
    fn phase_run(&mut self, session: &mut CpuHeldSession<'_>) -> Result<(), String> {
        let seed = self.rng.next_u64();
        let ops_per_lane = self.rng.range(1, 3);
        let failing = self.rng.chance(150).then(|| self.rng.below(8));
        let panicking = failing.is_none() && self.panic_now();
        let lane_mix = Mix { large_per_mille: 0, child_per_mille: 0 };
        let body = |lane: usize, view: &mut holdfast_session::PhaseLane<'_, '_>| {
            let mut rng = Rng::new(seed ^ (lane as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            for _ in 0..ops_per_lane {
                let case = Case::random(&mut rng, lane_mix);
                let out = case.run_checked(view)?;
                view.recycle(out);
            }
            if failing.is_some_and(|f| f % view.lanes() == lane) {
                return Err(LANE_ERROR.to_owned());
            }
            if panicking && lane + 1 == view.lanes() {
                inject(Injected::InLane);
            }
            Ok(())
        };
        let outcome = expect_injected(Injected::InLane, || {
            session.phase(|phase| {
                let first = phase.run(body);
                let again = phase.run(|_, _| Ok::<(), String>(()));
                (first, again, phase.lanes())
            })
        })?;
        self.stats.phase_runs += 1;
        let Some(phased) = outcome else {
            ensure!(panicking, "a phase lane panicked without an injected panic");
            self.stats.count_panic(Injected::InLane);
            return Ok(());
        };
        let (first, again, lanes) = phased.map_err(|e| format!("phase refused: {e}"))?;
        ensure!(!panicking, "the injected lane panic was not resumed");
        again.map_err(|e| format!("the phase did not run again after a failed run: {e}"))?;
        match (first, failing) {
            (Ok(()), None) => Ok(()),
            (Err(holdfast_session::PhaseRunError::Lane { lane, error, .. }), Some(f))
                if error == LANE_ERROR && lane == f % lanes =>
            {
                self.stats.lane_errors += 1;
                Ok(())
            }
            (other, _) => Err(format!("phase run (injected failure {failing:?}): {other:?}")),
        }
    }

    /// A scoped entry (one admission for one callback), sometimes panicking inside.
    fn scoped(&mut self, e: usize) -> Result<(), String> {
        let engine = self.engine(e);
        let shared = self.shared;
        self.shared.set_phase(self.id, Phase::Scoped);
        let cases: Vec<Case> = (0..self.rng.range(1, 3))
            .map(|_| Case::random(&mut self.rng, self.knobs.mix))
            .collect();
        let panic = self.panic_now();
        let caught = expect_injected(Injected::InScoped, || {
            engine.backend.with_backend_session(|v| -> Result<u64, String> {
                engine.checkouts.fetch_add(1, Ordering::Relaxed);
                let _hold = shared.hold_begin(current_owner())?;
                for case in &cases {
                    case.run_checked(v)?;
                }
                if panic {
                    inject(Injected::InScoped);
                }
                Ok(cases.len() as u64)
            })
        })?;
        match caught {
            Some(Ok(Ok(n))) if !panic => {
                self.stats.operations += n;
                self.stats.scoped_entries += 1;
            }
            Some(Ok(Err(e))) => return Err(e),
            Some(Err(err)) => return Err(format!("{}: scoped entry refused: {err}", engine.name)),
            Some(Ok(Ok(_))) => return Err("the injected panic did not fire".into()),
            None => self.stats.count_panic(Injected::InScoped),
        }
        self.after_release(engine)
    }

    /// A shared scope with a few scoped entries, sometimes panicking between them.
    fn scope(&mut self, e: usize) -> Result<(), String> {
        let engine = self.engine(e);
        let shared = self.shared;
        self.shared.set_phase(self.id, Phase::Scope);
        let entries: Vec<Case> = (0..self.rng.range(1, 3))
            .map(|_| Case::random(&mut self.rng, self.knobs.mix))
            .collect();
        let probe_reentry = self.rng.chance(300);
        let panic = self.panic_now();
        let caught = expect_injected(Injected::InScope, || {
            engine.backend.with_execution_scope(|| -> Result<u64, String> {
                let mut hold = None;
                for case in &entries {
                    ensure!(
                        current_cpu_execution() == CpuThreadExecution::SharedScope,
                        "inside a scope, between entries: {:?}",
                        current_cpu_execution()
                    );
                    engine
                        .backend
                        .with_backend_session(|v| -> Result<(), String> {
                            engine.checkouts.fetch_add(1, Ordering::Relaxed);
                            if hold.is_none() {
                                hold = Some(shared.hold_begin(current_owner())?);
                            }
                            case.run_checked(v).map(drop)
                        })
                        .map_err(|err| {
                            format!("{}: entry in a scope refused: {err}", engine.name)
                        })??;
                    if probe_reentry {
                        let held = engine.backend.open_session().map(drop);
                        ensure!(
                            matches!(held, Err(SessionEntryError::Reentered { .. })),
                            "a held root inside a shared scope: {held:?}"
                        );
                    }
                }
                if panic {
                    inject(Injected::InScope);
                }
                drop(hold);
                Ok(entries.len() as u64)
            })
        })?;
        match caught {
            Some(Ok(Ok(n))) if !panic => {
                self.stats.operations += n;
                self.stats.scopes += 1;
                self.stats.scoped_entries += n;
            }
            Some(Ok(Err(e))) => return Err(e),
            Some(Err(err)) => return Err(format!("{}: scope refused: {err}", engine.name)),
            Some(Ok(Ok(_))) => return Err("the injected panic did not fire".into()),
            None => self.stats.count_panic(Injected::InScope),
        }
        self.after_release(engine)
    }

    /// A management call from an idle thread: `Ok` or `Busy`, never a wait or poison.
    fn management(&mut self, e: usize) -> Result<(), String> {
        let engine = self.engine(e);
        let b = &engine.backend;
        self.shared.set_phase(self.id, Phase::Management);
        let outcome = match self.rng.below(6) {
            0 => b.buffer_pool_len().map(drop),
            1 => match b.buffer_pool_stats() {
                Ok(s) => {
                    ensure!(
                        s.in_flight == 0,
                        "{}: {} buffers in flight while idle",
                        engine.name,
                        s.in_flight
                    );
                    ensure!(
                        s.retained_bytes <= engine.retention_limit,
                        "{}: retained {} > limit",
                        engine.name,
                        s.retained_bytes
                    );
                    Ok(())
                }
                Err(e) => Err(e),
            },
            2 => b.indexed_plan_cache_stats().map(drop),
            3 => b.gemm_analysis_cache_stats().map(drop),
            4 => b.trim(),
            _ => b.clear_runtime_caches(),
        };
        match outcome {
            Ok(()) => self.stats.management_ok += 1,
            Err(ManagementError::Busy) => self.stats.management_busy += 1,
            Err(err) => return Err(format!("{}: management failed: {err}", engine.name)),
        }
        Ok(())
    }

    /// An entry on a child handle whose parent has ended: refused, never waits.
    fn stale_child_entry(&mut self) -> Result<(), String> {
        let Some(child) = self.stale_child.take() else { return Ok(()) };
        let outcome = child.with_backend_session(|_| ());
        ensure!(
            matches!(outcome, Err(SessionEntryError::Reentered { .. })),
            "an entry on a stale child handle: {outcome:?}"
        );
        self.stats.stale_child_refusals += 1;
        Ok(())
    }

    /// After a release: a management sample (racing the next holder) sees a whole pool.
    fn after_release(&mut self, engine: &Engine) -> Result<(), String> {
        match engine.backend.buffer_pool_stats() {
            Ok(s) => {
                ensure!(
                    s.in_flight == 0,
                    "{}: {} buffers in flight after release",
                    engine.name,
                    s.in_flight
                );
                ensure!(
                    s.retained_bytes <= engine.retention_limit,
                    "{}: retained {} > limit {}",
                    engine.name,
                    s.retained_bytes,
                    engine.retention_limit
                );
                self.stats.management_ok += 1;
            }
            Err(ManagementError::Busy) => self.stats.management_busy += 1,
            Err(err) => return Err(format!("{}: management after release: {err}", engine.name)),
        }
        Ok(())
    }
}
