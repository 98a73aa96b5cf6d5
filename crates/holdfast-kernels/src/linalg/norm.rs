//! [`norm`]: the Frobenius norm of a tensor (numpy's `linalg.norm` of the flattened tensor).

use holdfast_tensor::{Element, TensorRead};

use super::LinalgElement;

/// `sqrt(Σ |x|²)` over every element of `a`, accumulated in `f64`; 0 for an empty tensor.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::norm;
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f32>::from_vec([2], vec![3.0, 4.0])?;
/// assert_eq!(norm(&a.read()), 5.0);
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[must_use]
pub fn norm<T: LinalgElement>(a: &TensorRead<'_, T>) -> <T as Element>::Real {
    let sum: f64 = match a.contiguous_slice() {
        Some(slice) => slice.iter().map(|&x| Element::abs2(x)).sum(),
        None => a.iter().map(Element::abs2).sum(),
    };
    <<T as Element>::Real as Element>::from_f64(sum.sqrt())
}
