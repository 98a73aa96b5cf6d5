//! A fixed loop of `n×n` f64 products, for instruction-level profiling of the kernel's GEMM
//! path against a direct faer call:
//! `valgrind --tool=callgrind target/release/examples/profile_matmul [plan|faer] [n]`.
#![allow(clippy::unwrap_used, reason = "profiling harness")]

use std::hint::black_box;

use holdfast_kernels::Par;
use holdfast_kernels::matmul::MatmulPlan;
use holdfast_tensor::Tensor;

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "plan".to_owned());
    let n: usize = args.next().map_or(4, |s| s.parse().unwrap());
    // HOLDFAST_ITERS: more iterations for sampling profilers (`perf record`).
    let iters: usize =
        std::env::var("HOLDFAST_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    #[allow(clippy::cast_precision_loss, reason = "small test values")]
    let a = Tensor::<f64>::from_vec([n, n], (0..n * n).map(|x| x as f64).collect()).unwrap();
    let mut out = Tensor::<f64>::zeros([n, n]);
    match what.as_str() {
        "plan" => {
            let plan = MatmulPlan::new(a.layout(), a.layout()).unwrap();
            for _ in 0..iters {
                plan.execute_into(&black_box(&a).read(), &a.read(), &mut out, Par::Seq).unwrap();
                black_box(&out);
            }
        }
        _ => {
            use faer::{Accum, MatMut, MatRef, Par};
            let data = a.as_slice().to_vec();
            let mut raw = vec![0.0f64; n * n];
            for _ in 0..iters {
                let lhs = MatRef::from_row_major_slice(black_box(&data[..]), n, n);
                let rhs = MatRef::from_row_major_slice(black_box(&data[..]), n, n);
                let dst = MatMut::from_row_major_slice_mut(&mut raw[..], n, n);
                faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0, Par::Seq);
                black_box(&raw);
            }
        }
    }
}
