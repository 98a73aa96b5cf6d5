//! Splitting a bond's optimised two-site tensor into its two site tensors, truncated, with the
//! orthogonality centre moved on (SPEC W3).
//!
//! `θ[a, s₁, s₂, b]` is the `m × n` matrix of rows `(a, s₁)` and columns `(s₂, b)`. Moving right,
//! the new `A[i]` is the dominant eigenvectors of the reduced density matrix `ρ = θ·θᵀ` (`m × m`),
//! whose eigenvalues are the squared singular values of `θ`; the truncation keeps the largest
//! of them as the SVD would (same rank rule, same discarded weight), and `A[i+1] = A[i]ᵀ·θ` is
//! θ projected on the kept basis, equal to `s·vh`. Moving left, the same on `θᵀ·θ` (`n × n`):
//! `A[i+1]` is its kept eigenvectors as rows and `A[i] = θ·A[i+1]ᵀ`. The kept vectors come in
//! order of decreasing weight, as an SVD's.
//!
//! This is White's density-matrix truncation. It costs one symmetric eigendecomposition where
//! an SVD would be about one and a half times as much at the bond sizes of DMRG (faer's
//! bidiagonal SVD against its tridiagonal eigensolver; `docs/perf/`), and it gives up nothing
//! the sweep needs:
//!
//! - the orthonormal factor comes straight from the eigensolver, orthonormal to rounding;
//! - the other factor is a product with `θ`, never a division by a small singular value, so
//!   the usual objection to the Gram matrix (it squares the condition number) does not reach
//!   the tensors, only the eigenvalues: a weight `s²` carries an absolute error of about
//!   `ε·‖θ‖²`, so weights below about 1e-15 of the total are rounding, far below the cutoffs a
//!   DMRG truncates at. Negative rounding is read as zero.
//!
//! The matrix to diagonalise may be the larger side (moving right with `m > n`): a cutoff leaves
//! neighbouring bonds of slightly different dimensions all along the chain. Its eigenvalues past
//! `min(m, n)` are then rounding, and only the first `min(m, n)` count, as many as the SVD has
//! singular values, so the rank and the discarded weight are the SVD's. Where it would be more
//! than twice the other side (the ends of the chain), the split is the session's truncated SVD
//! instead ([`gram_pays`]).

use holdfast::{CpuExecSession, OpError, Tensor, Truncation};

use crate::MpsError;
use crate::centre::absorb;

#[cfg(test)]
mod tests;

/// The squared singular values of a split, kept from bond to bond so that a warm sweep
/// allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct Split {
    values: Vec<f64>,
}

/// The bond's new site tensors and the relative weight the truncation dropped.
pub(crate) struct Parts {
    pub(crate) left: Tensor<f64>,
    pub(crate) right: Tensor<f64>,
    pub(crate) discarded_weight: f64,
}

impl Split {
    /// Splits `theta` (`[a, s₁, s₂, b]`) truncated by `trunc`: `(u, s·vh)` moving right,
    /// `(u·s, vh)` moving left, up to the sign of each kept vector. `theta` goes back to the
    /// pool, as does every temporary.
    ///
    /// # Errors
    ///
    /// [`MpsError::InvalidParameter`] when `theta` is not of rank 4; an operation's error (the
    /// eigensolver or the SVD not converging).
    pub(crate) fn split(
        &mut self,
        v: &mut CpuExecSession<'_>,
        theta: Tensor<f64>,
        trunc: Truncation,
        right_moving: bool,
    ) -> Result<Parts, MpsError> {
        let out = match *theta.shape() {
            [a, s1, s2, b] if gram_pays(a * s1, s2 * b, right_moving) => {
                self.by_density_matrix(v, &theta, [a, s1, s2, b], trunc, right_moving)
            }
            [_, _, _, _] => by_svd(v, &theta, trunc, right_moving),
            _ => {
                let shape = theta.shape().to_vec();
                v.recycle(theta);
                return Err(MpsError::InvalidParameter(format!(
                    "a bond splits a two-site tensor of rank 4, got shape {shape:?}"
                )));
            }
        };
        v.recycle(theta);
        Ok(out?)
    }

