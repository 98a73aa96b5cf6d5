//! The lowest eigenpair of the Lanczos recurrence's symmetric tridiagonal matrix, solved
//! directly on its diagonal and off-diagonal.
//!
//! The matrix is a few rows (one per Krylov vector) and is solved after every product, so the
//! dense route (build the matrix, reduce it to the tridiagonal form it already has, accumulate
//! every eigenvector) cost more than the arithmetic of the answer. Here:
//!
//! - the eigenvalue by bisection on the Sturm count (the number of negative pivots of
//!   `T - x·I = L·D·Lᵀ` is the number of eigenvalues below `x`), from Gershgorin's bounds down
//!   to an interval of a few units in the last place: accurate to about `ε·‖T‖`, as a QR
//!   iteration's;
//! - the eigenvector by inverse iteration: two solves of `(T - λ·I)·x = x` by Gaussian
//!   elimination with partial pivoting, each normalised. The matrix is singular to working
//!   precision at λ, which is what makes one solve enough; a zero pivot is replaced by
//!   `ε·‖T‖`, and the second solve removes what the first start vector left along the other
//!   eigenvectors.
//!
//! The vector's sign is chosen so that its largest component is positive. Bisection and
//! inverse iteration are the textbook pair for a few eigenpairs of a tridiagonal matrix (LAPACK's
//! `dstebz` and `dstein` do the same, with more care for clusters, which a lowest eigenvalue
//! alone does not need).

#[cfg(test)]
mod tests;

/// The fractional part of the golden ratio, for a start vector with no pattern.
const GOLDEN: f64 = 0.618_033_988_749_894_8;

/// Scratch kept between solves so that a warm solve allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The eliminated matrix: diagonal, first and second superdiagonal, multipliers.
    d: Vec<f64>,
    u1: Vec<f64>,
    u2: Vec<f64>,
    l: Vec<f64>,
    swapped: Vec<bool>,
}

impl Scratch {
    /// Rows for matrices of up to `rows` rows: solving them never grows the lists.
    pub(crate) fn with_capacity(rows: usize) -> Self {
        Scratch {
            d: Vec::with_capacity(rows),
            u1: Vec::with_capacity(rows),
            u2: Vec::with_capacity(rows),
            l: Vec::with_capacity(rows),
            swapped: Vec::with_capacity(rows),
        }
    }
}

/// The lowest eigenvalue of the symmetric tridiagonal matrix with diagonal `a` and off-diagonal
/// `b` (`b.len() + 1 == a.len()`, `a` not empty), its unit eigenvector written to `vector`.
pub(crate) fn lowest(a: &[f64], b: &[f64], vector: &mut Vec<f64>, scratch: &mut Scratch) -> f64 {
    let m = a.len();
    debug_assert!(m >= 1 && b.len() + 1 == m, "a tridiagonal matrix of {m} rows, {}", b.len());
    vector.clear();
    if m == 1 {
        vector.push(1.0);
        return a[0];
    }
    let norm = a.iter().chain(b).fold(0.0f64, |n, x| n.max(x.abs()));
    if norm == 0.0 || !norm.is_finite() {
        // The zero matrix (every vector is an eigenvector), or one with no eigenpair to find.
        vector.resize(m, 0.0);
        vector[0] = 1.0;
        return if norm == 0.0 { 0.0 } else { f64::NAN };
    }
    let lambda = bisect(a, b);
    eliminate(a, b, lambda, f64::EPSILON * norm, scratch);
    // An irregular start, so that no symmetry of the matrix makes it orthogonal to the answer.
    vector.extend((0..m).map(|i| 1.0 + (i as f64 * GOLDEN).fract()));
    for _ in 0..2 {
        solve(scratch, vector);
        let n = vector.iter().map(|x| x * x).sum::<f64>().sqrt();
        vector.iter_mut().for_each(|x| *x /= n);
    }
    let largest =
        vector.iter().copied().fold(0.0f64, |best, x| if x.abs() > best.abs() { x } else { best });
    if largest < 0.0 {
        vector.iter_mut().for_each(|x| *x = -*x);
    }
    lambda
}

