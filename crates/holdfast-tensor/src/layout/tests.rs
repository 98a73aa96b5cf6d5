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

/// Every position of `l` in row-major logical order.
fn positions(l: &Layout) -> Vec<usize> {
    let n = l.numel();
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0usize; l.rank()];
    for _ in 0..n {
        out.push(l.offset_of(&index).unwrap());
        for axis in (0..l.rank()).rev() {
            index[axis] += 1;
            if index[axis] < l.shape()[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

#[test]
fn reshape_views_keep_row_major_order() {
    let dense = Layout::contiguous(&[2, 3, 4]).unwrap();
    for shape in [&[24][..], &[6, 4], &[2, 12], &[4, 3, 2], &[1, 24, 1], &[2, 3, 2, 2]] {
        let r = dense.reshaped(shape).unwrap().unwrap();
        assert_eq!(positions(&r), positions(&dense), "{shape:?}");
    }
    // A transposed matrix: splitting an axis is a view, merging the two is not.
    let t = Layout::contiguous(&[4, 6]).unwrap().reversed();
    let split = t.reshaped(&[2, 3, 2, 2]).unwrap().unwrap();
    assert_eq!(positions(&split), positions(&t));
    assert_eq!(t.reshaped(&[24]).unwrap(), None);
    // A sliced row keeps its gap: merging across it is not a view.
    let s = Layout::contiguous(&[3, 4]).unwrap().sliced(1, 0..2).unwrap();
    assert_eq!(s.reshaped(&[6]).unwrap(), None);
    assert_eq!(positions(&s.reshaped(&[3, 2, 1]).unwrap().unwrap()), positions(&s));
    // Broadcast axes merge with each other (all stride 0) ...
    let b = Layout::contiguous(&[1]).unwrap().broadcast_to(&[3, 4]).unwrap();
    assert_eq!(positions(&b.reshaped(&[12]).unwrap().unwrap()), vec![0; 12]);
    // ... and no elements reshape to anything of zero elements.
    let empty = Layout::contiguous(&[0, 3]).unwrap();
    assert_eq!(empty.reshaped(&[3, 0, 7]).unwrap().unwrap().numel(), 0);
}

#[test]
fn reshape_to_another_count_is_an_error() {
    let l = Layout::contiguous(&[2, 3]).unwrap();
    assert!(matches!(
        l.reshaped(&[7]),
        Err(TensorError::ReshapeSize { from_numel: 6, to_numel: 7, .. })
    ));
    assert!(matches!(
        l.reshaped(&[usize::MAX, 2]),
        Err(TensorError::ReshapeSize { to_numel: usize::MAX, .. })
    ));
}

proptest::proptest! {
    /// Any reshape the layout calls a view addresses the same positions in the same order as
    /// the original; only a layout that is not dense is ever refused; the dense copy of the
    /// view (what the operation view's reshape makes) always reshapes.
    #[test]
    fn reshaped_views_match_the_original_order(
        dims in proptest::collection::vec(1usize..4, 1..5),
        perm_seed in 0usize..120,
        split in proptest::collection::vec(1usize..4, 0..3),
    ) {
        let dense = Layout::contiguous(&dims).unwrap();
        let mut perm: Vec<usize> = (0..dims.len()).collect();
        let mut seed = perm_seed;
        for i in (1..perm.len()).rev() {
            perm.swap(i, seed % (i + 1));
            seed /= i + 1;
        }
        let view = dense.permuted(&perm).unwrap();
        let numel = view.numel();
        // A target shape: the numel split by the factors that divide it, then the rest.
        let mut shape = Vec::new();
        let mut rest = numel;
        for f in split {
            if rest.is_multiple_of(f) {
                shape.push(f);
                rest /= f;
            }
        }
        shape.push(rest);
        match view.reshaped(&shape).unwrap() {
            Some(r) => proptest::prop_assert_eq!(positions(&r), positions(&view)),
            None => proptest::prop_assert!(!view.is_contiguous()),
        }
        let copied = Layout::contiguous(view.shape()).unwrap();
        proptest::prop_assert!(copied.reshaped(&shape).unwrap().is_some());
    }
}

#[test]
fn sized_layout_copies_are_the_layout() {
    // Up to six axes the copy is bitwise, beyond them a clone: both must give back exactly the
    // layout, strides, offset and rank included. The copies outlive the `SizedLayout` and each
    // other: a copy that shared heap memory with its source would be freed twice, which the
    // AddressSanitizer run of this test (`cargo xtask sanitize asan`) reports.
    for rank in 0..=8usize {
        let shape: Vec<usize> = (0..rank).map(|i| 2 + i % 3).collect();
        let dense = Layout::contiguous(&shape).unwrap();
        let reversed = dense.reversed();
        let layout = Layout::new(reversed.shape(), reversed.strides(), 3).unwrap();
        let sized = SizedLayout::new(layout.clone());
        let tensors: Vec<_> = (0..3)
            .map(|_| {
                let t =
                    crate::Tensor::from_sized_layout(vec![0.0f64; sized.required_len()], &sized);
                t.unwrap()
            })
            .collect();
        drop(sized);
        for t in &tensors {
            assert_eq!(t.layout(), &layout, "rank {rank}");
            assert_eq!((t.shape(), t.strides(), t.offset()), (layout.shape(), layout.strides(), 3));
        }
    }
}

#[test]
fn contiguous_layouts_of_every_rank_count_their_elements() {
    // Up to six axes the strides are written into fixed arrays, beyond that into a heap list:
    // both must give row-major strides, the element count, and the overflow error.
    for rank in 0..=8usize {
        let shape: Vec<usize> = (0..rank).map(|i| 1 + (i * 5) % 4).collect();
        let (l, count) = Layout::contiguous_counted(&shape).unwrap();
        let mut want = vec![1usize; rank];
        for i in (0..rank.saturating_sub(1)).rev() {
            want[i] = want[i + 1] * shape[i + 1];
        }
        assert_eq!((l.shape(), l.strides(), l.offset()), (&shape[..], &want[..], 0), "{rank}");
        assert_eq!(count, shape.iter().product::<usize>());
        assert_eq!(count, l.numel());
        let mut huge = shape.clone();
        huge.extend([usize::MAX, 2]);
        let err = Layout::contiguous(&huge).unwrap_err();
        assert_eq!(err, TensorError::ShapeOverflow { shape: huge });
    }
}

#[test]
fn contiguous_like_is_the_row_major_layout_of_the_shape_at_every_rank() {
    // Ranks 0..=8 cover both the inline arrays (up to six axes) and the spilled lists.
    for rank in 0..=8usize {
        let shape: Vec<usize> = (0..rank).map(|i| 2 + i % 3).collect();
        let dense = Layout::contiguous(&shape).unwrap();
        // The same shape reversed by a permutation, and the same shape at an offset.
        let perm: Vec<usize> = (0..rank).rev().collect();
        let source = Layout::contiguous(&shape).unwrap().permuted(&perm).unwrap();
        let reversed: Vec<usize> = shape.iter().rev().copied().collect();
        assert_eq!(source.contiguous_like(), Layout::contiguous(&reversed).unwrap(), "rank {rank}");
        let offset = Layout::new(&shape, dense.strides(), 7).unwrap();
        assert_eq!(offset.contiguous_like(), dense, "rank {rank}");
    }
}

#[test]
fn contiguous_like_of_an_empty_shape_addresses_nothing() {
    // Its element count is 0, so strides past the empty axis would overflow; they saturate.
    let empty = Layout::new(&[0, usize::MAX, usize::MAX], &[0, 0, 0], 0).unwrap();
    let dense = empty.contiguous_like();
    assert_eq!(dense.shape(), &[0, usize::MAX, usize::MAX]);
    assert_eq!((dense.numel(), dense.required_len(), dense.offset()), (0, 0, 0));
    assert_eq!(dense.strides(), &[usize::MAX, usize::MAX, 1]);
}
