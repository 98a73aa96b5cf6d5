//! The panel cut: which outputs it cuts and along which dimension, and that a cut product is
//! the one faer call's product bit for bit, replacing or adding, for row- and column-major
//! outputs, real and complex.

use faer::{Accum, Mat, MatMut, MatRef};
use holdfast_tensor::c64;

use super::{PANEL_BYTES, Panels, run};

const F64: usize = size_of::<f64>();

#[test]
fn a_long_contiguous_dimension_is_cut_into_panels_of_its_element_size() {
    let f64_len = PANEL_BYTES / F64;
    // Row-major C: columns are contiguous, so the panels are blocks of columns.
    assert_eq!(
        Panels::of(40, 198_288, 198_288, 1, 171, F64),
        Some(Panels { len: f64_len, by_cols: true })
    );
    // Column-major C: blocks of rows.
    assert_eq!(
        Panels::of(4320, 399, 1, 4320, 512, F64),
        Some(Panels { len: f64_len, by_cols: false })
    );
    // Complex f64: half as many elements per panel.
    assert_eq!(
        Panels::of(40, 4096, 4096, 1, 171, size_of::<c64>()),
        Some(Panels { len: f64_len / 2, by_cols: true })
    );
}

#[test]
fn short_strided_or_small_outputs_are_one_call() {
    let len = PANEL_BYTES / F64;
    // Exactly two panels long is cut; one element shorter is not.
    assert!(Panels::of(64, 2 * len, (2 * len).cast_signed(), 1, 64, F64).is_some());
    assert_eq!(Panels::of(64, 2 * len - 1, (2 * len).cast_signed() - 1, 1, 64, F64), None);
    // The long dimension is not the contiguous one: a tall row-major C is one call.
    assert_eq!(Panels::of(198_288, 40, 40, 1, 171, F64), None);
    // Neither dimension has unit stride.
    assert_eq!(Panels::of(40, 4096, 8192, 2, 171, F64), None);
    // Too little work per panel (256 · 4 · 16 multiply-adds).
    assert_eq!(Panels::of(4, 4096, 4096, 1, 16, F64), None);
    // A vector product: one row (or column) is too little work per panel.
    assert_eq!(Panels::of(1, 1 << 20, 1 << 20, 1, 171, F64), None);
    assert_eq!(Panels::of(1 << 20, 1, 1, 1 << 20, 171, F64), None);
}

/// A value in [-0.5, 0.5) with a full mantissa, different for every `index` (a multiplicative
/// hash), so that a change in summation order would show in the bits.
fn value(index: usize) -> f64 {
    let x = (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    x as f64 / (1u64 << 53) as f64 - 0.5
}

fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n).map(|i| value(i + seed)).collect()
}

fn faer_call<U: faer::traits::ComplexField + Copy>(
    c: MatMut<'_, U>,
    accum: Accum,
    a: MatRef<'_, U>,
    b: MatRef<'_, U>,
) {
    faer::linalg::matmul::matmul(c, accum, a, b, U::one_impl(), faer::Par::Seq);
}

fn view(buf: &mut [f64], m: usize, n: usize, row_major: bool) -> MatMut<'_, f64> {
    if row_major {
        MatMut::from_row_major_slice_mut(buf, m, n)
    } else {
        MatMut::from_column_major_slice_mut(buf, m, n)
    }
}

/// `C` (`m × n`, row-major when `row_major`) from one faer call and from the panel cut, with
/// the same starting contents, for both accumulations.
fn check_f64(m: usize, n: usize, k: usize, row_major: bool) {
    let a = Mat::from_fn(m, k, |i, j| value(i * k + j));
    let b = Mat::from_fn(k, n, |i, j| value(1 << 20 | (i * n + j)));
    let start = values(m * n, 2 << 20);
    let cut = Panels::of(
        m,
        n,
        if row_major { n.cast_signed() } else { 1 },
        if row_major { 1 } else { m.cast_signed() },
        k,
        F64,
    )
    .expect("the shape is long enough to cut");
    for accum in [Accum::Replace, Accum::Add] {
        let (mut whole, mut panels) = (start.clone(), start.clone());
        faer_call(view(&mut whole, m, n, row_major), accum, a.as_ref(), b.as_ref());
        run(
            cut,
            view(&mut panels, m, n, row_major),
            accum,
            a.as_ref(),
            b.as_ref(),
            faer_call::<f64>,
        );
        let same = whole.iter().zip(&panels).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{m}x{n}x{k} row-major {row_major} {accum:?}: the cut changed bits");
    }
}

#[test]
fn a_cut_product_is_one_calls_product_bit_for_bit() {
    // Two whole panels and a part: 256 + 256 + 188 columns (or rows).
    check_f64(40, 700, 171, true);
    check_f64(700, 40, 171, false);
    // A depth past faer's 512-deep block, so panels accumulate over two blocks.
    check_f64(24, 600, 700, true);
}

#[test]
fn a_cut_complex_product_is_one_calls_product_bit_for_bit() {
    let (m, n, k) = (24, 300, 128);
    let a = Mat::from_fn(m, k, |i, j| c64::new(value(i * k + j), value(1 << 20 | (i + j * m))));
    let b = Mat::from_fn(k, n, |i, j| {
        c64::new(value(2 << 20 | (i * n + j)), value(3 << 20 | (i + j * k)))
    });
    let cut =
        Panels::of(m, n, n.cast_signed(), 1, k, size_of::<c64>()).expect("long enough to cut");
    assert_eq!(cut.len, 128, "three panels: 128 + 128 + 44");
    for accum in [Accum::Replace, Accum::Add] {
        let mut whole = vec![c64::new(0.25, -0.5); m * n];
        let mut panels = whole.clone();
        faer_call(
            MatMut::from_row_major_slice_mut(&mut whole, m, n),
            accum,
            a.as_ref(),
            b.as_ref(),
        );
        run(
            cut,
            MatMut::from_row_major_slice_mut(&mut panels, m, n),
            accum,
            a.as_ref(),
            b.as_ref(),
            faer_call::<c64>,
        );
        let bits = |z: &c64| (z.re.to_bits(), z.im.to_bits());
        assert!(
            whole.iter().map(bits).eq(panels.iter().map(bits)),
            "{accum:?}: the cut changed bits"
        );
    }
}
