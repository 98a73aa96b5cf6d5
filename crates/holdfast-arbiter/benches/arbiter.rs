//! Criterion benches of admission: the uncontended acquire+release round trip (target ≤ 60 ns),
//! the owner marker enter+exit (target ≤ 5 ns), and the cheap failure and join paths.
//!
//! Run: `cargo bench -p holdfast-arbiter --bench arbiter -- --warm-up-time 1 --measurement-time 3`

// Set-up failures abort the bench run with a message: nothing to recover.
#![allow(clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use holdfast_arbiter::{
    AdmissionMode, CpuSet, ExecutionOwnerGuard, ResourceArbiter, fresh_execution_owner,
};
use std::hint::black_box;

fn admission(c: &mut Criterion) {
    let mask = CpuSet::from_cpus([0, 1]).expect("valid mask");
    let owner = fresh_execution_owner().expect("no execution active");
    let private = ResourceArbiter::new();
    let global = ResourceArbiter::global();

    c.bench_function("arbiter/acquire_release_uncontended/private", |b| {
        b.iter(|| drop(black_box(private.acquire(black_box(&mask), owner, AdmissionMode::Wait))));
    });
    c.bench_function("arbiter/acquire_release_uncontended/global", |b| {
        b.iter(|| drop(black_box(global.acquire(black_box(&mask), owner, AdmissionMode::Wait))));
    });
    c.bench_function("arbiter/try_acquire_release_uncontended/global", |b| {
        b.iter(|| drop(black_box(global.acquire(black_box(&mask), owner, AdmissionMode::Try))));
    });

    let root = global.acquire(&mask, owner, AdmissionMode::Wait).expect("admitted");
    c.bench_function("arbiter/join_release", |b| {
        b.iter(|| drop(black_box(global.join(black_box(owner)))));
    });
    let other = fresh_execution_owner().expect("no execution active");
    c.bench_function("arbiter/try_contended", |b| {
        b.iter(|| black_box(global.acquire(black_box(&mask), other, AdmissionMode::Try)).is_err());
    });
    drop(root);
}

fn owner_marker(c: &mut Criterion) {
    let owner = fresh_execution_owner().expect("no execution active");
    c.bench_function("owner/guard_enter_exit", |b| {
        b.iter(|| drop(black_box(ExecutionOwnerGuard::enter(black_box(owner)))));
    });
}

criterion_group!(benches, admission, owner_marker);
criterion_main!(benches);
