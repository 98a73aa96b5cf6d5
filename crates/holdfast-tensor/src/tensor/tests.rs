//! Unit tests of [`Tensor`]: constructors, errors, storage facts and counted clones.

use crate::{AllocationDomain, ProviderId, Readiness, Tensor, TensorError, copy_stats};

#[test]
fn from_vec_is_row_major() {
    let t = Tensor::<f64>::from_vec(vec![2, 3], (0..6).map(f64::from).collect()).unwrap();
    assert_eq!((t.shape(), t.strides(), t.offset()), (&[2, 3][..], &[3, 1][..], 0));
    assert_eq!(t.get(&[1, 2]), Some(5.0));
    assert_eq!(t.get(&[2, 0]), None);
    assert!(t.is_contiguous());
    assert_eq!((t.domain(), t.readiness()), (AllocationDomain::Host, Readiness::Ready));
}

#[test]
fn data_length_mismatch_is_an_error() {
    let err = Tensor::<f32>::from_vec([2, 3], vec![0.0; 5]).unwrap_err();
    assert_eq!(err, TensorError::DataLengthMismatch { shape: vec![2, 3], expected: 6, actual: 5 });
    assert_eq!(err.to_string(), "data has 5 elements but shape [2, 3] holds 6");
}

#[test]
fn shape_product_overflow_is_an_error_not_a_panic() {
    let err = Tensor::<f64>::from_vec([usize::MAX, 3], vec![]).unwrap_err();
    assert_eq!(err, TensorError::ShapeOverflow { shape: vec![usize::MAX, 3] });
    assert!(matches!(
        Tensor::<f64>::try_zeros(&[1 << 33, 1 << 33]),
        Err(TensorError::ShapeOverflow { .. })
    ));
    assert!(Tensor::<f64>::checked_numel(&[usize::MAX, 2]).is_none());
}

#[test]
fn zero_sized_dimensions_work() {
    let t = Tensor::<f64>::from_vec([0, 4], vec![]).unwrap();
    assert_eq!((t.numel(), t.shape()), (0, &[0, 4][..]));
    assert!(t.read().to_vec().is_empty());
    assert_eq!(t.read().transpose().shape(), &[4, 0]);
    let z = Tensor::<f32>::zeros([2, 0, 3]);
    assert_eq!(z.numel(), 0);
    assert!(z.read().iter().next().is_none());
}

#[test]
fn zeros_full_and_scalar() {
    assert_eq!(Tensor::<f64>::zeros([2, 2]).as_slice(), &[0.0; 4]);
    assert_eq!(Tensor::try_full(&[3], 2.5f32).unwrap().as_slice(), &[2.5; 3]);
    let s = Tensor::scalar(7.0f64);
    assert_eq!((s.rank(), s.numel(), s.get(&[])), (0, 1, Some(7.0)));
}

#[test]
fn zeros_panics_on_overflow_as_documented() {
    let payload = std::panic::catch_unwind(|| Tensor::<f64>::zeros([usize::MAX, 2])).unwrap_err();
    let message = payload.downcast_ref::<String>().unwrap();
    assert!(message.starts_with("Tensor::zeros: shape [18446744073709551615, 2]"), "{message}");
}

#[test]
fn from_parts_validates_strides_against_storage() {
    let t =
        Tensor::<f64>::from_parts(vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2], &[1, 3], 0).unwrap();
    assert_eq!(t.read().to_vec(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert!(!t.is_contiguous());
    let err = Tensor::<f64>::from_parts(vec![0.0; 5], &[3, 2], &[1, 3], 0).unwrap_err();
    assert!(matches!(err, TensorError::StridesOutOfBounds { len: 5, .. }), "{err}");
    let err = Tensor::<f64>::from_parts(vec![0.0; 6], &[3, 2], &[1], 0).unwrap_err();
    assert!(matches!(err, TensorError::RankMismatch { .. }));
}

#[test]
fn clone_is_a_counted_copy_and_read_is_not() {
    let t = Tensor::<f64>::from_vec([4], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let before = copy_stats();
    let r = t.read();
    assert!(std::ptr::eq(r.storage(), t.as_slice()), "a read borrows the same storage");
    assert_eq!(copy_stats(), before);
    let c = t.clone();
    assert_eq!(copy_stats().since(before).elements, 4);
    assert_eq!(c.as_slice(), t.as_slice());
}

#[test]
fn storage_facts_travel_with_the_tensor_and_its_views() {
    let dev = AllocationDomain::Foreign(ProviderId::new(9).unwrap());
    let mut t = Tensor::<f32>::zeros([2, 2]).with_domain(dev).with_readiness(Readiness::Pending);
    let v = t.read().transpose().slice(0, 0..1).unwrap();
    assert_eq!((v.domain(), v.readiness()), (dev, Readiness::Pending));
    assert_eq!(v.to_tensor().domain(), dev);
    t.set_readiness(Readiness::Ready);
    assert!(t.read().readiness().is_ready());
}

#[test]
fn into_parts_returns_the_buffer() {
    let t = Tensor::<f64>::from_vec([2], vec![1.0, 2.0]).unwrap();
    let ptr = t.as_slice().as_ptr();
    let (buf, layout) = t.into_parts();
    assert_eq!(buf.as_ptr(), ptr);
    assert_eq!(layout.shape(), &[2]);
}

#[test]
fn as_mut_slice_writes_through() {
    let mut t = Tensor::<f64>::zeros([2]);
    t.as_mut_slice()[1] = 3.0;
    assert_eq!(t.get(&[1]), Some(3.0));
}

#[test]
fn into_storage_returns_the_buffer_in_storage_order() {
    let t = Tensor::<f64>::from_parts(vec![1.0, 3.0, 2.0, 4.0, 9.0], &[2, 2], &[1, 2], 0).unwrap();
    let ptr = t.as_slice().as_ptr();
    let buf = t.into_storage();
    assert_eq!((buf.as_ptr(), buf.as_slice()), (ptr, &[1.0, 3.0, 2.0, 4.0, 9.0][..]));
}

#[test]
fn from_vec_like_takes_the_shape_and_checks_the_length() {
    let a = Tensor::<f64>::zeros([2, 3, 4]);
    let like = a.read().permute(&[2, 0, 1]).unwrap();
    let t = Tensor::from_vec_like((0..24).map(f64::from).collect(), like.layout()).unwrap();
    assert_eq!((t.shape(), t.strides(), t.offset()), (&[4, 2, 3][..], &[6, 3, 1][..], 0));
    assert_eq!(t.get(&[3, 1, 2]), Some(23.0));
    for len in [0, 23, 25] {
        match Tensor::from_vec_like(vec![0.0f64; len], like.layout()) {
            Err(TensorError::DataLengthMismatch { shape, expected, actual }) => {
                assert_eq!((shape, expected, actual), (vec![4, 2, 3], 24, len));
            }
            other => panic!("length {len}: {other:?}"),
        }
    }
    let empty = Tensor::from_vec_like(Vec::<f64>::new(), Tensor::<f64>::zeros([3, 0]).layout());
    assert_eq!(empty.unwrap().shape(), &[3, 0]);
}
