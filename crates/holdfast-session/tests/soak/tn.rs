//! The soak's tensor-network operations: complex contractions (with and without `conj`), SVD
//! (truncated or not), QR and eigh of real and complex matrices and three-leg tensors, and
//! operations that must be refused: factorizations that cannot converge (NaN input, faer's
//! non-convergence), malformed specs and mismatched shapes.
//!
//! Each case checks its own result: contractions against a reference built from real einsums
//! (`(ar + i·ai)(br + i·bi)` expanded), factorizations by their defining identities
//! (reconstruction, orthonormality, ordering, discarded weight), refusals by their typed error.
//! A refusal leaves nothing in flight: the soak's pool checks after the session's release
//! catch a buffer an error path forgot.

use holdfast_kernels::KernelError;
use holdfast_session::{CpuExecSession, OpError, Tensor, Truncation, c64};

use super::reference;
use super::rng::Rng;

/// Bilinear specs of the complex contractions (explicit, so the reference can run them).
const SPECS: &[&str] =
    &["ij,jk->ik", "ijk,kl->ijl", "bij,bjk->bik", "ij,ij->", "i,j->ij", "ij,kj->ik", "ijk,jk->i"];

/// Relative tolerance of the factorization identities, against the input's Frobenius norm.
const FACTOR_RTOL: f64 = 1e-10;

