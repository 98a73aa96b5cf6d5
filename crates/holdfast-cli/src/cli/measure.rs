//! Measurement shared by `demo` (and the later `bench`): timing rounds of a workload, medians of
//! per-operation cost, and the relative difference of two results.
//!
//! Invariant: callers run a warm-up round before the timed ones (plans prepared, pool warm), and
//! every round performs the same operations, so the median per-operation cost is comparable
//! across ways. `demo` interleaves the ways round by round, so a load spike on a shared machine
//! hits all of them alike.

use std::time::Instant;

use holdfast::Tensor;

use super::error::CliError;
use super::exec::Exec;
use super::workload::Workload;

/// Per-operation costs of the timed rounds of one way of running a workload.
#[derive(Debug, Clone)]
pub(crate) struct Samples {
    /// Nanoseconds per operation, one value per timed round, sorted.
    pub(crate) ns_per_op: Vec<f64>,
}

impl Samples {
    /// Samples from per-round costs in any order.
    pub(crate) fn new(mut ns_per_op: Vec<f64>) -> Self {
        ns_per_op.sort_by(f64::total_cmp);
        Samples { ns_per_op }
    }

    /// The median per-operation cost (0 when empty).
    pub(crate) fn median(&self) -> f64 {
        median(&self.ns_per_op)
    }

    /// The fastest round's per-operation cost (0 when empty).
    pub(crate) fn min(&self) -> f64 {
        self.ns_per_op.first().copied().unwrap_or(0.0)
    }
}

/// The median of sorted `values` (0 when empty).
pub(crate) fn median(values: &[f64]) -> f64 {
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => 0.5 * (values[n / 2 - 1] + values[n / 2]),
    }
}

/// Runs `workload` through `exec` once, timed: the per-operation cost in nanoseconds and the
/// result.
///
/// # Errors
///
/// The first failure of the workload.
pub(crate) fn time_once<W: Workload>(
    workload: &W,
    exec: &mut impl Exec,
) -> Result<(f64, Tensor<f64>), CliError> {
    #[allow(clippy::cast_precision_loss, reason = "operation counts are far below 2^52")]
    let ops = workload.ops().max(1) as f64;
    let start = Instant::now();
    let result = workload.run(exec)?;
    Ok((start.elapsed().as_secs_f64() * 1e9 / ops, result))
}

/// The largest elementwise difference of `a` and `b` relative to the largest magnitude of `b`
/// (`+inf` when the shapes differ).
pub(crate) fn relative_difference(a: &Tensor<f64>, b: &Tensor<f64>) -> f64 {
    if a.shape() != b.shape() {
        return f64::INFINITY;
    }
    let (a, b) = (a.read().to_vec(), b.read().to_vec());
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = a.iter().zip(&b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    if diff == 0.0 {
        0.0
    } else if scale == 0.0 || !diff.is_finite() {
        f64::INFINITY
    } else {
        diff / scale
    }
}

#[cfg(test)]
mod tests {
    use super::{median, relative_difference};
    use holdfast::Tensor;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
    }

    #[test]
    fn differences() {
        let a = Tensor::from_vec([2], vec![1.0, 2.0]).unwrap();
        let b = Tensor::from_vec([2], vec![1.0, 2.0 + 2e-12]).unwrap();
        assert_eq!(relative_difference(&a, &a), 0.0);
        assert!(relative_difference(&a, &b) < 1.1e-12);
        let c = Tensor::from_vec([1, 2], vec![1.0, 2.0]).unwrap();
        assert!(relative_difference(&a, &c).is_infinite());
    }
}
