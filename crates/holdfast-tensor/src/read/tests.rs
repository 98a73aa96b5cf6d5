//! Unit tests of [`TensorRead`]: every view kind leaves the copy counter unchanged, and a
//! proptest checks strided indexing of random view chains against naive index arithmetic.

use proptest::prelude::*;

use crate::{Tensor, TensorError, TensorRead, copy_stats};

fn iota(shape: &[usize]) -> Tensor<f64> {
    let n = shape.iter().product::<usize>();
    Tensor::from_vec(shape.to_vec(), (0..n).map(|i| i as f64).collect()).unwrap()
}

#[test]
fn every_view_kind_is_copy_free() {
    let t = iota(&[2, 3, 4]);
    let before = copy_stats();
    let p = t.read().permute(&[2, 0, 1]).unwrap();
    assert_eq!(p.get(&[3, 1, 2]), t.get(&[1, 2, 3]));
    let tr = t.read().transpose();
    assert_eq!(tr.shape(), &[4, 3, 2]);
    assert_eq!(tr.get(&[3, 2, 1]), t.get(&[1, 2, 3]));
    let sw = t.read().swap_axes(0, 1).unwrap();
    assert_eq!(sw.get(&[2, 1, 3]), t.get(&[1, 2, 3]));
    let sl = t.read().slice(1, 1..3).unwrap();
    assert_eq!(sl.get(&[1, 1, 3]), t.get(&[1, 2, 3]));
    let b = t.read().slice(0, 1..2).unwrap().broadcast_to(&[5, 2, 3, 4]).unwrap();
    assert_eq!(b.get(&[4, 1, 2, 3]), t.get(&[1, 2, 3]));
    let from_slice = TensorRead::from_slice(&[24], t.as_slice()).unwrap();
    assert_eq!(from_slice.get(&[23]), Some(23.0));
    let _ = (p.iter().count(), b.iter().sum::<f64>(), sl.contiguous_slice());
    assert_eq!(copy_stats(), before, "views and iteration must not copy");
    assert!(std::ptr::eq(b.storage(), t.as_slice()));
}

#[test]
fn materialising_copies_are_counted() {
    let t = iota(&[3, 2]);
    let before = copy_stats();
    let v = t.read().transpose().to_vec();
    assert_eq!(v, vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
    let owned = t.read().transpose().to_tensor();
    assert!(owned.is_contiguous());
    assert_eq!(owned.as_slice(), &v[..]);
    let d = copy_stats().since(before);
    assert_eq!((d.copies, d.elements), (2, 12));
}

#[test]
fn view_errors_are_typed() {
    let t = iota(&[2, 3]);
    assert!(matches!(t.read().permute(&[0]), Err(TensorError::InvalidPermutation { .. })));
    assert_eq!(
        t.read().swap_axes(0, 5).unwrap_err(),
        TensorError::AxisOutOfRange { axis: 5, rank: 2 }
    );
    assert!(matches!(t.read().slice(0, 1..3), Err(TensorError::SliceOutOfRange { .. })));
    assert!(matches!(t.read().broadcast_to(&[3, 3]), Err(TensorError::BroadcastMismatch { .. })));
    assert!(matches!(
        TensorRead::from_slice(&[4], &[1.0f64; 3]),
        Err(TensorError::DataLengthMismatch { .. })
    ));
    let mut short = [0.0; 5];
    assert!(matches!(t.read().copy_into(&mut short), Err(TensorError::DataLengthMismatch { .. })));
}

#[test]
fn contiguous_slice_of_a_row_slice_is_offset() {
    let t = iota(&[3, 2]);
    let rows = t.read().slice(0, 1..3).unwrap();
    assert_eq!(rows.contiguous_slice(), Some(&[2.0, 3.0, 4.0, 5.0][..]));
    assert_eq!(t.read().slice(0, 3..3).unwrap().contiguous_slice(), Some(&[][..]));
}

/// A view operation, applied both to a real view and to the naive index model.
#[derive(Debug, Clone)]
enum Op {
    Permute(Vec<usize>),
    Transpose,
    Slice { axis: usize, start: usize, len: usize },
}

/// Naive model of a view: its shape and a map from a view index to a base-tensor index.
#[derive(Debug, Clone)]
struct Model {
    shape: Vec<usize>,
    /// For each base axis: which view axis it comes from and the added start.
    base_axes: Vec<(usize, usize)>,
}

impl Model {
    fn new(shape: &[usize]) -> Self {
        Model { shape: shape.to_vec(), base_axes: (0..shape.len()).map(|a| (a, 0)).collect() }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Permute(perm) => {
                let inverse: Vec<usize> = (0..perm.len())
                    .map(|old| perm.iter().position(|&p| p == old).unwrap())
                    .collect();
                self.shape = perm.iter().map(|&p| self.shape[p]).collect();
                for (axis, _) in &mut self.base_axes {
                    *axis = inverse[*axis];
                }
            }
            Op::Transpose => {
                let rank = self.shape.len();
                self.shape.reverse();
                for (axis, _) in &mut self.base_axes {
                    *axis = rank - 1 - *axis;
                }
            }
            Op::Slice { axis, start, len } => {
                self.shape[*axis] = *len;
                for (a, s) in &mut self.base_axes {
                    if *a == *axis {
                        *s += start;
                    }
                }
            }
        }
    }

    fn base_index(&self, index: &[usize]) -> Vec<usize> {
        self.base_axes.iter().map(|&(axis, start)| index[axis] + start).collect()
    }
}

