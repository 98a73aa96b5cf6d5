//! One-site expectation values of an MPS, every site at once: left and right environments of
//! the identity are built once (`O(L χ³)`), then each site's operator is one more contraction.

use holdfast::{LinalgElement, Tensor};

use crate::env::{grow_left, grow_right, site_operator, trivial};
use crate::{Executor, Mps, MpsError};

/// `⟨ψ|O_i|ψ⟩ / ⟨ψ|ψ⟩` for every site `i` and every operator of `ops` (`[out][in]`), as
/// `result[operator][site]` (real parts: the operators are Hermitian).
pub(crate) fn local_expectations<T: LinalgElement>(
    exec: &mut impl Executor,
    mps: &Mps<T>,
    ops: &[[[T; 2]; 2]],
) -> Result<Vec<Vec<f64>>, MpsError> {
    let sites = mps.sites();
    let identity = site_operator([[T::ONE, T::ZERO], [T::ZERO, T::ONE]])?;
    let mut lefts: Vec<Tensor<T>> = vec![trivial()?];
    for i in 0..sites {
        let grown = grow_left(exec, &lefts[i], mps.tensor(i), &identity)?;
        lefts.push(grown);
    }
    let mut rights: Vec<Tensor<T>> = vec![trivial()?; sites + 1];
    for i in (1..sites).rev() {
        rights[i] = grow_right(exec, &rights[i + 1], mps.tensor(i), &identity)?;
    }
    let norm = lefts[sites].as_slice()[0].re_f64();
    let ops: Vec<Tensor<T>> = ops.iter().map(|&op| site_operator(op)).collect::<Result<_, _>>()?;
    let mut out = vec![vec![0.0; sites]; ops.len()];
    for (k, op) in ops.iter().enumerate() {
        for i in 0..sites {
            let with = grow_left(exec, &lefts[i], mps.tensor(i), op)?;
            let value = exec.op(|v| {
                v.einsum_with_path("cvb,cvb->", &[with.read(), rights[i + 1].read()], &[(0, 1)])
            })??;
            out[k][i] = value.as_slice()[0].re_f64() / norm;
        }
    }
    Ok(out)
}
