//! NUMA placement (SPEC F3): one engine per NUMA node, each with its own pool bound to that
//! node's CPUs.
//!
//! The node facts come from `holdfast-affinity`'s [`Topology`] (hwloc, or `/sys` without the
//! `hwloc` feature; a machine without NUMA information is one node holding every CPU). Each
//! engine is an ordinary engine over its node's usable CPUs: its pool's workers bind to them when
//! they start, so the buffers its lanes and fanned-out kernels allocate are first touched on that
//! node. The engines' CPU sets are disjoint, so the process-wide arbiter admits them
//! independently: one session per node can run at once.
//!
//! On a one-node machine the single engine has the default engine's CPUs, budget and mode.

use holdfast_affinity::Topology;
use holdfast_provider::ProviderError;

use crate::{BuildError, CpuBackend, CpuBackendBuilder};

impl CpuBackendBuilder {
    /// Builds one engine per NUMA node that has usable CPUs (within [`cpus`](Self::cpus) when
    /// given), in node order, each configured as this builder says (thread budget, mode, arbiter,
    /// resource limits) and placed on its node as by [`numa_node`](Self::numa_node), which this
    /// call overrides. Without a thread budget, each engine's budget is its node's CPU count.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build), for the first engine that fails;
    /// [`BuildError::Provider`] with an empty CPU set when no node has a usable CPU.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::CpuBackend;
    ///
    /// let engines = CpuBackend::builder().private_arbiter().build_per_numa_node()?;
    /// assert!(!engines.is_empty());
    /// for (i, a) in engines.iter().enumerate() {
    ///     for b in &engines[i + 1..] {
    ///         assert!((*a.cpus() & *b.cpus()).is_empty(), "nodes do not share CPUs");
    ///     }
    /// }
    /// # Ok::<(), holdfast_session::BuildError>(())
    /// ```
    pub fn build_per_numa_node(self) -> Result<Vec<CpuBackend>, BuildError> {
        let within = self.cpus_or_allowed()?;
        let nodes: Vec<_> = Topology::get()?
            .allowed_per_numa_node()
            .into_iter()
            .map(|(node, cpus)| (node, cpus & within))
            .filter(|(_, cpus)| !cpus.is_empty())
            .collect();
        if nodes.is_empty() {
            return Err(ProviderError::EmptyCpuSet.into());
        }
        nodes.into_iter().map(|(node, cpus)| self.build_on(cpus, Some(node))).collect()
    }
}

impl CpuBackend {
    /// One engine per NUMA node, each over the node's CPUs this process may use, with all of them
    /// as its thread budget and its own pool bound to them. On a one-node machine this is one
    /// engine equal to [`CpuBackend::try_default`]'s (same CPUs, budget and mode).
    ///
    /// # Errors
    ///
    /// As [`CpuBackendBuilder::build_per_numa_node`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::Topology;
    /// use holdfast_session::CpuBackend;
    ///
    /// let engines = CpuBackend::per_numa_node()?;
    /// assert_eq!(engines.len(), Topology::get()?.allowed_per_numa_node().len());
    /// for engine in &engines {
    ///     assert!(engine.numa_node().is_some());
    ///     engine.try_open_session()?.close()?;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn per_numa_node() -> Result<Vec<CpuBackend>, BuildError> {
        Self::builder().build_per_numa_node()
    }
}
