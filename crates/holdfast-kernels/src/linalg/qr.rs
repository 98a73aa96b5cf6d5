//! [`qr`]: the thin QR decomposition of a tensor over a bipartition of its axes.
//!
//! faer factors a work copy of the matrix in place (Householder vectors below the diagonal, `R`
//! on and above it, block reflector factors in `Q_coeff`); the explicit thin `Q` is the identity's
//! first `k` columns with the reflectors applied, and `R` the upper triangle of the first `k` rows
//! of the work copy.

use faer::dyn_stack::StackReq;
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor as faer_qr;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Conj, MatMut};
use holdfast_tensor::{Tensor, TensorRead};

use super::matrix::{Matrix, with_first, with_last};
use super::{LinalgElement, LinalgScratch};
use crate::{KernelAlloc, KernelError, Par};

/// The thin QR decomposition of `a` with rows over `left_axes` and columns over its other axes:
/// `q` of shape `[left dims.., k]` with orthonormal columns and `r` of shape `[k, right dims..]`,
/// upper triangular as a matrix, where `k = min(m, n)`.
///
/// # Errors
///
/// [`KernelError::AxisOutOfRange`] / [`KernelError::DuplicateAxis`] for a bad bipartition.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::{LinalgScratch, qr};
/// use holdfast_kernels::{HeapAlloc, Par};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let (q, r) = qr(a.read(), &[0], &mut LinalgScratch::new(), &mut HeapAlloc, Par::Seq)?;
/// assert_eq!((q.shape(), r.shape()), (&[3, 2][..], &[2, 2][..]));
/// assert_eq!(r.as_slice()[2], 0.0, "R is upper triangular");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn qr<T: LinalgElement, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    left_axes: &[usize],
    scratch: &mut LinalgScratch,
    alloc: &mut A,
    par: Par,
) -> Result<(Tensor<T>, Tensor<T>), KernelError> {
    let mat = Matrix::of(a, left_axes, alloc, par)?;
    let (m, n) = (mat.m, mat.n);
    let (left, right) = (mat.left.clone(), mat.right.clone());
    let k = m.min(n);
    let mut work = mat.into_owned(alloc);
    let mut q: Vec<T> = alloc.take_zeroed(m * k);
    let mut r: Vec<T> = alloc.take_zeroed(k * n);
    if k > 0 {
        let fpar = par.to_faer();
        let params = Default::default();
        let block = faer_qr::recommended_block_size::<T>(m, n);
        let req = StackReq::any_of(&[
            faer_qr::qr_in_place_scratch::<T>(m, n, block, fpar, params),
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                m, block, k,
            ),
        ]);
        let mut coeff: Vec<T> = alloc.take(block * k);
        let stack = scratch.parts(req, 0).stack;
        let mut w = MatMut::from_row_major_slice_mut(&mut work, m, n);
        let mut c = MatMut::from_column_major_slice_mut(&mut coeff, block, k);
        faer_qr::qr_in_place(w.rb_mut(), c.rb_mut(), fpar, stack, params);
        for i in 0..k {
            q[i * k + i] = T::ONE;
        }
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            w.rb().subcols(0, k),
            c.rb(),
            Conj::No,
            MatMut::from_row_major_slice_mut(&mut q, m, k),
            fpar,
            stack,
        );
        for i in 0..k {
            r[i * n + i..(i + 1) * n].copy_from_slice(&work[i * n + i..(i + 1) * n]);
        }
        alloc.give(coeff);
    }
    alloc.give(work);
    Ok((
        Tensor::from_shape_vec(&with_last(&left, k), q)?,
        Tensor::from_shape_vec(&with_first(k, &right), r)?,
    ))
}
