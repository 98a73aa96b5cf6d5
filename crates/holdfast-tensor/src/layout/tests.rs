//! Unit tests of [`Layout`]: stride arithmetic, overflow and every derived-layout error.

use super::*;

#[test]
fn contiguous_strides_are_row_major() {
    let l = Layout::contiguous(&[2, 3, 4]).unwrap();
    assert_eq!(l.strides(), &[12, 4, 1]);
    assert_eq!((l.numel(), l.offset(), l.rank()), (24, 0, 3));
    assert!(l.is_contiguous());
    assert_eq!(l.required_len(), 24);
}

#[test]
fn scalar_layout_has_one_element() {
    let l = Layout::contiguous(&[]).unwrap();
    assert_eq!((l.rank(), l.numel(), l.required_len()), (0, 1, 1));
    assert_eq!(l.offset_of(&[]), Some(0));
    assert_eq!(l, Layout::default_scalar());
}

#[test]
fn zero_sized_dimensions_are_valid_and_empty() {
    let l = Layout::contiguous(&[3, 0, 5]).unwrap();
    assert_eq!((l.numel(), l.required_len()), (0, 0));
    assert!(l.is_contiguous());
    assert_eq!(l.offset_of(&[0, 0, 0]), None);
    l.check_fits(0).unwrap();
}

#[test]
fn shape_product_overflow_is_an_error() {
    let err = Layout::contiguous(&[usize::MAX, 2]).unwrap_err();
    assert_eq!(err, TensorError::ShapeOverflow { shape: vec![usize::MAX, 2] });
    let err = Layout::new(&[1 << 40, 1 << 40], &[1, 1], 0).unwrap_err();
    assert!(matches!(err, TensorError::ShapeOverflow { .. }));
}

#[test]
fn stride_extent_overflow_is_an_error() {
    let err = Layout::new(&[3], &[usize::MAX / 2 + 1], 0).unwrap_err();
    assert!(matches!(err, TensorError::ShapeOverflow { .. }), "{err}");
}

#[test]
fn rank_mismatch_is_an_error() {
    let err = Layout::new(&[2, 2], &[1], 0).unwrap_err();
    assert_eq!(err, TensorError::RankMismatch { shape_rank: 2, strides_rank: 1 });
}

#[test]
fn check_fits_reports_storage_overrun() {
    let l = Layout::new(&[2, 2], &[2, 1], 1).unwrap();
    assert_eq!(l.required_len(), 5);
    l.check_fits(5).unwrap();
    let err = l.check_fits(4).unwrap_err();
    assert!(matches!(err, TensorError::StridesOutOfBounds { offset: 1, len: 4, .. }), "{err}");
}

#[test]
fn offset_of_rejects_bad_indices() {
    let l = Layout::contiguous(&[2, 3]).unwrap();
    assert_eq!(l.offset_of(&[1, 2]), Some(5));
    assert_eq!(l.offset_of(&[2, 0]), None);
    assert_eq!(l.offset_of(&[0]), None);
    assert_eq!(l.offset_of(&[0, 0, 0]), None);
}

#[test]
fn permutation_errors() {
    let l = Layout::contiguous(&[2, 3, 4]).unwrap();
    for bad in [&[0, 1][..], &[0, 1, 1], &[0, 1, 3], &[0, 1, 2, 3]] {
        let err = l.permuted(bad).unwrap_err();
        assert_eq!(err, TensorError::InvalidPermutation { perm: bad.to_vec(), rank: 3 });
    }
    let p = l.permuted(&[2, 0, 1]).unwrap();
    assert_eq!((p.shape(), p.strides()), (&[4, 2, 3][..], &[1, 12, 4][..]));
    assert!(l.permuted(&[0, 1, 2]).unwrap().is_contiguous());
}

#[test]
fn slice_errors_and_offsets() {
    let l = Layout::contiguous(&[4, 5]).unwrap();
    assert_eq!(l.sliced(2, 0..1).unwrap_err(), TensorError::AxisOutOfRange { axis: 2, rank: 2 });
    assert_eq!(
        l.sliced(1, 2..6).unwrap_err(),
        TensorError::SliceOutOfRange { axis: 1, start: 2, end: 6, len: 5 }
    );
    #[allow(clippy::reversed_empty_ranges, reason = "a reversed range is the case under test")]
    let reversed = 3..2;
    assert!(matches!(l.sliced(0, reversed).unwrap_err(), TensorError::SliceOutOfRange { .. }));
    let s = l.sliced(1, 1..3).unwrap();
    assert_eq!((s.shape(), s.offset()), (&[4, 2][..], 1));
    assert!(!s.is_contiguous());
    let rows = l.sliced(0, 1..3).unwrap();
    assert!(rows.is_contiguous());
    assert_eq!(rows.offset(), 5);
    let empty = l.sliced(0, 4..4).unwrap();
    assert_eq!((empty.numel(), empty.offset()), (0, 0));
}

#[test]
fn broadcasting_follows_numpy_rules() {
    let l = Layout::contiguous(&[3, 1]).unwrap();
    let b = l.broadcast_to(&[2, 3, 4]).unwrap();
    assert_eq!((b.shape(), b.strides()), (&[2, 3, 4][..], &[0, 1, 0][..]));
    assert_eq!(b.required_len(), 3);
    assert!(l.broadcast_to(&[3, 2]).is_ok());
    assert_eq!(
        l.broadcast_to(&[2, 4]).unwrap_err(),
        TensorError::BroadcastMismatch { from: vec![3, 1], to: vec![2, 4] }
    );
    assert!(matches!(l.broadcast_to(&[3]).unwrap_err(), TensorError::BroadcastMismatch { .. }));
    assert!(matches!(
        l.broadcast_to(&[usize::MAX, 2, 3, 1]).unwrap_err(),
        TensorError::ShapeOverflow { .. }
    ));
}

#[test]
fn unit_axes_do_not_break_contiguity() {
    let l = Layout::new(&[1, 3], &[99, 1], 0).unwrap();
    assert!(l.is_contiguous());
}
