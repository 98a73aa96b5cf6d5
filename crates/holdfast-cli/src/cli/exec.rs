//! [`Exec`]: one way of running an operation on the engine, so that a workload is written once
//! and measured several ways (SPEC M1): a held session ([`Held`]), a scoped entry per operation
//! ([`Scoped`]), the naive baseline ([`NaiveEngine`](super::baseline::NaiveEngine)) and, for
//! `bench`, the kernels called directly ([`Direct`](super::baseline::Direct)).
//!
//! Invariant: every executor runs an [`Op`] through the same kernels with the same plan and the
//! same parallelism decision, and gives the replaced result's buffer back to the pool in the
//! **same** entry as the operation, so the ways do identical numerical work and differ only in
//! what entering costs.

use holdfast::{
    CpuBackend, CpuExecSession, CpuHeldSession, OpError, Tensor, TensorRead, Truncation,
};

use super::error::CliError;

/// One operation on borrowed operands.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op<'a> {
    /// `a + b`, elementwise with broadcasting.
    Add(&'a Tensor<f64>, &'a Tensor<f64>),
    /// `a · b` (2-D matrix product).
    Matmul(&'a Tensor<f64>, &'a Tensor<f64>),
    /// `einsum(spec, operands)`, following `path` when given.
    Einsum {
        /// The einsum spec.
        spec: &'a str,
        /// The operands.
        operands: &'a [TensorRead<'a, f64>],
        /// An opt_einsum-format path, or `None` for the greedy one.
        path: Option<&'a [(usize, usize)]>,
    },
    /// A factorization of a matrix (its rows against its columns).
    Factor(Factorization, &'a Tensor<f64>),
}

/// Which factorization an [`Op::Factor`] runs, and which of its outputs it keeps: the others go
/// back to the pool in the same entry, as a tensor-network code gives back the factor it has
/// absorbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Factorization {
    /// The full thin SVD (no truncation); keeps the singular values.
    Svd,
    /// The thin QR decomposition; keeps `r`.
    Qr,
    /// The Hermitian eigendecomposition (lower triangle read); keeps the eigenvalues.
    Eigh,
}

impl Factorization {
    /// Every factorization, in the order of the campaign's cases.
    pub(crate) const ALL: [Factorization; 3] =
        [Factorization::Svd, Factorization::Qr, Factorization::Eigh];

    /// The name in tables (`svd`, `qr`, `eigh`).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Factorization::Svd => "svd",
            Factorization::Qr => "qr",
            Factorization::Eigh => "eigh",
        }
    }
}

/// One operation of a workload, applied to an accumulator.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// `acc · rhs` (2-D matrix product).
    MatmulBy(&'a Tensor<f64>),
    /// `einsum(spec, [acc, other])`.
    Einsum {
        /// A two-operand einsum spec; `acc` is the first operand.
        spec: &'a str,
        /// The second operand.
        other: &'a Tensor<f64>,
    },
}

impl Step<'_> {
    /// The operation `self` applies to `acc`, handed to `f` (the einsum's operand list lives on
    /// this stack frame).
    pub(crate) fn with_op<R>(self, acc: &Tensor<f64>, f: impl FnOnce(Op<'_>) -> R) -> R {
        match self {
            Step::MatmulBy(rhs) => f(Op::Matmul(acc, rhs)),
            Step::Einsum { spec, other } => {
                let operands = [acc.read(), other.read()];
                f(Op::Einsum { spec, operands: &operands, path: None })
            }
        }
    }
}

/// A way of running operations on an engine.
pub(crate) trait Exec {
    /// Runs `op` in one entry and stores its result in `out`; the tensor `out` held before goes
    /// back to the pool in the same entry.
    ///
    /// # Errors
    ///
    /// When the entry or the operation fails (`out` is then left empty or unchanged).
    fn apply(&mut self, op: Op<'_>, out: &mut Option<Tensor<f64>>) -> Result<(), CliError>;

    /// Replaces `acc` by `step(acc)` in one entry, giving the old buffer back to the pool.
    ///
    /// # Errors
    ///
    /// When the entry or the operation fails.
    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError>;
}

/// `op` through an operation view.
pub(crate) fn run_in_view(
    view: &mut CpuExecSession<'_>,
    op: Op<'_>,
) -> Result<Tensor<f64>, OpError> {
    match op {
        Op::Add(a, b) => view.add(a.read(), b.read()),
        Op::Matmul(a, b) => view.matmul(a.read(), b.read()),
        Op::Einsum { spec, operands, path: Some(path) } => {
            view.einsum_with_path(spec, operands, path)
        }
        Op::Einsum { spec, operands, path: None } => view.einsum(spec, operands),
        Op::Factor(Factorization::Svd, a) => {
            let f = view.svd(a.read(), &[0], Truncation::none())?;
            view.recycle(f.u);
            view.recycle(f.vh);
            Ok(f.s)
        }
        Op::Factor(Factorization::Qr, a) => {
            let (q, r) = view.qr(a.read(), &[0])?;
            view.recycle(q);
            Ok(r)
        }
        Op::Factor(Factorization::Eigh, a) => {
            let (w, v) = view.eigh(a.read())?;
            view.recycle(v);
            Ok(w)
        }
    }
}

/// Runs `op` inside one view, recycling the tensor `out` held before.
pub(crate) fn apply_in_view(
    view: &mut CpuExecSession<'_>,
    op: Op<'_>,
    out: &mut Option<Tensor<f64>>,
) -> Result<(), OpError> {
    let next = run_in_view(view, op)?;
    if let Some(old) = out.replace(next) {
        view.recycle(old);
    }
    Ok(())
}

/// Replaces `acc` by `step(acc)` inside one view, recycling the old buffer.
pub(crate) fn update_in_view(
    view: &mut CpuExecSession<'_>,
    acc: &mut Tensor<f64>,
    step: Step<'_>,
) -> Result<(), OpError> {
    let next = step.with_op(acc, |op| run_in_view(view, op))?;
    view.recycle(std::mem::replace(acc, next));
    Ok(())
}

/// A held session: one admission for every operation (`open_session` once).
#[derive(Debug)]
pub(crate) struct Held<'s, 'b>(pub(crate) &'s mut CpuHeldSession<'b>);

impl Exec for Held<'_, '_> {
    fn apply(&mut self, op: Op<'_>, out: &mut Option<Tensor<f64>>) -> Result<(), CliError> {
        Ok(self.0.with_session(|v| apply_in_view(v, op, out))?)
    }

    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        Ok(self.0.with_session(|v| update_in_view(v, acc, step))?)
    }
}

/// A scoped entry per operation: admission, resources, marker and affinity every time.
#[derive(Debug)]
pub(crate) struct Scoped<'b>(pub(crate) &'b CpuBackend);

impl Exec for Scoped<'_> {
    fn apply(&mut self, op: Op<'_>, out: &mut Option<Tensor<f64>>) -> Result<(), CliError> {
        Ok(self.0.with_backend_session(|v| apply_in_view(v, op, out))??)
    }

    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        Ok(self.0.with_backend_session(|v| update_in_view(v, acc, step))??)
    }
}
