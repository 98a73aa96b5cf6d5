//! The thin kernel against a triple loop: both orientations, every column count it takes,
//! ragged rows and chunks, padded strides, and adding into `C`.

use faer::{Accum, MatMut, MatRef};

use super::try_run;
use crate::matmul::tests::fill;

/// Strides of one operand: `(row stride, column stride)`.
type Strides = (usize, usize);

/// Builds `C` (`m × n`), `A` (`m × k`) and `B` (`k × n`) with the given strides, runs
/// `try_run`, and checks the result against a triple loop. Returns what `try_run` returned.
fn check(m: usize, n: usize, k: usize, cs: Strides, as_: Strides, bs: Strides, add: bool) -> bool {
    let len = |rows: usize, cols: usize, (r, c): Strides| (rows - 1) * r + (cols - 1) * c + 1;
    let a = fill(len(m, k, as_), 1);
    let b = fill(len(k, n, bs), 2);
    let start = fill(len(m, n, cs), 3);
    let mut c = start.clone();
    let isz = |x: usize| isize::try_from(x).unwrap();
    let ran = {
        // SAFETY: every position `r·rs + c·cs` with `r < rows`, `c < cols` is inside
        // its vector, by `len`.
        let (av, bv, cv) = unsafe {
            (
                MatRef::<f64>::from_raw_parts(a.as_ptr(), m, k, isz(as_.0), isz(as_.1)),
                MatRef::<f64>::from_raw_parts(b.as_ptr(), k, n, isz(bs.0), isz(bs.1)),
                MatMut::<f64>::from_raw_parts_mut(c.as_mut_ptr(), m, n, isz(cs.0), isz(cs.1)),
            )
        };
        try_run(cv, if add { Accum::Add } else { Accum::Replace }, av, bv)
    };
    if !ran {
        assert_eq!(c, start, "a product left to faer is not touched");
        return false;
    }
    for i in 0..m {
        for j in 0..n {
            let mut want = if add { start[i * cs.0 + j * cs.1] } else { 0.0 };
            for l in 0..k {
                want += a[i * as_.0 + l * as_.1] * b[l * bs.0 + j * bs.1];
            }
            let got = c[i * cs.0 + j * cs.1];
            assert!(
                (got - want).abs() <= 1e-11 * want.abs().max(1.0),
                "({i}, {j}): {got} vs {want}"
            );
        }
    }
    true
}

fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[test]
fn thin_products_match_the_triple_loop() {
    // `m·k ≥ MIN_A`; `m` with and without a ragged last group, `k` with a partial chunk.
    for (m, k) in [(64, 512), (131, 257), (300, 111), (1030, 40)] {
        for n in [9, 12, 16, 17, 21, 24] {
            for add in [false, true] {
                // Dense, then every leading dimension padded.
                let dense = check(m, n, k, (n, 1), (1, m), (n, 1), add);
                let padded = check(m, n, k, (n + 3, 1), (1, m + 5), (n + 2, 1), add);
                assert_eq!((dense, padded), (avx512(), avx512()), "m {m} n {n} k {k}");
            }
        }
    }
}

#[test]
fn the_transposed_orientation_runs_through_the_same_kernel() {
    // `Cᵀ = Bᵀ·Aᵀ`: `C` column-major with 9 to 24 rows, `B` with unit column stride, `A` with
    // unit row stride.
    for (n, k) in [(200, 300), (77, 513)] {
        for m in [9, 20, 24] {
            let ran = check(m, n, k, (1, m), (1, m + 1), (n, 1), true);
            assert_eq!(ran, avx512(), "m {m} n {n} k {k}");
        }
    }
}

#[test]
fn other_shapes_are_left_to_faer_untouched() {
    // Too few or too many columns, too small an `A`, `A` read along its rows, `C` column-major
    // with many rows.
    assert!(!check(300, 8, 200, (8, 1), (1, 300), (8, 1), false));
    assert!(!check(300, 25, 200, (25, 1), (1, 300), (25, 1), false));
    assert!(!check(64, 21, 64, (21, 1), (1, 64), (21, 1), false));
    assert!(!check(300, 21, 200, (21, 1), (200, 1), (21, 1), false));
    assert!(!check(300, 21, 200, (1, 300), (1, 300), (21, 1), false));
}
