//! [`eigh`]: the eigendecomposition of a Hermitian (real symmetric) matrix.
//!
//! Like numpy's `eigh` with its default `UPLO='L'`, only the lower triangle (and the real part of
//! the diagonal) is read: the upper triangle is taken to be its conjugate transpose.
//!
//! faer writes the eigenvectors at full speed only into a column-major matrix (a row-major one
//! costs it more than the decomposition itself at n = 128, see `docs/perf/measurements.md`), so
//! they go to a pooled column-major temporary and are transposed into the row-major result in
//! one pass over its n² elements.

use faer::linalg::evd::{self, ComputeEigenvectors};
use faer::{MatMut, MatRef, diag::DiagMut};
use holdfast_tensor::{Element, Tensor, TensorRead};

use super::LinalgElement;
use super::LinalgScratch;
use super::matrix::Matrix;
use crate::{KernelAlloc, KernelError, Par};

/// The eigenvalues `w` (ascending, shape `[n]`) and eigenvectors `v` (shape `[n, n]`, column `i`
/// belongs to `w[i]`, orthonormal) of the Hermitian matrix `a`, so that `a · v = v · diag(w)`.
///
/// # Errors
///
/// [`KernelError::NotSquare`] unless `a` is a square matrix; [`KernelError::NoConvergence`]
/// when faer's iteration does not converge. A NaN in the lower triangle is not an error: it
/// comes out in the eigenvalues, as with numpy's `eigh` (an SVD of it does fail, in numpy and
/// in [`svd`](fn@crate::linalg::svd)).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::{LinalgScratch, eigh};
/// use holdfast_kernels::{HeapAlloc, Par};
/// use holdfast_tensor::Tensor;
///
/// // Pauli X: eigenvalues -1 and +1.
/// let x = Tensor::<f64>::from_vec([2, 2], vec![0.0, 1.0, 1.0, 0.0])?;
/// let (w, v) = eigh(x.read(), &mut LinalgScratch::new(), &mut HeapAlloc, Par::Seq)?;
/// assert!((w.as_slice()[0] + 1.0).abs() < 1e-15 && (w.as_slice()[1] - 1.0).abs() < 1e-15);
/// assert_eq!(v.shape(), &[2, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn eigh<T: LinalgElement, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    scratch: &mut LinalgScratch,
    alloc: &mut A,
    par: Par,
) -> Result<(Tensor<<T as Element>::Real>, Tensor<T>), KernelError> {
    let n = match a.shape() {
        &[rows, cols] if rows == cols => rows,
        shape => return Err(KernelError::NotSquare { routine: "eigh", shape: shape.to_vec() }),
    };
    let mat = Matrix::of(a, &[0], alloc, par)?.with_real_diagonal(alloc);
    let mut s: Vec<T> = alloc.take(n);
    let mut v: Vec<T> = alloc.take(n * n);
    let converged = if n == 0 {
        Ok(())
    } else {
        let fpar = par.to_faer();
        let params = Default::default();
        let req = evd::self_adjoint_evd_scratch::<T>(n, ComputeEigenvectors::Yes, fpar, params);
        let mut vc: Vec<T> = alloc.take(n * n);
        let done = evd::self_adjoint_evd(
            MatRef::from_row_major_slice(mat.as_slice(), n, n),
            DiagMut::from_slice_mut(&mut s),
            Some(MatMut::from_column_major_slice_mut(&mut vc, n, n)),
            fpar,
            scratch.parts(req, 0).stack,
            params,
        );
        // Row i of v is row i of the column-major vc: element (i, j) at j·n + i.
        for (i, row) in v.chunks_exact_mut(n).enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = vc[j * n + i];
            }
        }
        alloc.give(vc);
        done
    };
    mat.finish(alloc);
    if converged.is_err() {
        alloc.give(s);
        alloc.give(v);
        return Err(KernelError::NoConvergence { routine: "eigh" });
    }
    let mut w: Vec<<T as Element>::Real> = alloc.take(n);
    for (value, x) in w.iter_mut().zip(&s) {
        *value = T::from_faer_real(faer::traits::math_utils::real(x));
    }
    alloc.give(s);
    Ok((Tensor::from_shape_vec(&[n], w)?, Tensor::from_shape_vec(&[n, n], v)?))
}
