//! `held_session_dispatch`: what a held session costs per operation, next to the bare kernel, in
//! one run at one thread (issue "Held sessions", acceptance).
//!
//! | id | what |
//! |---|---|
//! | `direct_faer_into/R` | faer 4×4 f64 matmul into a caller buffer |
//! | `held_matmul_into/R` | held session, `matmul_into` a caller-owned output |
//! | `direct_faer_alloc/R` | the same faer call plus a freshly allocated output `Vec` |
//! | `held_matmul/R` | held session, `matmul` with a pool-served output (recycled) |
//! | `scoped_matmul` | one scoped entry per matmul |
//! | `held_open_close` | `open_session` + `close` |
//! | `scoped_empty` | a scoped entry running an empty callback |
//!
//! The four matmul ids run as (direct, held) pairs, back to back, repetition `R` = 1 to 9;
//! `cargo xtask bench-report` runs them pinned to one CPU and takes the median of the nine
//! pairs' ratios. A single 4×4 product moves between two speeds on a shared machine from one
//! measurement to the next (`docs/perf/` gives the figures); nine pairs keep such jumps from
//! deciding the median.
//!
//! Run: `cargo bench -p holdfast-session --bench held_session_dispatch`.
#![allow(clippy::unwrap_used, reason = "benchmark setup: a failure should stop the run loudly")]

use std::hint::black_box;

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use holdfast_session::{CpuBackend, Tensor};

const N: usize = 4;
/// Side-by-side repetitions of each (direct, held) pair.
const REPETITIONS: usize = 9;

fn dispatch(c: &mut Criterion) {
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let data: Vec<f64> = (0..N * N).map(|i| i as f64 * 0.25).collect();
    let a = Tensor::from_vec([N, N], data.clone()).unwrap();
    let b = Tensor::from_vec([N, N], data.clone()).unwrap();
    let mut out = Tensor::<f64>::zeros([N, N]);

    let mut g = c.benchmark_group("held_session_dispatch");
    g.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    let mut session = backend.open_session().unwrap();
    // Each ratio target divides two neighbours: the pair runs back to back, nine times, so a
    // drift of this shared machine's speed over the run lands on both sides of most pairs.
    // Both sides read `a`, `b` and write `out`: the same memory, whatever the heap did.
    for rep in 1..=REPETITIONS {
        g.bench_function(BenchmarkId::new("direct_faer_into", rep), |bench| {
            bench.iter(|| {
                let lhs = MatRef::from_row_major_slice(black_box(a.as_slice()), N, N);
                let rhs = MatRef::from_row_major_slice(black_box(b.as_slice()), N, N);
                let dst = MatMut::from_row_major_slice_mut(out.as_mut_slice(), N, N);
                matmul(dst, Accum::Replace, lhs, rhs, 1.0, Par::Seq);
                black_box(&out);
            });
        });
        g.bench_function(BenchmarkId::new("held_matmul_into", rep), |bench| {
            bench.iter(|| {
                session
                    .with_session(|v| v.matmul_into(black_box(&a).read(), b.read(), &mut out))
                    .unwrap();
            });
        });
        g.bench_function(BenchmarkId::new("direct_faer_alloc", rep), |bench| {
            bench.iter(|| {
                let mut fresh = vec![0.0f64; N * N];
                let lhs = MatRef::from_row_major_slice(black_box(a.as_slice()), N, N);
                let rhs = MatRef::from_row_major_slice(black_box(b.as_slice()), N, N);
                let dst = MatMut::from_row_major_slice_mut(&mut fresh[..], N, N);
                matmul(dst, Accum::Replace, lhs, rhs, 1.0, Par::Seq);
                black_box(fresh)
            });
        });
        g.bench_function(BenchmarkId::new("held_matmul", rep), |bench| {
            bench.iter(|| {
                session.with_session(|v| {
                    let c = v.matmul(black_box(&a).read(), b.read()).unwrap();
                    v.recycle(black_box(c));
                });
            });
        });
    }
    session.close().unwrap();
    g.bench_function("scoped_matmul", |bench| {
        bench.iter(|| {
            backend
                .with_backend_session(|v| {
                    let c = v.matmul(black_box(&a).read(), b.read()).unwrap();
                    v.recycle(black_box(c));
                })
                .unwrap();
        });
    });
    g.bench_function("held_open_close", |bench| {
        bench.iter(|| black_box(backend.open_session().unwrap()).close().unwrap());
    });
    g.bench_function("scoped_empty", |bench| {
        bench.iter(|| backend.with_backend_session(|_| black_box(())).unwrap());
    });
    g.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
