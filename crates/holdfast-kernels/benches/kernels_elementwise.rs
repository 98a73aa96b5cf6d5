//! Elementwise f64 add of 2 and 1024 elements (SPEC M3): the kernel with a fresh heap output,
//! the kernel with a pooled output, and a plain loop into a preallocated vector for reference.
//!
//! `cargo bench -p holdfast-kernels --bench kernels_elementwise`

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark, not a library")]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use holdfast_kernels::{HeapAlloc, KernelAlloc, Par, elementwise};
use holdfast_tensor::Tensor;

#[path = "../tests/support/pool.rs"]
mod pool;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("add_f64");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for n in [2usize, 1024] {
        let a = Tensor::from_vec([n], (0..n).map(|i| i as f64).collect()).unwrap();
        let b = Tensor::from_vec([n], (0..n).map(|i| 0.5 * i as f64).collect()).unwrap();
        g.bench_with_input(BenchmarkId::new("kernel_heap", n), &n, |bch, _| {
            bch.iter(|| {
                black_box(elementwise::add(a.read(), b.read(), &mut HeapAlloc, Par::Seq).unwrap())
            });
        });
        let mut pool = pool::PoolAlloc::default();
        g.bench_with_input(BenchmarkId::new("kernel_pooled", n), &n, |bch, _| {
            bch.iter(|| {
                let r = elementwise::add(a.read(), b.read(), &mut pool, Par::Seq).unwrap();
                let (buf, _) = black_box(r).into_parts();
                pool.give(buf);
            });
        });
        let mut out = vec![0.0; n];
        g.bench_with_input(BenchmarkId::new("plain_loop", n), &n, |bch, _| {
            bch.iter(|| {
                for ((o, &x), &y) in out.iter_mut().zip(a.as_slice()).zip(b.as_slice()) {
                    *o = x + y;
                }
                black_box(&out);
            });
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
