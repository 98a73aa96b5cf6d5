//! Unit tests of the factorizations: reconstruction, orthogonality, ordering, truncation weight
//! and every error, on matrices and on bipartitions of higher-rank tensors, f32 and f64.

use holdfast_tensor::{Tensor, TensorRead};

use super::{LinalgScratch, Truncation, eigh, norm, qr, solve, svd};
use crate::{HeapAlloc, KernelError, Par};

/// A deterministic generator of values in [-1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn tensor(&mut self, shape: &[usize]) -> Tensor<f64> {
        let n = shape.iter().product();
        Tensor::from_vec(shape.to_vec(), (0..n).map(|_| self.next()).collect()).unwrap()
    }
}

/// Row-major `m × n` values of `t` permuted left-first, as the factorizations see it.
fn matrix(t: TensorRead<'_, f64>, left: &[usize]) -> (Vec<f64>, usize, usize) {
    let rank = t.rank();
    let mut perm = left.to_vec();
    perm.extend((0..rank).filter(|a| !left.contains(a)));
    let m: usize = left.iter().map(|&a| t.shape()[a]).product();
    let v = t.permute(&perm).unwrap().to_vec();
    let n = v.len().checked_div(m).unwrap_or(0);
    (v, m, n)
}

/// `a (m×k) · b (k×n)`, row-major.
fn mul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                c[i * n + j] += a[i * k + p] * b[p * n + j];
            }
        }
    }
    c
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// `max |xᵀx - I|` for the columns of the row-major `rows × cols` matrix `x`.
fn orthonormality_error(x: &[f64], rows: usize, cols: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for a in 0..cols {
        for b in 0..cols {
            let dot: f64 = (0..rows).map(|i| x[i * cols + a] * x[i * cols + b]).sum();
            worst = worst.max((dot - if a == b { 1.0 } else { 0.0 }).abs());
        }
    }
    worst
}

fn transpose(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols * rows).map(|p| x[(p % rows) * cols + p / rows]).collect()
}

#[test]
fn svd_reconstructs_with_orthonormal_factors_and_descending_values() {
    let mut rng = Rng(7);
    let cases: &[(&[usize], &[usize])] = &[
        (&[5, 3], &[0]),
        (&[3, 5], &[0]),
        (&[4, 4], &[1]),
        (&[2, 3, 4], &[0, 2]),
        (&[2, 3, 4, 2], &[3, 1]),
        (&[32, 32], &[0]),
        (&[6, 1, 2], &[]),
    ];
    let mut scratch = LinalgScratch::new();
    for &(shape, left) in cases {
        let t = rng.tensor(shape);
        let f = svd(t.read(), left, Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq)
            .unwrap();
        let (a, m, n) = matrix(t.read(), left);
        let k = m.min(n);
        let left_dims: Vec<usize> = left.iter().map(|&i| shape[i]).collect();
        assert_eq!(f.u.shape(), [left_dims.as_slice(), &[k]].concat(), "{shape:?} {left:?}");
        assert_eq!(f.s.shape(), &[k]);
        assert_eq!(f.vh.shape()[0], k);
        let s = f.s.as_slice();
        assert!(s.windows(2).all(|w| w[0] >= w[1]) && s.iter().all(|&x| x >= 0.0), "{s:?}");
        let us: Vec<f64> = f.u.as_slice().iter().enumerate().map(|(p, &x)| x * s[p % k]).collect();
        let back = mul(&us, f.vh.as_slice(), m, k, n);
        assert!(max_diff(&back, &a) < 1e-12, "{shape:?} {left:?}");
        assert!(orthonormality_error(f.u.as_slice(), m, k) < 1e-12);
        assert!(orthonormality_error(&transpose(f.vh.as_slice(), k, n), n, k) < 1e-12);
        assert_eq!(f.discarded_weight, 0.0);
    }
}

