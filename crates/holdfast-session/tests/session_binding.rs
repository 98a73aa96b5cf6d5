//! The process's CPU binding is honoured (SPEC S1, F3): a process started under `taskset` builds
//! its default engine, thread budget and NUMA placement inside its mask, its pool's threads stay
//! inside it, an explicit CPU set outside it is a typed error naming both sets, and two processes
//! bound to disjoint CPUs each get their own.
//!
//! The binding is process-global, so every check runs in a child process: this test binary
//! re-executes itself under `taskset -c CPUS` with the ignored test [`binding_probe`] selected,
//! and the probe prints what it saw as `key=value` lines that the parent reads back.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failed unwrap is a failed test"
)]

use std::collections::HashMap;
use std::process::{Command, Stdio};

use holdfast_affinity::{CpuSet, Topology};
use holdfast_provider::ProviderError;
use holdfast_session::{BuildError, CpuBackend};

/// Set in the child's environment: how long the probe holds its session open (milliseconds), so
/// that two children overlap.
const HOLD_ENV: &str = "HOLDFAST_BINDING_PROBE_HOLD_MS";

/// What one child saw, by key.
struct Probe(HashMap<String, String>);

impl Probe {
    fn cpus(&self, key: &str) -> CpuSet {
        self.get(key).parse().unwrap_or_else(|e| panic!("{key}: {e}"))
    }

    fn get(&self, key: &str) -> &str {
        self.0.get(key).unwrap_or_else(|| panic!("probe printed no `{key}`: {:?}", self.0))
    }
}

