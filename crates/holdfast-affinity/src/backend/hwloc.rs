//! The hwloc backend (feature `hwloc`): every hwlocality call of the workspace is in this file.
//!
//! One `hwlocality::Topology` is loaded per process (milliseconds) and kept for binding calls, which need
//! it. hwloc bitmaps are heap objects of the C library; they are converted to and from the inline
//! [`CpuSet`] at this boundary only, so no hwloc type leaks out of the crate (hwlocality is an
//! alpha; the public API must not move with it).

use super::Backend;
use crate::topology::{NumaNode, Topology};
use holdfast_cpuset::CpuSet;
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet as HwlocCpuSet;
use hwlocality::object::types::ObjectType;
use std::sync::OnceLock;

/// The hwloc backend.
pub(crate) struct Hwloc;

/// The process's hwloc topology.
fn hwloc_topology() -> Result<&'static hwlocality::Topology, String> {
    static TOPOLOGY: OnceLock<Result<hwlocality::Topology, String>> = OnceLock::new();
    TOPOLOGY
        .get_or_init(|| hwlocality::Topology::new().map_err(|err| err.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Converts an hwloc CPU set, which may be infinite (a "full" binding), keeping indices below
/// [`CpuSet::MAX_CPUS`]; the topology load has checked that no real PU lies above.
fn from_hwloc(set: &HwlocCpuSet) -> CpuSet {
    let mut out = CpuSet::new();
    for cpu in set.iter_set().map(usize::from).take_while(|&cpu| cpu < CpuSet::MAX_CPUS) {
        // Cannot fail: the index is in range.
        let _ = out.insert(cpu);
    }
    out
}

fn to_hwloc(set: &CpuSet) -> HwlocCpuSet {
    let mut out = HwlocCpuSet::new();
    for cpu in set.iter() {
        // In range for hwloc: below CpuSet::MAX_CPUS, far below c_int::MAX.
        out.set(cpu);
    }
    out
}

/// The binding of the calling thread or of the whole process, as `flags` says.
#[doc(alias = "hwloc_get_cpubind")]
fn binding(flags: CpuBindingFlags) -> Result<CpuSet, String> {
    let binding = hwloc_topology()?.cpu_binding(flags).map_err(|err| err.to_string())?;
    Ok(from_hwloc(&binding))
}

impl Backend for Hwloc {
    const NAME: &'static str = "hwloc";

    #[doc(alias = "hwloc_topology_load")]
    fn load_topology() -> Result<Topology, String> {
        let topology = hwloc_topology()?;
        if let Some(last) = topology.complete_cpuset().last_set() {
            let last = usize::from(last);
            if last >= CpuSet::MAX_CPUS {
                return Err(format!(
                    "this machine has PU {last}; holdfast supports CPUs 0..{}",
                    CpuSet::MAX_CPUS
                ));
            }
        }
        let cores = topology
            .objects_with_type(ObjectType::Core)
            .filter_map(|core| core.cpuset().map(|set| from_hwloc(&set)))
            .collect();
        let numa_nodes = topology
            .objects_with_type(ObjectType::NUMANode)
            .enumerate()
            .map(|(logical, node)| NumaNode {
                os_index: node.os_index().unwrap_or(logical),
                cpus: node.cpuset().map(|set| from_hwloc(&set)).unwrap_or_default(),
            })
            .collect();
        Ok(Topology {
            pus: from_hwloc(&topology.cpuset()),
            allowed: from_hwloc(&topology.allowed_cpuset()),
            cores,
            numa_nodes,
            allowed_words: 0,
            process_binding: CpuSet::new(),
        })
    }

    fn thread_binding() -> Result<CpuSet, String> {
        binding(CpuBindingFlags::THREAD)
    }

    fn process_binding() -> Result<CpuSet, String> {
        // hwloc's process-wide binding: on Linux the union of every thread's mask, which at
        // topology load (before any engine's workers exist) is the mask the process started with.
        binding(CpuBindingFlags::PROCESS)
    }

    #[doc(alias = "hwloc_set_cpubind")]
    fn bind_thread(cpus: &CpuSet) -> Result<(), String> {
        hwloc_topology()?
            .bind_cpu(&to_hwloc(cpus), CpuBindingFlags::THREAD)
            .map_err(|err| err.to_string())
    }
}