/// One tensor-network case.
#[derive(Debug)]
pub enum TnCase {
    /// `einsum(spec, conj?(a), b)` in complex arithmetic.
    Contract { spec: &'static str, a: Tensor<c64>, b: Tensor<c64>, conj_a: bool },
    /// The SVD of `a` (real or complex) over `left` axes, optionally truncated to `max_rank`.
    Svd { a: Matrix, left: usize, max_rank: Option<usize> },
    /// The QR of a real or complex matrix.
    Qr(Matrix),
    /// The eigen-decomposition of a Hermitian matrix.
    Eigh(Matrix),
    /// A matrix holding a NaN: its SVD does not converge (a typed error, as numpy raises); its
    /// eigh gives NaN eigenvalues, as numpy's does.
    NoConvergence { eigh: bool, a: Tensor<f64> },
    /// An operation the view must refuse with a typed error.
    Refused(Refusal),
}

/// A real or complex input.
#[derive(Debug)]
pub enum Matrix {
    Real(Tensor<f64>),
    Complex(Tensor<c64>),
}

/// Bad inputs, each a typed error.
#[derive(Debug)]
pub enum Refusal {
    /// A spec naming an output label no input has.
    UnknownOutputLabel(Tensor<f64>, Tensor<f64>),
    /// A matrix product whose inner dimensions disagree.
    InnerMismatch(Tensor<c64>, Tensor<c64>),
    /// A bipartition naming an axis the tensor does not have.
    AxisOutOfRange(Tensor<f64>),
}

fn real(rng: &mut Rng, shape: &[usize]) -> Tensor<f64> {
    let n = shape.iter().product();
    Tensor::from_vec(shape.to_vec(), rng.values(n)).expect("valid shape")
}

fn complex(rng: &mut Rng, shape: &[usize]) -> Tensor<c64> {
    let n = shape.iter().product();
    let values = (0..n).map(|_| c64::new(rng.unit(), rng.unit())).collect();
    Tensor::from_vec(shape.to_vec(), values).expect("valid shape")
}

/// Shapes for the labels of `spec`'s inputs, each label with one random size in `1..=4`.
fn shapes_for(rng: &mut Rng, spec: &str) -> Vec<Vec<usize>> {
    let (inputs, _) = spec.split_once("->").expect("explicit spec");
    let mut sizes: Vec<(char, usize)> = Vec::new();
    inputs
        .split(',')
        .map(|term| {
            term.chars()
                .map(|c| match sizes.iter().find(|(l, _)| *l == c) {
                    Some(&(_, d)) => d,
                    None => {
                        let d = rng.range(1, 4);
                        sizes.push((c, d));
                        d
                    }
                })
                .collect()
        })
        .collect()
}

impl TnCase {
    /// A random case.
    pub fn random(rng: &mut Rng) -> TnCase {
        let matrix = |rng: &mut Rng, shape: &[usize]| {
            if rng.chance(500) {
                Matrix::Complex(complex(rng, shape))
            } else {
                Matrix::Real(real(rng, shape))
            }
        };
        match rng.below(10) {
            0..=2 => {
                let spec = *rng.pick(SPECS);
                let shapes = shapes_for(rng, spec);
                let (a, b) = (complex(rng, &shapes[0]), complex(rng, &shapes[1]));
                TnCase::Contract { spec, a, b, conj_a: rng.chance(500) }
            }
            3 | 4 => {
                let three_legs = rng.chance(300);
                let shape: Vec<usize> = if three_legs {
                    vec![rng.range(1, 4), rng.range(1, 3), rng.range(1, 4)]
                } else {
                    vec![rng.range(1, 8), rng.range(1, 8)]
                };
                let left = if three_legs { rng.range(1, 2) } else { 1 };
                let max_rank = rng.chance(400).then(|| rng.range(1, 3));
                TnCase::Svd { a: matrix(rng, &shape), left, max_rank }
            }
            5 => {
                let (m, n) = (rng.range(1, 8), rng.range(1, 8));
                TnCase::Qr(matrix(rng, &[m, n]))
            }
            6 => {
                let n = rng.range(1, 8);
                TnCase::Eigh(matrix(rng, &[n, n]))
            }
            7 => {
                let n = rng.range(2, 6);
                let mut values = rng.values(n * n);
                let eigh = rng.chance(500);
                let (i, j) = (rng.below(n), rng.below(n));
                // eigh reads the lower triangle only (numpy's default): the NaN goes there.
                let (i, j) = if eigh { (i.max(j), i.min(j)) } else { (i, j) };
                values[i * n + j] = f64::NAN;
                let a = Tensor::from_vec([n, n], values).expect("valid shape");
                TnCase::NoConvergence { eigh, a }
            }
            _ => TnCase::Refused(match rng.below(3) {
                0 => Refusal::UnknownOutputLabel(real(rng, &[2, 3]), real(rng, &[3, 2])),
                1 => {
                    let k = rng.range(1, 4);
                    Refusal::InnerMismatch(complex(rng, &[2, k]), complex(rng, &[k + 1, 2]))
                }
                _ => Refusal::AxisOutOfRange(real(rng, &[2, 3])),
            }),
        }
    }

    /// A short name for failure messages.
    pub fn name(&self) -> String {
        match self {
            TnCase::Contract { spec, a, b, conj_a } => {
                format!("complex einsum {spec} {:?},{:?} conj_a={conj_a}", a.shape(), b.shape())
            }
            TnCase::Svd { a, left, max_rank } => {
                format!("svd {} left={left} max_rank={max_rank:?}", a.describe())
            }
            TnCase::Qr(a) => format!("qr {}", a.describe()),
            TnCase::Eigh(a) => format!("eigh {}", a.describe()),
            TnCase::NoConvergence { eigh, a } => {
                format!(
                    "{} of a {:?} matrix with a NaN",
                    if *eigh { "eigh" } else { "svd" },
                    a.shape()
                )
            }
            TnCase::Refused(r) => format!("refusal {r:?}"),
        }
    }

