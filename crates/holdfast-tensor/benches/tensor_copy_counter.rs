//! What the copy counter costs: a counted copy (`TensorRead::copy_into`, which records the copy)
//! against the bare `copy_from_slice` it wraps, at 2 and 1024 elements, and a view (`read` +
//! `transpose`) that never touches the counter, and a plain borrowed `read`.
//!
//! Run: `cargo bench -p holdfast-tensor --bench tensor_copy_counter`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use holdfast_tensor::Tensor;

fn copy_counter(c: &mut Criterion) {
    let mut group = c.benchmark_group("copy_counter");
    for n in [2usize, 1024] {
        let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let Ok(t) = Tensor::from_shape_vec(&[n], data.clone()) else { return };
        let mut out = vec![0.0f64; n];
        group.bench_function(format!("bare_copy_from_slice/{n}"), |b| {
            b.iter(|| black_box(&mut out[..]).copy_from_slice(black_box(&data[..])));
        });
        // The same view and slice path as `copy_into`, minus the counter: the fair comparison
        // (the line above may be compiled to an inline loop instead of a `memcpy` call).
        group.bench_function(format!("uncounted_view_copy/{n}"), |b| {
            b.iter(|| {
                let view = black_box(&t).read();
                if let Some(src) = view.contiguous_slice() {
                    black_box(&mut out[..]).copy_from_slice(src);
                }
            });
        });
        group.bench_function(format!("counted_copy_into/{n}"), |b| {
            b.iter(|| black_box(&t).read().copy_into(black_box(&mut out[..])));
        });
    }
    let Ok(m) = Tensor::<f64>::from_shape_vec(&[4, 4], vec![0.0; 16]) else { return };
    group.bench_function("view_read_borrowed", |b| {
        b.iter(|| black_box(black_box(&m).read()));
    });
    group.bench_function("view_read_transpose", |b| {
        b.iter(|| black_box(black_box(&m).read().transpose()));
    });
    group.finish();
}

criterion_group!(benches, copy_counter);
criterion_main!(benches);
