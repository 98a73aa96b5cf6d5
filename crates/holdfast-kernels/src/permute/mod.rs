//! Materialising permute (SPEC K3): [`permute`] writes a dense row-major copy of a view with its
//! axes reordered.
//!
//! The input is read through its strides directly (no intermediate copy). Transposing copies walk
//! tiles so that reads and writes both stay in cache. With [`Par::Rayon`](crate::Par) and at
//! least its [`FanOut::permute`](crate::FanOut) size the output is
//! split into row blocks over rayon.

#[cfg(test)]
mod tests;

use holdfast_tensor::{Element, Tensor, TensorRead};

use crate::strided::copy_strided;
use crate::{Family, KernelAlloc, KernelError, Par};

/// A dense row-major copy of `a` with its axes reordered: axis `i` of the result is axis
/// `perm[i]` of `a`.
///
/// # Errors
///
/// [`KernelError::InvalidPermutation`] unless `perm` names every axis of `a` exactly once.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, permute::permute};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let t = permute(a.read(), &[1, 0], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(t.shape(), &[3, 2]);
/// assert_eq!(t.as_slice(), &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn permute<T: Element, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    perm: &[usize],
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    let rank = a.rank();
    let v = a
        .permute(perm)
        .map_err(|_| KernelError::InvalidPermutation { perm: perm.to_vec(), rank })?;
    Ok(materialize(&v, alloc, par))
}

/// A dense row-major copy of `v` in its logical order.
pub(crate) fn materialize<T: Element, A: KernelAlloc + ?Sized>(
    v: &TensorRead<'_, T>,
    alloc: &mut A,
    par: Par,
) -> Tensor<T> {
    let numel = v.numel();
    let mut buf = alloc.take::<T>(numel);
    if let Some(src) = v.contiguous_slice() {
        buf.copy_from_slice(src);
    } else {
        let threads = par.for_size(Family::Permute, numel as u64).threads();
        copy_strided(v.storage(), v.offset(), v.shape(), v.strides(), &mut buf, threads);
    }
    match Tensor::from_shape_vec(v.shape(), buf) {
        Ok(t) => t,
        // Unreachable: the view's shape was checked when it was made and `buf` has its size.
        Err(_) => Tensor::scalar(T::ZERO),
    }
}
