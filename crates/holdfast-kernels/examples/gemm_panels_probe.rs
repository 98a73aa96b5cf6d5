//! Times one `m×k · k×n` f64 product through faer at one thread: as one call, and cut into
//! panels of C's columns (or rows) of several widths, one faer call per panel. The fifth
//! argument holds flags: `c` makes C column-major (else row-major), `a` makes A column-major,
//! `t` makes B column-major, `r` cuts rows instead of columns. Prints each way's median over
//! the rounds, taken in turn.
//!
//! ```text
//! cargo build --release -p holdfast-kernels --example gemm_panels_probe
//! taskset -c 0 target/release/examples/gemm_panels_probe M N K [ROUNDS] [FLAGS]
//! ```

#![allow(clippy::unwrap_used, reason = "a measurement program, not a library")]
#![allow(clippy::print_stdout, reason = "a measurement program prints its results")]

use std::time::Instant;

mod support;

use support::median;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| args[i].parse::<usize>().unwrap();
    let (m, n, k) = (num(0), num(1), num(2));
    let rounds = args.get(3).map_or(7, |s| s.parse().unwrap());
    let flags = args.get(4).map_or("", String::as_str);
    let b_cols = flags.contains('t');
    let a_cols = flags.contains('a');
    let by_rows = flags.contains('r');
    let c_cols = flags.contains('c');
    let fill = |len: usize, step: usize| -> Vec<f64> {
        (0..len).map(|i| f64::from(u32::try_from((i * step) % 13).unwrap())).collect()
    };
    let a = fill(m * k, 7);
    let b = fill(k * n, 5);
    let mut c = vec![0.0f64; m * n];
    let widths = [0usize, 128, 256, 384, 512, 768, 1024, 2048];
    let mut times = vec![Vec::new(); widths.len()];
    for round in 0..=rounds {
        for (w, samples) in widths.iter().zip(times.iter_mut()) {
            let av = if a_cols {
                faer::MatRef::from_column_major_slice(&a, m, k)
            } else {
                faer::MatRef::from_row_major_slice(&a, m, k)
            };
            let bv = if b_cols {
                faer::MatRef::from_column_major_slice(&b, k, n)
            } else {
                faer::MatRef::from_row_major_slice(&b, k, n)
            };
            let mut cv = if c_cols {
                faer::MatMut::from_column_major_slice_mut(&mut c, m, n)
            } else {
                faer::MatMut::from_row_major_slice_mut(&mut c, m, n)
            };
            let start = Instant::now();
            let long = if by_rows { m } else { n };
            let width = if *w == 0 { long } else { *w };
            let mut at = 0;
            while at < long {
                let len = width.min(long - at);
                let (cp, ap, bp) = if by_rows {
                    (cv.as_mut().subrows_mut(at, len), av.subrows(at, len), bv)
                } else {
                    (cv.as_mut().subcols_mut(at, len), av, bv.subcols(at, len))
                };
                faer::linalg::matmul::matmul(cp, faer::Accum::Replace, ap, bp, 1.0, faer::Par::Seq);
                at += len;
            }
            if round > 0 {
                samples.push(start.elapsed().as_secs_f64());
            }
        }
    }
    let flops = 2.0 * (m * n * k) as f64;
    for (w, samples) in widths.iter().zip(times) {
        let med = median(samples);
        println!("width {w:5} median {:9.3} ms  {:6.1} GFLOP/s", med * 1e3, flops / med / 1e9);
    }
}
