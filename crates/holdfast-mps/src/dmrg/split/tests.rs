//! The density-matrix split against the session's truncated SVD: the same rank and discarded
//! weight, the same truncated two-site tensor, and the orthonormality each direction promises,
//! also when the density matrix is of the longer side; the SVD fallback at the ends of a chain.
#![allow(clippy::expect_used, clippy::unwrap_used, reason = "a failed expect is a failed test")]

use holdfast::{CpuBackend, CpuExecSession, Tensor, Truncation};

use super::{Parts, Split};

fn backend() -> CpuBackend {
    CpuBackend::builder().threads(1).private_arbiter().build().expect("a one-thread backend")
}

/// A two-site tensor of `shape` whose matrix `(a·s₁) × (s₂·b)` has singular values falling by
/// `decay` from one to the next (`θ = X·diag(decay^k)·Y` for random `X`, `Y`), so that a cutoff
/// has something to drop.
fn theta(v: &mut CpuExecSession<'_>, shape: [usize; 4], decay: f64, seed: u64) -> Tensor<f64> {
    let (m, n) = (shape[0] * shape[1], shape[2] * shape[3]);
    let k = m.min(n);
    let mut next = crate::dmrg::uniform::uniform(seed);
    let scale: Vec<f64> = std::iter::successors(Some(1.0), |s| Some(s * decay)).take(k).collect();
    let x: Vec<f64> = (0..m * k).map(|i| next() * scale[i % k]).collect();
    let y: Vec<f64> = (0..k * n).map(|_| next()).collect();
    let x = Tensor::from_vec([m, k], x).unwrap();
    let y = Tensor::from_vec([k, n], y).unwrap();
    let t = v.matmul(x.read(), y.read()).unwrap();
    let (data, _) = t.into_parts();
    Tensor::from_vec(shape.to_vec(), data).unwrap()
}

/// `left · right` over the new bond, as an `m × n` matrix.
fn product(v: &mut CpuExecSession<'_>, parts: &Parts) -> Vec<f64> {
    let p = v.einsum("asr,rtb->astb", &[parts.left.read(), parts.right.read()]).unwrap();
    p.as_slice().to_vec()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// `Σ_{rows} x[row, i] x[row, j]` over the `rows × k` matrix `x` is the identity.
fn assert_orthonormal_columns(x: &[f64], k: usize) {
    let rows = x.len() / k;
    for i in 0..k {
        for j in 0..k {
            let dot: f64 = (0..rows).map(|r| x[r * k + i] * x[r * k + j]).sum();
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((dot - want).abs() < 1e-12, "column {i}·{j} = {dot}");
        }
    }
}

/// The split and the SVD's `(u, s·vh)` or `(u·s, vh)` of the same θ.
fn both(
    shape: [usize; 4],
    decay: f64,
    trunc: Truncation,
    right_moving: bool,
) -> (Parts, Vec<f64>, Vec<f64>, f64, usize) {
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    session.with_session(|v| {
        let t = theta(v, shape, decay, 7);
        let svd = super::by_svd(v, &t, trunc, right_moving).unwrap();
        let want = product(v, &svd);
        let rank = svd.left.shape()[2];
        let parts = Split::default().split(v, t, trunc, right_moving).unwrap();
        let got = product(v, &parts);
        (parts, got, want, svd.discarded_weight, rank)
    })
}

#[test]
fn the_split_is_the_truncated_svd_in_both_directions() {
    for right_moving in [true, false] {
        // Equal sides; a density matrix of the longer side, twice and just over the other
        // (neighbouring bonds a cutoff left at different dimensions); the chain's ends.
        let shapes = [
            [6, 2, 2, 6],
            [4, 2, 2, 8],
            [8, 2, 2, 4],
            [6, 2, 2, 5],
            [5, 2, 2, 6],
            [1, 2, 2, 5],
            [5, 2, 2, 1],
        ];
        for shape in shapes {
            for trunc in [
                Truncation::none(),
                Truncation::none().max_rank(5),
                Truncation::none().cutoff(1e-6),
            ] {
                let (parts, got, want, discarded, rank) = both(shape, 0.3, trunc, right_moving);
                let what = format!("{shape:?} {trunc:?} right_moving {right_moving}");
                assert_eq!(parts.left.shape()[2], rank, "{what}");
                assert_eq!(parts.right.shape()[0], rank, "{what}");
                assert_eq!(&parts.left.shape()[..2], &shape[..2], "{what}");
                assert_eq!(&parts.right.shape()[1..], &shape[2..], "{what}");
                assert!((parts.discarded_weight - discarded).abs() < 1e-12, "{what}");
                // The density matrix's eigenvectors are accurate to about ε·‖θ‖²/gap, so the
                // product misses about ε·‖θ‖²/s of θ along a kept value s, where the SVD misses
                // ε·‖θ‖: the largest seen here is 9.5e-12, at 6x2x2x5 untruncated, whose
                // smallest kept value is 0.3⁹ ≈ 2e-5 of the largest.
                assert!(max_diff(&got, &want) < 5e-11, "{what}: {}", max_diff(&got, &want));
                if right_moving {
                    assert_orthonormal_columns(parts.left.as_slice(), rank);
                } else {
                    // The rows of `right` are orthonormal: its transpose's columns are.
                    let n = shape[2] * shape[3];
                    let t: Vec<f64> = (0..n * rank)
                        .map(|i| parts.right.as_slice()[(i % rank) * n + i / rank])
                        .collect();
                    assert_orthonormal_columns(&t, rank);
                }
            }
        }
    }
}

#[test]
fn a_cutoff_drops_the_small_weights_and_reports_them() {
    // Weights spread over eight orders of magnitude: a cutoff of 1e-6 keeps a few of 8, the
    // same few as the SVD.
    let (parts, _, _, discarded, rank) =
        both([4, 2, 2, 4], 1e-2, Truncation::none().cutoff(1e-6), true);
    assert!((1..8).contains(&rank), "kept {rank} of 8");
    assert_eq!(parts.left.shape()[2], rank);
    assert!(parts.discarded_weight > 0.0 && parts.discarded_weight <= 1e-6);
    assert!((parts.discarded_weight - discarded).abs() < 1e-15);
}

#[test]
fn a_tensor_not_of_rank_4_is_an_invalid_parameter() {
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    let out = session.with_session(|v| {
        let t = Tensor::<f64>::from_vec([2, 2, 2], vec![1.0; 8]).unwrap();
        Split::default().split(v, t, Truncation::none(), true).map(|_| ())
    });
    assert!(matches!(out, Err(crate::MpsError::InvalidParameter(_))), "{out:?}");
}