    fn by_density_matrix(
        &mut self,
        v: &mut CpuExecSession<'_>,
        theta: &Tensor<f64>,
        [a, s1, s2, b]: [usize; 4],
        trunc: Truncation,
        right_moving: bool,
    ) -> Result<Parts, OpError> {
        let (gram_spec, dim) =
            if right_moving { ("astb,cutb->ascu", a * s1) } else { ("astb,asuc->tbuc", s2 * b) };
        let gram = v.einsum(gram_spec, &[theta.read(), theta.read()])?;
        let solved =
            gram.read().reshape(&[dim, dim]).map_err(OpError::from).and_then(|g| v.eigh(g));
        v.recycle(gram);
        let (w, vectors) = solved?;
        // Largest weight first, as an SVD orders its values, and as many as the SVD has: past
        // min(m, n) the eigenvalues of a Gram matrix of the longer side are rounding.
        let count = (a * s1).min(s2 * b);
        self.values.clear();
        self.values.extend(w.as_slice().iter().rev().take(count).map(|&x| x.max(0.0).sqrt()));
        v.recycle(w);
        let kept = self.keep(v, &vectors, dim, trunc, right_moving);
        v.recycle(vectors);
        let (kept, rank, discarded_weight) = kept?;
        let (data, _) = kept.into_parts();
        let shape: &[usize] = if right_moving { &[a, s1, rank] } else { &[rank, s2, b] };
        let kept = Tensor::from_shape_vec(shape, data)?;
        let other = if right_moving {
            v.einsum("asr,astb->rtb", &[kept.read(), theta.read()])
        } else {
            v.einsum("astb,rtb->asr", &[theta.read(), kept.read()])
        };
        let other = match other {
            Ok(t) => t,
            Err(e) => {
                v.recycle(kept);
                return Err(e);
            }
        };
        let (left, right) = if right_moving { (kept, other) } else { (other, kept) };
        Ok(Parts { left, right, discarded_weight })
    }

    /// The eigenvectors of `vectors` (`dim × dim`, ascending eigenvalues, the square roots of
    /// the largest of which are in `self.values` largest first) that `trunc` keeps, largest
    /// first: as the columns of a `dim × rank` buffer moving right, as the rows of a
    /// `rank × dim` one moving left; with the rank and the discarded weight.
    fn keep(
        &self,
        v: &mut CpuExecSession<'_>,
        vectors: &Tensor<f64>,
        dim: usize,
        trunc: Truncation,
        right_moving: bool,
    ) -> Result<(Tensor<f64>, usize, f64), OpError> {
        let (rank, discarded_weight) = trunc.rank_of(&self.values)?;
        let mut kept = v.zeros::<f64>(&[dim * rank])?;
        let cells = kept.as_mut_slice();
        for (i, row) in vectors.as_slice().chunks_exact(dim).enumerate() {
            // Column dim-1-k of `vectors` is the k-th largest.
            for (k, &x) in row.iter().rev().take(rank).enumerate() {
                if right_moving {
                    cells[i * rank + k] = x;
                } else {
                    cells[k * dim + i] = x;
                }
            }
        }
        Ok((kept, rank, discarded_weight))
    }
}

/// Whether the split goes by the density matrix: the matrix to diagonalise (`m × m` moving
/// right, `n × n` moving left, for `θ` of `m × n`) is at most twice the other side. A bond of
/// dimension χ next to one of χ - 1 (the cutoff sets them) is then one eigendecomposition of
/// `2χ`, which costs a fraction of the SVD of `2χ × 2(χ - 1)`; at the chain's ends, where one
/// side is a few times the other, the SVD of the thin matrix is the cheaper.
fn gram_pays(m: usize, n: usize, right_moving: bool) -> bool {
    let (gram, other) = if right_moving { (m, n) } else { (n, m) };
    gram <= 2 * other
}

/// The split by the session's truncated SVD, the singular values absorbed on the side the
/// centre moves to.
fn by_svd(
    v: &mut CpuExecSession<'_>,
    theta: &Tensor<f64>,
    trunc: Truncation,
    right_moving: bool,
) -> Result<Parts, OpError> {
    let svd = v.svd(theta.read(), &[0, 1], trunc)?;
    let discarded_weight = svd.discarded_weight;
    let holdfast::Svd { u, s, vh, .. } = svd;
    let pair = absorb(v, u, s.read(), vh, right_moving);
    v.recycle(s);
    let (left, right) = pair?;
    Ok(Parts { left, right, discarded_weight })
}
