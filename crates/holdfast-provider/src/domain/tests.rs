//! Tests of domain construction: every error, the pool's presence, and worker binding.

use holdfast_affinity::{CpuSet, Topology, thread_binding};

use crate::{CpuDomain, ProviderError};

fn allowed() -> CpuSet {
    *Topology::get().unwrap().allowed()
}

#[test]
fn construction_errors_are_typed() {
    assert!(matches!(CpuDomain::new(CpuSet::new(), 1), Err(ProviderError::EmptyCpuSet)));
    assert!(matches!(CpuDomain::new(allowed(), 0), Err(ProviderError::ZeroThreads)));
    let n = allowed().len();
    match CpuDomain::new(allowed(), n + 1) {
        Err(ProviderError::Oversubscribed { threads, cpus }) => {
            assert_eq!((threads, cpus), (n + 1, n));
        }
        other => panic!("expected Oversubscribed, got {other:?}"),
    }
    let outside = (0..CpuSet::MAX_CPUS).find(|c| !allowed().contains(*c)).unwrap();
    let foreign = CpuSet::from_cpus([outside]).unwrap();
    match CpuDomain::new(foreign | allowed(), 1) {
        Err(err @ ProviderError::CpusNotAllowed { .. }) => {
            let message = err.to_string();
            assert!(message.contains(&allowed().to_string()), "{message}");
            assert!(message.contains(&(foreign | allowed()).to_string()), "{message}");
            let ProviderError::CpusNotAllowed { outside, .. } = err else { unreachable!() };
            assert_eq!(*outside, foreign);
        }
        other => panic!("expected CpusNotAllowed, got {other:?}"),
    }
}

#[test]
fn pool_exists_exactly_above_one_thread() {
    let one = CpuDomain::new(allowed(), 1).unwrap();
    assert!(one.pool().is_none());
    assert!(!one.is_own_worker());
    if allowed().len() >= 2 {
        let two = CpuDomain::new(allowed(), 2).unwrap();
        assert_eq!(two.pool().map(rayon::ThreadPool::current_num_threads), Some(2));
    }
}

#[test]
fn workers_are_named_and_bound_to_the_domain() {
    let cpus = allowed();
    if cpus.len() < 2 {
        return;
    }
    // Narrow to the first two allowed CPUs so that binding is observable.
    let two: Vec<usize> = cpus.iter().take(2).collect();
    let domain_cpus = CpuSet::from_cpus(two).unwrap();
    let domain = CpuDomain::new(domain_cpus, 2).unwrap();
    let pool = domain.pool().unwrap();
    let (name, binding) = pool
        .install(|| (std::thread::current().name().map(str::to_owned), thread_binding().unwrap()));
    assert!(name.unwrap().starts_with("holdfast-worker-"));
    assert!(binding.is_subset(&domain_cpus), "worker bound to {binding:?}");
    assert_eq!(domain.unbound_workers(), 0);
}

#[test]
fn process_default_uses_every_allowed_cpu() {
    let d = CpuDomain::process_default().unwrap();
    assert_eq!(d.cpus(), &allowed());
    assert_eq!(d.threads(), allowed().len());
}
