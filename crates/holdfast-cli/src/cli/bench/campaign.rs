//! The measurement of one case on one engine, four ways (SPEC M1): the kernels called directly,
//! a held session, a scoped entry per operation, and the naive baseline; cold (the first
//! operation after the resources were emptied) and warm (the median of timed rounds); and the
//! counters of SPEC M2 over the same timed rounds.
//!
//! Invariant: the ways take turns round by round (direct, held, scoped, naive, direct, …), so a
//! load spike on a shared machine hits all of them alike; every way keeps its own result slot,
//! so the buffers it recycles go back to its own pool; and everything a counter reads outside
//! the operation path (management calls, session open and close) happens outside the timed and
//! counted region.

use std::time::{Duration, Instant};

use holdfast::layers::tensor::copy_stats;
use holdfast::{CpuBackend, ResourceLimits, Tensor};

use super::super::baseline::{Direct, NaiveEngine};
use super::super::error::CliError;
use super::super::exec::{Exec, Held, Op, Scoped};
use super::super::measure::relative_difference;
use super::cases::Case;

/// A way of entering the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// The kernels on resources the caller owns: no lock, no admission, no install per call.
    Direct,
    /// One held session for the round; `with_session` per operation.
    Held,
    /// `with_backend_session` per operation.
    Scoped,
    /// A mutex around the resources and a pool install per operation.
    Naive,
}

impl Way {
    /// Every way, in the order they take turns and appear in tables.
    pub(crate) const ALL: [Way; 4] = [Way::Direct, Way::Held, Way::Scoped, Way::Naive];

    /// The name in tables and JSON.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Way::Direct => "direct",
            Way::Held => "held",
            Way::Scoped => "scoped",
            Way::Naive => "naive",
        }
    }

    const fn index(self) -> usize {
        match self {
            Way::Direct => 0,
            Way::Held => 1,
            Way::Scoped => 2,
            Way::Naive => 3,
        }
    }
}

/// Totals of the counted rounds of one way (divide by `ops` for per-operation figures).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counters {
    /// Operations counted.
    pub(crate) ops: u64,
    /// Heap allocations made on the calling thread (the program's counting allocator).
    pub(crate) allocations: u64,
    /// Bytes of those allocations.
    pub(crate) allocated_bytes: u64,
    /// Acquisitions of the engine's resource-slot mutex.
    pub(crate) slot_locks: u64,
    /// Acquisitions of the admission arbiter's mutex.
    pub(crate) arbiter_locks: u64,
    /// Acquisitions of the naive baseline's resource mutex.
    pub(crate) baseline_locks: u64,
    /// Pool installs; `None` where the way does not report them (scoped entries keep their
    /// session's telemetry to themselves).
    pub(crate) pool_installs: Option<u64>,
    /// Plans prepared (GEMM analysis and einsum plan cache misses).
    pub(crate) plan_preparations: u64,
    /// Plans found in a cache.
    pub(crate) plan_hits: u64,
    /// Buffers the pool served from its retained set.
    pub(crate) buffer_hits: u64,
    /// Buffers the pool had to allocate.
    pub(crate) buffer_misses: u64,
    /// Element copies counted by the tensor layer on the calling thread.
    pub(crate) copies: u64,
}

impl Counters {
    fn add(&mut self, other: &Counters) {
        self.ops += other.ops;
        self.allocations += other.allocations;
        self.allocated_bytes += other.allocated_bytes;
        self.slot_locks += other.slot_locks;
        self.arbiter_locks += other.arbiter_locks;
        self.baseline_locks += other.baseline_locks;
        self.pool_installs = match (self.pool_installs, other.pool_installs) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.plan_preparations += other.plan_preparations;
        self.plan_hits += other.plan_hits;
        self.buffer_hits += other.buffer_hits;
        self.buffer_misses += other.buffer_misses;
        self.copies += other.copies;
    }

    /// `total / ops` (0 when nothing was counted).
    pub(crate) fn per_op(&self, total: u64) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
        if self.ops == 0 { 0.0 } else { total as f64 / self.ops as f64 }
    }
}

