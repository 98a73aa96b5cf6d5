//! Unit tests of `permute` on small views.

use holdfast_tensor::Tensor;

use super::permute;
use crate::{HeapAlloc, Par};

#[test]
fn permutes_strided_views() {
    let t = Tensor::<f64>::from_vec([2, 3], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
        .unwrap_or_else(|e| panic!("{e}"));
    let v = t.read().slice(1, 1..3).unwrap_or_else(|e| panic!("{e}")); // [[1, 2], [4, 5]]
    let p = permute(v, &[1, 0], &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.as_slice(), &[1.0, 4.0, 2.0, 5.0]);
    let s = Tensor::scalar(7.0f32);
    let q = permute(s.read(), &[], &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(q.as_slice(), &[7.0]);
}
