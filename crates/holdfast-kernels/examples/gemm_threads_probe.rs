//! Times one `m×k · k×n` f64 product three ways on a two-thread rayon pool: holdfast's
//! `matmul_into` at one thread, the same at two threads (the product cut into independent
//! blocks of its output, `matmul/split.rs`), and faer's own two-thread product on the same
//! views. Prints each way's median and minimum over the rounds, taken in turn, and the
//! one-thread median over each two-thread median.
//!
//! ```text
//! cargo build --release -p holdfast-kernels --example gemm_threads_probe
//! taskset -c 0,1 target/release/examples/gemm_threads_probe M N K [ROUNDS]
//! ```

#![allow(clippy::unwrap_used, reason = "a measurement program, not a library")]
#![allow(clippy::print_stdout, reason = "a measurement program prints its results")]

use std::num::NonZeroUsize;
use std::time::Instant;

use holdfast_kernels::{FanOut, Par, matmul::matmul_into};
use holdfast_tensor::Tensor;

mod support;

use support::median;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|s| s.parse().unwrap()).collect();
    let (m, n, k) = (args[0], args[1], args[2]);
    let rounds = args.get(3).copied().unwrap_or(9);
    let fill = |len: usize, step: usize| -> Vec<f64> {
        (0..len).map(|i| f64::from(u32::try_from((i * step) % 13).unwrap())).collect()
    };
    let a = Tensor::from_vec([m, k], fill(m * k, 7)).unwrap();
    let b = Tensor::from_vec([k, n], fill(k * n, 5)).unwrap();
    let mut c = Tensor::<f64>::zeros([m, n]);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let two = Par::Rayon(NonZeroUsize::new(2).unwrap(), &FanOut::ALWAYS);
    let faer_two = faer::Par::rayon(2);
    let ways = ["holdfast 1 thread", "holdfast 2 threads (blocks)", "faer 2 threads"];
    let mut times = vec![Vec::new(); ways.len()];
    for round in 0..=rounds {
        for (w, samples) in times.iter_mut().enumerate() {
            let start = Instant::now();
            pool.install(|| match w {
                0 => matmul_into(a.read(), b.read(), &mut c, Par::Seq).unwrap(),
                1 => matmul_into(a.read(), b.read(), &mut c, two).unwrap(),
                _ => {
                    let av = faer::MatRef::from_row_major_slice(a.as_slice(), m, k);
                    let bv = faer::MatRef::from_row_major_slice(b.as_slice(), k, n);
                    let cv = faer::MatMut::from_row_major_slice_mut(c.as_mut_slice(), m, n);
                    faer::linalg::matmul::matmul(cv, faer::Accum::Replace, av, bv, 1.0, faer_two);
                }
            });
            if round > 0 {
                samples.push(start.elapsed().as_secs_f64());
            }
        }
    }
    let one = median(times[0].clone());
    for (way, samples) in ways.iter().zip(times) {
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let med = median(samples);
        println!(
            "{way:28} median {:9.3} ms  min {:9.3} ms  1-thread / this {:.2}",
            med * 1e3,
            min * 1e3,
            one / med
        );
    }
}
