//! The ways that run without a held session: the naive baseline of SPEC M1 ([`NaiveEngine`],
//! over the session layer's `NaiveBaseline`: resources behind a `Mutex`, locked for every call,
//! and the engine's pool installed around every call, whatever its size) and, for `bench`, the
//! kernels called directly on resources the caller owns ([`Direct`]: no lock, no install, no
//! view).
//!
//! Both use the same resources as a session (the buffer pool through a loan, the GEMM analysis
//! cache, the einsum plan cache) and the same kernels with the same parallelism argument, so
//! the difference to a held session is only what entering costs. Kernels still run serially
//! below their family's threshold, as they do in a session.

use std::num::NonZeroUsize;

use holdfast::layers::kernels::einsum::einsum_cached;
use holdfast::layers::kernels::linalg::{self, LinalgScratch};
use holdfast::layers::kernels::{Family, KernelAlloc, KernelError, Par, elementwise};
use holdfast::layers::provider::threshold;
use holdfast::layers::resources::{
    BufferPoolLoan, EinsumPlanCache, EngineResources, GemmAnalysisCache,
};
use holdfast::layers::session::NaiveBaseline;
use holdfast::{CpuBackend, ResourceLimits, Tensor, Truncation};

use super::error::CliError;
use super::exec::{Exec, Factorization, Op, Step, apply_in_view, update_in_view};

/// The kernels' parallelism argument for a thread budget.
pub(crate) fn par_for(threads: usize) -> Par {
    match NonZeroUsize::new(threads) {
        Some(n) if n.get() > 1 => Par::Rayon(n, &holdfast::layers::provider::FAN_OUT),
        _ => Par::Seq,
    }
}

/// `op` by calling the kernels directly, plans from the caches, outputs and the factors a
/// factorization does not keep from `loan` (and back to it).
fn run_kernel(
    op: Op<'_>,
    resources: &mut ResourcesInLoan<'_, '_>,
    par: Par,
) -> Result<Tensor<f64>, KernelError> {
    let ResourcesInLoan { gemm, plans, linalg: scratch, loan } = resources;
    match op {
        Op::Add(a, b) => elementwise::add(a.read(), b.read(), &mut **loan, par),
        Op::Matmul(a, b) => {
            let (a, b) = (a.read(), b.read());
            let plan = gemm.get_or_prepare(a.layout(), b.layout())?;
            plan.execute(&a, &b, &mut **loan, par)
        }
        Op::Einsum { spec, operands, path } => {
            einsum_cached(spec, operands, path, &mut **plans, &mut **loan, par)
        }
        Op::Factor(which, a) => {
            let par = factor_par(which, a, par);
            let loan = &mut **loan;
            match which {
                Factorization::Svd => {
                    let f = linalg::svd(a.read(), &[0], Truncation::none(), scratch, loan, par)?;
                    loan.give(f.u.into_parts().0);
                    loan.give(f.vh.into_parts().0);
                    Ok(f.s)
                }
                Factorization::Qr => {
                    let (q, r) = linalg::qr(a.read(), &[0], scratch, loan, par)?;
                    loan.give(q.into_parts().0);
                    Ok(r)
                }
                Factorization::Eigh => {
                    let (w, v) = linalg::eigh(a.read(), scratch, loan, par)?;
                    loan.give(v.into_parts().0);
                    Ok(w)
                }
            }
        }
    }
}

/// The parallelism a session gives `which` of `a`: its GEMM route at the factorization's
/// flop count ([`linalg::factor_flops`], [`linalg::eigh_flops`]), serial below the GEMM
/// family's threshold.
fn factor_par(which: Factorization, a: &Tensor<f64>, par: Par) -> Par {
    let &[m, n] = a.shape() else { return par };
    let flops = if which == Factorization::Eigh {
        linalg::eigh_flops(n)
    } else {
        linalg::factor_flops(m, n)
    };
    if flops < threshold(Family::Gemm) { Par::Seq } else { par }
}

/// The resources one direct call uses, with the pool lent out.
struct ResourcesInLoan<'r, 'l> {
    gemm: &'r mut GemmAnalysisCache,
    plans: &'r mut EinsumPlanCache,
    linalg: &'r mut LinalgScratch,
    loan: &'r mut BufferPoolLoan<'l>,
}

