//! The Linux fallback backend (feature `hwloc` off): libc for binding, `/sys` for topology.
//!
//! - binding: `sched_getaffinity(0, …)` / `sched_setaffinity(0, …)`, which act on the calling
//!   thread, with a buffer of `c_ulong` words the size of glibc's `cpu_set_t` (1024 CPUs);
//! - PUs: `/sys/devices/system/cpu/online`;
//! - allowed set: the cpuset cgroup's effective CPUs (v2, then v1), else every online PU (the
//!   topology then narrows it to the process's own mask, see `Topology`);
//! - cores: each PU's `topology/core_cpus_list` (or the older `thread_siblings_list`);
//! - NUMA nodes: `/sys/devices/system/node/node<N>/cpulist`.

use super::Backend;
use crate::topology::{NumaNode, Topology};
use holdfast_cpuset::CpuSet;
use libc::c_ulong;
use std::fs;
use std::mem::{size_of, size_of_val};

/// The Linux fallback backend.
pub(crate) struct Linux;

/// Bits per kernel mask word.
const LONG_BITS: usize = c_ulong::BITS as usize;
/// Kernel mask words covering [`CpuSet::MAX_CPUS`].
const LONGS: usize = CpuSet::MAX_CPUS / LONG_BITS;

// The buffer handed to sched_{get,set}affinity has exactly the size of `cpu_set_t` ...
const _: () = assert!(size_of::<[c_ulong; LONGS]>() == size_of::<libc::cpu_set_t>());
// ... and an alignment at least that of `cpu_set_t` (an array of machine words).
const _: () = assert!(align_of::<[c_ulong; LONGS]>() >= align_of::<libc::cpu_set_t>());

pub(super) fn to_longs(set: &CpuSet) -> [c_ulong; LONGS] {
    let mut longs: [c_ulong; LONGS] = [0; LONGS];
    for cpu in set.iter() {
        longs[cpu / LONG_BITS] |= 1 << (cpu % LONG_BITS);
    }
    longs
}

pub(super) fn from_longs(longs: &[c_ulong; LONGS]) -> CpuSet {
    let mut set = CpuSet::new();
    for (index, &long) in longs.iter().enumerate() {
        let mut rest = long;
        while rest != 0 {
            let bit = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            // Cannot fail: index * LONG_BITS + bit < LONGS * LONG_BITS = MAX_CPUS.
            let _ = set.insert(index * LONG_BITS + bit);
        }
    }
    set
}

fn read_cpu_list(path: &str) -> Result<CpuSet, String> {
    let text = fs::read_to_string(path).map_err(|err| format!("{path}: {err}"))?;
    text.parse().map_err(|err| format!("{path}: {err}"))
}

/// The cpuset cgroup's effective CPUs, if the cgroup files can be found.
fn cgroup_cpus() -> Option<CpuSet> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (_id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let path = path.trim_end_matches('/');
        let candidate = if controllers.is_empty() {
            format!("/sys/fs/cgroup{path}/cpuset.cpus.effective")
        } else if controllers.split(',').any(|c| c == "cpuset") {
            format!("/sys/fs/cgroup/cpuset{path}/cpuset.effective_cpus")
        } else {
            continue;
        };
        if let Ok(cpus) = read_cpu_list(&candidate)
            && !cpus.is_empty()
        {
            return Some(cpus);
        }
    }
    None
}

fn numa_nodes() -> Vec<NumaNode> {
    let Ok(entries) = fs::read_dir("/sys/devices/system/node") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let os_index = name.to_str()?.strip_prefix("node")?.parse().ok()?;
            let cpus =
                read_cpu_list(&format!("/sys/devices/system/node/node{os_index}/cpulist")).ok()?;
            Some(NumaNode { os_index, cpus })
        })
        .collect()
}

/// The affinity mask of task `pid` (0: the calling thread).
#[doc(alias = "sched_getaffinity")]
fn affinity_of(pid: libc::pid_t) -> Result<CpuSet, String> {
    let mut longs: [c_ulong; LONGS] = [0; LONGS];
    // SAFETY:
    // - `pid` is 0 (the calling thread, alive) or this process's id (its main thread's task,
    //   alive while the process is);
    // - the pointer is valid for writes of `size_of_val(&longs)` bytes, which equals
    //   `size_of::<cpu_set_t>()`, and is aligned for `cpu_set_t` (const-asserted above);
    // - the kernel writes only within that size and the buffer outlives the call.
    let rc =
        unsafe { libc::sched_getaffinity(pid, size_of_val(&longs), longs.as_mut_ptr().cast()) };
    if rc != 0 {
        return Err(format!("sched_getaffinity({pid}): {}", std::io::Error::last_os_error()));
    }
    Ok(from_longs(&longs))
}

impl Backend for Linux {
    const NAME: &'static str = "linux-sysfs";

    fn load_topology() -> Result<Topology, String> {
        let pus = read_cpu_list("/sys/devices/system/cpu/online")?;
        let allowed = cgroup_cpus().unwrap_or(pus);
        let cores = pus
            .iter()
            .map(|cpu| {
                let base = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
                read_cpu_list(&format!("{base}/core_cpus_list"))
                    .or_else(|_| read_cpu_list(&format!("{base}/thread_siblings_list")))
                    .or_else(|_| CpuSet::from_cpus([cpu]).map_err(|err| err.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Topology {
            pus,
            allowed,
            cores,
            numa_nodes: numa_nodes(),
            allowed_words: 0,
            process_binding: CpuSet::new(),
        })
    }

    fn thread_binding() -> Result<CpuSet, String> {
        affinity_of(0)
    }

    fn process_binding() -> Result<CpuSet, String> {
        // The thread-group leader's mask: set before `main` by whoever started the process, and
        // inherited by every thread it spawns, so it is the process's binding at start-up even
        // when the loading thread has narrowed its own.
        let pid = std::process::id();
        affinity_of(
            libc::pid_t::try_from(pid).map_err(|_| format!("process id {pid} out of range"))?,
        )
    }

    #[doc(alias = "sched_setaffinity")]
    fn bind_thread(cpus: &CpuSet) -> Result<(), String> {
        let longs = to_longs(cpus);
        // SAFETY:
        // - pid 0 names the calling thread, which is alive;
        // - the pointer is valid for reads of `size_of_val(&longs)` bytes, which equals
        //   `size_of::<cpu_set_t>()`, and is aligned for `cpu_set_t` (const-asserted above);
        // - the kernel only reads the buffer, which outlives the call.
        let rc = unsafe { libc::sched_setaffinity(0, size_of_val(&longs), longs.as_ptr().cast()) };
        if rc != 0 {
            return Err(format!("sched_setaffinity: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }
}
