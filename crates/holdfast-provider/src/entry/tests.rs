//! Tests of the routing rule: installs only above threshold, never for the continuation, and a
//! one-thread domain runs everything inline.

use holdfast_affinity::{CpuSet, Topology};
use holdfast_kernels::{Family, Par};

use crate::{CpuDomain, CpuOperationEntry, ParallelMode, RouteCounters};

fn two_thread_domain() -> Option<CpuDomain> {
    let allowed = *Topology::get().unwrap().allowed();
    (allowed.len() >= 2).then(|| CpuDomain::new(allowed, 2).unwrap())
}

const HUGE: u64 = u64::MAX;

#[test]
fn one_thread_domain_runs_every_family_inline() {
    let allowed = *Topology::get().unwrap().allowed();
    let domain = CpuDomain::new(allowed, 1).unwrap();
    let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    assert!(!entry.uses_inner_parallelism());
    let mut routes = RouteCounters::default();
    for family in
        [Family::Elementwise, Family::Reduce, Family::Permute, Family::Gemm, Family::Contraction]
    {
        let (par, on_worker) = entry.with_native_parallelism(family, HUGE, &mut routes, |par| {
            (par, rayon::current_thread_index())
        });
        assert_eq!((par, on_worker), (Par::Seq, None));
    }
    assert_eq!(routes, RouteCounters { installs: 0, inline: 5, in_pool: 0 });
}

#[test]
fn below_threshold_never_installs() {
    let Some(domain) = two_thread_domain() else { return };
    let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    assert!(entry.uses_inner_parallelism());
    let mut routes = RouteCounters::default();
    for family in
        [Family::Elementwise, Family::Reduce, Family::Permute, Family::Gemm, Family::Contraction]
    {
        let size = crate::threshold(family) - 1;
        let (par, worker) = entry.with_native_parallelism(family, size, &mut routes, |par| {
            (par, domain.is_own_worker())
        });
        assert_eq!((par, worker), (Par::Seq, false), "{family:?} below threshold");
    }
    assert_eq!(routes.installs, 0);
    assert_eq!(routes.inline, 5);
}

#[test]
fn above_threshold_installs_for_the_call_only() {
    let Some(domain) = two_thread_domain() else { return };
    let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    let mut routes = RouteCounters::default();
    let caller = std::thread::current().id();
    let (par, inside_pool, thread) = entry.with_native_parallelism(
        Family::Gemm,
        crate::threshold(Family::Gemm),
        &mut routes,
        |par| (par, domain.is_own_worker(), std::thread::current().id()),
    );
    assert_eq!(par.threads(), 2);
    assert!(inside_pool, "the call runs on one of the domain's workers");
    assert_ne!(thread, caller);
    // The continuation: back on the caller's thread, outside the pool.
    assert!(!domain.is_own_worker());
    assert_eq!(std::thread::current().id(), caller);
    assert_eq!(routes, RouteCounters { installs: 1, inline: 0, in_pool: 0 });
}

#[test]
fn a_call_from_inside_the_pool_does_not_install_again() {
    let Some(domain) = two_thread_domain() else { return };
    let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    let mut outer = RouteCounters::default();
    let inner = entry.with_native_parallelism(Family::Gemm, HUGE, &mut outer, |_| {
        let mut inner = RouteCounters::default();
        let par = entry.with_native_parallelism(Family::Gemm, HUGE, &mut inner, |par| par);
        (inner, par.threads())
    });
    assert_eq!(outer.installs, 1);
    assert_eq!(inner, (RouteCounters { installs: 0, inline: 0, in_pool: 1 }, 2));
}

#[test]
fn serial_mode_never_fans_out() {
    let Some(domain) = two_thread_domain() else { return };
    let entry = CpuOperationEntry::new(&domain, ParallelMode::Serial);
    assert!(!entry.uses_inner_parallelism());
    let mut routes = RouteCounters::default();
    assert_eq!(entry.with_native_parallelism(Family::Gemm, HUGE, &mut routes, |p| p), Par::Seq);
    assert_eq!(routes.installs, 0);
}

#[test]
fn panics_in_the_call_propagate_and_the_pool_stays_usable() {
    let Some(domain) = two_thread_domain() else { return };
    let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    let mut routes = RouteCounters::default();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        entry.with_native_parallelism(Family::Gemm, HUGE, &mut routes, |_| -> () {
            panic!("kernel failed");
        });
    }));
    assert!(caught.is_err());
    assert_eq!(entry.with_native_parallelism(Family::Gemm, HUGE, &mut routes, Par::threads), 2);
    assert_eq!(routes.installs, 2);
}

#[test]
fn entry_is_copy_and_small() {
    fn assert_copy<T: Copy>() {}
    assert_copy::<CpuOperationEntry<'static>>();
    assert!(std::mem::size_of::<CpuOperationEntry<'static>>() <= 2 * std::mem::size_of::<usize>());
    let _ = CpuSet::new();
}