/// What one way measured on one case.
#[derive(Debug, Clone)]
pub(crate) struct WayResult {
    /// The way.
    pub(crate) way: Way,
    /// Nanoseconds of the first operation after the resources were emptied, one per sample,
    /// sorted.
    pub(crate) cold_ns: Vec<f64>,
    /// Nanoseconds per operation of each timed round, sorted.
    pub(crate) warm_ns: Vec<f64>,
    /// Counters over the timed rounds.
    pub(crate) counters: Counters,
}

/// What one case measured.
#[derive(Debug, Clone)]
pub(crate) struct CaseResult {
    /// The case's name.
    pub(crate) name: String,
    /// Its family.
    pub(crate) family: &'static str,
    /// Operations per timed round.
    pub(crate) ops_per_round: u64,
    /// Timed rounds per way.
    pub(crate) rounds: usize,
    /// One result per way, in [`Way::ALL`] order.
    pub(crate) ways: Vec<WayResult>,
    /// The largest relative difference of any way's result from the direct one.
    pub(crate) max_difference: f64,
    /// The direct way's result, summed and summed in squares: what a peer that ran the same
    /// operands (the bench report's peers) is checked against.
    pub(crate) digest: Option<[f64; 2]>,
}

/// How much measuring a case may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Timed rounds per way at most.
    pub(crate) rounds: usize,
    /// Cold samples per way at most.
    pub(crate) cold: usize,
    /// Target length of one timed round (small operations repeat inside it).
    pub(crate) round: Duration,
    /// Time all ways together may spend on a case's timed rounds; slow cases get fewer rounds
    /// (at least one).
    pub(crate) per_case: Duration,
}

/// Operations slower than this get a warm-up round of one operation (faster ones get at least
/// two).
const SLOW_OP: Duration = Duration::from_millis(100);

/// The four ways on one engine.
#[derive(Debug)]
pub(crate) struct Ways<'b> {
    backend: &'b CpuBackend,
    direct: Direct,
    naive: NaiveEngine<'b>,
}

/// Cache and pool statistics of one way's resources, summed.
#[derive(Debug, Clone, Copy, Default)]
struct ResourceCounts {
    plan_misses: u64,
    plan_hits: u64,
    buffer_hits: u64,
    buffer_misses: u64,
}

impl<'b> Ways<'b> {
    /// The ways on `backend`: the direct and naive ways get resources of their own, bounded by
    /// `limits` (give the engine the same), and use the engine's pool and thread budget.
    ///
    /// # Errors
    ///
    /// When the baseline's pool cannot start.
    pub(crate) fn new(backend: &'b CpuBackend, limits: ResourceLimits) -> Result<Self, CliError> {
        Ok(Ways {
            backend,
            direct: Direct::new(backend.threads(), limits),
            naive: NaiveEngine::new(backend, limits)?,
        })
    }

    /// Empties `way`'s pool and plan caches, so its next operation is cold.
    fn reset(&mut self, way: Way) -> Result<(), CliError> {
        match way {
            Way::Direct => self.direct.reset(),
            Way::Naive => self.naive.reset(),
            Way::Held | Way::Scoped => {
                self.backend.trim().map_err(management)?;
                self.backend.clear_runtime_caches().map_err(management)?;
            }
        }
        Ok(())
    }

    fn resource_counts(&mut self, way: Way) -> Result<ResourceCounts, CliError> {
        let read = |r: &holdfast::layers::resources::EngineResources| {
            let (g, i, b) =
                (r.gemm_analysis_cache.stats(), r.indexed_plan_cache.stats(), r.buffers.stats());
            ResourceCounts {
                plan_misses: g.misses + i.misses,
                plan_hits: g.hits + i.hits,
                buffer_hits: b.hits,
                buffer_misses: b.misses,
            }
        };
        Ok(match way {
            Way::Direct => read(&self.direct.resources),
            Way::Naive => self.naive.with_resources(read),
            Way::Held | Way::Scoped => {
                let g = self.backend.gemm_analysis_cache_stats().map_err(management)?;
                let i = self.backend.indexed_plan_cache_stats().map_err(management)?;
                let b = self.backend.buffer_pool_stats().map_err(management)?;
                ResourceCounts {
                    plan_misses: g.misses + i.misses,
                    plan_hits: g.hits + i.hits,
                    buffer_hits: b.hits,
                    buffer_misses: b.misses,
                }
            }
        })
    }

