//! [`CpuBackendBuilder`]: how a backend (and its one engine) is configured (S1), including its
//! placement on one NUMA node (F3; the per-node constructors are in `placement.rs`).

use std::sync::Arc;

use holdfast_affinity::{CpuSet, Topology};
use holdfast_arbiter::{ResourceArbiter, register_pool_worker_probe};
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
    numa_node: Option<usize>,
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

    /// Places the engine on NUMA node `node` (its OS index, as in
    /// [`Topology::numa_nodes`](holdfast_affinity::Topology::numa_nodes)): the engine's CPUs are
    /// the node's CPUs that this process may use (intersected with [`cpus`](Self::cpus) when both
    /// are given), so its pool's workers are bound to that node and the buffers they allocate are
    /// first touched there. The default thread budget is then the node's CPU count.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::Topology;
    /// use holdfast_session::CpuBackend;
    ///
    /// let (node, cpus) = Topology::get()?.allowed_per_numa_node()[0];
    /// let backend = CpuBackend::builder().numa_node(node).private_arbiter().build()?;
    /// assert_eq!(backend.cpus(), &cpus);
    /// assert_eq!(backend.numa_node(), Some(node));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn numa_node(mut self, node: usize) -> Self {
        self.numa_node = Some(node);
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
    /// cannot start;
    /// [`BuildError::NumaNode`] for a NUMA node with no usable CPU.
    pub fn build(self) -> Result<CpuBackend, BuildError> {
        let cpus = self.cpus_or_allowed()?;
        let cpus = match self.numa_node {
            Some(node) => node_cpus(node, &cpus)?,
            None => cpus,
        };
        self.build_on(cpus, self.numa_node)
    }

    /// Builds the engine on `cpus`, recording `numa_node` as its placement.
    pub(super) fn build_on(
        &self,
        cpus: CpuSet,
        numa_node: Option<usize>,
    ) -> Result<CpuBackend, BuildError> {
        // Rayon workers (of any pool) must never park on the arbiter (A4).
        let _ = register_pool_worker_probe(|| rayon::current_thread_index().is_some());
        let threads = self.threads.unwrap_or_else(|| cpus.len());
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
            resources: EngineResourceSlot::new(EngineResources::with_limits(self.limits)),
            numa_node,
        };
        Ok(CpuBackend::root(Arc::new(engine)))
    }

    /// The builder's CPUs, or every CPU the process may use.
    pub(super) fn cpus_or_allowed(&self) -> Result<CpuSet, BuildError> {
        match self.cpus {
            Some(cpus) => Ok(cpus),
            None => Ok(*Topology::get()?.allowed()),
        }
    }
}

/// The usable CPUs of NUMA node `node` within `within`.
fn node_cpus(node: usize, within: &CpuSet) -> Result<CpuSet, BuildError> {
    let per_node = Topology::get()?.allowed_per_numa_node();
    per_node
        .iter()
        .find(|(index, _)| *index == node)
        .map(|(_, cpus)| *cpus & *within)
        .filter(|cpus| !cpus.is_empty())
        .ok_or_else(|| BuildError::NumaNode {
            node,
            available: per_node.iter().map(|(index, _)| *index).collect(),
        })
}
