//! The caller-affinity guard against the real thread binding (one binary: bindings are per
//! thread, but the topology and the binding backend are process-global).
//!
//! Each test runs on its own harness thread and leaves that thread's binding as it found it, so
//! tests do not see each other's bindings. Narrowing needs at least two allowed CPUs; on a
//! one-CPU machine those tests only check what they can and say so.

// Helpers outside #[test] fns unwrap too: a failed unwrap is a failed test (see clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use holdfast_affinity::{
    AffinityError, CallerAffinityGuard, CpuSet, Topology, fault, system_calls, thread_binding,
};

/// Two distinct CPUs the calling thread may run on, if it has two.
fn two_cpus() -> Option<(usize, usize)> {
    let binding = thread_binding().unwrap();
    let mut cpus = binding.iter();
    let pair = (cpus.next()?, cpus.next()?);
    Some(pair)
}

fn one(cpu: usize) -> CpuSet {
    CpuSet::from_cpus([cpu]).unwrap()
}

fn skip(test: &str) {
    eprintln!("{test}: fewer than two CPUs available, narrowing not exercised");
}

#[test]
fn restores_after_normal_return() {
    let before = thread_binding().unwrap();
    let Some((a, _)) = two_cpus() else { return skip("restores_after_normal_return") };
    let guard = CallerAffinityGuard::enter(&one(a)).unwrap();
    assert!(guard.changed());
    assert_eq!(thread_binding().unwrap(), one(a));
    guard.finish().unwrap();
    assert_eq!(thread_binding().unwrap(), before);
}

#[test]
fn restores_after_error_return() {
    fn fails_inside(cpu: usize) -> Result<(), String> {
        let _guard = CallerAffinityGuard::enter(&one(cpu)).map_err(|e| e.to_string())?;
        assert_eq!(thread_binding().unwrap(), one(cpu));
        Err("the work failed".to_owned())
    }
    let before = thread_binding().unwrap();
    let Some((a, _)) = two_cpus() else { return skip("restores_after_error_return") };
    assert!(fails_inside(a).is_err());
    assert_eq!(thread_binding().unwrap(), before);
}

#[test]
fn restores_after_unwind() {
    let before = thread_binding().unwrap();
    let Some((a, _)) = two_cpus() else { return skip("restores_after_unwind") };
    let result = std::panic::catch_unwind(|| {
        let _guard = CallerAffinityGuard::enter(&one(a)).unwrap();
        assert_eq!(thread_binding().unwrap(), one(a));
        panic!("the work panicked");
    });
    assert!(result.is_err());
    assert_eq!(thread_binding().unwrap(), before);
}

#[test]
fn narrowing_never_widens() {
    let before = thread_binding().unwrap();
    let Some((a, b)) = two_cpus() else { return skip("narrowing_never_widens") };
    let outer = CallerAffinityGuard::enter(&one(a)).unwrap();
    let calls = system_calls();
    // The inner domain is wider than the current binding: nothing to do, and no write.
    let inner = CallerAffinityGuard::enter(&CpuSet::from_cpus([a, b]).unwrap()).unwrap();
    assert!(!inner.changed());
    assert_eq!(thread_binding().unwrap(), one(a));
    inner.finish().unwrap();
    assert_eq!(system_calls().writes, calls.writes);
    assert_eq!(thread_binding().unwrap(), one(a));
    // The whole allowed set does not widen either (the no-read shortcut).
    let whole = CallerAffinityGuard::enter(Topology::get().unwrap().allowed()).unwrap();
    assert!(!whole.changed());
    assert_eq!(thread_binding().unwrap(), one(a));
    drop(whole);
    outer.finish().unwrap();
    assert_eq!(thread_binding().unwrap(), before);
}

#[test]
fn disjoint_masks_are_a_typed_error() {
    let before = thread_binding().unwrap();
    let Some((a, b)) = two_cpus() else { return skip("disjoint_masks_are_a_typed_error") };
    let outer = CallerAffinityGuard::enter(&one(a)).unwrap();
    let err = CallerAffinityGuard::enter(&one(b)).unwrap_err();
    assert_eq!(
        err,
        AffinityError::EmptyIntersection { current: Box::new(one(a)), requested: Box::new(one(b)) }
    );
    assert_eq!(thread_binding().unwrap(), one(a), "a failed enter changed the binding");
    outer.finish().unwrap();
    assert_eq!(thread_binding().unwrap(), before);
}