fn naive_flat(shape: &[usize], index: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &d in shape {
        out = out
            .into_iter()
            .flat_map(|p| (0..d).map(move |i| [p.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

fn op_strategy(rank: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        Just((0..rank).collect::<Vec<_>>()).prop_shuffle().prop_map(Op::Permute),
        Just(Op::Transpose),
        (0..rank.max(1), 0usize..4, 0usize..4).prop_map(|(axis, start, len)| Op::Slice {
            axis,
            start,
            len
        }),
    ]
}

proptest! {
    #[test]
    fn strided_indexing_matches_naive_index_arithmetic(
        (shape, ops) in prop::collection::vec(0usize..5, 0..5).prop_flat_map(|shape| {
            let rank = shape.len();
            (Just(shape), prop::collection::vec(op_strategy(rank), 0..6))
        })
    ) {
        let base = iota(&shape);
        let mut view = base.read();
        let mut model = Model::new(&shape);
        for op in &ops {
            let applied = match op {
                Op::Permute(p) => view.clone().permute(p),
                Op::Transpose => Ok(view.clone().transpose()),
                Op::Slice { axis, start, len } => {
                    if shape.is_empty() { continue; }
                    view.clone().slice(*axis, *start..start + len)
                }
            };
            match applied {
                Ok(v) => { view = v; model.apply(op); }
                Err(TensorError::SliceOutOfRange { .. }) => {
                    // The model agrees the slice does not fit.
                    let Op::Slice { axis, start, len } = op else { panic!("unexpected error") };
                    prop_assert!(start + len > model.shape[*axis]);
                }
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
        prop_assert_eq!(view.shape(), &model.shape[..]);
        let before = copy_stats();
        let mut walked = view.iter();
        for index in all_indices(&model.shape) {
            let expected = naive_flat(&shape, &model.base_index(&index)) as f64;
            prop_assert_eq!(view.get(&index), Some(expected));
            prop_assert_eq!(walked.next(), Some(expected));
        }
        prop_assert_eq!(walked.next(), None);
        prop_assert_eq!(copy_stats(), before);
        prop_assert_eq!(view.is_contiguous(), view.contiguous_slice().is_some());
        if let Some(s) = view.contiguous_slice() {
            prop_assert_eq!(s.to_vec(), view.to_vec());
        }
    }
}
