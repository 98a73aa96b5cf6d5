//! `Topology`: the CPU facts of the machine (PUs, cores, NUMA nodes, the allowed set), loaded once
//! per process.
//!
//! Loading costs milliseconds (hwloc walks `/sys` and `/proc`), so the facts are loaded on first
//! use and kept in a `OnceLock`; every later call is a load of a pointer. The result of the first
//! load, success or failure, is the result for the whole process.
//!
//! Invariants: `allowed ⊆ pus`; every core and every NUMA node's CPUs are subsets of `pus`; cores
//! are pairwise disjoint and ordered by their first CPU; NUMA nodes are ordered by OS index.

use crate::backend;
use crate::error::AffinityError;
use holdfast_cpuset::CpuSet;
use std::sync::OnceLock;

/// The process's topology facts, or the error of the one attempt to load them.
static TOPOLOGY: OnceLock<Result<Topology, AffinityError>> = OnceLock::new();

/// One NUMA node: its OS index and its CPUs (empty for a memory-only node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaNode {
    pub(crate) os_index: usize,
    pub(crate) cpus: CpuSet,
}

impl NumaNode {
    /// The node's index as the operating system numbers it.
    #[must_use]
    pub const fn os_index(&self) -> usize {
        self.os_index
    }

    /// The node's CPUs.
    #[must_use]
    pub const fn cpus(&self) -> &CpuSet {
        &self.cpus
    }
}

/// CPU facts of this machine as seen by this process.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::Topology;
///
/// let topology = Topology::get()?;
/// assert!(!topology.allowed().is_empty());
/// assert!(topology.allowed().is_subset(topology.pus()));
/// assert!(topology.cores().len() <= topology.pus().len());
/// for node in topology.numa_nodes() {
///     assert!(node.cpus().is_subset(topology.pus()));
/// }
/// # Ok::<(), holdfast_affinity::AffinityError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub(crate) pus: CpuSet,
    pub(crate) allowed: CpuSet,
    pub(crate) cores: Vec<CpuSet>,
    pub(crate) numa_nodes: Vec<NumaNode>,
    /// `allowed.significant_words()`, so the guard's covering test reads only those words.
    pub(crate) allowed_words: usize,
    /// The process's affinity mask as read at load (empty when it could not be read).
    pub(crate) process_binding: CpuSet,
}

impl Topology {
    /// The process's topology, loaded on first call (a few milliseconds) and shared afterwards.
    ///
    /// # Errors
    ///
    /// [`AffinityError::Topology`] when the backend (hwloc, or `/sys` without the `hwloc`
    /// feature) cannot describe the machine; the same error is returned on every call.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = holdfast_affinity::Topology::get()?;
    /// let b = holdfast_affinity::Topology::get()?;
    /// assert!(std::ptr::eq(a, b));
    /// # Ok::<(), holdfast_affinity::AffinityError>(())
    /// ```
    #[inline]
    pub fn get() -> Result<&'static Self, AffinityError> {
        // Fast path: one acquire load once loaded (the guard's unchanged path relies on it).
        if let Some(Ok(topology)) = TOPOLOGY.get() {
            return Ok(topology);
        }
        Self::load()
    }

    #[cold]
    fn load() -> Result<&'static Self, AffinityError> {
        TOPOLOGY
            .get_or_init(|| backend::load_topology().map(Self::normalised))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Enforces the documented invariants on facts read from the system.
    fn normalised(mut self) -> Self {
        self.allowed &= self.pus;
        if self.allowed.is_empty() {
            // A backend that cannot tell which CPUs are allowed must not claim none are.
            self.allowed = self.pus;
        }
        for core in &mut self.cores {
            *core &= self.pus;
        }
        self.cores.retain(|core| !core.is_empty());
        self.cores.sort_by_key(CpuSet::first);
        self.cores.dedup();
        for node in &mut self.numa_nodes {
            node.cpus &= self.pus;
        }
        if self.numa_nodes.is_empty() {
            self.numa_nodes.push(NumaNode { os_index: 0, cpus: self.pus });
        }
        self.numa_nodes.sort_by_key(NumaNode::os_index);
        self.allowed_words = self.allowed.significant_words();
        self
    }

    /// The processing units (hardware threads) the backend reports: with hwloc, the PUs of the
    /// loaded topology (hwloc leaves out PUs the process may never use); with the sysfs
    /// fallback, every online PU.
    #[must_use]
    pub const fn pus(&self) -> &CpuSet {
        &self.pus
    }

    /// The CPUs this process may use: the backend's allowed set (hwloc's, which applies the
    /// cgroup's cpuset) intersected with the process's affinity mask when the topology was
    /// loaded ([`process_binding`](Self::process_binding)). A process started under
    /// `taskset -c 1`, `numactl --physcpubind=1` or `mpirun --bind-to core` sees only the CPUs
    /// it was bound to, so its default engine, thread budget and NUMA placement stay inside them.
    ///
    /// Threads inherit the process's mask, so every thread's binding is a subset of this set
    /// unless a thread widens its own binding past the mask it started with; the affinity guard
    /// relies on that (a domain covering this set narrows nothing).
    #[must_use]
    pub const fn allowed(&self) -> &CpuSet {
        &self.allowed
    }

    /// The process's affinity mask as read when the topology was loaded (with hwloc, the union
    /// of its threads' bindings; without it, the main thread's mask); empty when the system
    /// would not say. [`allowed`](Self::allowed) is already narrowed to it.
    ///
    /// # Examples
    ///
    /// ```
    /// let topology = holdfast_affinity::Topology::get()?;
    /// if !topology.process_binding().is_empty() {
    ///     assert!(topology.allowed().is_subset(topology.process_binding()));
    /// }
    /// # Ok::<(), holdfast_affinity::AffinityError>(())
    /// ```
    #[must_use]
    pub const fn process_binding(&self) -> &CpuSet {
        &self.process_binding
    }

    /// The physical cores, each as the set of its processing units.
    #[must_use]
    pub fn cores(&self) -> &[CpuSet] {
        &self.cores
    }

    /// The NUMA nodes; a machine without NUMA information has one node holding every PU.
    #[must_use]
    pub fn numa_nodes(&self) -> &[NumaNode] {
        &self.numa_nodes
    }

    /// The allowed CPUs of each NUMA node that has any, for building one engine per node
    /// (placement, SPEC F3).
    ///
    /// # Examples
    ///
    /// ```
    /// let topology = holdfast_affinity::Topology::get()?;
    /// let per_node = topology.allowed_per_numa_node();
    /// assert!(!per_node.is_empty());
    /// # Ok::<(), holdfast_affinity::AffinityError>(())
    /// ```
    #[must_use]
    pub fn allowed_per_numa_node(&self) -> Vec<(usize, CpuSet)> {
        let mut nodes: Vec<_> = self
            .numa_nodes
            .iter()
            .map(|node| (node.os_index, node.cpus & self.allowed))
            .filter(|(_, cpus)| !cpus.is_empty())
            .collect();
        if nodes.is_empty() {
            nodes.push((0, self.allowed));
        }
        nodes
    }

    /// Whether `cpus` covers every allowed CPU (then no binding can be narrowed by it).
    #[inline]
    pub(crate) fn is_covered_by(&self, cpus: &CpuSet) -> bool {
        cpus.is_superset_of_prefix(&self.allowed, self.allowed_words)
    }

    /// Which backend produced these facts: `"hwloc"` or `"linux-sysfs"`.
    #[must_use]
    pub const fn backend(&self) -> &'static str {
        backend::NAME
    }
}
