//! The direct tridiagonal solver against the session's dense `eigh`: the same lowest
//! eigenvalue, a unit eigenvector with a small residual, on random, graded, nearly split and
//! split matrices.
#![allow(clippy::expect_used, clippy::unwrap_used, reason = "a failed expect is a failed test")]

use holdfast::{CpuBackend, Tensor};

use super::{Scratch, lowest};

/// The eigenvalues and eigenvectors (as columns) of the tridiagonal matrix, built dense and
/// solved by the session's `eigh`.
fn reference(a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let m = a.len();
    let mut dense = vec![0.0; m * m];
    for i in 0..m {
        dense[i * m + i] = a[i];
        if i + 1 < m {
            dense[i * m + i + 1] = b[i];
            dense[(i + 1) * m + i] = b[i];
        }
    }
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let mut session = backend.open_session().unwrap();
    let t = Tensor::from_vec([m, m], dense).unwrap();
    session.with_session(|v| {
        let (w, vectors) = v.eigh(t.read()).unwrap();
        (w.as_slice().to_vec(), vectors.as_slice().to_vec())
    })
}

fn check(a: &[f64], b: &[f64], what: &str) {
    let m = a.len();
    let mut x = Vec::new();
    let lambda = lowest(a, b, &mut x, &mut Scratch::default());
    let (values, vectors) = reference(a, b);
    let want = values[0];
    let norm = a.iter().chain(b).fold(0.0f64, |n, v| n.max(v.abs())).max(1e-300);
    assert!((lambda - want).abs() <= 1e-13 * norm, "{what}: {lambda} against {want}");
    assert_eq!(x.len(), m, "{what}");
    let unit: f64 = x.iter().map(|v| v * v).sum();
    assert!((unit - 1.0).abs() < 1e-13, "{what}: |x|² = {unit}");
    let residual = (0..m)
        .map(|i| {
            let mut r = a[i] * x[i] - lambda * x[i];
            if i > 0 {
                r += b[i - 1] * x[i - 1];
            }
            if i + 1 < m {
                r += b[i] * x[i + 1];
            }
            r * r
        })
        .sum::<f64>()
        .sqrt();
    assert!(residual <= 1e-12 * norm, "{what}: residual {residual}");
    // Where the lowest eigenvalue is well separated (by 1e-3·‖T‖), the vector is the
    // reference's up to sign.
    let overlap: f64 = (0..m).map(|i| x[i] * vectors[i * m]).sum();
    if values.get(1).is_none_or(|second| second - want >= 1e-3 * norm) {
        assert!((overlap.abs() - 1.0).abs() < 1e-10, "{what}: overlap {overlap}");
    }
}

fn random(m: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut next = crate::dmrg::uniform::uniform(seed);
    let a: Vec<f64> = (0..m).map(|_| 10.0 * next()).collect();
    let b: Vec<f64> = (1..m).map(|_| 5.0 * next()).collect();
    (a, b)
}

#[test]
fn random_matrices_match_the_dense_solver() {
    for m in 1..=16 {
        for seed in 0..20 {
            let (a, b) = random(m, seed);
            check(&a, &b, &format!("random m={m} seed={seed}"));
        }
    }
}

#[test]
fn lanczos_like_matrices_match_the_dense_solver() {
    // A converging recurrence: a large negative diagonal near the answer, off-diagonals falling
    // to the residual scale.
    for m in 2u8..=10 {
        let a: Vec<f64> = (0..m).map(|i| -81.0 + 3.0 * f64::from(i)).collect();
        let b: Vec<f64> = (1..m).map(|i| 20.0 * 10f64.powi(-i32::from(i))).collect();
        check(&a, &b, &format!("graded m={m}"));
    }
}

#[test]
fn split_and_degenerate_matrices_give_an_eigenpair() {
    // Zero and tiny off-diagonals (the matrix falls apart into blocks), equal diagonals, a
    // degenerate lowest eigenvalue, and the all-zero matrix.
    let cases: [(&[f64], &[f64]); 6] = [
        (&[1.0, -2.0, 3.0], &[0.0, 0.0]),
        (&[1.0, -2.0, 3.0], &[1e-300, 1e-17]),
        (&[2.0, 2.0, 2.0, 2.0], &[1.0, 1.0, 1.0]),
        (&[-1.0, 5.0, -1.0], &[0.0, 0.0]),
        (&[0.0, 0.0], &[0.0]),
        (&[1.0, 1.0], &[1.0]),
    ];
    for (a, b) in cases {
        check(a, b, &format!("{a:?} {b:?}"));
    }
}