/// The number of eigenvalues of `T` below `x`: the negative pivots of `T - x·I`.
fn below(a: &[f64], b: &[f64], x: f64, pivmin: f64) -> usize {
    let mut count = 0;
    let mut d = a[0] - x;
    for i in 0..a.len() {
        if i > 0 {
            d = a[i] - x - b[i - 1] * b[i - 1] / d;
        }
        if d.abs() < pivmin {
            d = -pivmin;
        }
        if d < 0.0 {
            count += 1;
        }
    }
    count
}

/// The lowest eigenvalue by bisection, to an interval of a few units in the last place of the
/// matrix's scale.
fn bisect(a: &[f64], b: &[f64]) -> f64 {
    let m = a.len();
    let off = |i: usize| if i < m - 1 { b[i].abs() } else { 0.0 };
    let before = |i: usize| if i > 0 { b[i - 1].abs() } else { 0.0 };
    let mut lo = (0..m).map(|i| a[i] - before(i) - off(i)).fold(f64::INFINITY, f64::min);
    // Each diagonal entry is a Rayleigh quotient, so the lowest eigenvalue is at most the least.
    let mut hi = a.iter().copied().fold(f64::INFINITY, f64::min);
    let scale = lo.abs().max(hi.abs()).max(f64::MIN_POSITIVE);
    let max_b = b.iter().fold(0.0f64, |n, x| n.max(x * x));
    let pivmin = f64::MIN_POSITIVE.max(f64::EPSILON * f64::EPSILON * max_b);
    lo -= 2.0 * f64::EPSILON * scale;
    let tolerance = 4.0 * f64::EPSILON * scale;
    while hi - lo > tolerance {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if below(a, b, mid, pivmin) >= 1 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `T - λ·I` by Gaussian elimination with partial pivoting, into `scratch`: an upper triangle of
/// three diagonals and one multiplier per row, with whether rows `i` and `i + 1` were swapped.
fn eliminate(a: &[f64], b: &[f64], lambda: f64, tiny: f64, s: &mut Scratch) {
    let m = a.len();
    s.d.clear();
    s.d.extend(a.iter().map(|x| x - lambda));
    s.u1.clear();
    s.u1.extend_from_slice(b);
    s.u2.clear();
    s.u2.resize(m.saturating_sub(2), 0.0);
    s.l.clear();
    s.l.resize(m - 1, 0.0);
    s.swapped.clear();
    s.swapped.resize(m - 1, false);
    for (i, &sub) in b.iter().enumerate() {
        // Row i+1 holds `sub` below the diagonal; the rows swap when it is the larger pivot.
        if s.d[i].abs() >= sub.abs() {
            let pivot = if s.d[i] == 0.0 { tiny } else { s.d[i] };
            s.d[i] = pivot;
            let f = sub / pivot;
            s.l[i] = f;
            s.d[i + 1] -= f * s.u1[i];
        } else {
            let f = s.d[i] / sub;
            s.l[i] = f;
            s.swapped[i] = true;
            // Row i becomes (b[i], d[i+1], u1[i+1]); row i+1 the old row i minus f times it.
            let (old_u1, next_d) = (s.u1[i], s.d[i + 1]);
            s.d[i] = sub;
            s.u1[i] = next_d;
            s.d[i + 1] = old_u1 - f * next_d;
            if i + 2 < m {
                s.u2[i] = s.u1[i + 1];
                s.u1[i + 1] = -f * s.u2[i];
            }
        }
    }
    if s.d[m - 1] == 0.0 {
        s.d[m - 1] = tiny;
    }
}

/// `x ← (T - λ·I)⁻¹·x` from the elimination in `s`.
fn solve(s: &Scratch, x: &mut [f64]) {
    let m = x.len();
    for i in 0..m - 1 {
        if s.swapped[i] {
            x.swap(i, i + 1);
        }
        x[i + 1] -= s.l[i] * x[i];
    }
    for i in (0..m).rev() {
        let mut v = x[i];
        if i + 1 < m {
            v -= s.u1[i] * x[i + 1];
        }
        if i + 2 < m {
            v -= s.u2[i] * x[i + 2];
        }
        x[i] = v / s.d[i];
    }
}
