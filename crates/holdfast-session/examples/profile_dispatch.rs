//! A fixed loop of held 4×4 `matmul_into` calls, for instruction-level profiling:
//! `valgrind --tool=callgrind target/release/examples/profile_dispatch [into|alloc|open|empty]`.
#![allow(clippy::unwrap_used, reason = "profiling harness")]

use std::hint::black_box;

use holdfast_session::{CpuBackend, Tensor};

fn main() {
    let what = std::env::args().nth(1).unwrap_or_else(|| "into".to_owned());
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let a = Tensor::<f64>::from_vec([4, 4], (0..16).map(f64::from).collect()).unwrap();
    let mut out = Tensor::<f64>::zeros([4, 4]);
    // HOLDFAST_ITERS: more iterations for sampling profilers (`perf record`).
    let iters: usize =
        std::env::var("HOLDFAST_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    match what.as_str() {
        "into" => {
            let mut s = backend.open_session().unwrap();
            for _ in 0..iters {
                s.with_session(|v| v.matmul_into(black_box(&a).read(), a.read(), &mut out))
                    .unwrap();
            }
            s.close().unwrap();
        }
        "alloc" => {
            let mut s = backend.open_session().unwrap();
            for _ in 0..iters {
                s.with_session(|v| {
                    let c = v.matmul(black_box(&a).read(), a.read()).unwrap();
                    v.recycle(c);
                });
            }
            s.close().unwrap();
        }
        "open" => {
            for _ in 0..iters {
                black_box(backend.open_session().unwrap()).close().unwrap();
            }
        }
        "faer" => {
            use faer::{Accum, MatMut, MatRef, Par};
            let data = a.as_slice().to_vec();
            let mut raw = vec![0.0f64; 16];
            for _ in 0..iters {
                let lhs = MatRef::from_row_major_slice(black_box(&data[..]), 4, 4);
                let rhs = MatRef::from_row_major_slice(black_box(&data[..]), 4, 4);
                let dst = MatMut::from_row_major_slice_mut(&mut raw[..], 4, 4);
                faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0, Par::Seq);
                black_box(&raw);
            }
        }
        _ => {
            for _ in 0..iters {
                backend.with_backend_session(|_| black_box(())).unwrap();
            }
        }
    }
    black_box(out);
}
