//! [`svd`]: the thin singular value decomposition of a tensor over a bipartition of its axes,
//! truncated as a [`Truncation`] says.
//!
//! faer's SVD runs at full speed only on column-major operands and outputs (a row-major output
//! costs it a large share of a small factorization, see `docs/perf/measurements.md`). The dense
//! row-major `A` (m×n) is the column-major `B = Aᵀ` (n×m); faer computes
//! `B = U_B·diag(s)·V_Bᴴ` with `s` descending, so `A = conj(V_B)·diag(s)·U_Bᵀ`. `U_B` is written
//! column-major (n×k) straight into the `vh` buffer, where it is `U_Bᵀ = Vᴴ` row-major (k×n);
//! `V_B` is written column-major into a pooled temporary and moved into `u` row-major,
//! conjugated for complex elements, in one pass. Truncating to rank `r` keeps the first `r`
//! columns of `U` (rows compacted in place) and the first `r` rows of `Vᴴ` (a prefix).

use faer::linalg::svd::{self as faer_svd, ComputeSvdVectors};
use faer::{MatMut, MatRef, diag::DiagMut};
use holdfast_tensor::{Element, Tensor};

use super::matrix::{Matrix, with_first, with_last};
use super::{LinalgElement, LinalgScratch, Truncation};
use crate::{KernelAlloc, KernelError, Par};

/// A thin, possibly truncated, singular value decomposition: `a ≈ u · diag(s) · vh` over the
/// bipartition it was computed on.
///
/// # Examples
///
/// See [`svd`].
#[derive(Debug, Clone)]
pub struct Svd<T: Element> {
    /// Left singular vectors, shape `[left dims.., k]`, orthonormal columns.
    pub u: Tensor<T>,
    /// Singular values, shape `[k]`, descending and non-negative.
    pub s: Tensor<T::Real>,
    /// Right singular vectors (conjugate-transposed), shape `[k, right dims..]`, orthonormal rows.
    pub vh: Tensor<T>,
    /// The relative weight the truncation dropped: the sum of the dropped `s²` over the sum of
    /// all `s²` (0 when nothing was dropped or the tensor is zero).
    pub discarded_weight: f64,
}

/// The thin SVD of `a` with rows over `left_axes` and columns over its other axes, truncated by
/// `trunc`.
///
/// # Errors
///
/// [`KernelError::AxisOutOfRange`] / [`KernelError::DuplicateAxis`] for a bad bipartition;
/// [`KernelError::InvalidTruncation`] for unusable bounds; [`KernelError::NoConvergence`] when
/// faer's iteration does not converge (also its answer to NaN or infinite input).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::{LinalgScratch, Truncation, svd};
/// use holdfast_kernels::{HeapAlloc, Par};
/// use holdfast_tensor::Tensor;
///
/// // A rank-one 2×3 matrix: one singular value carries all the weight.
/// let a = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0])?;
/// let mut scratch = LinalgScratch::new();
/// let f = svd(a.read(), &[0], Truncation::none().cutoff(1e-12), &mut scratch, &mut HeapAlloc, Par::Seq)?;
/// assert_eq!((f.u.shape(), f.s.shape(), f.vh.shape()), (&[2, 1][..], &[1][..], &[1, 3][..]));
/// assert!((f.s.as_slice()[0] - 70f64.sqrt()).abs() < 1e-12);
/// assert!(f.discarded_weight < 1e-24);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn svd<T: LinalgElement, A: KernelAlloc + ?Sized>(
    a: holdfast_tensor::TensorRead<'_, T>,
    left_axes: &[usize],
    trunc: Truncation,
    scratch: &mut LinalgScratch,
    alloc: &mut A,
    par: Par,
) -> Result<Svd<T>, KernelError> {
    trunc.validate()?;
    let mat = Matrix::of(a, left_axes, alloc, par)?;
    let (m, n) = (mat.m, mat.n);
    let (left, right) = (mat.left.clone(), mat.right.clone());
    let k = m.min(n);
    let mut u: Vec<T> = alloc.take(m * k);
    let mut vh: Vec<T> = alloc.take(k * n);
    let mut s: Vec<T> = alloc.take(k);
    let converged = if k == 0 {
        Ok(())
    } else {
        let fpar = par.to_faer();
        let params = Default::default();
        // faer's SVD runs at full speed on column-major operands and outputs (module docs).
        let req = faer_svd::svd_scratch::<T>(
            n,
            m,
            ComputeSvdVectors::Thin,
            ComputeSvdVectors::Thin,
            fpar,
            params,
        );
        let parts = scratch.parts(req, 0);
        let mut vb: Vec<T> = alloc.take(m * k);
        let done = faer_svd::svd(
            MatRef::from_column_major_slice(mat.as_slice(), n, m),
            DiagMut::from_slice_mut(&mut s),
            Some(MatMut::from_column_major_slice_mut(&mut vh, n, k)),
            Some(MatMut::from_column_major_slice_mut(&mut vb, m, k)),
            fpar,
            parts.stack,
            params,
        );
        // u = conj(V_B), row-major: one pass over m·k elements.
        for (i, row) in u.chunks_exact_mut(k).enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                let v = vb[j * m + i];
                *x = if T::IS_REAL { v } else { Element::conj(v) };
            }
        }
        alloc.give(vb);
        done
    };
    mat.finish(alloc);
    if converged.is_err() {
        alloc.give(u);
        alloc.give(vh);
        alloc.give(s);
        return Err(KernelError::NoConvergence { routine: "svd" });
    }
    let (rank, discarded_weight) = trunc.rank_with(k, |i| Element::abs2(s[i]));
    if rank < k {
        // Row i of the m×rank result starts at i·rank ≤ i·k, so copying rows in order never
        // overwrites a row not yet moved.
        for row in 1..m {
            u.copy_within(row * k..row * k + rank, row * rank);
        }
        u.truncate(m * rank);
        vh.truncate(rank * n);
    }
    let mut values: Vec<<T as Element>::Real> = alloc.take(rank);
    for (value, x) in values.iter_mut().zip(&s) {
        *value = T::from_faer_real(faer::traits::math_utils::real(x));
    }
    alloc.give(s);
    Ok(Svd {
        u: Tensor::from_shape_vec(&with_last(&left, rank), u)?,
        s: Tensor::from_shape_vec(&[rank], values)?,
        vh: Tensor::from_shape_vec(&with_first(rank, &right), vh)?,
        discarded_weight,
    })
}
