//! The soak driver shared by the short soak (normal test suite) and the long one
//! (`cargo xtask soak`): N worker threads hammer two engines over the same CPUs with random
//! entries, checked operations (real and complex, factorizations, refusals), phase leases and
//! injected panics and lane errors, while a watchdog bounds the run.
//!
//! Invariants, checked continuously (by the workers) and at the end (by [`run`]):
//!
//! - **no deadlock**: every worker makes progress within `stall_limit`, and the run ends within
//!   `duration + hard_grace`; otherwise the run fails with each worker's phase (it never hangs);
//! - **FIFO admission**: successive holders' arrival tickets never decrease ([`shared`]);
//! - **one holder**: two reservations of overlapping CPUs are never held at once;
//! - **pool whole**: buffers in flight are 0 whenever the resources are in their slot, and
//!   retained bytes never exceed the retention limit (sampled after releases and at the end);
//! - **exactly-once return**: each engine's resource returns equal its checkouts;
//! - **results correct**: every operation's output matches a reference within 1e-12 relative;
//!   every factorization satisfies its identities within 1e-10 of the input's norm; every bad
//!   input (a NaN that faer cannot converge on, a malformed spec, mismatched shapes, a bad
//!   bipartition) is refused with its typed error ([`tn`]);
//! - **lane failures reported**: an injected lane error comes back as that lane's
//!   `PhaseRunError::Lane`, an injected lane panic is resumed after the join, and the phase runs
//!   again at once;
//! - **panics survived**: each injected panic is caught with its own payload, and the session
//!   (or the next one) keeps running correct operations.

pub mod cases;
pub mod histogram;
#[path = "../support/recycle.rs"]
pub mod recycle;
pub mod reference;
pub mod rng;
pub mod shared;
pub mod tn;
pub mod worker;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use holdfast_arbiter::ResourceArbiter;
use holdfast_resources::CacheLimits;
use holdfast_session::{CpuBackend, ResourceLimits};

use cases::Mix;
use shared::{Engine, Phase, Shared};
use worker::{INJECTED, Knobs, Worker, WorkerStats};

/// One soak run.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub threads: usize,
    pub duration: Duration,
    pub seed: u64,
    pub knobs: Knobs,
    /// A worker that makes no progress for this long fails the run (deadlock).
    pub stall_limit: Duration,
    /// The run fails if it has not ended `hard_grace` after `duration`.
    pub hard_grace: Duration,
    /// Print a progress line this often (long runs).
    pub progress_every: Option<Duration>,
}