    /// Runs the case in `v` and checks what it returned.
    pub fn run_checked(&self, v: &mut CpuExecSession<'_>) -> Result<(), String> {
        let what = self.name();
        let fail = |e: OpError| format!("{what}: {e}");
        match self {
            TnCase::Contract { spec, a, b, conj_a } => {
                let out = if *conj_a {
                    let ca = v.conj(a.read()).map_err(fail)?;
                    let out = v.einsum(spec, &[ca.read(), b.read()]).map_err(fail)?;
                    v.recycle(ca);
                    out
                } else {
                    v.einsum(spec, &[a.read(), b.read()]).map_err(fail)?
                };
                check_contraction(&what, spec, a, b, *conj_a, &out)?;
                v.recycle(out);
                Ok(())
            }
            TnCase::Svd { a, left, max_rank } => {
                let axes: Vec<usize> = (0..*left).collect();
                let trunc = max_rank.map_or(Truncation::none(), |r| Truncation::none().max_rank(r));
                match a {
                    Matrix::Real(t) => {
                        let f = v.svd(t.read(), &axes, trunc).map_err(fail)?;
                        check_svd(
                            &what,
                            &widen(t),
                            &widen(&f.u),
                            &f.s.read().to_vec(),
                            &widen(&f.vh),
                            f.discarded_weight,
                        )
                    }
                    Matrix::Complex(t) => {
                        let f = v.svd(t.read(), &axes, trunc).map_err(fail)?;
                        check_svd(
                            &what,
                            &t.read().to_vec(),
                            &f.u.read().to_vec(),
                            &f.s.read().to_vec(),
                            &f.vh.read().to_vec(),
                            f.discarded_weight,
                        )
                    }
                }
            }
            TnCase::Qr(a) => match a {
                Matrix::Real(t) => {
                    let (q, r) = v.qr(t.read(), &[0]).map_err(fail)?;
                    check_qr(&what, t.shape(), &widen(t), &widen(&q), &widen(&r))
                }
                Matrix::Complex(t) => {
                    let (q, r) = v.qr(t.read(), &[0]).map_err(fail)?;
                    check_qr(
                        &what,
                        t.shape(),
                        &t.read().to_vec(),
                        &q.read().to_vec(),
                        &r.read().to_vec(),
                    )
                }
            },
            TnCase::Eigh(a) => match a {
                Matrix::Real(t) => {
                    let h = hermitian(&widen(t), t.shape()[0]);
                    let ht = Tensor::from_vec(t.shape().to_vec(), h.iter().map(|z| z.re).collect())
                        .expect("shape");
                    let (w, vecs) = v.eigh(ht.read()).map_err(fail)?;
                    check_eigh(&what, &h, &w.read().to_vec(), &widen(&vecs))
                }
                Matrix::Complex(t) => {
                    let h = hermitian(&t.read().to_vec(), t.shape()[0]);
                    let ht = Tensor::from_vec(t.shape().to_vec(), h.clone()).expect("shape");
                    let (w, vecs) = v.eigh(ht.read()).map_err(fail)?;
                    check_eigh(&what, &h, &w.read().to_vec(), &vecs.read().to_vec())
                }
            },
            TnCase::NoConvergence { eigh: true, a } => match v.eigh(a.read()) {
                // As numpy's eigh: the NaN propagates into the eigenvalues, or faer gives up.
                Ok((w, vecs)) if w.read().to_vec().iter().any(|x| x.is_nan()) => {
                    v.recycle(w);
                    v.recycle(vecs);
                    Ok(())
                }
                Err(OpError::Kernel(KernelError::NoConvergence { routine: "eigh" })) => Ok(()),
                other => {
                    Err(format!("{what}: expected NaN eigenvalues or NoConvergence, got {other:?}"))
                }
            },
            TnCase::NoConvergence { eigh: false, a } => {
                match v.svd(a.read(), &[0], Truncation::none()) {
                    // As numpy's svd ("SVD did not converge").
                    Err(OpError::Kernel(KernelError::NoConvergence { routine: "svd" })) => Ok(()),
                    other => Err(format!("{what}: expected NoConvergence, got {other:?}")),
                }
            }
            TnCase::Refused(r) => {
                let refused = match r {
                    Refusal::UnknownOutputLabel(a, b) => {
                        matches!(
                            v.einsum("ij,jk->iz", &[a.read(), b.read()]),
                            Err(OpError::Kernel(_))
                        )
                    }
                    Refusal::InnerMismatch(a, b) => {
                        matches!(v.matmul(a.read(), b.read()), Err(OpError::Kernel(_)))
                    }
                    Refusal::AxisOutOfRange(a) => matches!(
                        v.svd(a.read(), &[4], Truncation::none()),
                        Err(OpError::Kernel(KernelError::AxisOutOfRange { axis: 4, rank: 2 }))
                    ),
                };
                if refused {
                    Ok(())
                } else {
                    Err(format!("{what}: not refused with its typed error"))
                }
            }
        }
    }
}

impl Matrix {
    fn describe(&self) -> String {
        match self {
            Matrix::Real(t) => format!("f64 {:?}", t.shape()),
            Matrix::Complex(t) => format!("c64 {:?}", t.shape()),
        }
    }
}

/// A real tensor's values as complex numbers.
fn widen(t: &Tensor<f64>) -> Vec<c64> {
    t.read().to_vec().into_iter().map(|x| c64::new(x, 0.0)).collect()
}

fn frobenius(values: &[c64]) -> f64 {
    values.iter().map(c64::norm_sqr).sum::<f64>().sqrt()
}

/// `(a + aᴴ) / 2` of the `n × n` row-major `a`.
fn hermitian(a: &[c64], n: usize) -> Vec<c64> {
    let mut h = vec![c64::new(0.0, 0.0); n * n];
    for i in 0..n {
        for j in 0..n {
            h[i * n + j] = (a[i * n + j] + a[j * n + i].conj()) * 0.5;
        }
    }
    h
}

/// The complex result of `spec` on `conj?(a)`, `b` from four real einsums, compared with `out`.
fn check_contraction(
    what: &str,
    spec: &str,
    a: &Tensor<c64>,
    b: &Tensor<c64>,
    conj_a: bool,
    out: &Tensor<c64>,
) -> Result<(), String> {
    let split = |t: &Tensor<c64>, sign: f64| -> (Vec<f64>, Vec<f64>) {
        let v = t.read().to_vec();
        (v.iter().map(|z| z.re).collect(), v.iter().map(|z| sign * z.im).collect())
    };
    let (ar, ai) = split(a, if conj_a { -1.0 } else { 1.0 });
    let (br, bi) = split(b, 1.0);
    let (sa, sb) = (a.shape(), b.shape());
    let e = |x: &[f64], y: &[f64]| reference::einsum(spec, &[(sa, x), (sb, y)]);
    let (rr, ii, ri, ir) = (e(&ar, &br), e(&ai, &bi), e(&ar, &bi), e(&ai, &br));
    let re: Vec<f64> = rr.values.iter().zip(&ii.values).map(|(x, y)| x - y).collect();
    let im: Vec<f64> = ri.values.iter().zip(&ir.values).map(|(x, y)| x + y).collect();
    let magnitude: Vec<f64> = (0..re.len())
        .map(|i| rr.magnitude[i] + ii.magnitude[i] + ri.magnitude[i] + ir.magnitude[i])
        .collect();
    let got = out.read().to_vec();
    let got_re: Vec<f64> = got.iter().map(|z| z.re).collect();
    let got_im: Vec<f64> = got.iter().map(|z| z.im).collect();
    let expected = |values| reference::Expected {
        shape: rr.shape.clone(),
        values,
        magnitude: magnitude.clone(),
    };
    expected(re).check(&format!("{what} (real part)"), out.shape(), &got_re)?;
    expected(im).check(&format!("{what} (imaginary part)"), out.shape(), &got_im)
}

/// `‖x - y‖ ≤ FACTOR_RTOL · (1 + scale)` (Frobenius norm), else an error naming `label`.
fn close(what: &str, label: &str, x: &[c64], y: &[c64], scale: f64) -> Result<(), String> {
    if x.len() != y.len() {
        return Err(format!("{what}: {label}: {} values against {}", x.len(), y.len()));
    }
    let diff: Vec<c64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
    let err = frobenius(&diff);
    if err.is_nan() || err > FACTOR_RTOL * (1.0 + scale) {
        return Err(format!("{what}: {label} off by {err:e} (scale {scale:e})"));
    }
    Ok(())
}

/// `x` (`m × k`) times `y` (`k × n`), row-major.
fn product(x: &[c64], y: &[c64], m: usize, k: usize, n: usize) -> Vec<c64> {
    let mut out = vec![c64::new(0.0, 0.0); m * n];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                out[i * n + j] += x[i * k + p] * y[p * n + j];
            }
        }
    }
    out
}

