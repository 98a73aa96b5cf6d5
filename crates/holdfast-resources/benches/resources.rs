//! Criterion benches of the resources' per-operation paths (targets in `docs/perf/REPORT.md`):
//! - `checkout/take_return`: `EngineResourceCheckout::take` + drop (target ≤ 50 ns);
//! - `loan/bare_op` vs `loan/loan_op`: an operation that takes and gives back one pooled
//!   buffer, bare and inside a `BufferPoolLoan` (target: difference ≤ 25 ns);
//! - `plan_cache/*`: a hit for the 4-label pairwise contraction `abc,cd->abd`: `get_ref`, a key
//!   built and looked up (`PlanStore::find`); `plan_store_get`, the whole `PlanStore::lookup`
//!   the session makes; with a prebuilt key; key construction alone; `hit_4label_recent`, the
//!   first step of the lookup (the most recent plan matched against the spec and operands, no
//!   key built, target ≤ 30 ns); GEMM analysis hits. The ids are kept from earlier reports.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark, not a library")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use holdfast_kernels::einsum::{PlanKey, PlanStore, einsum_cached};
use holdfast_kernels::{HeapAlloc, KernelAlloc, Par};
use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources, GemmKey};
use holdfast_tensor::Tensor;

fn checkout(c: &mut Criterion) {
    let slot = EngineResourceSlot::new(EngineResources::default());
    c.bench_function("checkout/take_return", |b| {
        b.iter(|| {
            let co = EngineResourceCheckout::take(black_box(&slot));
            black_box(&co);
        });
    });
}

fn loan(c: &mut Criterion) {
    let mut r = EngineResources::default();
    for cap in [16, 64, 256, 1024] {
        r.buffers.give(Vec::<f64>::with_capacity(cap));
    }
    c.bench_function("loan/bare_op", |b| {
        b.iter(|| {
            let v: Vec<f64> = r.buffers.take(black_box(64));
            black_box(&v);
            r.buffers.give(v);
        });
    });
    c.bench_function("loan/loan_op", |b| {
        b.iter(|| {
            let mut loan = r.buffers.loan();
            let v: Vec<f64> = loan.take(black_box(64));
            black_box(&v);
            loan.give(v);
            loan.finish();
        });
    });
}

/// The same content and fingerprint work as `PlanKey::new` (spec bytes, dtype, every operand's
/// rank, shape and strides), written into a fixed array with element-wise stores instead of
/// `SmallVec::extend_from_slice` and hashed in four independent lanes, to measure what the kernels' key construction could cost
/// (see the issue notes).
#[inline(never)]
fn plan_cache(c: &mut Criterion) {
    let mut r = EngineResources::default();
    let a = Tensor::<f64>::zeros([2, 3, 4]);
    let bt = Tensor::<f64>::zeros([4, 5]);
    let ops = [a.read(), bt.read()];
    let spec = "abc,cd->abd";
    einsum_cached(spec, &ops, None, &mut r.indexed_plan_cache, &mut HeapAlloc, Par::Seq)
        .expect("valid einsum");
    // Some other entries, so the hit is not trivially the only one.
    for n in 2..10 {
        let x = Tensor::<f64>::zeros([n, n]);
        einsum_cached(
            "ij,jk->ik",
            &[x.read(), x.read()],
            None,
            &mut r.indexed_plan_cache,
            &mut HeapAlloc,
            Par::Seq,
        )
        .expect("valid einsum");
    }
    let cache = &mut r.indexed_plan_cache;
    c.bench_function("plan_cache/hit_4label_get_ref", |b| {
        b.iter(|| {
            let key = PlanKey::new(black_box(spec), black_box(&ops), None);
            black_box(cache.find(&key).is_some())
        });
    });
    c.bench_function("plan_cache/hit_4label_plan_store_get", |b| {
        b.iter(|| black_box(cache.lookup(black_box(spec), black_box(&ops), None).is_ok()));
    });
    c.bench_function("plan_cache/plan_key_new_only", |b| {
        b.iter(|| black_box(PlanKey::new(black_box(spec), black_box(&ops), None)));
    });
    let key = PlanKey::new(spec, &ops, None);
    c.bench_function("plan_cache/hit_4label_prebuilt_key", |b| {
        b.iter(|| black_box(cache.find(black_box(&key)).is_some()));
    });
    // The session's path: the most recent plan is checked against the spec and operands
    // directly, with no key built (the 4-label plan is the most recent entry here).
    assert!(cache.find(&key).is_some());
    c.bench_function("plan_cache/hit_4label_recent", |b| {
        b.iter(|| black_box(cache.find_recent(black_box(spec), black_box(&ops), None).is_some()));
    });
    let m = Tensor::<f64>::zeros([4, 4]);
    let gemm = &mut r.gemm_analysis_cache;
    gemm.get_or_prepare(m.layout(), m.layout()).expect("valid product");
    c.bench_function("plan_cache/gemm_hit", |b| {
        b.iter(|| black_box(gemm.get(black_box(m.layout()), m.layout()).is_some()));
    });
    c.bench_function("plan_cache/gemm_hit_recent", |b| {
        b.iter(|| black_box(gemm.get_or_prepare(black_box(m.layout()), m.layout()).is_ok()));
    });
    c.bench_function("plan_cache/gemm_key_new_only", |b| {
        b.iter(|| black_box(GemmKey::new(black_box(m.layout()), m.layout())));
    });
}

criterion_group!(benches, checkout, loan, plan_cache);
criterion_main!(benches);
