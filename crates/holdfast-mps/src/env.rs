//! Environments: an MPO sandwiched between an MPS and its conjugate, contracted from one end.
//!
//! An environment is `[bra bond, MPO bond, ket bond]`. `L[i]` holds sites `0..i`, `R[i]` sites
//! `i..L`; the trivial environment at either end is the `[1, 1, 1]` tensor of one. Each update is
//! one `einsum_with_path` on the session: three pairwise steps in the cheapest order for
//! `χ ≫ w, d` (the ket first, then the MPO, then the bra). The bra is the conjugated ket: for
//! complex elements one `conj` in the same entry, its buffer back to the pool afterwards; for
//! real ones the ket itself, no copy.

use holdfast::{CpuExecSession, LinalgElement, OpError, Tensor};

use crate::{Executor, MpsError};

/// `einsum_with_path(spec, operands, path)` where the operand at `bra` is conjugated first
/// (complex elements only), in one view.
fn contract_with_bra<T: LinalgElement>(
    v: &mut CpuExecSession<'_>,
    spec: &str,
    operands: [&Tensor<T>; 4],
    bra: usize,
    path: &[(usize, usize)],
) -> Result<Tensor<T>, OpError> {
    let conj = if T::DTYPE.is_complex() { Some(v.conj(operands[bra].read())?) } else { None };
    let mut reads = operands.map(Tensor::read);
    if let Some(conj) = &conj {
        reads[bra] = conj.read();
    }
    let out = v.einsum_with_path(spec, &reads, path);
    if let Some(conj) = conj {
        v.recycle(conj);
    }
    out
}

/// `L[i+1]` from `L[i]`, the ket tensor `a` of site `i` and its MPO tensor `w`:
/// `L'[c,v,b] = Σ L[p,q,r] · a[r,s,b] · w[q,t,s,v] · a*[p,t,c]`.
pub(crate) fn grow_left<T: LinalgElement>(
    exec: &mut impl Executor,
    left: &Tensor<T>,
    a: &Tensor<T>,
    w: &Tensor<T>,
) -> Result<Tensor<T>, MpsError> {
    let spec = "pqr,rsb,qtsv,ptc->cvb";
    // (L·a), then ·W, then ·a*.
    let path = [(0, 1), (0, 2), (0, 1)];
    Ok(exec.op(|v| contract_with_bra(v, spec, [left, a, w, a], 3, &path))??)
}

/// `R[i]` from `R[i+1]`, the ket tensor `a` of site `i` and its MPO tensor `w`:
/// `R'[p,q,a] = Σ a[a,s,b] · w[q,t,s,v] · a*[p,t,c] · R[c,v,b]`.
pub(crate) fn grow_right<T: LinalgElement>(
    exec: &mut impl Executor,
    right: &Tensor<T>,
    a: &Tensor<T>,
    w: &Tensor<T>,
) -> Result<Tensor<T>, MpsError> {
    let spec = "asb,qtsv,ptc,cvb->pqa";
    // (a·R), then ·W, then ·a*.
    let path = [(0, 3), (0, 2), (0, 1)];
    Ok(exec.op(|v| contract_with_bra(v, spec, [a, w, a, right], 2, &path))??)
}

/// The trivial environment: `[1, 1, 1]` holding 1.
pub(crate) fn trivial<T: LinalgElement>() -> Result<Tensor<T>, MpsError> {
    Ok(Tensor::from_vec([1, 1, 1], vec![T::ONE])?)
}

/// The one-site operator `op` (`[out][in]`) as an MPO tensor `[1, 2, 2, 1]`.
pub(crate) fn site_operator<T: LinalgElement>(op: [[T; 2]; 2]) -> Result<Tensor<T>, MpsError> {
    Ok(Tensor::from_vec([1, 2, 2, 1], vec![op[0][0], op[0][1], op[1][0], op[1][1]])?)
}
