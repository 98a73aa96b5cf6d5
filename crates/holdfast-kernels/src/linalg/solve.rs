//! [`solve`]: the solution of a square linear system by LU with partial pivoting.
//!
//! faer's LU does not report singularity: a zero pivot spreads infinities. So after factoring,
//! every pivot of `U` is checked, and one that is zero (or not a number) makes the system
//! singular, as LAPACK's `getrf` would report it and numpy's `solve` would raise.

use faer::dyn_stack::StackReq;
use faer::linalg::lu::partial_pivoting::{factor as faer_lu, solve as faer_solve};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Conj, MatMut};
use holdfast_tensor::{Dims, Element, Tensor, TensorRead};
use smallvec::SmallVec;

use super::matrix::Matrix;
use super::{LinalgElement, LinalgScratch};
use crate::{KernelAlloc, KernelError, Par};

/// `x` with `a · x = b`, for a square matrix `a` (`[n, n]`) and `b` of shape `[n]` or `[n, k]`;
/// `x` has the shape of `b`.
///
/// # Errors
///
/// [`KernelError::NotSquare`] unless `a` is square; [`KernelError::SolveShape`] when `b` is not
/// `[n]` or `[n, k]`; [`KernelError::Singular`] when `a` has a zero pivot.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::{LinalgScratch, solve};
/// use holdfast_kernels::{HeapAlloc, KernelError, Par};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![2.0, 1.0, 1.0, 3.0])?;
/// let b = Tensor::<f64>::from_vec([2], vec![3.0, 5.0])?;
/// let mut scratch = LinalgScratch::new();
/// let x = solve(a.read(), b.read(), &mut scratch, &mut HeapAlloc, Par::Seq)?;
/// assert!((x.as_slice()[0] - 0.8).abs() < 1e-15 && (x.as_slice()[1] - 1.4).abs() < 1e-15);
///
/// let singular = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 2.0, 4.0])?;
/// let err = solve(singular.read(), b.read(), &mut scratch, &mut HeapAlloc, Par::Seq);
/// assert!(matches!(err, Err(KernelError::Singular { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn solve<T: LinalgElement, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    b: TensorRead<'_, T>,
    scratch: &mut LinalgScratch,
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    let n = match a.shape() {
        &[rows, cols] if rows == cols => rows,
        shape => return Err(KernelError::NotSquare { routine: "solve", shape: shape.to_vec() }),
    };
    let cols = match b.shape() {
        &[rows] if rows == n => 1,
        &[rows, cols] if rows == n => cols,
        shape => {
            return Err(KernelError::SolveShape { a: vec![n, n], b: shape.to_vec() });
        }
    };
    let b_shape: Dims = SmallVec::from_slice(b.shape());
    let mut lu = Matrix::of(a, &[0], alloc, par)?.into_owned(alloc);
    let rhs = Matrix::of(b, &[0], alloc, par)?;
    let mut x = rhs.into_owned(alloc);
    if n == 0 {
        alloc.give(lu);
        return Ok(Tensor::from_shape_vec(&b_shape, x)?);
    }
    let fpar = par.to_faer();
    let params = Default::default();
    let req = StackReq::any_of(&[
        faer_lu::lu_in_place_scratch::<usize, T>(n, n, fpar, params),
        faer_solve::solve_in_place_scratch::<usize, T>(n, cols, fpar),
    ]);
    let parts = scratch.parts(req, n);
    let mut factors = MatMut::from_row_major_slice_mut(&mut lu, n, n);
    let (_, perm) = faer_lu::lu_in_place(
        factors.rb_mut(),
        parts.perm,
        parts.perm_inv,
        fpar,
        parts.stack,
        params,
    );
    let singular = (0..n).any(|i| {
        let pivot = Element::abs2(factors[(i, i)]);
        pivot == 0.0 || pivot.is_nan()
    });
    if singular {
        alloc.give(lu);
        alloc.give(x);
        return Err(KernelError::Singular { routine: "solve" });
    }
    faer_solve::solve_in_place_with_conj(
        factors.rb(),
        factors.rb(),
        perm,
        Conj::No,
        MatMut::from_row_major_slice_mut(&mut x, n, cols),
        fpar,
        parts.stack,
    );
    alloc.give(lu);
    Ok(Tensor::from_shape_vec(&b_shape, x)?)
}
