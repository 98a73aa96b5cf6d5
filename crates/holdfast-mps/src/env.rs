//! Environments: an MPO sandwiched between an MPS and its conjugate, contracted from one end.
//!
//! An environment is `[bra bond, MPO bond, ket bond]`. `L[i]` holds sites `0..i`, `R[i]` sites
//! `i..L`; the trivial environment at either end is the `[1, 1, 1]` tensor of one. Each update is
//! one `einsum_with_path` on the session: three pairwise steps in the cheapest order for
//! `χ ≫ w, d` (the ket first, then the MPO, then the bra). The bra is the conjugated ket (one
//! `conj` per update, for complex elements only).

use holdfast::{LinalgElement, Tensor};

use crate::{Executor, MpsError};

/// The bra tensor of `a`: `a*` for complex elements, `a` itself (no copy) for real ones.
fn bra<T: LinalgElement>(
    exec: &mut impl Executor,
    a: &Tensor<T>,
) -> Result<Option<Tensor<T>>, MpsError> {
    if T::DTYPE.is_complex() { Ok(Some(exec.op(|v| v.conj(a.read()))??)) } else { Ok(None) }
}

/// `L[i+1]` from `L[i]`, the ket tensor `a` of site `i` and its MPO tensor `w`:
/// `L'[c,v,b] = Σ L[p,q,r] · a[r,s,b] · w[q,t,s,v] · a*[p,t,c]`.
pub(crate) fn grow_left<T: LinalgElement>(
    exec: &mut impl Executor,
    left: &Tensor<T>,
    a: &Tensor<T>,
    w: &Tensor<T>,
) -> Result<Tensor<T>, MpsError> {
    let conj = bra(exec, a)?;
    let b = conj.as_ref().unwrap_or(a);
    let spec = "pqr,rsb,qtsv,ptc->cvb";
    // (L·a), then ·W, then ·a*.
    let path = [(0, 1), (0, 2), (0, 1)];
    let ops = [left.read(), a.read(), w.read(), b.read()];
    Ok(exec.op(|v| v.einsum_with_path(spec, &ops, &path))??)
}

/// `R[i]` from `R[i+1]`, the ket tensor `a` of site `i` and its MPO tensor `w`:
/// `R'[p,q,a] = Σ a[a,s,b] · w[q,t,s,v] · a*[p,t,c] · R[c,v,b]`.
pub(crate) fn grow_right<T: LinalgElement>(
    exec: &mut impl Executor,
    right: &Tensor<T>,
    a: &Tensor<T>,
    w: &Tensor<T>,
) -> Result<Tensor<T>, MpsError> {
    let conj = bra(exec, a)?;
    let b = conj.as_ref().unwrap_or(a);
    let spec = "asb,qtsv,ptc,cvb->pqa";
    // (a·R), then ·W, then ·a*.
    let path = [(0, 3), (0, 2), (0, 1)];
    let ops = [a.read(), w.read(), b.read(), right.read()];
    Ok(exec.op(|v| v.einsum_with_path(spec, &ops, &path))??)
}

/// The trivial environment: `[1, 1, 1]` holding 1.
pub(crate) fn trivial<T: LinalgElement>() -> Result<Tensor<T>, MpsError> {
    Ok(Tensor::from_vec([1, 1, 1], vec![T::ONE])?)
}

/// The one-site operator `op` (`[out][in]`) as an MPO tensor `[1, 2, 2, 1]`.
pub(crate) fn site_operator<T: LinalgElement>(op: [[T; 2]; 2]) -> Result<Tensor<T>, MpsError> {
    Ok(Tensor::from_vec([1, 2, 2, 1], vec![op[0][0], op[0][1], op[1][0], op[1][1]])?)
}
