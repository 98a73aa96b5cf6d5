//! Unit tests of the GEMM engine: the loop kernel and faer agree on every stride pattern, and
//! column-major outputs are computed through the transposed problem.

use super::gemm::{BatchSpec, MatSpec, faer_gemm, run_batch};
use crate::Par;

fn fill(n: usize, seed: u64) -> Vec<f64> {
    (0..n).map(|i| ((i as u64 * 2_654_435_761 + seed) % 1000) as f64 / 500.0 - 1.0).collect()
}

#[test]
fn loop_kernel_and_faer_agree() {
    let (m, n, k) = (3, 4, 2);
    let a = fill(m * k, 1);
    let b = fill(k * n, 2);
    for (ars, acs) in [(k, 1), (1, m)] {
        for (crs, ccs) in [(n, 1), (1, m)] {
            let asp = MatSpec { rows: m, cols: k, rs: ars, cs: acs };
            let bsp = MatSpec { rows: k, cols: n, rs: n, cs: 1 };
            let csp = MatSpec { rows: m, cols: n, rs: crs, cs: ccs };
            let spec = BatchSpec { batch: 1, a: asp, b: bsp, c: csp, sa: 0, sb: 0, sc: 0 };
            let mut small = vec![0.0; m * n];
            run_batch(&spec, &mut small, 0, &a, 0, &b, 0, Par::Seq);
            let mut big = vec![0.0; m * n];
            faer_gemm(&mut big, 0, csp, &a, 0, asp, &b, 0, bsp, Par::Seq);
            for (x, y) in small.iter().zip(&big) {
                assert!((x - y).abs() < 1e-12);
            }
        }
    }
}
