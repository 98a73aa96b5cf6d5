//! [`CpuBackend`]: the clonable handle on a CPU engine, and every way into it.
//!
//! | entry | shape (A6) | admission | resources |
//! |---|---|---|---|
//! | [`open_session`](CpuBackend::open_session) and its try/timeout forms | standalone root | a fresh owner, FIFO | the engine's, checked out for the session's life |
//! | [`with_backend_session`](CpuBackend::with_backend_session), no scope | standalone root, **through a held session** (S2) | as above | as above, for one callback |
//! | `with_backend_session` inside [`with_execution_scope`](CpuBackend::with_execution_scope) | shared | the scope's permit (no new admission) | the engine's, for one callback |
//! | `with_backend_session` on a child handle | reentrant child | joins the parent's owner, never waits | the child's private resources |
//!
//! Every entry refuses re-entry before anything blocks (A4, S3): a held session cannot be opened
//! while this thread runs an execution, inside a shared scope, or from a child handle.

mod builder;
mod entry;
mod management;
mod placement;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::child::ChildContext;
use crate::engine::CpuEngine;
pub use builder::CpuBackendBuilder;

/// A cheap, clonable handle on one CPU engine (S1). Clones share the engine.
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, Tensor};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
///
/// // Many operations for one admission:
/// let mut session = backend.open_session()?;
/// let c = session.with_session(|v| v.matmul(a.read(), a.read()))?;
/// let d = session.with_session(|v| v.add(c.read(), a.read()))?;
/// session.close()?;
/// assert_eq!(d.as_slice(), &[8.0, 12.0, 18.0, 26.0]);
///
/// // Or one admission per callback:
/// let e = backend.with_backend_session(|v| v.scale(a.read(), 2.0))??;
/// assert_eq!(e.as_slice(), &[2.0, 4.0, 6.0, 8.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CpuBackend {
    pub(crate) engine: Arc<CpuEngine>,
    /// Present on a child handle (from [`CpuExecSession::child_execution`](crate::CpuExecSession::child_execution)).
    pub(crate) child: Option<Arc<ChildContext>>,
}

impl CpuBackend {
    /// A builder for a backend with its own engine.
    pub fn builder() -> CpuBackendBuilder {
        CpuBackendBuilder::default()
    }

    /// A backend over every CPU the process may use, all of them as the thread budget.
    ///
    /// # Errors
    ///
    /// As [`CpuBackendBuilder::build`].
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::try_default()?;
    /// assert!(backend.threads() >= 1);
    /// # Ok::<(), holdfast_session::BuildError>(())
    /// ```
    pub fn try_default() -> Result<Self, crate::BuildError> {
        Self::builder().build()
    }

    pub(crate) fn root(engine: Arc<CpuEngine>) -> Self {
        CpuBackend { engine, child: None }
    }

    /// The engine's thread budget.
    pub fn threads(&self) -> usize {
        self.engine.domain.threads()
    }

    /// The engine's CPUs.
    pub fn cpus(&self) -> &holdfast_affinity::CpuSet {
        self.engine.domain.cpus()
    }

    /// The engine's CPU domain: its CPUs, thread budget and worker pool.
    ///
    /// For baselines and measurements that want to run work on the engine's own workers without a
    /// session (the `holdfast` demo's naive baseline does). Installing work on the pool this way
    /// bypasses admission: it is not a session entry.
    ///
    /// # Examples
    ///
    /// ```
    /// let backend = holdfast_session::CpuBackend::builder().threads(1).build()?;
    /// assert_eq!(backend.domain().threads(), backend.threads());
    /// assert_eq!(backend.domain().cpus(), backend.cpus());
    /// # Ok::<(), holdfast_session::BuildError>(())
    /// ```
    pub fn domain(&self) -> &holdfast_provider::CpuDomain {
        &self.engine.domain
    }

    /// The NUMA node this engine was placed on (OS index), for an engine built with
    /// [`CpuBackendBuilder::numa_node`] or [`CpuBackend::per_numa_node`]; `None` otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::CpuBackend;
    ///
    /// assert_eq!(CpuBackend::builder().threads(1).build()?.numa_node(), None);
    /// let placed = CpuBackend::builder().threads(1).numa_node(0).build()?;
    /// assert_eq!(placed.numa_node(), Some(0));
    /// # Ok::<(), holdfast_session::BuildError>(())
    /// ```
    pub fn numa_node(&self) -> Option<usize> {
        self.engine.numa_node
    }

    /// The engine's parallel mode.
    pub fn mode(&self) -> holdfast_provider::ParallelMode {
        self.engine.mode
    }

    /// True for a child handle (its entries join the parent's owner and never wait).
    pub fn is_child(&self) -> bool {
        self.child.is_some()
    }

    /// True when `self` and `other` are handles on the same engine.
    pub fn same_engine(&self, other: &CpuBackend) -> bool {
        Arc::ptr_eq(&self.engine, &other.engine)
    }
}

impl Default for CpuBackend {
    /// [`CpuBackend::try_default`].
    ///
    /// # Panics
    ///
    /// When the process's CPUs cannot be read or its pool cannot start; use
    /// [`CpuBackend::try_default`] to get the error instead.
    fn default() -> Self {
        match Self::try_default() {
            Ok(b) => b,
            Err(e) => panic!("CpuBackend::default: {e}"),
        }
    }
}
