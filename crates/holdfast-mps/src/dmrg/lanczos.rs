//! The local eigensolver of two-site DMRG: Lanczos with full reorthogonalisation on the
//! effective Hamiltonian of one bond, applied through session contractions.
//!
//! The effective Hamiltonian of the bond `(i, i+1)` acts on a two-site tensor
//! `θ[a, s₁, s₂, b]` as `L[i] · W[i]W[i+1] · R[i+2]`, three pairwise contractions, each laid out
//! so that it is one GEMM (or a batch of them) on its operands as they lie in memory, with no
//! operand copied into GEMM layout:
//!
//! 1. `T[p, q, s₁, s₂, b] = Σ_a L[p, q, a] θ[a, s₁, s₂, b]`: rows `(p, q)`, columns
//!    `(s₁, s₂, b)`;
//! 2. `U[p, t₁, t₂, v, b] = Σ_{q, s₁, s₂} T[p, q, s₁, s₂, b] P[q, s₁, s₂, t₁, t₂, v]`: a batch
//!    over `p` of products over the adjacent `(q, s₁, s₂)`, where `P = W[i]·W[i+1]`, the bond's
//!    MPO pair contracted over its inner bond (`[w, 2, 2, 2, 2, w]`, ins before outs), is built
//!    once per run ([`pair`]);
//! 3. `y[p, t₁, t₂, c] = Σ_{v, b} U[p, t₁, t₂, v, b] R[c, v, b]`: rows `(p, t₁, t₂)`, the
//!    contracted `(v, b)` adjacent in both.
//!
//! The Krylov space grows until the residual of the lowest Ritz pair, `β_m |y_m|`, is within
//! the bond's tolerance ([`Tolerance`]), the space is exhausted, or the iteration limit is
//! reached; the tridiagonal matrix's lowest eigenpair is solved on its two diagonals
//! ([`tridiagonal`]), not as a dense matrix.
//!
//! The Krylov vectors are the rows of one matrix `Q`, so that orthogonalising `w = H·q_k`
//! against all of them is two matrix-vector products through the session's `matmul`
//! (`c = Q·w`, then `w -= Qᵀ·c`), done twice (classical Gram–Schmidt with one
//! reorthogonalisation pass keeps the basis orthogonal to rounding). The first pass also
//! takes out `α_k q_k + β_{k-1} q_{k-1}`, so the three-term recurrence needs no pass of its own:
//! `α_k` is the sum of the two passes' last coefficients. The Ritz vector is one more product,
//! `yᵀ·Q`.
//!
//! A solve allocates nothing once warm: the rows of `Q` live in one buffer that a [`Krylov`]
//! keeps from one bond to the next (taken from the session's pool, grown when a bond needs
//! more), the products come from the pool and go back to it, and the recurrence's coefficients
//! and the tridiagonal solver's rows are lists the [`Krylov`] keeps.

use holdfast::{CpuExecSession, OpError, Tensor, TensorRead};

use super::tridiagonal;
use crate::{Executor, MpsError};

/// The Lanczos recurrence's storage, kept by the caller so that its capacity is reused.
#[derive(Debug)]
pub(crate) struct Krylov {
    /// The Krylov vectors, row after row (a pool buffer; empty until the first solve).
    rows: Option<Tensor<f64>>,
    alphas: Vec<f64>,
    betas: Vec<f64>,
    /// The lowest Ritz vector's coefficients in the basis.
    ritz: Vec<f64>,
    /// The tridiagonal solver's working rows.
    scratch: tridiagonal::Scratch,
}

impl Krylov {
    /// Lists with room for `max_iter` Krylov vectors: a solve never grows them.
    pub(crate) fn with_capacity(max_iter: usize) -> Self {
        Krylov {
            rows: None,
            alphas: Vec::with_capacity(max_iter),
            betas: Vec::with_capacity(max_iter),
            ritz: Vec::with_capacity(max_iter),
            scratch: tridiagonal::Scratch::with_capacity(max_iter),
        }
    }

    /// Gives the row buffer back to the session's pool.
    pub(crate) fn recycle_into(&mut self, view: &mut CpuExecSession<'_>) {
        if let Some(rows) = self.rows.take() {
            view.recycle(rows);
        }
    }