/// `xᴴ x` of the `m × k` row-major `x`, against the identity.
fn check_orthonormal_columns(
    what: &str,
    label: &str,
    x: &[c64],
    m: usize,
    k: usize,
) -> Result<(), String> {
    let xh: Vec<c64> = (0..k * m).map(|i| x[(i % m) * k + i / m].conj()).collect();
    let gram = product(&xh, x, k, m, k);
    let eye: Vec<c64> =
        (0..k * k).map(|i| c64::new(f64::from(u8::from(i / k == i % k)), 0.0)).collect();
    close(what, label, &gram, &eye, 1.0)
}

fn check_svd(
    what: &str,
    a: &[c64],
    u: &[c64],
    s: &[f64],
    vh: &[c64],
    discarded_weight: f64,
) -> Result<(), String> {
    let k = s.len();
    let m = u.len().checked_div(k).unwrap_or(0);
    let n = vh.len().checked_div(k).unwrap_or(0);
    if s.windows(2).any(|w| w[0] < w[1]) || s.iter().any(|&x| x.is_nan() || x < 0.0) {
        return Err(format!("{what}: singular values not descending and non-negative: {s:?}"));
    }
    check_orthonormal_columns(what, "uᴴu", u, m, k)?;
    let us: Vec<c64> = u.iter().enumerate().map(|(i, z)| z * s[i % k]).collect();
    let recon = product(&us, vh, m, k, n);
    let norm = frobenius(a);
    let residual: Vec<c64> = a.iter().zip(&recon).map(|(x, y)| x - y).collect();
    let dropped = frobenius(&residual).powi(2) / norm.powi(2).max(f64::MIN_POSITIVE);
    if (dropped - discarded_weight).abs() > FACTOR_RTOL {
        return Err(format!(
            "{what}: reconstruction drops {dropped:e} of the weight, the SVD says {discarded_weight:e}"
        ));
    }
    Ok(())
}

fn check_qr(what: &str, shape: &[usize], a: &[c64], q: &[c64], r: &[c64]) -> Result<(), String> {
    let (m, n) = (shape[0], shape[1]);
    let k = m.min(n);
    check_orthonormal_columns(what, "qᴴq", q, m, k)?;
    if (0..k)
        .any(|i| (0..i.min(n)).any(|j| r[i * n + j].norm() > FACTOR_RTOL * (1.0 + frobenius(a))))
    {
        return Err(format!("{what}: r is not upper triangular"));
    }
    close(what, "q·r", &product(q, r, m, k, n), a, frobenius(a))
}

fn check_eigh(what: &str, h: &[c64], w: &[f64], vecs: &[c64]) -> Result<(), String> {
    let n = w.len();
    if w.windows(2).any(|p| p[0] > p[1]) {
        return Err(format!("{what}: eigenvalues not ascending: {w:?}"));
    }
    check_orthonormal_columns(what, "vᴴv", vecs, n, n)?;
    let hv = product(h, vecs, n, n, n);
    let vw: Vec<c64> = vecs.iter().enumerate().map(|(i, z)| z * w[i % n]).collect();
    close(what, "h·v = v·w", &hv, &vw, frobenius(h))
}
