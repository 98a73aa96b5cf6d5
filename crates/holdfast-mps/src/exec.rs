//! [`Executor`]: how an algorithm runs its operations, so that one algorithm can run in one held
//! session, with a scoped entry per operation, or on the naive baseline (SPEC W5).

use holdfast::layers::session::NaiveBaseline;
use holdfast::{CpuBackend, CpuExecSession, CpuHeldSession};

use crate::MpsError;

/// Runs one operation on an operation view. A held session runs every call in the admission it
/// already holds; [`Scoped`] pays one admission per call; [`Naive`] locks a mutex and installs
/// a pool per call. The operation and its value are `Send`: the naive baseline runs them on its
/// pool.
///
/// # Examples
///
/// ```
/// use holdfast::{CpuBackend, Tensor};
/// use holdfast_mps::{Executor, Scoped};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let mut session = backend.open_session()?;
/// let held = session.op(|v| v.scale(a.read(), 2.0))??;
/// drop(session);
/// let scoped = Scoped(&backend).op(|v| v.scale(a.read(), 2.0))??;
/// assert_eq!(held.as_slice(), scoped.as_slice());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Executor {
    /// Runs `f` on a view and returns its value.
    ///
    /// # Errors
    ///
    /// [`MpsError::Entry`] when a scoped entry is not admitted.
    fn op<R: Send>(
        &mut self,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R + Send,
    ) -> Result<R, MpsError>;
}

impl Executor for CpuHeldSession<'_> {
    #[inline]
    fn op<R: Send>(
        &mut self,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R + Send,
    ) -> Result<R, MpsError> {
        Ok(self.with_session(f))
    }
}

/// A scoped entry per operation on a backend: admission, resources and affinity are taken and
/// released around every call (the comparison of SPEC W5).
///
/// # Examples
///
/// See [`Executor`].
#[derive(Debug, Clone, Copy)]
pub struct Scoped<'b>(pub &'b CpuBackend);

impl Executor for Scoped<'_> {
    fn op<R: Send>(
        &mut self,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R + Send,
    ) -> Result<R, MpsError> {
        Ok(self.0.with_backend_session(f)?)
    }
}

/// The naive baseline per operation: a mutex around the baseline's resources locked and a pool
/// installed around every call (the comparison of SPEC W5). No admission is taken.
///
/// # Examples
///
/// ```
/// use holdfast::layers::session::NaiveBaseline;
/// use holdfast::{CpuBackend, ResourceLimits, Tensor};
/// use holdfast_mps::{Executor, Naive};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let baseline = NaiveBaseline::new(&backend, ResourceLimits::default())?;
/// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let doubled = Naive(&baseline).op(|v| v.scale(a.read(), 2.0))??;
/// assert_eq!(doubled.as_slice(), &[2.0, 4.0]);
/// assert_eq!(baseline.stats().installs, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Naive<'n, 'b>(pub &'n NaiveBaseline<'b>);

impl Executor for Naive<'_, '_> {
    fn op<R: Send>(
        &mut self,
        f: impl FnOnce(&mut CpuExecSession<'_>) -> R + Send,
    ) -> Result<R, MpsError> {
        Ok(self.0.with_view(f))
    }
}
