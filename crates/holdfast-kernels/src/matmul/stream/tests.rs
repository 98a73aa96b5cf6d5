//! Streaming a product past the cache: which outputs are streamed and along which side, and
//! that a streamed product writes exactly the one faer call's product, bit for bit, into `C`'s
//! rows (or columns) and nothing into the gaps between them, for every element type.

use faer::{Accum, MatMut, MatRef};
use holdfast_tensor::{c32, c64};

use super::{MAX_SCRATCH_BYTES, MIN_SPAN_BYTES, Stream, Streamed, run};

const F64: usize = size_of::<f64>();

#[test]
fn short_rows_far_apart_in_a_large_output_are_streamed() {
    // mera_open's last step: 729 rows of 81 elements, 6561 apart (a 38 MB span).
    let rows = Stream { transposed: false };
    assert_eq!(Stream::of(729, 81, 6561, 1, F64, Accum::Replace), Some(rows));
    // The same output column-major: its columns are the runs.
    let cols = Stream { transposed: true };
    assert_eq!(Stream::of(81, 729, 1, 6561, F64, Accum::Replace), Some(cols));
    // Exactly the least span, with exactly the largest scratch.
    let (runs, len, gap) = least();
    assert_eq!(Stream::of(runs, len, gap, 1, F64, Accum::Replace), Some(rows));
    // Complex elements count their own size: half the runs, the same bytes.
    assert_eq!(Stream::of(runs / 2, len, gap, 1, size_of::<c64>(), Accum::Replace), Some(rows));
}

/// Runs, their length and their gap (`f64`) that span exactly [`MIN_SPAN_BYTES`] with a
/// scratch of exactly [`MAX_SCRATCH_BYTES`].
fn least() -> (usize, usize, isize) {
    let len = 64;
    let runs = MAX_SCRATCH_BYTES / (len * F64);
    let gap = MIN_SPAN_BYTES / (runs * F64);
    assert_eq!((runs * len * F64, runs * gap * F64), (MAX_SCRATCH_BYTES, MIN_SPAN_BYTES));
    (runs, len, gap.cast_signed())
}

#[test]
fn dense_small_added_or_strided_outputs_stay_in_place() {
    let (runs, len, gap) = least();
    // Added into: C must be read, so it is computed in place.
    assert_eq!(Stream::of(runs, len, gap, 1, F64, Accum::Add), None);
    // Rows one element closer: short of the least span.
    assert_eq!(Stream::of(runs, len, gap - 1, 1, F64, Accum::Replace), None);
    // Rows one element longer: past the largest scratch.
    assert_eq!(Stream::of(runs, len + 1, gap, 1, F64, Accum::Replace), None);
    // A dense output of any size: its scratch is its whole size.
    assert_eq!(Stream::of(1 << 12, 1 << 12, 1 << 12, 1, F64, Accum::Replace), None);
    // Neither stride is 1; a negative gap; empty rows.
    assert_eq!(Stream::of(runs, len, gap, 2, F64, Accum::Replace), None);
    assert_eq!(Stream::of(runs, len, -gap, 1, F64, Accum::Replace), None);
    assert_eq!(Stream::of(runs, 0, gap, 1, F64, Accum::Replace), None);
}

/// A value in [-0.5, 0.5) with a full mantissa, different for every `index`.
fn value(index: usize) -> f64 {
    let x = (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    x as f64 / (1u64 << 53) as f64 - 0.5
}

/// An element type under test: values from indices, and the bits that must match.
trait Sample: Streamed + faer::traits::ComplexField + PartialEq + std::fmt::Debug {
    fn at(index: usize) -> Self;
    fn bits(self) -> (u64, u64);
}

impl Sample for f64 {
    fn at(index: usize) -> Self {
        value(index)
    }
    fn bits(self) -> (u64, u64) {
        (self.to_bits(), 0)
    }
}

impl Sample for f32 {
    fn at(index: usize) -> Self {
        value(index) as f32
    }
    fn bits(self) -> (u64, u64) {
        (u64::from(self.to_bits()), 0)
    }
}

impl Sample for c64 {
    fn at(index: usize) -> Self {
        c64::new(value(index), value(index ^ 1 << 40))
    }
    fn bits(self) -> (u64, u64) {
        (self.re.to_bits(), self.im.to_bits())
    }
}

impl Sample for c32 {
    fn at(index: usize) -> Self {
        c32::new(value(index) as f32, value(index ^ 1 << 40) as f32)
    }
    fn bits(self) -> (u64, u64) {
        (u64::from(self.re.to_bits()), u64::from(self.im.to_bits()))
    }
}

/// A row-major `m × n` view with rows `gap` apart, as the transpose of a column-major one
/// (faer 0.24's `from_row_major_slice_with_stride_mut` builds a column-major view).
fn row_major<U>(buf: &mut [U], m: usize, n: usize, gap: usize) -> MatMut<'_, U> {
    MatMut::from_column_major_slice_with_stride_mut(buf, n, m, gap).transpose_mut()
}