    /// A row buffer of at least `len` elements, the kept one when it is large enough.
    fn rows(&mut self, exec: &mut impl Executor, len: usize) -> Result<Tensor<f64>, MpsError> {
        match self.rows.take() {
            Some(rows) if rows.numel() >= len => Ok(rows),
            old => Ok(exec.op(|view| {
                if let Some(old) = old {
                    view.recycle(old);
                }
                view.zeros::<f64>(&[len])
            })??),
        }
    }
}

/// The environments and MPO pair of one bond.
pub(crate) struct Bond<'a> {
    pub(crate) left: &'a Tensor<f64>,
    /// `P[q, s₁, s₂, t₁, t₂, v] = Σ_u W[i][q, t₁, s₁, u] W[i+1][u, t₂, s₂, v]` ([`pair`]).
    pub(crate) pair: &'a Tensor<f64>,
    pub(crate) right: &'a Tensor<f64>,
}

/// The MPO pair of the bond `(i, i+1)`, `[w, 2, 2, 2, 2, w]` with both ins before both outs,
/// the layout the effective Hamiltonian's middle step reads in place (module docs).
///
/// # Errors
///
/// As the view's `einsum`.
pub(crate) fn pair(
    view: &mut CpuExecSession<'_>,
    w1: &Tensor<f64>,
    w2: &Tensor<f64>,
) -> Result<Tensor<f64>, OpError> {
    view.einsum("qkiu,uljv->qijklv", &[w1.read(), w2.read()])
}

impl Bond<'_> {
    /// `H_eff · x` for a two-site tensor `x[a, s₁, s₂, b]`, in the three steps of the module
    /// docs; the two intermediates go back to the pool.
    fn apply(
        &self,
        view: &mut CpuExecSession<'_>,
        x: TensorRead<'_, f64>,
    ) -> Result<Tensor<f64>, OpError> {
        let t = view.einsum("pqa,aijb->pqijb", &[self.left.read(), x])?;
        let u = view.einsum("pqijb,qijklv->pklvb", &[t.read(), self.pair.read()]);
        view.recycle(t);
        let u = u?;
        let y = view.einsum("pklvb,cvb->pklc", &[u.read(), self.right.read()]);
        view.recycle(u);
        y
    }
}

/// When a bond's Lanczos stops: once the Ritz pair's residual is at most
/// `max(floor, min(target, PROGRESS · r₀))`, `r₀` being the start vector's residual. `target`
/// is how far the sweep asks each bond to go; `PROGRESS` makes every bond take the start's
/// residual down by a real factor even when it is already within `target` (otherwise a state
/// near a sweep's target would stop changing and look converged), and `floor` is where solving
/// further buys nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tolerance {
    pub(crate) target: f64,
    pub(crate) floor: f64,
}

/// The factor by which a bond's solve at least reduces its start vector's residual.
const PROGRESS: f64 = 0.5;

impl Tolerance {
    /// The bond's residual bound, given its start vector's residual `r0`.
    pub(super) fn bound(self, r0: f64) -> f64 {
        self.floor.max(self.target.min(PROGRESS * r0))
    }
}

/// `a · b`, summed in four independent lanes (a single running sum is one long dependency
/// chain of additions, which the compiler may not reorder).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut acc = [0.0f64; 4];
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Takes the components along the first `k` rows of `q` (each `dim` long, orthonormal) out of
/// `w`: `c = Q·w`, `w -= Qᵀ·c`. Returns the coefficient along row `k - 1`.
fn project_out(
    view: &mut CpuExecSession<'_>,
    q: &[f64],
    k: usize,
    dim: usize,
    w: &mut Tensor<f64>,
) -> Result<f64, OpError> {
    let basis = TensorRead::from_slice(&[k, dim], &q[..k * dim])?;
    let c = view.matmul(basis.clone(), w.read().reshape(&[dim, 1])?)?;
    let last = c.as_slice()[k - 1];
    let along = view.matmul(c.read().reshape(&[1, k])?, basis);
    view.recycle(c);
    let along = along?;
    w.as_mut_slice().iter_mut().zip(along.as_slice()).for_each(|(w, a)| *w -= a);
    view.recycle(along);
    Ok(last)
}

