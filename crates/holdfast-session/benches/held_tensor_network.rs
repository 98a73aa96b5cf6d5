//! `held_tensor_network`: the tensor-network operations of a held session next to the bare faer
//! call, in one run at one thread.
//!
//! | id | what |
//! |---|---|
//! | `c64_direct_faer_into/R` | faer 4×4 `c64` matmul into a caller buffer |
//! | `c64_held_matmul_into/R` | held session, `c64` `matmul_into` a caller-owned output |
//! | `svd_direct_faer_{f64,c64}_{16,64}/R` | faer's `thin_svd` of an n×n matrix (its own allocations) |
//! | `svd_held_{f64,c64}_{16,64}/R` | held session, `svd` (no truncation), outputs recycled to the pool |
//!
//! Each (direct, held) pair runs back to back, repetition `R` = 1 to 5; `cargo xtask
//! bench-report` runs them pinned to one CPU and takes the median of the pairs' ratios (five:
//! a small product or factorization moves between two speeds on a shared machine, and three
//! pairs let one jump decide the median).
//!
//! Run: `cargo bench -p holdfast-session --bench held_tensor_network`.
#![allow(clippy::unwrap_used, reason = "benchmark setup: a failure should stop the run loudly")]

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};
use holdfast_session::{CpuBackend, CpuHeldSession, LinalgElement, Tensor, Truncation, c64};

/// Side-by-side repetitions of each (direct, held) pair.
const REPETITIONS: usize = 5;

fn element<T: LinalgElement>(i: usize) -> T {
    // A fixed, well-conditioned pattern: distinct values, both parts for complex types.
    let x = ((i * 7919) % 101) as f64 / 50.0 - 1.0;
    let y = ((i * 104_729) % 97) as f64 / 48.0 - 1.0;
    T::from_parts(x, y)
}

fn complex_matmul(g: &mut BenchmarkGroup<'_, WallTime>, session: &mut CpuHeldSession<'_>) {
    const N: usize = 4;
    let data: Vec<c64> = (0..N * N).map(element).collect();
    let a = Tensor::from_vec([N, N], data.clone()).unwrap();
    let b = Tensor::from_vec([N, N], data).unwrap();
    let mut out = Tensor::<c64>::zeros([N, N]);
    for rep in 1..=REPETITIONS {
        g.bench_function(BenchmarkId::new("c64_direct_faer_into", rep), |bench| {
            bench.iter(|| {
                let lhs = MatRef::from_row_major_slice(black_box(a.as_slice()), N, N);
                let rhs = MatRef::from_row_major_slice(black_box(b.as_slice()), N, N);
                let dst = MatMut::from_row_major_slice_mut(out.as_mut_slice(), N, N);
                matmul(dst, Accum::Replace, lhs, rhs, c64::new(1.0, 0.0), Par::Seq);
                black_box(&out);
            });
        });
        g.bench_function(BenchmarkId::new("c64_held_matmul_into", rep), |bench| {
            bench.iter(|| {
                session
                    .with_session(|v| v.matmul_into(black_box(&a).read(), b.read(), &mut out))
                    .unwrap();
            });
        });
    }
}

fn svd_pair<T>(g: &mut BenchmarkGroup<'_, WallTime>, session: &mut CpuHeldSession<'_>, name: &str)
where
    T: LinalgElement + faer::traits::ComplexField,
{
    for n in [16, 64] {
        let data: Vec<T> = (0..n * n).map(element).collect();
        let t = Tensor::from_vec([n, n], data.clone()).unwrap();
        let m = Mat::<T>::from_fn(n, n, |i, j| data[i * n + j]);
        for rep in 1..=REPETITIONS {
            g.bench_function(
                BenchmarkId::new(format!("svd_direct_faer_{name}_{n}"), rep),
                |bench| {
                    bench.iter(|| black_box(black_box(&m).thin_svd().unwrap()));
                },
            );
            g.bench_function(BenchmarkId::new(format!("svd_held_{name}_{n}"), rep), |bench| {
                bench.iter(|| {
                    session.with_session(|v| {
                        let svd = v.svd(black_box(&t).read(), &[0], Truncation::none()).unwrap();
                        v.recycle(black_box(svd.u));
                        v.recycle(svd.s);
                        v.recycle(svd.vh);
                    });
                });
            });
        }
    }
}

fn tensor_network(c: &mut Criterion) {
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let mut g = c.benchmark_group("held_tensor_network");
    g.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut session = backend.open_session().unwrap();
    complex_matmul(&mut g, &mut session);
    svd_pair::<f64>(&mut g, &mut session, "f64");
    svd_pair::<c64>(&mut g, &mut session, "c64");
    session.close().unwrap();
    g.finish();
}

criterion_group!(benches, tensor_network);
criterion_main!(benches);