impl Config {
    /// A run of `threads` workers for `duration`, with the default mix.
    pub fn new(threads: usize, duration: Duration, seed: u64) -> Self {
        Config {
            threads,
            duration,
            seed,
            knobs: Knobs {
                mix: Mix { large_per_mille: 5, child_per_mille: 60 },
                panic_per_mille: 25,
            },
            stall_limit: Duration::from_secs(60),
            hard_grace: Duration::from_secs(120),
            progress_every: None,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Report {
    pub config: Config,
    pub elapsed: Duration,
    pub totals: WorkerStats,
    pub fifo_checked: u64,
    pub returns: Vec<(&'static str, u64)>,
}

impl Report {
    /// Injected panics caught and survived.
    pub fn injected_panics(&self) -> u64 {
        self.totals.panics.iter().sum()
    }

    /// Checked operations per second.
    pub fn ops_per_second(&self) -> f64 {
        self.totals.operations as f64 / self.elapsed.as_secs_f64()
    }

    /// A human-readable summary.
    pub fn summary(&self) -> String {
        let t = &self.totals;
        let w = &t.admission_wait;
        let panics: Vec<String> =
            INJECTED.iter().zip(&t.panics).map(|(k, n)| format!("{k:?} {n}")).collect();
        format!(
            "soak: {} threads, {:.1} s, seed {:#x}\n\
             \x20 operations        {} checked ({:.0} ops/s); tensor-network cases {}\n\
             \x20 phase leases      {} runs checked ({} with an injected lane error)\n\
             \x20 held sessions     {} opened ({} closed, {} dropped); try refused {}, deadline timeouts {}\n\
             \x20 scoped entries    {} (in {} shared scopes); child entries {}; stale-child refusals {}\n\
             \x20 re-entry refused  {}; management {} ok / {} busy\n\
             \x20 admission wait    p50 {:?}, p90 {:?}, p99 {:?}, max {:?} over {} held opens ({} queued: p50 {:?}, p99 {:?})\n\
             \x20 FIFO              {} reservations checked in ticket order\n\
             \x20 injected panics   {} survived ({})\n\
             \x20 resource returns  {}",
            self.config.threads,
            self.elapsed.as_secs_f64(),
            self.config.seed,
            t.operations,
            self.ops_per_second(),
            t.tn_operations,
            t.phase_runs,
            t.lane_errors,
            t.held_opens,
            t.closes,
            t.drops,
            t.try_refused,
            t.deadline_timeouts,
            t.scoped_entries,
            t.scopes,
            t.child_entries,
            t.stale_child_refusals,
            t.reentry_refusals,
            t.management_ok,
            t.management_busy,
            w.quantile(0.5),
            w.quantile(0.9),
            w.quantile(0.99),
            w.max(),
            w.count(),
            w.nonzero(),
            w.quantile_nonzero(0.5),
            w.quantile_nonzero(0.99),
            self.fifo_checked,
            self.injected_panics(),
            panics.join(", "),
            self.returns.iter().map(|(n, r)| format!("{n} {r}")).collect::<Vec<_>>().join(", "),
        )
    }
}

/// The engines under test: both over every allowed CPU, on the process-wide arbiter, with small
/// pool and cache bounds so that eviction happens; one serial, one with every CPU as its budget.
fn engines() -> Result<Vec<Engine>, String> {
    let cpus = CpuBackend::try_default().map_err(|e| e.to_string())?.threads();
    let build = |name: &'static str, threads: usize, retention: usize| -> Result<Engine, String> {
        let limits = ResourceLimits {
            buffer_retention_bytes: retention,
            gemm_analysis_cache: CacheLimits::new(8, 16 << 10),
            indexed_plan_cache: CacheLimits::new(8, 64 << 10),
            ..ResourceLimits::default()
        };
        let backend = CpuBackend::builder()
            .threads(threads)
            .resource_limits(limits)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Engine { name, backend, retention_limit: retention, checkouts: Default::default() })
    };
    Ok(vec![build("serial", 1, 64 << 10)?, build("wide", cpus, 512 << 10)?])
}

/// Runs one soak; `Err` names the first violated invariant (or the stuck workers).
pub fn run(config: Config) -> Result<Report, String> {
    worker::install_panic_hook();
    let started = Instant::now();
    let shared = Arc::new(Shared::new(engines()?, config.threads, started + config.duration));
    let mut handles = Vec::new();
    for id in 0..config.threads {
        let shared = Arc::clone(&shared);
        let seed = config.seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let knobs = config.knobs;
        let handle = std::thread::Builder::new()
            .name(format!("soak-{}-{id}", config.threads))
            .spawn(move || {
                let result = Worker::new(&shared, id, seed, knobs).run();
                if let Err(e) = &result {
                    shared.fail(format!("worker {id}: {e}"));
                }
                shared.set_phase(id, Phase::Done);
                result
            })
            .map_err(|e| format!("cannot spawn a worker: {e}"))?;
        handles.push(handle);
    }
    watch(&shared, &config, started)?;
    let mut totals = WorkerStats::default();
    for handle in handles {
        match handle.join() {
            Ok(Ok(stats)) => totals.merge(&stats),
            Ok(Err(_)) => {}
            Err(_) => shared.fail("a worker panicked outside an injected fault".into()),
        }
    }
    let elapsed = started.elapsed();
    if let Some(failure) = shared.failure() {
        return Err(format!("soak failed (seed {:#x}): {failure}", config.seed));
    }
    let returns = final_checks(&shared)?;
    Ok(Report {
        config,
        elapsed,
        totals,
        fifo_checked: shared.fifo_checked.load(Ordering::Relaxed),
        returns,
    })
}

/// The watchdog: waits for every worker to finish, failing (never hanging) on a stall or when
/// the hard deadline passes. Prints progress lines when asked.
fn watch(shared: &Shared, config: &Config, started: Instant) -> Result<(), String> {
    let hard_deadline = started + config.duration + config.hard_grace;
    let mut last: Vec<(u64, Instant)> =
        (0..config.threads).map(|i| (shared.progress(i), started)).collect();
    let mut next_report = config.progress_every.map(|every| started + every);
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        let mut all_done = true;
        for (i, (seen, at)) in last.iter_mut().enumerate() {
            if shared.phase(i) == Phase::Done {
                continue;
            }
            all_done = false;
            let p = shared.progress(i);
            if p != *seen {
                *seen = p;
                *at = now;
            } else if now.duration_since(*at) > config.stall_limit {
                return Err(stuck(
                    shared,
                    config,
                    &format!("worker {i} made no progress for {:?}", config.stall_limit),
                ));
            }
        }
        if all_done {
            return Ok(());
        }
        if now > hard_deadline {
            return Err(stuck(shared, config, "the run did not end by its hard deadline"));
        }
        if let Some(at) = next_report
            && now >= at
        {
            let ops: u64 = (0..config.threads).map(|i| shared.progress(i)).sum();
            println!(
                "soak: {:>5.0} s, {ops} steps, {} reservations in FIFO order",
                now.duration_since(started).as_secs_f64(),
                shared.fifo_checked.load(Ordering::Relaxed)
            );
            next_report = config.progress_every.map(|every| at + every);
        }
    }
}

/// Stops the workers and describes where each one is (the stuck ones are left behind).
fn stuck(shared: &Shared, config: &Config, why: &str) -> String {
    shared.stop.store(true, Ordering::SeqCst);
    let phases: Vec<String> =
        (0..config.threads).map(|i| format!("{i}: {:?}", shared.phase(i))).collect();
    format!(
        "deadlock suspected (seed {:#x}): {why}; worker phases: {}",
        config.seed,
        phases.join(", ")
    )
}

/// End-of-run invariants: pools whole, every checkout returned exactly once, arbiter empty.
fn final_checks(shared: &Shared) -> Result<Vec<(&'static str, u64)>, String> {
    let mut returns = Vec::new();
    for engine in &shared.engines {
        let b = &engine.backend;
        let stats =
            b.buffer_pool_stats().map_err(|e| format!("{}: pool at the end: {e}", engine.name))?;
        if stats.in_flight != 0 {
            return Err(format!(
                "{}: {} buffers in flight at the end",
                engine.name, stats.in_flight
            ));
        }
        if stats.retained_bytes > engine.retention_limit {
            return Err(format!(
                "{}: retained {} > limit at the end",
                engine.name, stats.retained_bytes
            ));
        }
        let checkouts = engine.checkouts.load(Ordering::Relaxed);
        let returned = b.resource_returns();
        if returned != checkouts {
            return Err(format!("{}: {checkouts} checkouts but {returned} returns", engine.name));
        }
        returns.push((engine.name, returned));
    }
    let snapshot = ResourceArbiter::global().snapshot().map_err(|e| e.to_string())?;
    if (snapshot.holders, snapshot.waiters, snapshot.parked) != (0, 0, 0) {
        return Err(format!("arbiter not empty at the end: {snapshot:?}"));
    }
    Ok(returns)
}
