//! Unit tests of broadcasting rules and of `zip_with`, the body of every binary kernel.

use super::broadcast_shapes;

#[test]
fn numpy_broadcasting() {
    let ok = |a: &[usize], b: &[usize]| broadcast_shapes(a, b).map(|d| d.to_vec());
    assert_eq!(ok(&[], &[3]), Ok(vec![3]));
    assert_eq!(ok(&[2, 1], &[1, 5]), Ok(vec![2, 5]));
    assert_eq!(ok(&[0, 1], &[3]), Ok(vec![0, 3]));
    assert!(ok(&[2, 3], &[3, 2]).is_err());
}

#[test]
fn zip_with_applies_any_function_under_broadcasting_and_strides() {
    use holdfast_tensor::Tensor;

    use super::zip_with;
    use crate::{FanOut, HeapAlloc, KernelError, Par};

    let a = Tensor::<f64>::from_vec([3, 2], vec![1.0, -2.0, 3.0, -4.0, 5.0, -6.0]).unwrap();
    let b = Tensor::<f64>::from_vec([3, 1], vec![0.5, 4.0, -1.0]).unwrap();
    // a transposed (2 x 3, strided) against b's column laid out as a row (1 x 3, broadcast).
    let (at, br) = (a.read().transpose(), b.read().reshape(&[1, 3]).unwrap());
    let f = |x: f64, y: f64| x.max(y) * 10.0 + x;
    let two = Par::Rayon(std::num::NonZeroUsize::MIN.saturating_add(1), &FanOut::ALWAYS);
    for par in [Par::Seq, two] {
        let c = zip_with(&at, &br, &mut HeapAlloc, par, f).unwrap();
        assert_eq!(c.shape(), &[2, 3]);
        let want: Vec<f64> = (0..2)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| f(a.get(&[j, i]).unwrap(), b.get(&[j, 0]).unwrap()))
            .collect();
        assert_eq!(c.as_slice(), want.as_slice(), "{par:?}");
    }
    // Equal dense shapes take the slice path; the result is the same function.
    let same = zip_with(&a.read(), &a.read(), &mut HeapAlloc, Par::Seq, f).unwrap();
    let want: Vec<f64> = a.as_slice().iter().map(|&x| f(x, x)).collect();
    assert_eq!((same.shape(), same.as_slice()), (&[3, 2][..], want.as_slice()));
    assert!(matches!(
        zip_with(&a.read(), &at, &mut HeapAlloc, Par::Seq, f),
        Err(KernelError::BroadcastMismatch { .. })
    ));
}