/// The lowest eigenvalue of `bond`'s effective Hamiltonian and its normalised eigenvector,
/// starting from `start` (a two-site tensor `θ[a, s₁, s₂, b]`, not zero), with at most
/// `max_iter` Krylov vectors, stopping within `tolerance`. `start`'s buffer becomes the returned
/// vector's.
pub(crate) fn lowest(
    exec: &mut impl Executor,
    bond: &Bond<'_>,
    mut start: Tensor<f64>,
    krylov: &mut Krylov,
    max_iter: usize,
    tolerance: Tolerance,
) -> Result<(f64, Tensor<f64>), MpsError> {
    let shape: [usize; 4] = start.shape().try_into().map_err(|_| {
        MpsError::InvalidParameter(format!(
            "Lanczos needs a two-site tensor of rank 4, got shape {:?}",
            start.shape()
        ))
    })?;
    let dim = start.numel();
    let limit = max_iter.min(dim);
    let n0 = dot(start.as_slice(), start.as_slice()).sqrt();
    if n0 == 0.0 || !n0.is_finite() {
        return Err(MpsError::InvalidParameter("the start vector of Lanczos is zero".to_owned()));
    }
    let mut rows = krylov.rows(exec, limit * dim)?;
    rows.as_mut_slice()[..dim].iter_mut().zip(start.as_slice()).for_each(|(q, x)| *q = x / n0);
    let solved = iterate(exec, bond, shape, &mut rows, krylov, limit, tolerance);
    krylov.rows = Some(rows);
    let energy = solved?;
    // The Ritz vector yᵀ·Q, into `start`'s buffer, normalised.
    let Krylov { rows, ritz, .. } = krylov;
    let q = rows.as_ref().map_or(&[][..], |r| r.as_slice());
    let m = ritz.len();
    exec.op(|view| -> Result<(), OpError> {
        let basis = TensorRead::from_slice(&[m, dim], &q[..m * dim])?;
        let y = TensorRead::from_slice(&[1, m], ritz)?;
        let out = view.matmul(y, basis)?;
        start.as_mut_slice().copy_from_slice(out.as_slice());
        view.recycle(out);
        Ok(())
    })??;
    let norm = dot(start.as_slice(), start.as_slice()).sqrt();
    start.as_mut_slice().iter_mut().for_each(|x| *x /= norm);
    Ok((energy, start))
}

/// The Lanczos iterations on two-site tensors of `shape` from the normalised first row of
/// `rows`, the Krylov vectors in its rows; the lowest Ritz value (its coefficients in
/// `krylov.ritz`, one per row used).
fn iterate(
    exec: &mut impl Executor,
    bond: &Bond<'_>,
    shape: [usize; 4],
    rows: &mut Tensor<f64>,
    krylov: &mut Krylov,
    limit: usize,
    tolerance: Tolerance,
) -> Result<f64, MpsError> {
    let Krylov { alphas, betas, ritz, scratch, .. } = krylov;
    alphas.clear();
    betas.clear();
    let dim: usize = shape.iter().product();
    let mut bound = tolerance.floor;
    let q = rows.as_mut_slice();
    loop {
        let k = alphas.len();
        let q_ref: &[f64] = q;
        let (w, alpha) = exec.op(|view| -> Result<(Tensor<f64>, f64), OpError> {
            let x = TensorRead::from_slice(&shape, &q_ref[k * dim..(k + 1) * dim])?;
            let mut w = bond.apply(view, x)?;
            let orthogonalised = project_out(view, q_ref, k + 1, dim, &mut w)
                .and_then(|a| Ok(a + project_out(view, q_ref, k + 1, dim, &mut w)?));
            match orthogonalised {
                Ok(alpha) => Ok((w, alpha)),
                Err(e) => {
                    view.recycle(w);
                    Err(e)
                }
            }
        })??;
        alphas.push(alpha);
        let beta = dot(w.as_slice(), w.as_slice()).sqrt();
        let e = tridiagonal::lowest(alphas, betas, ritz, scratch);
        let residual = beta * ritz.last().map_or(0.0, |c| c.abs());
        if k == 0 {
            bound = tolerance.bound(residual);
        }
        let done = residual <= bound || beta <= 1e-14 || k + 1 >= limit;
        if !done {
            betas.push(beta);
            q[(k + 1) * dim..(k + 2) * dim]
                .iter_mut()
                .zip(w.as_slice())
                .for_each(|(q, w)| *q = w / beta);
        }
        exec.op(|view| view.recycle(w))?;
        if done {
            return Ok(e);
        }
    }
}
