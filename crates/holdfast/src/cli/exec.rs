//! [`Exec`]: one way of running an operation on the engine, so that a workload is written once
//! and measured three ways (SPEC M1): a held session ([`Held`]), a scoped entry per operation
//! ([`Scoped`]) and the naive baseline ([`NaiveEngine`](super::baseline::NaiveEngine)).
//!
//! Invariant: every executor runs a [`Step`] through the same kernels with the same plan and
//! the same parallelism decision, and gives the replaced accumulator's buffer back to the pool in
//! the **same** entry as the operation, so the three ways do identical numerical work and differ
//! only in what entering costs. `bench` reuses these executors.

use holdfast::{CpuBackend, CpuExecSession, CpuHeldSession, OpError, Tensor};

use super::error::CliError;

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

/// A way of running operations on an engine.
pub(crate) trait Exec {
    /// Replaces `acc` by `step(acc)` in one entry, giving the old buffer back to the pool.
    ///
    /// # Errors
    ///
    /// When the entry or the operation fails.
    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError>;
}

/// `step(acc)` through an operation view.
pub(crate) fn apply_view(
    view: &mut CpuExecSession<'_>,
    acc: &Tensor<f64>,
    step: Step<'_>,
) -> Result<Tensor<f64>, OpError> {
    match step {
        Step::MatmulBy(rhs) => view.matmul(acc.read(), rhs.read()),
        Step::Einsum { spec, other } => view.einsum(spec, &[acc.read(), other.read()]),
    }
}

/// Replaces `acc` by `step(acc)` inside one view, recycling the old buffer.
fn update_in_view(
    view: &mut CpuExecSession<'_>,
    acc: &mut Tensor<f64>,
    step: Step<'_>,
) -> Result<(), OpError> {
    let next = apply_view(view, acc, step)?;
    view.recycle(std::mem::replace(acc, next));
    Ok(())
}

/// A held session: one admission for every operation (`open_session` once).
#[derive(Debug)]
pub(crate) struct Held<'s, 'b>(pub(crate) &'s mut CpuHeldSession<'b>);

impl Exec for Held<'_, '_> {
    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        Ok(self.0.with_session(|v| update_in_view(v, acc, step))?)
    }
}

/// A scoped entry per operation: admission, resources, marker and affinity every time.
#[derive(Debug)]
pub(crate) struct Scoped<'b>(pub(crate) &'b CpuBackend);

impl Exec for Scoped<'_> {
    fn update(&mut self, acc: &mut Tensor<f64>, step: Step<'_>) -> Result<(), CliError> {
        Ok(self.0.with_backend_session(|v| update_in_view(v, acc, step))??)
    }
}
