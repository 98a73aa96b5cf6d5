//! Kernel matmul against a direct faer call, square f64 at n = 2, 4, 8, 16, 64, 256, in one run
//! (SPEC M3; acceptance: a prepared plan costs at most 1.2× direct faer for n ≥ 4).
//!
//! Four rows per size, all writing into a preallocated output:
//! - `faer_direct`: `faer::linalg::matmul::matmul` on `MatRef`/`MatMut` built from the slices;
//! - `plan_execute_into`: a [`MatmulPlan`] prepared once, executed each iteration;
//! - `matmul_into`: validation on every call;
//! - `matmul_pooled`: `matmul` with its output taken from (and given back to) a pool (the test-support best-fit pool).
//!
//! A second group, `matmul_f64_pairs`, runs `faer_direct/N` and `plan_execute_into/N` back to
//! back, five times each (`…/N/R`, R = 1 to 5), for n ≥ 4: the 1.2× target is judged on the
//! median of the five pairs' ratios (`cargo xtask bench-report`), so that a drift of this
//! shared machine's speed between two measurements seconds apart does not decide it. Both
//! sides of a pair use the same operand and output buffers.
//!
//! A third, `gemm_bound/faer/2048`, times faer's single-thread DGEMM at 2048³ (row-major
//! operands, as holdfast's tensors are): the rate `cargo xtask bench-report` divides each einsum
//! instance's GEMM flops by for its GEMM-bound time (SPEC N2).
//!
//! `cargo bench -p holdfast-kernels --bench kernels_matmul` (`-- --quick` for a smoke run).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark, not a library")]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use holdfast_kernels::matmul::{MatmulPlan, matmul, matmul_into};
use holdfast_kernels::{KernelAlloc, Par};
use holdfast_tensor::Tensor;

#[path = "../tests/support/pool.rs"]
mod pool;

fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed;
    (0..n * n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul_f64");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for n in [2usize, 4, 8, 16, 64, 256] {
        let a = Tensor::from_vec([n, n], data(n, 1)).unwrap();
        let b = Tensor::from_vec([n, n], data(n, 2)).unwrap();
        let mut out = Tensor::<f64>::zeros([n, n]);
        let mut fout = vec![0.0f64; n * n];
        g.bench_with_input(BenchmarkId::new("faer_direct", n), &n, |bch, &n| {
            bch.iter(|| {
                let fa = faer::MatRef::from_row_major_slice(a.as_slice(), n, n);
                let fb = faer::MatRef::from_row_major_slice(b.as_slice(), n, n);
                let fc = faer::MatMut::from_row_major_slice_mut(&mut fout, n, n);
                faer::linalg::matmul::matmul(fc, faer::Accum::Replace, fa, fb, 1.0, faer::Par::Seq);
                black_box(&fout);
            });
        });
        let plan = MatmulPlan::new(a.layout(), b.layout()).unwrap();
        g.bench_with_input(BenchmarkId::new("plan_execute_into", n), &n, |bch, _| {
            bch.iter(|| {
                plan.execute_into(&a.read(), &b.read(), &mut out, Par::Seq).unwrap();
                black_box(&out);
            });
        });
        g.bench_with_input(BenchmarkId::new("matmul_into", n), &n, |bch, _| {
            bch.iter(|| {
                matmul_into(a.read(), b.read(), &mut out, Par::Seq).unwrap();
                black_box(&out);
            });
        });
        let mut pool = pool::PoolAlloc::default();
        g.bench_with_input(BenchmarkId::new("matmul_pooled", n), &n, |bch, _| {
            bch.iter(|| {
                let r = matmul(a.read(), b.read(), &mut pool, Par::Seq).unwrap();
                let (buf, _) = black_box(r).into_parts();
                pool.give(buf);
            });
        });
    }
    g.finish();
}

/// Side-by-side repetitions of each (faer, plan) pair.
const REPETITIONS: usize = 5;

fn pairs(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul_f64_pairs");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for n in [4usize, 8, 16, 64, 256] {
        let a = Tensor::from_vec([n, n], data(n, 1)).unwrap();
        let b = Tensor::from_vec([n, n], data(n, 2)).unwrap();
        let mut out = Tensor::<f64>::zeros([n, n]);
        let plan = MatmulPlan::new(a.layout(), b.layout()).unwrap();
        for rep in 1..=REPETITIONS {
            // Both sides of a pair read and write the same buffers, so that the call path is
            // the only difference between them.
            g.bench_function(BenchmarkId::new(format!("faer_direct/{n}"), rep), |bch| {
                bch.iter(|| {
                    let fa = faer::MatRef::from_row_major_slice(a.as_slice(), n, n);
                    let fb = faer::MatRef::from_row_major_slice(b.as_slice(), n, n);
                    let fc = faer::MatMut::from_row_major_slice_mut(out.as_mut_slice(), n, n);
                    let (accum, par) = (faer::Accum::Replace, faer::Par::Seq);
                    faer::linalg::matmul::matmul(fc, accum, fa, fb, 1.0, par);
                    black_box(&out);
                });
            });
            g.bench_function(BenchmarkId::new(format!("plan_execute_into/{n}"), rep), |bch| {
                bch.iter(|| {
                    plan.execute_into(&a.read(), &b.read(), &mut out, Par::Seq).unwrap();
                    black_box(&out);
                });
            });
        }
    }
    g.finish();
}

fn gemm_bound(c: &mut Criterion) {
    let n = 2048;
    let mut g = c.benchmark_group("gemm_bound");
    g.sample_size(10).warm_up_time(Duration::from_secs(1));
    let (a, b) = (data(n, 3), data(n, 4));
    let mut out = vec![0.0f64; n * n];
    g.bench_function(BenchmarkId::new("faer", n), |bch| {
        bch.iter(|| {
            let fa = faer::MatRef::from_row_major_slice(&a, n, n);
            let fb = faer::MatRef::from_row_major_slice(&b, n, n);
            let fc = faer::MatMut::from_row_major_slice_mut(&mut out, n, n);
            faer::linalg::matmul::matmul(fc, faer::Accum::Replace, fa, fb, 1.0, faer::Par::Seq);
            black_box(&out);
        });
    });
}

criterion_group!(benches, bench, pairs, gemm_bound);
criterion_main!(benches);
