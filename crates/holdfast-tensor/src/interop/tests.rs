//! ndarray interop: which conversions borrow or move buffers, which copy once (counted), and
//! which refuse, for every element type's shape of data.

#![allow(clippy::unwrap_used, reason = "tests")]

use ndarray::{Array, Array2, Array3, ArrayView2, IxDyn, ShapeBuilder, s};

use crate::{Tensor, TensorError, TensorRead, c64, copy_stats};

fn iota(shape: (usize, usize, usize)) -> Array3<f64> {
    Array3::from_shape_fn(shape, |(i, j, k)| (i * 100 + j * 10 + k) as f64)
}

#[test]
fn views_borrow_in_any_axis_order_and_agree_element_by_element() {
    let a = iota((2, 3, 4));
    let before = copy_stats();
    for view in [a.view(), a.view().permuted_axes([2, 0, 1]), a.slice(s![1..2, .., ..])] {
        let t = TensorRead::from_ndarray(view.view()).unwrap();
        assert_eq!(t.shape(), view.shape());
        for (index, &want) in view.indexed_iter() {
            let index = [index.0, index.1, index.2];
            assert_eq!(t.get(&index), Some(want), "{index:?}");
        }
        assert!(std::ptr::eq(t.storage().as_ptr(), view.as_ptr()) && t.offset() == 0, "borrowed");
    }
    assert_eq!(copy_stats(), before, "no view copies");
}

#[test]
fn gaps_and_reversed_axes_are_typed_errors_naming_the_fix() {
    let a = iota((2, 3, 4));
    let gapped = TensorRead::from_ndarray(a.slice(s![.., .., ..;2])).unwrap_err();
    assert!(matches!(gapped, TensorError::NdarrayNotContiguous { .. }), "{gapped}");
    assert!(gapped.to_string().contains("to_owned"), "{gapped}");
    let reversed = TensorRead::from_ndarray(a.slice(s![.., ..;-1, ..])).unwrap_err();
    assert!(matches!(reversed, TensorError::NdarrayNegativeStride { axis: 1, .. }), "{reversed}");
    assert!(reversed.to_string().contains("invert_axis"), "{reversed}");
}

#[test]
fn owned_arrays_move_in_standard_layout_and_copy_once_otherwise() {
    let a = iota((2, 3, 4));
    let ptr = a.as_ptr();
    let before = copy_stats();
    let t = Tensor::from_ndarray(a.clone()).unwrap();
    assert_eq!(copy_stats(), before);
    assert_eq!(t.get(&[1, 2, 3]), Some(123.0));
    let moved = Tensor::from_ndarray(a).unwrap();
    assert!(std::ptr::eq(moved.as_slice().as_ptr(), ptr), "the buffer moved, not copied");
    let f = Array2::from_shape_vec((2, 3).f(), (0..6).map(f64::from).collect()).unwrap();
    let before = copy_stats();
    let t = Tensor::from_ndarray(f.clone()).unwrap();
    assert_eq!(
        (copy_stats().copies, copy_stats().elements),
        (before.copies + 1, before.elements + 6)
    );
    for ((i, j), &want) in f.indexed_iter() {
        assert_eq!(t.get(&[i, j]), Some(want));
    }
}

#[test]
fn tensors_leave_as_arrays_without_a_copy_when_dense() {
    let data: Vec<c64> = (0..6).map(|i| c64::new(f64::from(i), -f64::from(i))).collect();
    let t = Tensor::from_vec([2, 3], data.clone()).unwrap();
    let ptr = t.as_slice().as_ptr();
    let before = copy_stats();
    let a = t.into_ndarray();
    assert_eq!(copy_stats(), before);
    assert!(std::ptr::eq(a.as_ptr(), ptr));
    assert_eq!(a[IxDyn(&[1, 2])], data[5]);
    // A transposed view made owned again is dense; a view's array borrows.
    let t = Tensor::from_vec([2, 3], data).unwrap();
    let v = t.read().transpose().to_ndarray();
    assert_eq!(v.shape(), &[3, 2]);
    assert_eq!(v[IxDyn(&[2, 1])], t.get(&[1, 2]).unwrap());
    let back: ArrayView2<'_, c64> = v.into_dimensionality().unwrap();
    assert_eq!(back[[0, 1]], t.get(&[1, 0]).unwrap());
}

#[test]
fn broadcast_and_empty_views_convert() {
    let t = Tensor::<f64>::from_vec([3], vec![1.0, 2.0, 3.0]).unwrap();
    let b = t.read().broadcast_to(&[2, 3]).unwrap();
    let v = b.to_ndarray();
    assert_eq!(v.shape(), &[2, 3]);
    assert_eq!(v[IxDyn(&[1, 2])], 3.0);
    let empty = Array::<f32, _>::zeros((0, 4));
    let e = TensorRead::from_ndarray(empty.view()).unwrap();
    assert_eq!((e.shape(), e.numel()), (&[0, 4][..], 0));
    assert_eq!(Tensor::from_ndarray(empty).unwrap().numel(), 0);
}