fn faer_call<U: Sample>(c: MatMut<'_, U>, accum: Accum, a: MatRef<'_, U>, b: MatRef<'_, U>) {
    faer::linalg::matmul::matmul(c, accum, a, b, U::one_impl(), faer::Par::Seq);
}

/// The values of an `m × k` left and a `k × n` right operand, all different.
fn operands<U: Sample>(m: usize, n: usize, k: usize) -> (Vec<U>, Vec<U>) {
    ((0..m * k).map(U::at).collect(), (0..k * n).map(|i| U::at(1 << 20 | i)).collect())
}

/// `C` (`m × n` with its runs `gap` apart: rows when `by_rows`, else columns) of `A·B` from
/// one faer call in place and from [`run`], over the same buffer of sentinels.
fn check<U: Sample>(m: usize, n: usize, k: usize, gap: usize, by_rows: bool) {
    let (a, b) = operands::<U>(m, n, k);
    let (a, b) =
        (MatRef::from_row_major_slice(&a, m, k), MatRef::from_column_major_slice(&b, k, n));
    let (runs, len) = if by_rows { (m, n) } else { (n, m) };
    let sentinel = U::at(7 << 20);
    let mut whole = vec![sentinel; runs * gap];
    let mut streamed = whole.clone();
    fn view<U>(buf: &mut [U], m: usize, n: usize, gap: usize, by_rows: bool) -> MatMut<'_, U> {
        if by_rows {
            row_major(buf, m, n, gap)
        } else {
            MatMut::from_column_major_slice_with_stride_mut(buf, m, n, gap)
        }
    }
    faer_call(view(&mut whole, m, n, gap, by_rows), Accum::Replace, a, b);
    let how = Stream { transposed: !by_rows };
    run(how, view(&mut streamed, m, n, gap, by_rows), a, b, faer_call::<U>);
    for (at, (x, y)) in whole.iter().zip(&streamed).enumerate() {
        assert_eq!(x.bits(), y.bits(), "{m}x{n}x{k} by rows {by_rows}: element {at} differs");
        if at % gap >= len {
            assert_eq!(*y, sentinel, "{m}x{n}x{k}: the gap at {at} was written");
        }
    }
}

#[test]
fn a_streamed_product_is_one_calls_product_bit_for_bit() {
    // Rows of 81 elements 5·81 apart, as in a contraction's band; a depth past faer's block.
    check::<f64>(37, 81, 50, 5 * 81, true);
    check::<f64>(24, 30, 700, 130, true);
    check::<f64>(81, 37, 50, 5 * 81, false);
    check::<f32>(37, 81, 50, 5 * 81, true);
    check::<c64>(37, 81, 50, 5 * 81, true);
    check::<c64>(81, 37, 50, 5 * 81, false);
    check::<c32>(20, 9, 3, 40, true);
}

#[test]
fn an_output_without_unit_stride_on_the_named_side_is_computed_in_place() {
    // A column-major C named by rows: its rows are not runs, so `run` leaves it to the product.
    let (m, n, k, gap) = (6, 5, 7, 9);
    let (a, b) = operands::<f64>(m, n, k);
    let (a, b) = (MatRef::from_row_major_slice(&a, m, k), MatRef::from_row_major_slice(&b, k, n));
    let (mut whole, mut named) = (vec![0.5; n * gap], vec![0.5; n * gap]);
    let c = MatMut::from_column_major_slice_with_stride_mut(&mut whole, m, n, gap);
    faer_call(c, Accum::Replace, a, b);
    let c = MatMut::from_column_major_slice_with_stride_mut(&mut named, m, n, gap);
    run(Stream { transposed: false }, c, a, b, faer_call::<f64>);
    assert!(whole.iter().zip(&named).all(|(x, y)| x.to_bits() == y.to_bits()));
}

#[test]
fn a_product_inside_a_streamed_product_runs_in_place() {
    // The thread's scratch is taken: the product is computed straight into C.
    let (m, n, k, gap) = (16, 12, 9, 64);
    let (a, b) = operands::<f64>(m, n, k);
    let (a, b) = (MatRef::from_row_major_slice(&a, m, k), MatRef::from_row_major_slice(&b, k, n));
    let mut whole = vec![0.0; m * gap];
    let mut nested = whole.clone();
    faer_call(row_major(&mut whole, m, n, gap), Accum::Replace, a, b);
    f64::scratch().with(|cell| {
        let _taken = cell.borrow_mut();
        let c = row_major(&mut nested, m, n, gap);
        run(Stream { transposed: false }, c, a, b, faer_call::<f64>);
    });
    assert!(whole.iter().zip(&nested).all(|(x, y)| x.to_bits() == y.to_bits()));
}
