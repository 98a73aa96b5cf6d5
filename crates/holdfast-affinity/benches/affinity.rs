//! Criterion benches of the caller-affinity guard: enter+finish with an unchanged mask (target
//! ≤ 10 ns), with a read but no write, and with a real narrow-and-restore; topology access.
//!
//! Run: `cargo bench -p holdfast-affinity --bench affinity -- --warm-up-time 1 --measurement-time 3`

// Set-up failures abort the bench run with a message: nothing to recover.
#![allow(clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use holdfast_affinity::{CallerAffinityGuard, CpuSet, Topology, thread_binding};
use std::hint::black_box;

/// One guarded scope; returns whether enter+finish succeeded, as a caller checks it. (Handing the
/// whole `Result` to criterion instead adds a store-forwarding stall in criterion's `black_box`.)
#[inline]
fn enter_finish(cpus: &CpuSet) -> bool {
    CallerAffinityGuard::enter(black_box(cpus)).and_then(CallerAffinityGuard::finish).is_ok()
}

fn guard(c: &mut Criterion) {
    let topology = Topology::get().expect("topology");
    let allowed = *topology.allowed();

    c.bench_function("affinity/topology_get", |b| b.iter(|| black_box(Topology::get()).is_ok()));
    c.bench_function("affinity/enter_finish_unchanged_whole_domain", |b| {
        b.iter(|| enter_finish(&allowed));
    });

    let binding = thread_binding().expect("binding");
    let Some(first) = binding.first() else { return };
    let single = CpuSet::from_cpus([first]).expect("valid set");
    if binding.len() < 2 {
        return;
    }
    c.bench_function("affinity/enter_finish_narrow_and_restore", |b| {
        b.iter(|| enter_finish(&single));
    });
    // Narrowed to one CPU, a guard for that CPU must read the binding but writes nothing.
    let outer = CallerAffinityGuard::enter(&single).expect("narrowed");
    c.bench_function("affinity/enter_finish_unchanged_read_only", |b| {
        b.iter(|| enter_finish(&single));
    });
    outer.finish().expect("restored");
}

criterion_group!(benches, guard);
criterion_main!(benches);