fn taskset_available() -> bool {
    Command::new("taskset")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Starts this test binary's probe under `taskset -c cpus`.
fn spawn_probe(cpus: &CpuSet, hold_ms: u64) -> std::process::Child {
    let exe = std::env::current_exe().unwrap();
    Command::new("taskset")
        .arg("-c")
        .arg(cpus.to_string())
        .arg(exe)
        .args(["--ignored", "--exact", "binding_probe", "--nocapture", "--test-threads", "1"])
        .env(HOLD_ENV, hold_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish_probe(child: std::process::Child) -> Probe {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "probe failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let map: HashMap<_, _> = stdout
        .lines()
        // The harness may print `test binding_probe ... ` on the probe's first line.
        .filter_map(|line| line.split_once("probe: ").map(|(_, rest)| rest))
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert!(!map.is_empty(), "probe printed nothing:\n{stdout}");
    Probe(map)
}

fn run_probe(cpus: &CpuSet) -> Probe {
    finish_probe(spawn_probe(cpus, 0))
}

/// Every CPU set the parent may use, or `None` (said loudly) when the check cannot run here.
fn parent_allowed(needed: usize) -> Option<CpuSet> {
    if !taskset_available() {
        eprintln!("SKIPPED: `taskset` (util-linux) is not installed");
        return None;
    }
    let allowed = *Topology::get().unwrap().allowed();
    if allowed.len() < needed {
        eprintln!("SKIPPED: needs {needed} allowed CPUs, this process has {allowed}");
        return None;
    }
    Some(allowed)
}

fn single(cpu: usize) -> CpuSet {
    CpuSet::from_cpus([cpu]).unwrap()
}

/// Checks what a probe run under `mask` saw.
fn assert_probe_inside(probe: &Probe, mask: &CpuSet) {
    assert_eq!(&probe.cpus("allowed"), mask, "Topology::allowed under taskset {mask}");
    assert_eq!(&probe.cpus("default_cpus"), mask, "CpuBackend::default()'s CPUs");
    assert_eq!(probe.get("default_threads"), mask.len().to_string(), "thread budget");
    assert_eq!(&probe.cpus("numa_union"), mask, "per_numa_node() covers the mask");
    assert!(probe.cpus("threads_union").is_subset(mask), "a thread ran outside {mask}");
    assert_eq!(probe.get("outside_error"), "CpusNotAllowed", "explicit CPUs outside the mask");
    assert_eq!(probe.get("unbound_workers"), "0");
}

#[test]
fn one_cpu_mask_is_the_default_domain() {
    let Some(allowed) = parent_allowed(1) else { return };
    let first = allowed.first().unwrap();
    let last = allowed.iter().last().unwrap();
    for cpu in [first, last] {
        let mask = single(cpu);
        let probe = run_probe(&mask);
        assert_probe_inside(&probe, &mask);
    }
}

#[test]
fn the_whole_mask_keeps_the_pool_inside() {
    let Some(allowed) = parent_allowed(2) else { return };
    let probe = run_probe(&allowed);
    assert_probe_inside(&probe, &allowed);
    assert_eq!(probe.get("pool_threads"), allowed.len().to_string());
}

#[test]
fn processes_bound_to_disjoint_cpus_each_get_their_own() {
    let Some(allowed) = parent_allowed(2) else { return };
    let cpus: Vec<usize> = allowed.iter().collect();
    let (left, right) = cpus.split_at(cpus.len() / 2);
    let left = CpuSet::from_cpus(left.iter().copied()).unwrap();
    let right = CpuSet::from_cpus(right.iter().copied()).unwrap();
    // Both children hold a session on their default engine at once.
    let a = spawn_probe(&left, 300);
    let b = spawn_probe(&right, 300);
    let (a, b) = (finish_probe(a), finish_probe(b));
    assert_probe_inside(&a, &left);
    assert_probe_inside(&b, &right);
    assert!((a.cpus("default_cpus") & b.cpus("default_cpus")).is_empty());
    assert_eq!((a.get("session"), b.get("session")), ("opened", "opened"));
}

/// The union of the bindings of every thread of this process, from `/proc/self/task`.
fn threads_union() -> CpuSet {
    let mut union = CpuSet::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        // A thread that ended between the listing and the read (a finished scoped thread) has
        // no binding left to check.
        let Ok(status) = std::fs::read_to_string(task.unwrap().path().join("status")) else {
            continue;
        };
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_owned();
        union |= list.parse::<CpuSet>().unwrap();
    }
    union
}

/// The child side: run only when the parent selects it (`--ignored --exact binding_probe`).
#[test]
#[ignore = "run by the other tests of this file in a child process under taskset"]
fn binding_probe() {
    let hold_ms: u64 = std::env::var(HOLD_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let topology = Topology::get().unwrap();
    println!("probe: allowed={}", topology.allowed());

    let backend = CpuBackend::try_default().unwrap();
    println!("probe: default_cpus={}", backend.cpus());
    println!("probe: default_threads={}", backend.threads());

    let mut numa_union = CpuSet::new();
    for engine in CpuBackend::builder().private_arbiter().build_per_numa_node().unwrap() {
        numa_union |= *engine.cpus();
    }
    println!("probe: numa_union={numa_union}");

    let outside = (0..CpuSet::MAX_CPUS).find(|c| !topology.allowed().contains(*c)).unwrap();
    let outside_error = match CpuBackend::builder().cpus(single(outside)).build() {
        Err(BuildError::Provider(ProviderError::CpusNotAllowed { requested, allowed, .. }))
            if *requested == single(outside) && *allowed == *topology.allowed() =>
        {
            "CpusNotAllowed".to_owned()
        }
        Err(other) => format!("{other:?}"),
        Ok(_) => "built".to_owned(),
    };
    println!("probe: outside_error={outside_error}");

    // Work on the default engine's pool (when it has one), so its workers have started and bound.
    let pool_threads = backend
        .domain()
        .pool()
        .map_or(0, |pool| pool.broadcast(|_| std::thread::current().id()).len());
    println!("probe: pool_threads={pool_threads}");
    println!("probe: unbound_workers={}", backend.domain().unbound_workers());

    let session = backend.try_open_session().unwrap();
    println!("probe: session=opened");
    println!("probe: threads_union={}", threads_union());
    std::thread::sleep(std::time::Duration::from_millis(hold_ms));
    session.close().unwrap();
}