    /// Runs `k` operations `way`'s way, timed and counted; the last result stays in `out`.
    fn round(
        &mut self,
        way: Way,
        op: Op<'_>,
        k: u64,
        out: &mut Option<Tensor<f64>>,
    ) -> Result<(Duration, Counters), CliError> {
        let before = self.resource_counts(way)?;
        let (elapsed, mut counters) = match way {
            Way::Direct => {
                let (direct, backend) = (&mut self.direct, self.backend);
                match backend.domain().pool().filter(|_| backend.threads() > 1) {
                    // One install for the whole round: each call sees its parallelism.
                    Some(pool) => pool.install(|| counted(backend, direct, op, k, out))?,
                    None => counted(backend, direct, op, k, out)?,
                }
            }
            Way::Held => {
                let mut session = self.backend.open_session()?;
                let stats = session.stats();
                let run = counted(self.backend, &mut Held(&mut session), op, k, out);
                let installs = session.stats().pool_installs - stats.pool_installs;
                session.close()?;
                let (elapsed, mut counters) = run?;
                counters.pool_installs = Some(installs);
                (elapsed, counters)
            }
            Way::Scoped => counted(self.backend, &mut Scoped(self.backend), op, k, out)?,
            Way::Naive => {
                let (locks, installs) = (self.naive.locks(), self.naive.installs());
                let (elapsed, mut counters) = counted(self.backend, &mut self.naive, op, k, out)?;
                counters.baseline_locks = self.naive.locks() - locks;
                counters.pool_installs = Some(self.naive.installs() - installs);
                (elapsed, counters)
            }
        };
        if way == Way::Direct {
            counters.pool_installs = Some(0);
        }
        let after = self.resource_counts(way)?;
        counters.plan_preparations = after.plan_misses - before.plan_misses;
        counters.plan_hits = after.plan_hits - before.plan_hits;
        counters.buffer_hits = after.buffer_hits - before.buffer_hits;
        counters.buffer_misses = after.buffer_misses - before.buffer_misses;
        Ok((elapsed, counters))
    }

    /// The first operation after `way`'s resources were emptied, timed. The result stays in
    /// `out`, so the next operation gives its buffer back to the pool (as a warm caller's would).
    fn cold(
        &mut self,
        way: Way,
        op: Op<'_>,
        out: &mut Option<Tensor<f64>>,
    ) -> Result<Duration, CliError> {
        // A result from before the reset is dropped, not given to the emptied pool.
        *out = None;
        self.reset(way)?;
        Ok(self.round(way, op, 1, out)?.0)
    }

    /// Measures `case` every way within `budget`.
    ///
    /// # Errors
    ///
    /// The first failing entry or operation, or results that differ between ways.
    pub(crate) fn measure(&mut self, case: &Case, budget: Budget) -> Result<CaseResult, CliError> {
        let reads = case.reads();
        let op = case.op(&reads);
        let mut results: Vec<WayResult> = Way::ALL
            .iter()
            .map(|&way| WayResult {
                way,
                cold_ns: Vec::new(),
                warm_ns: Vec::new(),
                counters: Counters::default(),
            })
            .collect();

        // Cold samples, ways taking turns, until the count or an eighth of the budget is spent.
        let mut outs: [Option<Tensor<f64>>; 4] = Default::default();
        let started = Instant::now();
        for _ in 0..budget.cold.max(1) {
            for way in Way::ALL {
                let ns = self.cold(way, op, &mut outs[way.index()])?.as_secs_f64() * 1e9;
                results[way.index()].cold_ns.push(ns);
            }
            if started.elapsed() > budget.per_case / 8 {
                break;
            }
        }

        // Operations per round, from one warm direct operation.
        let (one, _) = self.round(Way::Direct, op, 1, &mut outs[0])?;
        let k = ops_per_round(one, budget.round);
        // A warm-up round. Fast operations: at least two, so the second finds the first one's
        // output back in the pool. Slow ones: one for every way but direct, whose timing
        // operation above was its own, so that every way's pool has seen one operation after
        // its cold one before the counted rounds (with only the cold one, the held way's pool on
        // gm_queen missed once more per operation than the direct way's).
        if one < SLOW_OP {
            for way in Way::ALL {
                self.round(way, op, k.max(2), &mut outs[way.index()])?;
            }
        } else {
            for way in [Way::Held, Way::Scoped, Way::Naive] {
                self.round(way, op, 1, &mut outs[way.index()])?;
            }
        }
        #[allow(clippy::cast_precision_loss, reason = "durations and counts are small")]
        let round_estimate = one.as_secs_f64() * k as f64 * 4.0;
        let rounds = rounds_within(budget, round_estimate);
        for _ in 0..rounds {
            for way in Way::ALL {
                let (elapsed, counters) = self.round(way, op, k, &mut outs[way.index()])?;
                let result = &mut results[way.index()];
                #[allow(clippy::cast_precision_loss, reason = "k is far below 2^52")]
                result.warm_ns.push(elapsed.as_secs_f64() * 1e9 / k as f64);
                result.counters.add(&counters);
            }
        }
        for r in &mut results {
            r.cold_ns.sort_by(f64::total_cmp);
            r.warm_ns.sort_by(f64::total_cmp);
        }
        let max_difference = match &outs {
            [Some(direct), rest @ ..] => rest
                .iter()
                .map(|o| o.as_ref().map_or(f64::INFINITY, |o| relative_difference(o, direct)))
                .fold(0.0, f64::max),
            _ => f64::INFINITY,
        };
        let digest = outs[0].as_ref().map(|t| {
            let values = t.as_slice();
            [values.iter().sum(), values.iter().map(|x| x * x).sum()]
        });
        Ok(CaseResult {
            name: case.name.clone(),
            family: case.family,
            ops_per_round: k,
            rounds,
            ways: results,
            max_difference,
            digest,
        })
    }
}

