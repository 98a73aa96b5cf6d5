//! The local eigensolver of two-site DMRG: Lanczos with full reorthogonalisation on the
//! effective Hamiltonian of one bond, applied through session contractions.
//!
//! The effective Hamiltonian of the bond `(i, i+1)` acts on a two-site tensor
//! `θ[a, s₁, s₂, b]` as `L[i] · W[i] · W[i+1] · R[i+2]`, one `einsum_with_path` of four pairwise
//! steps (`L·θ`, then `W[i]`, then `W[i+1]`, then `R`). The Krylov space grows until the
//! residual of the lowest Ritz pair, `β_m |y_m|`, is below the tolerance, the space is
//! exhausted, or the iteration limit is reached; the tridiagonal matrix's eigenpairs come from
//! the session's `eigh`.
//!
//! A solve allocates nothing once warm: the Krylov vectors, the tridiagonal matrix and its
//! eigenpairs come from the session's pool and go back to it, and the coefficient lists live in
//! a [`Krylov`] the caller keeps from one bond to the next.

use holdfast::{OpError, Tensor};

use crate::{Executor, MpsError};

/// The Lanczos recurrence's lists, kept by the caller so that their capacity is reused.
#[derive(Debug)]
pub(crate) struct Krylov {
    basis: Vec<Tensor<f64>>,
    alphas: Vec<f64>,
    betas: Vec<f64>,
    /// The lowest Ritz vector's coefficients in the basis.
    ritz: Vec<f64>,
}

impl Krylov {
    /// Lists with room for `max_iter` Krylov vectors: a solve never grows them.
    pub(crate) fn with_capacity(max_iter: usize) -> Self {
        Krylov {
            basis: Vec::with_capacity(max_iter),
            alphas: Vec::with_capacity(max_iter),
            betas: Vec::with_capacity(max_iter),
            ritz: Vec::with_capacity(max_iter),
        }
    }
}

/// The environments and MPO tensors of one bond.
pub(crate) struct Bond<'a> {
    pub(crate) left: &'a Tensor<f64>,
    pub(crate) w1: &'a Tensor<f64>,
    pub(crate) w2: &'a Tensor<f64>,
    pub(crate) right: &'a Tensor<f64>,
}

impl Bond<'_> {
    /// `H_eff · x` for a two-site tensor `x[a, s₁, s₂, b]`.
    fn apply(&self, exec: &mut impl Executor, x: &Tensor<f64>) -> Result<Tensor<f64>, MpsError> {
        let spec = "pqa,aijb,qkiu,uljv,cvb->pklc";
        let path = [(0, 1), (0, 3), (0, 2), (0, 1)];
        let operands =
            [self.left.read(), x.read(), self.w1.read(), self.w2.read(), self.right.read()];
        Ok(exec.op(|v| v.einsum_with_path(spec, &operands, &path))??)
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

/// `y -= c · x`.
fn sub_scaled(y: &mut [f64], c: f64, x: &[f64]) {
    y.iter_mut().zip(x).for_each(|(y, x)| *y -= c * x);
}

/// The lowest eigenvalue of `bond`'s effective Hamiltonian and its normalised eigenvector,
/// starting from `start` (not zero), with at most `max_iter` Krylov vectors. `start`'s buffer
/// becomes the returned vector's.
pub(crate) fn lowest(
    exec: &mut impl Executor,
    bond: &Bond<'_>,
    start: Tensor<f64>,
    krylov: &mut Krylov,
    max_iter: usize,
    tolerance: f64,
) -> Result<(f64, Tensor<f64>), MpsError> {
    let dim = start.numel();
    let limit = max_iter.min(dim);
    let Krylov { basis, alphas, betas, ritz } = krylov;
    basis.clear();
    alphas.clear();
    betas.clear();
    let mut v = start;
    let n0 = dot(v.as_slice(), v.as_slice()).sqrt();
    if n0 == 0.0 || !n0.is_finite() {
        return Err(MpsError::InvalidParameter("the start vector of Lanczos is zero".to_owned()));
    }
    v.as_mut_slice().iter_mut().for_each(|x| *x /= n0);
    let (energy, last) = loop {
        let mut w = bond.apply(exec, &v)?;
        let alpha = dot(v.as_slice(), w.as_slice());
        sub_scaled(w.as_mut_slice(), alpha, v.as_slice());
        if let (Some(prev), Some(&beta)) = (basis.last(), betas.last()) {
            sub_scaled(w.as_mut_slice(), beta, prev.as_slice());
        }
        basis.push(v);
        alphas.push(alpha);
        // Full reorthogonalisation, so that the Ritz vector is accurate to the tolerance.
        for q in basis.iter() {
            let c = dot(q.as_slice(), w.as_slice());
            sub_scaled(w.as_mut_slice(), c, q.as_slice());
        }
        let beta = dot(w.as_slice(), w.as_slice()).sqrt();
        let e = tridiagonal_lowest(exec, alphas, betas, ritz)?;
        let residual = beta * ritz.last().map_or(0.0, |c| c.abs());
        if residual <= tolerance || beta <= 1e-14 || basis.len() >= limit {
            break (e, w);
        }
        betas.push(beta);
        w.as_mut_slice().iter_mut().for_each(|x| *x /= beta);
        v = w;
    };
    // The Ritz vector Σ y_k v_k, in the first basis vector's buffer.
    let (out, rest) = basis
        .split_first_mut()
        .ok_or_else(|| MpsError::InvalidParameter("empty Krylov space".to_owned()))?;
    out.as_mut_slice().iter_mut().for_each(|x| *x *= ritz[0]);
    for (q, &c) in rest.iter().zip(&ritz[1..]) {
        out.as_mut_slice().iter_mut().zip(q.as_slice()).for_each(|(o, x)| *o += c * x);
    }
    let mut out = basis.swap_remove(0);
    exec.op(|view| {
        view.recycle(last);
        for q in basis.drain(..) {
            view.recycle(q);
        }
    })?;
    let norm = dot(out.as_slice(), out.as_slice()).sqrt();
    out.as_mut_slice().iter_mut().for_each(|x| *x /= norm);
    Ok((energy, out))
}

/// The lowest eigenvalue of the symmetric tridiagonal matrix with diagonal `alphas` and
/// off-diagonal `betas` (one shorter), through the session's `eigh`; its eigenvector goes to
/// `ritz`.
fn tridiagonal_lowest(
    exec: &mut impl Executor,
    alphas: &[f64],
    betas: &[f64],
    ritz: &mut Vec<f64>,
) -> Result<f64, MpsError> {
    let m = alphas.len();
    Ok(exec.op(|view| -> Result<f64, OpError> {
        let mut t = view.zeros::<f64>(&[m, m])?;
        let cells = t.as_mut_slice();
        for (i, &a) in alphas.iter().enumerate() {
            cells[i * m + i] = a;
        }
        for (i, &b) in betas.iter().enumerate().take(m.saturating_sub(1)) {
            cells[(i + 1) * m + i] = b;
            cells[i * m + i + 1] = b;
        }
        let solved = view.eigh(t.read());
        view.recycle(t);
        let (w, v) = solved?;
        ritz.clear();
        ritz.extend((0..m).map(|k| v.as_slice()[k * m]));
        let lowest = w.as_slice()[0];
        view.recycle(w);
        view.recycle(v);
        Ok(lowest)
    })??)
}