/// Runs `op` on `resources` under one loan and stores the result in `out`, giving the tensor
/// `out` held before back to the pool.
fn apply_on(
    resources: &mut EngineResources,
    op: Op<'_>,
    out: &mut Option<Tensor<f64>>,
    par: Par,
) -> Result<(), CliError> {
    let EngineResources { buffers, gemm_analysis_cache, indexed_plan_cache, linalg, .. } =
        resources;
    let mut loan = buffers.loan();
    let next = run_kernel(
        op,
        &mut ResourcesInLoan {
            gemm: gemm_analysis_cache,
            plans: indexed_plan_cache,
            linalg,
            loan: &mut loan,
        },
        par,
    );
    loan.finish();
    if let Some(old) = out.replace(next?) {
        buffers.give(old.into_parts().0);
    }
    Ok(())
}

/// Replaces `acc` by `step(acc)` on `resources`, giving the old buffer back to the pool.
fn update_on(
    resources: &mut EngineResources,
    acc: &mut Tensor<f64>,
    step: Step<'_>,
    par: Par,
) -> Result<(), CliError> {
    let mut next = None;
    step.with_op(acc, |op| apply_on(resources, op, &mut next, par))?;
    if let Some(next) = next {
        let (old, _) = std::mem::replace(acc, next).into_parts();
        resources.buffers.give(old);
    }
    Ok(())
}

/// The naive baseline as an [`Exec`]: the session layer's [`NaiveBaseline`] (its resources
/// behind a mutex, locked for every call, and the engine's pool installed around every call),
/// each operation run on its view exactly as a held session runs it.
#[derive(Debug)]
pub(crate) struct NaiveEngine<'b> {
    baseline: NaiveBaseline<'b>,
    limits: ResourceLimits,
}

impl<'b> NaiveEngine<'b> {
    /// A baseline on `backend`'s pool and thread budget, with resources bounded by `limits`.
    ///
    /// # Errors
    ///
    /// When the engine has no pool and a one-thread pool cannot start, or when called inside
    /// an execution.
    pub(crate) fn new(backend: &'b CpuBackend, limits: ResourceLimits) -> Result<Self, CliError> {
        let baseline = NaiveBaseline::new(backend, limits)
            .map_err(|e| CliError::Usage(format!("cannot build the naive baseline: {e}")))?;
        Ok(NaiveEngine { baseline, limits })
    }

    /// Forgets every retained buffer and cached plan (the next call is cold).
    pub(crate) fn reset(&mut self) {
        let limits = self.limits;
        self.baseline.with_resources(|r| *r = EngineResources::with_limits(limits));
    }

    /// Reads the resources (for their statistics).
    pub(crate) fn with_resources<R>(&mut self, f: impl FnOnce(&EngineResources) -> R) -> R {
        self.baseline.with_resources(|r| f(r))
    }

    /// Acquisitions of the resource mutex so far (one per call, counted, not assumed).
    pub(crate) fn locks(&self) -> u64 {
        self.baseline.stats().locks
    }

    /// Pool installs so far (one per call).
    pub(crate) fn installs(&self) -> u64 {
        self.baseline.stats().installs
    }
}

impl Exec for NaiveEngine<'_> {
    fn apply(&mut self, op: Op<'_>, out: &mut Option<Tensor<f64>>) -> Result<(), CliError> {
        Ok(self.baseline.with_view(|v| apply_in_view(v, op, out))?)
    }

    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        Ok(self.baseline.with_view(|v| update_in_view(v, acc, step))?)
    }
}

/// The kernels called directly on resources the caller owns: no lock, no admission, no
/// install. With a budget above one, `bench` runs a whole round inside one install of the
/// engine's pool, so each call still sees its parallelism.
#[derive(Debug)]
pub(crate) struct Direct {
    /// The resources, owned.
    pub(crate) resources: EngineResources,
    limits: ResourceLimits,
    par: Par,
}

impl Direct {
    /// Direct calls with the parallelism of a `threads` budget, on resources bounded by
    /// `limits`.
    pub(crate) fn new(threads: usize, limits: ResourceLimits) -> Self {
        Direct { resources: EngineResources::with_limits(limits), limits, par: par_for(threads) }
    }

    /// Forgets every retained buffer and cached plan (the next call is cold).
    pub(crate) fn reset(&mut self) {
        self.resources = EngineResources::with_limits(self.limits);
    }
}

impl Exec for Direct {
    fn apply(&mut self, op: Op<'_>, out: &mut Option<Tensor<f64>>) -> Result<(), CliError> {
        apply_on(&mut self.resources, op, out, self.par)
    }

    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        update_on(&mut self.resources, acc, step, self.par)
    }
}