/// Runs `k` operations through `exec`, timed, counting allocations, copies and the engine's
/// lock acquisitions around them.
fn counted(
    backend: &CpuBackend,
    exec: &mut impl Exec,
    op: Op<'_>,
    k: u64,
    out: &mut Option<Tensor<f64>>,
) -> Result<(Duration, Counters), CliError> {
    let (slot, arbiter, copies) =
        (backend.slot_lock_acquisitions(), backend.arbiter_lock_acquisitions(), copy_stats());
    let mut timed = Ok(Duration::ZERO);
    let allocations = crate::cli::alloc_count::measure(|| {
        let start = Instant::now();
        timed = (0..k).try_for_each(|_| exec.apply(op, out)).map(|()| start.elapsed());
    });
    let elapsed = timed?;
    let counters = Counters {
        ops: k,
        allocations: allocations.count,
        allocated_bytes: allocations.bytes,
        slot_locks: backend.slot_lock_acquisitions() - slot,
        arbiter_locks: backend.arbiter_lock_acquisitions() - arbiter,
        copies: copy_stats().since(copies).elements,
        ..Counters::default()
    };
    Ok((elapsed, counters))
}

/// Operations per round so that a round lasts about `round` when one takes `one`.
fn ops_per_round(one: Duration, round: Duration) -> u64 {
    let one = one.as_nanos().max(1);
    u64::try_from(round.as_nanos() / one).unwrap_or(u64::MAX).clamp(1, 1_000_000)
}

/// Timed rounds that fit the case budget when all ways' rounds take `round_seconds` together.
fn rounds_within(budget: Budget, round_seconds: f64) -> usize {
    let fit = budget.per_case.as_secs_f64() / round_seconds.max(1e-9);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to a small positive range"
    )]
    let fit = fit.clamp(1.0, 1e6) as usize;
    fit.clamp(1, budget.rounds.max(1))
}

fn management(e: holdfast::layers::resources::ManagementError) -> CliError {
    CliError::Usage(format!("management call failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{Budget, ops_per_round, rounds_within};
    use std::time::Duration;

    #[test]
    fn rounds_repeat_small_operations_and_shrink_for_slow_ones() {
        let round = Duration::from_millis(2);
        assert_eq!(ops_per_round(Duration::from_nanos(100), round), 20_000);
        assert_eq!(ops_per_round(Duration::from_secs(3), round), 1);
        let budget = Budget { rounds: 11, cold: 5, round, per_case: Duration::from_secs(4) };
        assert_eq!(rounds_within(budget, 0.008), 11);
        assert_eq!(rounds_within(budget, 1.0), 4);
        assert_eq!(rounds_within(budget, 30.0), 1);
    }
}
