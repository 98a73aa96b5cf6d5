//! [`CpuBackendBuilder`]: how a backend (and its one engine) is configured (S1).

use std::sync::Arc;

use holdfast_affinity::{CpuSet, Topology};
use holdfast_arbiter::{CpuMask, ResourceArbiter, register_pool_worker_probe};
use holdfast_provider::{CpuDomain, ParallelMode};
use holdfast_resources::{EngineResourceSlot, EngineResources, ResourceLimits};

use crate::engine::CpuEngine;
use crate::{BuildError, CpuBackend};

/// Configures a [`CpuBackend`]: its CPUs, thread budget, parallel mode, arbiter and resource
/// limits.
///
/// # Examples
///
/// ```
/// use holdfast_session::CpuBackend;
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// assert_eq!(backend.threads(), 1);
/// # Ok::<(), holdfast_session::BuildError>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct CpuBackendBuilder {
    threads: Option<usize>,
    cpus: Option<CpuSet>,
    mode: ParallelMode,
    private_arbiter: bool,
    limits: ResourceLimits,
}

impl CpuBackendBuilder {
    /// The thread budget (default: the number of CPUs in the domain).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// The CPUs of the engine (default: every CPU the process may use).
    pub fn cpus(mut self, cpus: CpuSet) -> Self {
        self.cpus = Some(cpus);
        self
    }

    /// Whether operations above their family's threshold fan out over the pool (default
    /// [`ParallelMode::Inner`]).
    pub fn mode(mut self, mode: ParallelMode) -> Self {
        self.mode = mode;
        self
    }

    /// Gives the engine a private arbiter instead of the process-wide one, so that it never
    /// queues behind other engines over the same CPUs. Meant for tests and isolated tools.
    pub fn private_arbiter(mut self) -> Self {
        self.private_arbiter = true;
        self
    }

    /// Limits of the engine's buffer pool and plan caches.
    pub fn resource_limits(mut self, limits: ResourceLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Builds the engine and returns the first handle on it.
    ///
    /// # Errors
    ///
    /// [`BuildError::Affinity`] when the topology cannot be read; [`BuildError::Provider`] for an
    /// empty or disallowed CPU set, a zero or oversubscribing thread budget, or a pool that
    /// cannot start; [`BuildError::Request`] for CPUs the arbiter cannot represent.
    pub fn build(self) -> Result<CpuBackend, BuildError> {
        // Rayon workers (of any pool) must never park on the arbiter (A4).
        let _ = register_pool_worker_probe(|| rayon::current_thread_index().is_some());
        let cpus = match self.cpus {
            Some(cpus) => cpus,
            None => *Topology::get()?.allowed(),
        };
        let threads = self.threads.unwrap_or_else(|| cpus.len());
        let request = CpuMask::from_words(&cpus.to_words())
            .map_err(|e| BuildError::Request(e.to_string()))?;
        let domain = CpuDomain::new(cpus, threads)?;
        let arbiter = if self.private_arbiter {
            ResourceArbiter::new()
        } else {
            ResourceArbiter::global().clone()
        };
        let engine = CpuEngine {
            domain,
            mode: self.mode,
            arbiter,
            request,
            resources: EngineResourceSlot::new(EngineResources::with_limits(self.limits)),
        };
        Ok(CpuBackend::root(Arc::new(engine)))
    }
}