#[test]
fn svd_of_f32_matches_f64() {
    let t = Rng(11).tensor(&[6, 4]);
    let t32 =
        Tensor::<f32>::from_vec([6, 4], t.as_slice().iter().map(|&x| x as f32).collect()).unwrap();
    let mut scratch = LinalgScratch::new();
    let f64s =
        svd(t.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    let f32s =
        svd(t32.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    for (a, b) in f64s.s.as_slice().iter().zip(f32s.s.as_slice()) {
        assert!((a - f64::from(*b)).abs() < 1e-5, "{a} vs {b}");
    }
}

/// A matrix with chosen singular values 8, 4, 2, 1, 0.5 (diagonal, then rotated by permuting).
fn graded() -> Tensor<f64> {
    let s = [8.0, 4.0, 2.0, 1.0, 0.5];
    let mut data = vec![0.0; 25];
    for (i, &v) in s.iter().enumerate() {
        data[i * 5 + (i + 2) % 5] = v;
    }
    Tensor::from_vec([5, 5], data).unwrap()
}

#[test]
fn truncation_keeps_the_bounded_rank_and_reports_the_discarded_weight() {
    let total: f64 = [64.0, 16.0, 4.0, 1.0, 0.25].iter().sum();
    let mut scratch = LinalgScratch::new();
    let mut run = |trunc: Truncation| {
        let f = svd(graded().read(), &[0], trunc, &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
        (f.s.shape()[0], f.discarded_weight, f.u.shape().to_vec(), f.vh.shape().to_vec())
    };
    let (r, w, u, vh) = run(Truncation::none().max_rank(2));
    assert_eq!((r, u, vh), (2, vec![5, 2], vec![2, 5]));
    assert!((w - 5.25 / total).abs() < 1e-14, "{w}");
    // Dropping 0.25 and 1 is a weight of 1.25/total ≈ 0.0147: within 0.02, not within 0.01.
    assert_eq!(run(Truncation::none().cutoff(0.02)).0, 3);
    assert_eq!(run(Truncation::none().cutoff(0.01)).0, 4);
    assert_eq!(run(Truncation::none().absolute(1.0)).0, 3, "values at or below 1 go");
    assert_eq!(run(Truncation::none().absolute(100.0)).0, 1, "at least one value stays");
    assert_eq!(run(Truncation::none().max_rank(4).cutoff(0.02)).0, 3, "every bound holds");
    // The truncated factors still reconstruct the kept part.
    let f = svd(
        graded().read(),
        &[0],
        Truncation::none().max_rank(3),
        &mut scratch,
        &mut HeapAlloc,
        Par::Seq,
    )
    .unwrap();
    assert_eq!(f.s.as_slice(), &[8.0, 4.0, 2.0]);
    assert!(orthonormality_error(f.u.as_slice(), 5, 3) < 1e-14);
}

#[test]
fn svd_errors_are_typed() {
    let t = Rng(3).tensor(&[2, 3, 4]);
    let mut scratch = LinalgScratch::new();
    let mut run = |left: &[usize], trunc: Truncation| {
        svd(t.read(), left, trunc, &mut scratch, &mut HeapAlloc, Par::Seq).map(|_| ())
    };
    assert_eq!(
        run(&[3], Truncation::none()),
        Err(KernelError::AxisOutOfRange { axis: 3, rank: 3 })
    );
    assert_eq!(run(&[1, 1], Truncation::none()), Err(KernelError::DuplicateAxis { axis: 1 }));
    for bad in [
        Truncation::none().max_rank(0),
        Truncation::none().cutoff(-0.1),
        Truncation::none().cutoff(f64::NAN),
        Truncation::none().absolute(-1.0),
        Truncation::none().absolute(f64::INFINITY),
    ] {
        assert!(matches!(run(&[0], bad), Err(KernelError::InvalidTruncation { .. })), "{bad:?}");
    }
    let nan = Tensor::<f64>::from_vec([2, 2], vec![1.0, f64::NAN, 0.0, 1.0]).unwrap();
    assert_eq!(
        svd(nan.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq)
            .map(|_| ()),
        Err(KernelError::NoConvergence { routine: "svd" })
    );
}

#[test]
fn empty_matrices_factor_to_empty_factors() {
    let t = Tensor::<f64>::zeros([0, 3]);
    let mut scratch = LinalgScratch::new();
    let f =
        svd(t.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!((f.u.shape(), f.s.shape(), f.vh.shape()), (&[0, 0][..], &[0][..], &[0, 3][..]));
    let (q, r) = qr(t.read(), &[0], &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!((q.shape(), r.shape()), (&[0, 0][..], &[0, 3][..]));
    let (w, v) =
        eigh(Tensor::<f64>::zeros([0, 0]).read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!((w.shape(), v.shape()), (&[0][..], &[0, 0][..]));
}

#[test]
fn qr_reconstructs_with_orthonormal_q_and_upper_r() {
    let mut rng = Rng(5);
    let cases: &[(&[usize], &[usize])] = &[
        (&[6, 3], &[0]),
        (&[3, 6], &[0]),
        (&[4, 4], &[0]),
        (&[2, 3, 4], &[2, 0]),
        (&[32, 32], &[1]),
    ];
    let mut scratch = LinalgScratch::new();
    for &(shape, left) in cases {
        let t = rng.tensor(shape);
        let (q, r) = qr(t.read(), left, &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
        let (a, m, n) = matrix(t.read(), left);
        let k = m.min(n);
        assert_eq!(*q.shape().last().unwrap(), k);
        assert_eq!(r.shape()[0], k);
        let rs = r.as_slice();
        assert!((0..k).all(|i| (0..i.min(n)).all(|j| rs[i * n + j] == 0.0)), "R upper");
        assert!(max_diff(&mul(q.as_slice(), rs, m, k, n), &a) < 1e-12, "{shape:?} {left:?}");
        assert!(orthonormality_error(q.as_slice(), m, k) < 1e-12);
    }
    assert_eq!(
        qr(rng.tensor(&[2, 2]).read(), &[2], &mut scratch, &mut HeapAlloc, Par::Seq).map(|_| ()),
        Err(KernelError::AxisOutOfRange { axis: 2, rank: 2 })
    );
}

#[test]
fn eigh_diagonalises_and_reads_the_lower_triangle() {
    let mut rng = Rng(9);
    let mut scratch = LinalgScratch::new();
    // 130 is past faer's divide-and-conquer threshold.
    for n in [1, 2, 5, 32, 130] {
        let x = rng.tensor(&[n, n]);
        let xs = x.as_slice();
        // The symmetric matrix of x's lower triangle; x's upper triangle is noise that must be
        // ignored.
        let sym: Vec<f64> = (0..n * n)
            .map(|p| if p / n >= p % n { xs[p] } else { xs[(p % n) * n + p / n] })
            .collect();
        let (w, v) = eigh(x.read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
        let (ws, vs) = (w.as_slice(), v.as_slice());
        assert!(ws.windows(2).all(|p| p[0] <= p[1]), "ascending: {ws:?}");
        let av = mul(&sym, vs, n, n, n);
        let vw: Vec<f64> = vs.iter().enumerate().map(|(p, &e)| e * ws[p % n]).collect();
        assert!(max_diff(&av, &vw) < 1e-12, "n = {n}");
        assert!(orthonormality_error(vs, n, n) < 1e-12);
    }
    assert_eq!(
        eigh(rng.tensor(&[2, 3]).read(), &mut scratch, &mut HeapAlloc, Par::Seq).map(|_| ()),
        Err(KernelError::NotSquare { routine: "eigh", shape: vec![2, 3] })
    );
    assert!(matches!(
        eigh(rng.tensor(&[2, 2, 2]).read(), &mut scratch, &mut HeapAlloc, Par::Seq),
        Err(KernelError::NotSquare { .. })
    ));
}

#[test]
fn solve_solves_vectors_and_matrices_and_reports_singularity() {
    let mut rng = Rng(13);
    let mut scratch = LinalgScratch::new();
    let n = 6;
    let mut a = rng.tensor(&[n, n]);
    for i in 0..n {
        a.as_mut_slice()[i * n + i] += 4.0; // well conditioned
    }
    for b_shape in [&[n][..], &[n, 3]] {
        let b = rng.tensor(b_shape);
        let x = solve(a.read(), b.read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
        assert_eq!(x.shape(), b_shape);
        let cols = x.numel() / n;
        assert!(max_diff(&mul(a.as_slice(), x.as_slice(), n, n, cols), b.as_slice()) < 1e-12);
    }
    // A transposed (strided) matrix is read as the matrix it shows.
    let b = rng.tensor(&[n]);
    let x = solve(a.read().transpose(), b.read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    let at = transpose(a.as_slice(), n, n);
    assert!(max_diff(&mul(&at, x.as_slice(), n, n, 1), b.as_slice()) < 1e-12);

    let singular =
        Tensor::<f64>::from_vec([3, 3], vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 1.0]).unwrap();
    let b3 = rng.tensor(&[3]);
    assert_eq!(
        solve(singular.read(), b3.read(), &mut scratch, &mut HeapAlloc, Par::Seq).map(|_| ()),
        Err(KernelError::Singular { routine: "solve" })
    );
    assert!(matches!(
        solve(a.read(), b3.read(), &mut scratch, &mut HeapAlloc, Par::Seq),
        Err(KernelError::SolveShape { .. })
    ));
    assert!(matches!(
        solve(rng.tensor(&[2, 3]).read(), b3.read(), &mut scratch, &mut HeapAlloc, Par::Seq),
        Err(KernelError::NotSquare { routine: "solve", .. })
    ));
}

#[test]
fn norm_is_frobenius_on_any_layout() {
    let t = Rng(17).tensor(&[3, 4, 2]);
    let expected = t.as_slice().iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((norm(&t.read()) - expected).abs() < 1e-14);
    let permuted = t.read().permute(&[2, 0, 1]).unwrap();
    assert!((norm(&permuted) - expected).abs() < 1e-14);
    assert_eq!(norm(&Tensor::<f64>::zeros([0]).read()), 0.0);
}

#[test]
fn warm_factorizations_reuse_the_workspace() {
    let t = Rng(19).tensor(&[32, 32]);
    let mut scratch = LinalgScratch::new();
    let all = |scratch: &mut LinalgScratch| {
        svd(t.read(), &[0], Truncation::none(), scratch, &mut HeapAlloc, Par::Seq).unwrap();
        qr(t.read(), &[0], scratch, &mut HeapAlloc, Par::Seq).unwrap();
        eigh(t.read(), scratch, &mut HeapAlloc, Par::Seq).unwrap();
        solve(t.read(), t.read(), scratch, &mut HeapAlloc, Par::Seq).unwrap();
    };
    all(&mut scratch);
    let grown = scratch.grows();
    assert!(grown > 0 && scratch.capacity_bytes() > 0);
    all(&mut scratch);
    assert_eq!(scratch.grows(), grown, "a second round of the same sizes grows nothing");
    scratch.release();
    assert_eq!(scratch.capacity_bytes(), 0);
}

/// A random complex matrix (`rows × cols`, row-major).
fn complex_matrix<T: holdfast_tensor::Element>(rows: usize, cols: usize, seed: u64) -> Tensor<T> {
    let mut rng = Rng(seed);
    let data = (0..rows * cols).map(|_| T::from_parts(rng.next(), rng.next())).collect();
    Tensor::from_vec([rows, cols], data).unwrap()
}

/// `a (m×k) · b (k×n)` for any element type, row-major.
fn mul_any<T: holdfast_tensor::Element>(a: &[T], b: &[T], m: usize, k: usize, n: usize) -> Vec<T> {
    let mut c = vec![T::ZERO; m * n];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                c[i * n + j] += a[i * k + p] * b[p * n + j];
            }
        }
    }
    c
}

/// `max |xᴴx - I|` for the columns of the row-major `rows × cols` matrix `x`.
fn unitarity_error<T: holdfast_tensor::Element>(x: &[T], rows: usize, cols: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for a in 0..cols {
        for b in 0..cols {
            let dot: T = (0..rows).map(|i| x[i * cols + a].conj() * x[i * cols + b]).sum();
            let id = if a == b { T::ONE } else { T::ZERO };
            worst = worst.max((dot - id).modulus());
        }
    }
    worst
}

fn max_diff_any<T: holdfast_tensor::Element>(a: &[T], b: &[T]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| (x - y).modulus()).fold(0.0, f64::max)
}

fn complex_factorizations<T: super::LinalgElement>(tol: f64) {
    let mut scratch = LinalgScratch::new();
    for (m, n) in [(5, 3), (3, 5), (6, 6)] {
        let a = complex_matrix::<T>(m, n, 21 + m as u64);
        let k = m.min(n);
        // SVD: a = u · diag(s) · vh, u and vhᴴ with orthonormal columns.
        let f = svd(a.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq)
            .unwrap();
        let s = f.s.as_slice();
        assert!(s.windows(2).all(|w| w[0] >= w[1]));
        let us: Vec<T> =
            f.u.as_slice().iter().enumerate().map(|(p, &x)| x.scale_real(s[p % k])).collect();
        assert!(
            max_diff_any(&mul_any(&us, f.vh.as_slice(), m, k, n), a.as_slice()) < tol,
            "svd {m}x{n}"
        );
        assert!(unitarity_error(f.u.as_slice(), m, k) < tol);
        let v: Vec<T> = (0..n * k).map(|p| f.vh.as_slice()[(p % k) * n + p / k].conj()).collect();
        assert!(unitarity_error(&v, n, k) < tol, "vh has orthonormal rows");
        // QR: a = q · r.
        let (q, r) = qr(a.read(), &[0], &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
        assert!(
            max_diff_any(&mul_any(q.as_slice(), r.as_slice(), m, k, n), a.as_slice()) < tol,
            "qr"
        );
        assert!(unitarity_error(q.as_slice(), m, k) < tol);
    }
    // eigh of a Hermitian matrix h = a + aᴴ: h · v = v · diag(w), real ascending w.
    let n = 6;
    let a = complex_matrix::<T>(n, n, 31);
    let data: Vec<T> =
        (0..n * n).map(|p| a.as_slice()[p] + a.as_slice()[(p % n) * n + p / n].conj()).collect();
    let h = Tensor::from_vec([n, n], data).unwrap();
    let (w, v) = eigh(h.read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    let ws = w.as_slice();
    assert!(ws.windows(2).all(|p| p[0] <= p[1]));
    let hv = mul_any(h.as_slice(), v.as_slice(), n, n, n);
    let vw: Vec<T> =
        v.as_slice().iter().enumerate().map(|(p, &x)| x.scale_real(ws[p % n])).collect();
    assert!(max_diff_any(&hv, &vw) < tol * 10.0, "eigh");
    assert!(unitarity_error(v.as_slice(), n, n) < tol);
    // Only the lower triangle and the diagonal's real part are read, as by numpy's eigh: noise
    // above the diagonal and imaginary parts on it change nothing.
    let noisy: Vec<T> = (0..n * n)
        .map(|p| match (p / n).cmp(&(p % n)) {
            std::cmp::Ordering::Less => T::from_parts(7.0, -3.0),
            std::cmp::Ordering::Equal => h.as_slice()[p] + T::from_parts(0.0, 0.5),
            std::cmp::Ordering::Greater => h.as_slice()[p],
        })
        .collect();
    let noisy = Tensor::from_vec([n, n], noisy).unwrap();
    let (w2, v2) = eigh(noisy.read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    let ws2 = w2.as_slice();
    let hv2 = mul_any(h.as_slice(), v2.as_slice(), n, n, n);
    let vw2: Vec<T> =
        v2.as_slice().iter().enumerate().map(|(p, &x)| x.scale_real(ws2[p % n])).collect();
    assert!(max_diff_any(&hv2, &vw2) < tol * 10.0, "eigh of the noisy matrix is h's");
    // solve: a · x = b.
    let b = complex_matrix::<T>(n, 2, 41);
    let x = solve(a.read(), b.read(), &mut scratch, &mut HeapAlloc, Par::Seq).unwrap();
    assert!(
        max_diff_any(&mul_any(a.as_slice(), x.as_slice(), n, n, 2), b.as_slice()) < tol * 100.0,
        "solve"
    );
    // norm: sqrt(Σ |z|²).
    let want = a.as_slice().iter().map(|z| z.abs2()).sum::<f64>().sqrt();
    assert!((holdfast_tensor::Element::re_f64(norm(&a.read())) - want).abs() < tol * want);
}

#[test]
fn complex_factorizations_reconstruct() {
    complex_factorizations::<holdfast_tensor::c64>(1e-12);
    complex_factorizations::<holdfast_tensor::c32>(1e-4);
}
