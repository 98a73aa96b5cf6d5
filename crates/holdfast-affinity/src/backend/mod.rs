//! The platform layer: one [`Backend`] trait, one implementation chosen with `cfg`
//! (as `parking_lot_core`'s `thread_parker` does).
//!
//! - `hwloc` (feature `hwloc`, on by default): hwlocality over the system hwloc library.
//! - `linux` (feature off, Linux only): `sched_getaffinity`/`sched_setaffinity` through libc and
//!   topology facts from `/sys/devices/system` and the cpuset cgroup.
//!
//! Every read or change of the calling thread's binding goes through [`thread_binding`] and
//! [`bind_thread`], which count the system calls per thread ([`system_calls`]): the guard's "no
//! system call when nothing changes" promise is tested through these counters, and session
//! telemetry (SPEC B2) reports them.

use crate::error::AffinityError;
use crate::topology::Topology;
use holdfast_cpuset::CpuSet;
use std::cell::Cell;

#[cfg(feature = "hwloc")]
mod hwloc;
#[cfg(all(not(feature = "hwloc"), target_os = "linux"))]
mod linux;

#[cfg(all(not(feature = "hwloc"), not(target_os = "linux")))]
compile_error!("holdfast-affinity needs the `hwloc` feature outside Linux");

/// What a platform backend provides. Errors are the platform's message; the callers wrap them
/// into the matching [`AffinityError`] variant.
pub(crate) trait Backend {
    /// Short name reported by `Topology::backend`.
    const NAME: &'static str;
    /// Reads the machine's facts (slow: called once per process).
    fn load_topology() -> Result<Topology, String>;
    /// Reads the calling thread's binding.
    fn thread_binding() -> Result<CpuSet, String>;
    /// Reads the process's own affinity mask: what `taskset`, `numactl --physcpubind`, a batch
    /// scheduler's or `mpirun`'s `--bind-to` gave the process when it started.
    fn process_binding() -> Result<CpuSet, String>;
    /// Binds the calling thread to `cpus` (non-empty).
    fn bind_thread(cpus: &CpuSet) -> Result<(), String>;
}

#[cfg(feature = "hwloc")]
type Active = hwloc::Hwloc;
#[cfg(all(not(feature = "hwloc"), target_os = "linux"))]
type Active = linux::Linux;

/// The active backend's name.
pub(crate) const NAME: &str = <Active as Backend>::NAME;

/// Per-thread counts of binding system calls made by this crate.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::{system_calls, CallerAffinityGuard, Topology};
///
/// let before = system_calls();
/// // A domain covering every allowed CPU cannot narrow anything: no call at all.
/// CallerAffinityGuard::enter(Topology::get()?.allowed())?.finish()?;
/// assert_eq!(system_calls(), before);
/// # Ok::<(), holdfast_affinity::AffinityError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SystemCalls {
    /// Binding reads (`sched_getaffinity` / `hwloc_get_cpubind`).
    pub reads: u64,
    /// Binding changes (`sched_setaffinity` / `hwloc_set_cpubind`), successful or not.
    pub writes: u64,
}

thread_local! {
    static READS: Cell<u64> = const { Cell::new(0) };
    static WRITES: Cell<u64> = const { Cell::new(0) };
}

/// The binding system calls this crate has made on the calling thread so far.
#[must_use]
pub fn system_calls() -> SystemCalls {
    SystemCalls { reads: READS.with(Cell::get), writes: WRITES.with(Cell::get) }
}

fn count(counter: &'static std::thread::LocalKey<Cell<u64>>) {
    // `try_with`: counting must not panic during thread teardown (guards drop then too).
    let _ = counter.try_with(|c| c.set(c.get().wrapping_add(1)));
}

/// Loads the topology facts through the active backend.
///
/// The allowed set is the backend's (hwloc's allowed set, or the cpuset cgroup's) intersected
/// with the process's own affinity mask, read here once: a process started under `taskset` or
/// `mpirun --bind-to core` may use only the CPUs it was bound to. A mask that cannot be read, or
/// that shares no CPU with the backend's set, leaves the backend's set as it is.
pub(crate) fn load_topology() -> Result<Topology, AffinityError> {
    let mut topology =
        Active::load_topology().map_err(|reason| AffinityError::Topology { reason })?;
    if let Ok(mask) = Active::process_binding() {
        topology.process_binding = mask;
        let narrowed = topology.allowed & mask;
        if !narrowed.is_empty() {
            topology.allowed = narrowed;
        }
    }
    Ok(topology)
}

/// The calling thread's binding.
///
/// # Errors
///
/// [`AffinityError::Query`] when the binding cannot be read.
///
/// # Examples
///
/// ```
/// let cpus = holdfast_affinity::thread_binding()?;
/// assert!(!cpus.is_empty());
/// # Ok::<(), holdfast_affinity::AffinityError>(())
/// ```
pub fn thread_binding() -> Result<CpuSet, AffinityError> {
    count(&READS);
    Active::thread_binding().map_err(|reason| AffinityError::Query { reason })
}

/// Binds the calling thread to `cpus` for good (no restore): for worker threads that belong to
/// one domain for their whole life, such as an engine's pool workers.
///
/// # Errors
///
/// [`AffinityError::EmptyIntersection`] when `cpus` is empty; [`AffinityError::Bind`] when the
/// system refuses the binding.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::{bind_current_thread, thread_binding};
///
/// std::thread::spawn(|| {
///     let current = thread_binding()?;
///     bind_current_thread(&current)?; // binding to the current set always succeeds
///     assert_eq!(thread_binding()?, current);
///     Ok::<(), holdfast_affinity::AffinityError>(())
/// }).join().unwrap()?;
/// # Ok::<(), holdfast_affinity::AffinityError>(())
/// ```
pub fn bind_current_thread(cpus: &CpuSet) -> Result<(), AffinityError> {
    if cpus.is_empty() {
        return Err(AffinityError::EmptyIntersection {
            current: Box::new(CpuSet::new()),
            requested: Box::new(*cpus),
        });
    }
    bind_thread(cpus).map_err(|reason| AffinityError::Bind { target: Box::new(*cpus), reason })
}

/// Binds the calling thread to `cpus`; the caller wraps the message in `Bind` or `Restore`.
pub(crate) fn bind_thread(cpus: &CpuSet) -> Result<(), String> {
    count(&WRITES);
    Active::bind_thread(cpus)
}

#[cfg(test)]
mod tests;
