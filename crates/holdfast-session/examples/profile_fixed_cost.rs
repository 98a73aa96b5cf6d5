//! The fixed cost of a warm held operation in instructions (SPEC N3), for callgrind: a loop of
//! one case, held (`add`, `mm2`, `mm4`, `mm2c`, `mm4c`, `ein`: the session's `add` of two
//! 2-element tensors, `matmul` of 2×2 or 4×4 f64 (or c64, `c`) matrices, `einsum("ij,jk->ik")` on
//! 4×4) or its kernel into a preallocated buffer (`kadd`, `kmm2`, `kmm4`, `kmm2c`, `kmm4c`,
//! `kein`), as the `fixed_cost` criterion bench pairs them.
//!
//! ```text
//! cargo build --profile bench -p holdfast-session --example profile_fixed_cost
//! valgrind --tool=callgrind target/release/examples/profile_fixed_cost add 1000
//! valgrind --tool=callgrind target/release/examples/profile_fixed_cost add 2000
//! ```
//!
//! The difference of the two totals over 1000 is one operation's instructions, without the
//! start-up; held minus kernel is the fixed cost. Instruction counts do not depend on what else
//! the machine runs, so two builds compare exactly.
#![allow(clippy::unwrap_used, reason = "profiling harness")]

use std::hint::black_box;

use holdfast_kernels::Par;
use holdfast_kernels::matmul::MatmulPlan;
use holdfast_session::{CpuBackend, Tensor, c64};

fn square(n: usize, shift: f64) -> Tensor<f64> {
    Tensor::from_vec([n, n], (0..n * n).map(|i| f64::from(i as u32) + shift).collect()).unwrap()
}

fn square_c(n: usize, shift: f64) -> Tensor<c64> {
    let at = |i: usize| f64::from(i as u32) + shift;
    Tensor::from_vec([n, n], (0..n * n).map(|i| c64::new(at(i), 1.0 - at(i))).collect()).unwrap()
}

fn main() {
    let case = std::env::args().nth(1).unwrap_or_else(|| "add".to_owned());
    let iters: usize = std::env::args().nth(2).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let mut session = backend.open_session().unwrap();
    let x = Tensor::from_vec([2], vec![1.0f64, 2.0]).unwrap();
    let y = Tensor::from_vec([2], vec![3.0f64, 4.0]).unwrap();
    let (a2, b2, a4, b4) = (square(2, 0.0), square(2, 1.0), square(4, 0.0), square(4, 1.0));
    let (mut out2, mut out4) = (Tensor::<f64>::zeros([2, 2]), Tensor::<f64>::zeros([4, 4]));
    let plan2 = MatmulPlan::new(a2.layout(), b2.layout()).unwrap();
    let plan4 = MatmulPlan::new(a4.layout(), b4.layout()).unwrap();
    let (c2, d2, c4, d4) = (square_c(2, 0.0), square_c(2, 1.0), square_c(4, 0.0), square_c(4, 1.0));
    let (mut outc2, mut outc4) = (Tensor::<c64>::zeros([2, 2]), Tensor::<c64>::zeros([4, 4]));
    let planc2 = MatmulPlan::new(c2.layout(), d2.layout()).unwrap();
    let planc4 = MatmulPlan::new(c4.layout(), d4.layout()).unwrap();
    let mut sum = [0.0f64; 2];
    for _ in 0..iters {
        match case.as_str() {
            "kadd" => {
                let (x, y) = (black_box(&x).as_slice(), y.as_slice());
                sum.iter_mut().zip(x.iter().zip(y)).for_each(|(s, (p, q))| *s = p + q);
                black_box(&sum);
            }
            "kmm2" => {
                plan2
                    .execute_into(&black_box(&a2).read(), &b2.read(), &mut out2, Par::Seq)
                    .unwrap();
                black_box(&out2);
            }
            "kmm2c" => {
                planc2
                    .execute_into(&black_box(&c2).read(), &d2.read(), &mut outc2, Par::Seq)
                    .unwrap();
                black_box(&outc2);
            }
            "kmm4c" => {
                planc4
                    .execute_into(&black_box(&c4).read(), &d4.read(), &mut outc4, Par::Seq)
                    .unwrap();
                black_box(&outc4);
            }
            "mm2c" | "mm4c" => session.with_session(|v| {
                let c = if case == "mm2c" {
                    v.matmul(black_box(&c2).read(), d2.read())
                } else {
                    v.matmul(black_box(&c4).read(), d4.read())
                };
                black_box(&c);
                v.recycle(c.unwrap());
            }),
            "kmm4" | "kein" => {
                plan4
                    .execute_into(&black_box(&a4).read(), &b4.read(), &mut out4, Par::Seq)
                    .unwrap();
                black_box(&out4);
            }
            held => session.with_session(|v| {
                let c = match held {
                    "add" => v.add(black_box(&x).read(), y.read()),
                    "mm2" => v.matmul(black_box(&a2).read(), b2.read()),
                    "mm4" => v.matmul(black_box(&a4).read(), b4.read()),
                    "ein" => v.einsum("ij,jk->ik", &[black_box(&a4).read(), b4.read()]),
                    other => panic!("unknown case {other}"),
                };
                black_box(&c);
                v.recycle(c.unwrap());
            }),
        }
    }
    session.close().unwrap();
}
