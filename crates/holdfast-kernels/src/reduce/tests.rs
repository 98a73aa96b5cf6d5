//! Unit tests of `sum`: empty axes, rank 0, zero-sized axes.

use holdfast_tensor::Tensor;

use super::sum;
use crate::{HeapAlloc, Par};

#[test]
fn edge_shapes() {
    let s = Tensor::scalar(3.0f64);
    assert_eq!(
        sum(s.read(), &[], &mut HeapAlloc, Par::Seq).map(|t| t.as_slice().to_vec()),
        Ok(vec![3.0])
    );
    let e = Tensor::<f64>::zeros([0, 4]);
    let r = sum(e.read(), &[0], &mut HeapAlloc, Par::Seq).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(r.as_slice(), &[0.0; 4]);
    let r = sum(e.read(), &[1], &mut HeapAlloc, Par::Seq).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(r.shape(), &[0]);
}
