//! The two-site gates of TEBD: each bond's share of the Hamiltonian, exponentiated.
//!
//! Bond `i` carries its nearest-neighbour terms and a share of the on-site terms of its two
//! sites: half of each, except that an end site gives all of its term to its only bond. So the
//! bond Hamiltonians `h_i` sum to `H`. A gate is `exp(-i τ h_i)` (real time) or `exp(-τ h_i)`
//! (imaginary time), from the eigendecomposition of the 4×4 Hermitian `h_i` by the session's
//! `eigh`, as a tensor `G[out₁, out₂, in₁, in₂]`.

use holdfast::{Tensor, c64};

use crate::models::{IDENTITY, Model, Op2};
use crate::{Executor, MpsError};

/// `(a ⊗ b)` as a row-major 4×4 matrix over `(s₁, s₂)`, scaled by `c`, added into `out`.
fn add_kron(out: &mut [f64; 16], c: f64, a: &Op2, b: &Op2) {
    for t1 in 0..2 {
        for t2 in 0..2 {
            for s1 in 0..2 {
                for s2 in 0..2 {
                    out[(t1 * 2 + t2) * 4 + s1 * 2 + s2] += c * a[t1][s1] * b[t2][s2];
                }
            }
        }
    }
}

/// The Hamiltonian of bond `i` of a chain of `sites` sites, row-major 4×4.
pub(crate) fn bond_hamiltonian(model: &Model, sites: usize, i: usize) -> [f64; 16] {
    let mut h = [0.0; 16];
    for bond in model.bonds() {
        add_kron(&mut h, bond.c, &bond.left, &bond.right);
    }
    let onsite = model.onsite();
    let left_share = if i == 0 { 1.0 } else { 0.5 };
    let right_share = if i + 2 == sites { 1.0 } else { 0.5 };
    add_kron(&mut h, left_share, &onsite, &IDENTITY);
    add_kron(&mut h, right_share, &IDENTITY, &onsite);
    h
}

/// `exp(-i τ h)` (or `exp(-τ h)` when `imaginary`) of the Hermitian 4×4 `h`, as `[2, 2, 2, 2]`.
pub(crate) fn gate(
    exec: &mut impl Executor,
    h: &[f64; 16],
    tau: f64,
    imaginary: bool,
) -> Result<Tensor<c64>, MpsError> {
    let hc = Tensor::from_vec([4, 4], h.iter().map(|&x| c64::new(x, 0.0)).collect())?;
    let (w, v) = exec.op(|view| view.eigh(hc.read()))??;
    let (w, v) = (w.as_slice(), v.as_slice());
    let phase: Vec<c64> = w
        .iter()
        .map(|&e| {
            if imaginary { c64::new((-tau * e).exp(), 0.0) } else { c64::from_polar(1.0, -tau * e) }
        })
        .collect();
    let mut g = vec![c64::new(0.0, 0.0); 16];
    for r in 0..4 {
        for c in 0..4 {
            g[r * 4 + c] = (0..4).map(|k| v[r * 4 + k] * phase[k] * v[c * 4 + k].conj()).sum();
        }
    }
    Ok(Tensor::from_vec([2, 2, 2, 2], g)?)
}