#[test]
fn disjoint_from_every_cpu_is_a_typed_error() {
    let beyond = CpuSet::from_cpus([CpuSet::MAX_CPUS - 1]).unwrap();
    if !thread_binding().unwrap().contains(CpuSet::MAX_CPUS - 1) {
        let err = CallerAffinityGuard::enter(&beyond).unwrap_err();
        assert!(matches!(err, AffinityError::EmptyIntersection { .. }), "{err:?}");
    }
}

#[test]
fn unchanged_mask_makes_no_system_call() {
    let topology = Topology::get().unwrap();
    let calls = system_calls();
    let guard = CallerAffinityGuard::enter(topology.allowed()).unwrap();
    assert!(!guard.changed());
    guard.finish().unwrap();
    assert_eq!(system_calls(), calls, "a domain covering the allowed set read or wrote");

    // A domain covering the current binding but not the allowed set: one read, no write.
    let Some((a, _)) = two_cpus() else { return skip("unchanged_mask_makes_no_system_call") };
    let outer = CallerAffinityGuard::enter(&one(a)).unwrap();
    let calls = system_calls();
    CallerAffinityGuard::enter(&one(a)).unwrap().finish().unwrap();
    let after = system_calls();
    assert_eq!((after.reads - calls.reads, after.writes - calls.writes), (1, 0));
    outer.finish().unwrap();
}

#[test]
fn injected_restore_failure_surfaces_from_finish_and_drop_retries() {
    let before = thread_binding().unwrap();
    let Some((a, _)) = two_cpus() else { return skip("injected_restore_failure") };
    let guard = CallerAffinityGuard::enter(&one(a)).unwrap();
    fault::fail_next_restores(1);
    let err = guard.finish().unwrap_err();
    assert!(matches!(&err, AffinityError::Restore { target, .. } if **target == before), "{err:?}");
    assert_eq!(fault::pending_restore_failures(), 0);
    // `finish` dropped the guard, whose drop retried and succeeded.
    assert_eq!(thread_binding().unwrap(), before);
}

#[test]
fn drop_alone_retries_best_effort_without_panicking() {
    // Runs on a scratch thread: when both attempts fail, the binding stays narrowed, and the
    // thread takes it with it.
    let Some((a, _)) = two_cpus() else { return skip("drop_alone_retries") };
    let outcome = std::thread::spawn(move || {
        let before = thread_binding().unwrap();
        let guard = CallerAffinityGuard::enter(&one(a)).unwrap();
        fault::fail_next_restores(2);
        let first = guard.finish();
        // The first attempt (finish) and the retry (drop) both failed: a diagnostic was written,
        // nothing panicked, and the binding was not restored.
        (first, fault::pending_restore_failures(), thread_binding().unwrap(), before)
    })
    .join()
    .unwrap();
    let (first, pending, after, before) = outcome;
    assert!(matches!(first, Err(AffinityError::Restore { .. })));
    assert_eq!(pending, 0);
    assert_eq!(after, one(a));
    assert_ne!(after, before);

    // A plain drop (no finish) consumes one failure and retries nothing more: still no panic.
    let outcome = std::thread::spawn(move || {
        let guard = CallerAffinityGuard::enter(&one(a)).unwrap();
        fault::fail_next_restores(1);
        drop(guard);
        fault::pending_restore_failures()
    })
    .join()
    .unwrap();
    assert_eq!(outcome, 0);
}

#[test]
fn topology_facts_are_consistent() {
    let topology = Topology::get().unwrap();
    assert!(!topology.pus().is_empty());
    assert!(topology.allowed().is_subset(topology.pus()));
    assert!(thread_binding().unwrap().is_subset(topology.allowed()));
    let mut covered = CpuSet::new();
    for core in topology.cores() {
        assert!(core.is_disjoint(&covered), "cores overlap");
        covered |= *core;
    }
    assert_eq!(covered, *topology.pus(), "cores do not cover the PUs");
    assert!(!topology.numa_nodes().is_empty());
    let mut numa = CpuSet::new();
    for node in topology.numa_nodes() {
        numa |= *node.cpus();
    }
    assert_eq!(numa, *topology.pus(), "NUMA nodes do not cover the PUs");
    let expected = if cfg!(feature = "hwloc") { "hwloc" } else { "linux-sysfs" };
    assert_eq!(topology.backend(), expected);
}
