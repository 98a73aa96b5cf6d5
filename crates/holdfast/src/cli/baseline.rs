//! [`NaiveEngine`]: the naive baseline of SPEC M1: the engine's resources behind a `Mutex`, locked
//! for every call, and a rayon pool installed around every kernel call, whatever its size.
//!
//! This is what a caller writes without sessions. It uses the same resources as a session (the
//! buffer pool through a loan, the GEMM analysis cache, the einsum plan cache) and the same
//! kernels, so the difference to a held session is only the per-call lock and pool install.
//! The pool has the engine's thread budget; kernels still run serially below their family's
//! threshold, as they do in a session.

use std::num::NonZeroUsize;
use std::sync::Mutex;

use holdfast::Tensor;
use holdfast::layers::kernels::einsum::einsum_cached;
use holdfast::layers::kernels::{KernelAlloc, KernelError, Par};
use holdfast::layers::resources::{
    BufferPoolLoan, EngineResources, GemmAnalysisCache, IndexedPlanCache,
};

use super::error::CliError;
use super::exec::{Exec, Step};

/// Resources behind a mutex plus a pool installed per call.
#[derive(Debug)]
pub(crate) struct NaiveEngine {
    resources: Mutex<EngineResources>,
    pool: rayon::ThreadPool,
    par: Par,
}

impl NaiveEngine {
    /// A baseline with `threads` pool threads and default resources.
    ///
    /// # Errors
    ///
    /// When the pool cannot start.
    pub(crate) fn new(threads: usize) -> Result<Self, CliError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("naive-baseline-{i}"))
            .build()
            .map_err(|e| CliError::Usage(format!("cannot start the baseline's pool: {e}")))?;
        let par = match NonZeroUsize::new(threads) {
            Some(n) if n.get() > 1 => Par::Rayon(n),
            _ => Par::Seq,
        };
        Ok(NaiveEngine { resources: Mutex::new(EngineResources::default()), pool, par })
    }
}

/// `step(acc)` by calling the kernels directly on the resources.
fn apply_kernel(
    acc: &Tensor<f64>,
    step: Step<'_>,
    gemm: &mut GemmAnalysisCache,
    plans: &mut IndexedPlanCache,
    loan: &mut BufferPoolLoan<'_>,
    par: Par,
) -> Result<Tensor<f64>, KernelError> {
    match step {
        Step::MatmulBy(rhs) => {
            let (a, b) = (acc.read(), rhs.read());
            let plan = gemm.get_or_prepare(a.layout(), b.layout())?;
            plan.execute(&a, &b, loan, par)
        }
        Step::Einsum { spec, other } => {
            einsum_cached(spec, &[acc.read(), other.read()], None, plans, loan, par)
        }
    }
}

impl Exec for NaiveEngine {
    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        let mut guard = self
            .resources
            .lock()
            .map_err(|_| CliError::Usage("the baseline's resources are poisoned".into()))?;
        let EngineResources { buffers, gemm_analysis_cache, indexed_plan_cache, .. } = &mut *guard;
        let par = self.par;
        let current: &Tensor<f64> = acc;
        let next = self.pool.install(|| {
            let mut loan = buffers.loan();
            let out = apply_kernel(
                current,
                step,
                gemm_analysis_cache,
                indexed_plan_cache,
                &mut loan,
                par,
            );
            loan.finish();
            out
        })?;
        let (old, _) = std::mem::replace(acc, next).into_parts();
        buffers.give(old);
        Ok(())
    }
}
