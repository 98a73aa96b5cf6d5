//! Environments: an MPO sandwiched between an MPS and its conjugate, contracted from one end.
//!
//! An environment is `[bra bond, MPO bond, ket bond]`. `L[i]` holds sites `0..i`, `R[i]` sites
//! `i..L`; the trivial environment at either end is the `[1, 1, 1]` tensor of one. Each update is
//! one `einsum_with_path` on the session: three pairwise steps in the cheapest order for
//! `χ ≫ w, d` (the ket first, then the MPO, then the bra).

use holdfast::Tensor;

use crate::{Executor, MpsError};

/// `L[i+1]` from `L[i]`, the ket tensor `a` of site `i` and its MPO tensor `w`:
/// `L'[c,v,b] = Σ L[p,q,r] · a[r,s,b] · w[q,t,s,v] · a*[p,t,c]`.
pub(crate) fn grow_left(
    exec: &mut impl Executor,
    left: &Tensor<f64>,
    a: &Tensor<f64>,
    w: &Tensor<f64>,
) -> Result<Tensor<f64>, MpsError> {
    let spec = "pqr,rsb,qtsv,ptc->cvb";
    // (L·a), then ·W, then ·a*.
    let path = [(0, 1), (0, 2), (0, 1)];
    Ok(exec
        .op(|v| v.einsum_with_path(spec, &[left.read(), a.read(), w.read(), a.read()], &path))??)
}

/// `R[i]` from `R[i+1]`, the ket tensor `a` of site `i` and its MPO tensor `w`:
/// `R'[p,q,a] = Σ a[a,s,b] · w[q,t,s,v] · a*[p,t,c] · R[c,v,b]`.
pub(crate) fn grow_right(
    exec: &mut impl Executor,
    right: &Tensor<f64>,
    a: &Tensor<f64>,
    w: &Tensor<f64>,
) -> Result<Tensor<f64>, MpsError> {
    let spec = "asb,qtsv,ptc,cvb->pqa";
    // (a·R), then ·W, then ·a*.
    let path = [(0, 3), (0, 2), (0, 1)];
    Ok(exec
        .op(|v| v.einsum_with_path(spec, &[a.read(), w.read(), a.read(), right.read()], &path))??)
}

/// The trivial environment: `[1, 1, 1]` holding 1.
pub(crate) fn trivial() -> Result<Tensor<f64>, MpsError> {
    Ok(Tensor::from_vec([1, 1, 1], vec![1.0])?)
}
