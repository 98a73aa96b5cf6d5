//! Exact reference values for open spin-1/2 chains, owned by the DMRG/TEBD correctness tests.
//!
//! This module owns everything the tests compare against and depends on nothing but `std`:
//!
//! * the free-fermion (Jordan–Wigner) ground-state energy of the open transverse-field Ising
//!   chain, valid for any length;
//! * exact diagonalisation (Lanczos with full reorthogonalisation on a matrix-free `H|ψ>`) of the
//!   three models in [`Model`] for up to [`MAX_ED_SITES`] sites;
//! * exact real-time evolution `exp(-iHt)|ψ0>` of a complex state vector, and the expectation
//!   values TEBD tests read off it.
//!
//! Conventions (Pauli matrices `X`, `Y`, `Z`; spin operators `S = σ/2`; open chains of `L` sites):
//!
//! * `Tfim { j, h }`:        `H = -J Σ_{i<L-1} Z_i Z_{i+1} - h Σ_i X_i`
//! * `Heisenberg { j }`:     `H =  J Σ_{i<L-1} S_i · S_{i+1}`
//! * `Xxz { j, delta }`:     `H =  J Σ_{i<L-1} (S^x_i S^x_{i+1} + S^y_i S^y_{i+1} + Δ S^z_i S^z_{i+1})`
//!
//! State vectors live in the `2^L` computational basis: bit `i` of a basis index is site `i`; a
//! clear bit is spin up (`Z = +1`), a set bit is spin down (`Z = -1`). Complex amplitudes are
//! `(re, im)` tuples so that the file needs no dependency.

#![allow(dead_code, reason = "each test binary that includes this file uses only part of it")]

/// A spin-1/2 chain Hamiltonian with open boundaries (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Model {
    /// `H = -J Σ Z_i Z_{i+1} - h Σ X_i`.
    Tfim {
        /// Ising coupling `J`.
        j: f64,
        /// Transverse field `h`.
        h: f64,
    },
    /// `H = J Σ S_i · S_{i+1}`.
    Heisenberg {
        /// Exchange coupling `J`.
        j: f64,
    },
    /// `H = J Σ (S^x S^x + S^y S^y + Δ S^z S^z)`.
    Xxz {
        /// Exchange coupling `J`.
        j: f64,
        /// Anisotropy `Δ` of the `S^z S^z` term.
        delta: f64,
    },
}

/// Largest chain that [`ground_energy_ed`] diagonalises (its Krylov basis holds about a hundred
/// vectors of `2^L` entries).
pub(crate) const MAX_ED_SITES: usize = 16;

/// Largest chain whose full state vector [`apply_hamiltonian`] and [`evolve_exact`] accept.
pub(crate) const MAX_STATE_SITES: usize = 24;

/// The model's couplings in Pauli/flip form: per bond `zz · Z_i Z_{i+1}` plus `flip` times the
/// exchange of an anti-aligned pair; per site `field · X_i`.
#[derive(Clone, Copy, Debug)]
struct Couplings {
    zz: f64,
    flip: f64,
    field: f64,
}

impl Model {
    /// Rewrites the model in [`Couplings`] form. `S^x S^x + S^y S^y = (S^+ S^- + S^- S^+)/2`
    /// exchanges an anti-aligned pair with amplitude 1/2 and annihilates an aligned one;
    /// `S^z S^z = Z Z / 4`.
    fn couplings(self) -> Couplings {
        match self {
            Model::Tfim { j, h } => Couplings { zz: -j, flip: 0.0, field: -h },
            Model::Heisenberg { j } => Couplings { zz: 0.25 * j, flip: 0.5 * j, field: 0.0 },
            Model::Xxz { j, delta } => {
                Couplings { zz: 0.25 * j * delta, flip: 0.5 * j, field: 0.0 }
            }
        }
    }

    /// An upper bound on the operator norm of `H` on `l` sites (each bond term has norm at most
    /// `|zz| + |flip|`, each field term `|field|`).
    fn norm_bound(self, l: usize) -> f64 {
        let c = self.couplings();
        let mut bound = 0.0;
        for _ in 1..l {
            bound += c.zz.abs() + c.flip.abs();
        }
        for _ in 0..l {
            bound += c.field.abs();
        }
        bound
    }
}

// ---------------------------------------------------------------------------------------------
// Free fermions
// ---------------------------------------------------------------------------------------------

/// Exact ground-state energy of the open transverse-field Ising chain
/// `H = -J Σ_{i<L-1} Z_i Z_{i+1} - h Σ_i X_i`, for any length `l`, from its single-particle
/// spectrum.
///
/// With Majoranas `a_i, b_i` (Jordan–Wigner), `X_i = -i a_i b_i` and
/// `Z_i Z_{i+1} = -i b_i a_{i+1}`, so `H = i Σ_{jk} a_j M_{jk} b_k` with `M` the `L×L` lower
/// bidiagonal matrix `M_{ii} = h`, `M_{i+1,i} = -J`. Rotating to the singular vectors of `M`
/// gives `H = Σ_k σ_k (i a'_k b'_k)`, each `i a' b'` having eigenvalues `±1`, hence
/// `E0 = -Σ_k σ_k(M)`. (In the usual form `H = Σ_k Λ_k (η_k† η_k - 1/2)` the quasiparticle
/// energies are `Λ_k = 2 σ_k`, and `E0 = -½ Σ_k Λ_k`.)
///
/// The singular values are taken, without squaring, from the `2L×2L` Golub–Kahan matrix: the
/// symmetric tridiagonal matrix with zero diagonal and off-diagonal `h, J, h, J, …, h` (the
/// Majorana chain `a_0, b_0, a_1, b_1, …`), whose eigenvalues are `±σ_k`. So
/// `E0 = -½ Σ |λ|` over its eigenvalues, accurate to a few ulps of `(|h| + |J|)` per mode.
pub(crate) fn tfim_free_fermion_energy(l: usize, j: f64, h: f64) -> f64 {
    if l == 0 {
        return 0.0;
    }
    let diag = vec![0.0; 2 * l];
    let off: Vec<f64> = (0..2 * l - 1).map(|k| if k % 2 == 0 { h } else { j }).collect();
    let eig = tridiagonal_eigen(&diag, &off, false);
    -0.5 * compensated_sum(eig.values.iter().map(|v| v.abs()))
}

/// Sum with Neumaier's compensation, so that long sums keep full relative accuracy.
fn compensated_sum(values: impl Iterator<Item = f64>) -> f64 {
    let mut sum = 0.0_f64;
    let mut compensation = 0.0;
    for v in values {
        let next = sum + v;
        if sum.abs() >= v.abs() {
            compensation += (sum - next) + v;
        } else {
            compensation += (v - next) + sum;
        }
        sum = next;
    }
    sum + compensation
}

/// Eigen-decomposition of a real symmetric tridiagonal matrix.
struct TridiagonalEigen {
    /// Eigenvalues, ascending.
    values: Vec<f64>,
    /// Row-major `n×n`; column `k` is the unit eigenvector of `values[k]`. Empty unless asked.
    vectors: Vec<f64>,
}

/// Eigenvalues (and optionally eigenvectors) of the symmetric tridiagonal matrix with diagonal
/// `diag` (length `n`) and off-diagonal `off` (length `n - 1`, `off[i]` couples `i` and `i+1`),
/// by the implicit QL algorithm with a Wilkinson-type shift.
///
/// Off-diagonal entries are dropped once below one ulp relative either to their diagonal
/// neighbours or to the matrix norm, so every eigenvalue is accurate to a few ulps of the norm.
///
/// # Panics
///
/// If `off.len() + 1 != diag.len()` (for non-empty `diag`), or if an eigenvalue fails to
/// converge in 100 QL sweeps (which does not happen for finite input).
fn tridiagonal_eigen(diag: &[f64], off: &[f64], want_vectors: bool) -> TridiagonalEigen {
    let n = diag.len();
    if n == 0 {
        return TridiagonalEigen { values: Vec::new(), vectors: Vec::new() };
    }
    assert_eq!(off.len() + 1, n, "tridiagonal: off-diagonal must have n - 1 entries");
    let mut d = diag.to_vec();
    // e[i] couples i and i+1; e[n-1] is scratch.
    let mut e = off.to_vec();
    e.push(0.0);
    let mut z = Vec::new();
    if want_vectors {
        z = vec![0.0; n * n];
        for i in 0..n {
            z[i * n + i] = 1.0;
        }
    }
    let mut norm = 0.0_f64;
    for i in 0..n {
        let left = if i > 0 { e[i - 1].abs() } else { 0.0 };
        norm = norm.max(d[i].abs() + e[i].abs() + left);
    }
    let abs_tol = f64::EPSILON * norm;

    for l in 0..n {
        let mut sweeps = 0;
        loop {
            // Find the end m of the unreduced block starting at l.
            let mut m = l;
            while m + 1 < n {
                let local = f64::EPSILON * (d[m].abs() + d[m + 1].abs());
                if e[m].abs() <= local || e[m].abs() <= abs_tol {
                    break;
                }
                m += 1;
            }
            if m == l {
                break;
            }
            sweeps += 1;
            assert!(sweeps <= 100, "tridiagonal QL did not converge");

            // Shift: the eigenvalue of the leading 2×2 block closer to d[l].
            let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let mut r = g.hypot(1.0);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let mut s = 1.0;
            let mut c = 1.0;
            let mut p = 0.0;
            let mut underflow = false;
            // Chase the bulge from the bottom of the block up to l with Givens rotations.
            for i in (l..m).rev() {
                let f = s * e[i];
                let b = c * e[i];
                r = f.hypot(g);
                e[i + 1] = r;
                if r == 0.0 {
                    // The rotation vanished: the block has split; restart on it.
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    underflow = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                if want_vectors {
                    for k in 0..n {
                        let upper = z[k * n + i + 1];
                        let lower = z[k * n + i];
                        z[k * n + i + 1] = s * lower + c * upper;
                        z[k * n + i] = c * lower - s * upper;
                    }
                }
            }
            if underflow {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }

    // Sort ascending, carrying the eigenvectors along.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| d[a].total_cmp(&d[b]));
    let values = order.iter().map(|&k| d[k]).collect();
    let mut vectors = Vec::new();
    if want_vectors {
        vectors = vec![0.0; n * n];
        for (new_col, &old_col) in order.iter().enumerate() {
            for row in 0..n {
                vectors[row * n + new_col] = z[row * n + old_col];
            }
        }
    }
    TridiagonalEigen { values, vectors }
}

// ---------------------------------------------------------------------------------------------
// Hamiltonian on the full state vector
// ---------------------------------------------------------------------------------------------

/// The dimension `2^l` of the state space, after checking `l` and a vector length against it.
fn state_dim(l: usize, len: usize) -> usize {
    assert!((1..=MAX_STATE_SITES).contains(&l), "chain length {l} outside 1..={MAX_STATE_SITES}");
    let dim = 1usize << l;
    assert_eq!(len, dim, "state vector of length {len} for {l} sites (expected 2^{l})");
    dim
}

/// `out = H psi` for the real state vector `psi` of an `l`-site chain, without forming `H`.
///
/// Basis convention: bit `i` of the index is site `i`, a set bit is spin down (`Z_i = -1`).
/// `X_i` flips bit `i`; the exchange part of the Heisenberg/XXZ bond `(i, i+1)` swaps an
/// anti-aligned pair with amplitude `J/2`.
///
/// # Panics
///
/// If `l` is outside `1..=MAX_STATE_SITES` or `psi`/`out` do not have length `2^l`.
pub(crate) fn apply_hamiltonian(model: Model, l: usize, psi: &[f64], out: &mut [f64]) {
    let dim = state_dim(l, psi.len());
    assert_eq!(out.len(), dim, "output vector of length {} (expected {dim})", out.len());
    let c = model.couplings();
    out.fill(0.0);
    for (b, &amp) in psi.iter().enumerate() {
        if amp == 0.0 {
            continue;
        }
        let mut diag = 0.0;
        for i in 0..l - 1 {
            if ((b >> i) ^ (b >> (i + 1))) & 1 == 1 {
                diag -= c.zz;
                if c.flip != 0.0 {
                    out[b ^ (3 << i)] += c.flip * amp;
                }
            } else {
                diag += c.zz;
            }
        }
        if c.field != 0.0 {
            for i in 0..l {
                out[b ^ (1 << i)] += c.field * amp;
            }
        }
        out[b] += diag * amp;
    }
}

// ---------------------------------------------------------------------------------------------
// Exact diagonalisation (Lanczos)
// ---------------------------------------------------------------------------------------------

/// Krylov vectors per Lanczos cycle (fewer if the symmetry sector is smaller).
const KRYLOV_DIM: usize = 100;
/// Lanczos cycles (each restarted from the previous Ritz vector) before giving up.
const MAX_CYCLES: usize = 500;
/// Converged when `‖H x - θ x‖ ≤ RESIDUAL_TOL · ‖H‖` for the unit Ritz vector `x`; the energy
/// error is then at most `residual² / gap` within the sector.
const RESIDUAL_TOL: f64 = 1e-12;
/// Lanczos steps between two checks of the Ritz residual estimate inside a cycle.
const CONVERGENCE_CHECK_EVERY: usize = 8;
/// Fixed seed of the pseudo-random start vector.
const START_SEED: u64 = 0x5EED_F00D_E7AC_7ED5;

/// Exact ground-state energy of `model` on an open chain of `l` sites, by Lanczos with full
/// reorthogonalisation on the matrix-free `H|ψ>` in the `2^l` computational basis (see
/// [`apply_hamiltonian`] for the basis convention).
///
/// All three models commute with the global spin flip `P = Π_i X_i`, and near-degenerate ground
/// doublets (the ordered TFIM, the Ising-like XXZ chain) split across its two sectors, where a
/// Krylov method converges slowly. So each sector `P = ±1` is diagonalised on its own (start
/// vector and every Krylov vector projected on it) and the lower energy is returned. Within a
/// sector, cycles of [`KRYLOV_DIM`] Lanczos steps restart from the Ritz vector until its
/// residual is below `1e-12 ‖H‖`, which puts the energy within about `1e-13` relative of exact
/// (the residual bounds the error quadratically over the in-sector gap). The start vector is
/// pseudo-random with a fixed seed, so it overlaps every eigenvector and results are
/// reproducible.
///
/// # Panics
///
/// If `l` is outside `1..=MAX_ED_SITES`, or if Lanczos does not converge (not seen in
/// practice).
pub(crate) fn ground_energy_ed(model: Model, l: usize) -> f64 {
    assert!((1..=MAX_ED_SITES).contains(&l), "ED chain length {l} outside 1..={MAX_ED_SITES}");
    let scale = model.norm_bound(l);
    if scale == 0.0 {
        return 0.0;
    }
    let even = sector_ground_energy(model, l, 1.0, scale);
    let odd = sector_ground_energy(model, l, -1.0, scale);
    even.min(odd)
}

/// Projects `v` onto the sector `P = sector` (`±1`) of the spin flip `P = Π X_i`.
fn project_parity(v: &mut [f64], sector: f64) {
    let all = v.len() - 1;
    for b in 0..v.len() {
        let partner = b ^ all;
        if partner > b {
            let sym = 0.5 * (v[b] + sector * v[partner]);
            v[b] = sym;
            v[partner] = sector * sym;
        }
    }
}

/// Lowest eigenvalue of `H` in the spin-flip sector `sector` (`±1`).
fn sector_ground_energy(model: Model, l: usize, sector: f64, scale: f64) -> f64 {
    let dim = 1usize << l;
    let mut x = pseudo_random_vector(dim, START_SEED);
    project_parity(&mut x, sector);
    normalize(&mut x);
    let krylov = KRYLOV_DIM.min(dim / 2).max(1);
    let mut hx = vec![0.0; dim];
    for _ in 0..MAX_CYCLES {
        x = lanczos_cycle(model, l, &x, sector, krylov, scale);
        apply_hamiltonian(model, l, &x, &mut hx);
        let theta = dot(&x, &hx);
        let residual =
            hx.iter().zip(&x).map(|(hv, v)| (hv - theta * v).powi(2)).sum::<f64>().sqrt();
        if residual <= RESIDUAL_TOL * scale {
            return theta;
        }
    }
    panic!("Lanczos did not converge for {model:?} on {l} sites (sector {sector})");
}

/// One Lanczos cycle of at most `krylov` steps from the unit vector `start`, with full
/// (twice-applied classical Gram–Schmidt) reorthogonalisation; returns the unit Ritz vector of
/// the lowest Ritz value, projected on the sector.
fn lanczos_cycle(
    model: Model,
    l: usize,
    start: &[f64],
    sector: f64,
    krylov: usize,
    scale: f64,
) -> Vec<f64> {
    let dim = start.len();
    let mut basis: Vec<Vec<f64>> = Vec::with_capacity(krylov);
    basis.push(start.to_vec());
    let mut alphas = Vec::with_capacity(krylov);
    let mut betas = Vec::with_capacity(krylov);
    let mut w = vec![0.0; dim];
    loop {
        let current = basis.len() - 1;
        apply_hamiltonian(model, l, &basis[current], &mut w);
        project_parity(&mut w, sector);
        alphas.push(dot(&w, &basis[current]));
        for _ in 0..2 {
            for q in &basis {
                let overlap = dot(&w, q);
                axpy(-overlap, q, &mut w);
            }
        }
        if basis.len() == krylov {
            break;
        }
        let beta = dot(&w, &w).sqrt();
        // An invariant subspace: the Krylov space already holds the sector's low spectrum.
        if beta <= 1e-14 * scale {
            break;
        }
        // Every few steps, stop early once the lowest Ritz pair's residual estimate
        // `beta · |last component of its eigenvector|` is well below the tolerance; the caller
        // re-checks the true residual.
        if alphas.len() % CONVERGENCE_CHECK_EVERY == 0 {
            let m = alphas.len();
            let eig = tridiagonal_eigen(&alphas, &betas, true);
            if beta * eig.vectors[(m - 1) * m].abs() <= 0.1 * RESIDUAL_TOL * scale {
                break;
            }
        }
        betas.push(beta);
        basis.push(w.iter().map(|v| v / beta).collect());
    }
    let m = alphas.len();
    let eig = tridiagonal_eigen(&alphas, &betas, true);
    let mut ritz = vec![0.0; dim];
    for (k, q) in basis.iter().enumerate() {
        axpy(eig.vectors[k * m], q, &mut ritz);
    }
    project_parity(&mut ritz, sector);
    normalize(&mut ritz);
    ritz
}

/// A reproducible pseudo-random vector with entries in `[-0.5, 0.5)` (splitmix64 stream).
fn pseudo_random_vector(dim: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..dim)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let high = u32::try_from(z >> 32).unwrap_or(u32::MAX);
            f64::from(high) / 4_294_967_296.0 - 0.5
        })
        .collect()
}

/// Real dot product.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `y += alpha x`.
fn axpy(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// Scales `v` to unit norm (leaves a zero vector alone).
fn normalize(v: &mut [f64]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Complex state vectors: evolution and expectation values
// ---------------------------------------------------------------------------------------------

/// Largest `‖H‖ · |dt|` of one Taylor substep in [`evolve_exact`].
const MAX_STEP_NORM: f64 = 0.5;
/// Taylor terms per substep before giving up on the stopping test (about 25 are ever needed).
const MAX_TAYLOR_TERMS: u32 = 60;

/// `exp(-i H t) |psi0>` for the complex state vector `psi0` (`(re, im)` per basis state) of an
/// `l`-site chain.
///
/// The time is cut into `n ≥ steps` equal substeps, `n` doubled from `max(steps, 1)` until
/// `‖H‖ |t| / n ≤ 0.5` (so `steps` is a minimum, clamped to `u32::MAX`); each substep sums the
/// Taylor series of `exp(-i H dt)` until the next term is below `1e-17` of the sum (or exactly
/// zero). The result is exact up to rounding: about `n · 1e-16` relative, below `1e-12` for
/// `L ≤ 10`, `|t| ≤ 2`. The norm is not re-imposed.
///
/// # Panics
///
/// If `l` is outside `1..=MAX_STATE_SITES`, `psi0` does not have length `2^l`, or `t` is not
/// finite.
pub(crate) fn evolve_exact(
    model: Model,
    l: usize,
    psi0: &[(f64, f64)],
    t: f64,
    steps: usize,
) -> Vec<(f64, f64)> {
    let dim = state_dim(l, psi0.len());
    assert!(t.is_finite(), "evolution time {t} is not finite");
    let bound = model.norm_bound(l);
    let mut substeps = u32::try_from(steps.max(1)).unwrap_or(u32::MAX);
    while bound * t.abs() / f64::from(substeps) > MAX_STEP_NORM && substeps < u32::MAX / 2 {
        substeps *= 2;
    }
    let dt = t / f64::from(substeps);

    let mut re: Vec<f64> = psi0.iter().map(|z| z.0).collect();
    let mut im: Vec<f64> = psi0.iter().map(|z| z.1).collect();
    let mut term_re = vec![0.0; dim];
    let mut term_im = vec![0.0; dim];
    let mut h_re = vec![0.0; dim];
    let mut h_im = vec![0.0; dim];
    for _ in 0..substeps {
        term_re.copy_from_slice(&re);
        term_im.copy_from_slice(&im);
        for k in 1..=MAX_TAYLOR_TERMS {
            apply_hamiltonian(model, l, &term_re, &mut h_re);
            apply_hamiltonian(model, l, &term_im, &mut h_im);
            // term_k = (-i dt / k) H term_{k-1};  -i (a + ib) = b - ia.
            let f = dt / f64::from(k);
            for idx in 0..dim {
                term_re[idx] = f * h_im[idx];
                term_im[idx] = -f * h_re[idx];
            }
            axpy(1.0, &term_re, &mut re);
            axpy(1.0, &term_im, &mut im);
            let term_norm = dot(&term_re, &term_re) + dot(&term_im, &term_im);
            let sum_norm = dot(&re, &re) + dot(&im, &im);
            if term_norm <= 1e-34 * sum_norm {
                break;
            }
        }
    }
    re.into_iter().zip(im).collect()
}

/// `<psi|psi>` of a complex state vector.
pub(crate) fn norm_sqr(psi: &[(f64, f64)]) -> f64 {
    psi.iter().map(|z| z.0 * z.0 + z.1 * z.1).sum()
}

/// `<psi|Z_site|psi> / <psi|psi>` (`Z = +1` on a clear bit, `-1` on a set bit).
///
/// # Panics
///
/// If `psi` does not have length `2^l` (with `l` in `1..=MAX_STATE_SITES`), `site >= l`, or
/// `psi` is zero.
pub(crate) fn expect_z(l: usize, psi: &[(f64, f64)], site: usize) -> f64 {
    state_dim(l, psi.len());
    assert!(site < l, "site {site} outside a chain of {l}");
    let norm = norm_sqr(psi);
    assert!(norm > 0.0, "expectation value in the zero vector");
    let mut acc = 0.0;
    for (b, z) in psi.iter().enumerate() {
        let weight = z.0 * z.0 + z.1 * z.1;
        if (b >> site) & 1 == 0 {
            acc += weight;
        } else {
            acc -= weight;
        }
    }
    acc / norm
}

/// `<psi|X_site|psi> / <psi|psi>` (`X` flips bit `site`; the result is real).
///
/// # Panics
///
/// If `psi` does not have length `2^l` (with `l` in `1..=MAX_STATE_SITES`), `site >= l`, or
/// `psi` is zero.
pub(crate) fn expect_x(l: usize, psi: &[(f64, f64)], site: usize) -> f64 {
    state_dim(l, psi.len());
    assert!(site < l, "site {site} outside a chain of {l}");
    let norm = norm_sqr(psi);
    assert!(norm > 0.0, "expectation value in the zero vector");
    let mask = 1usize << site;
    let acc: f64 =
        psi.iter().enumerate().map(|(b, z)| z.0 * psi[b ^ mask].0 + z.1 * psi[b ^ mask].1).sum();
    acc / norm
}

/// `<psi|H|psi> / <psi|psi>` for a complex state vector (real, as `H` is real symmetric).
///
/// # Panics
///
/// If `psi` does not have length `2^l` (with `l` in `1..=MAX_STATE_SITES`) or is zero.
pub(crate) fn energy(model: Model, l: usize, psi: &[(f64, f64)]) -> f64 {
    let dim = state_dim(l, psi.len());
    let norm = norm_sqr(psi);
    assert!(norm > 0.0, "energy of the zero vector");
    let re: Vec<f64> = psi.iter().map(|z| z.0).collect();
    let im: Vec<f64> = psi.iter().map(|z| z.1).collect();
    let mut h = vec![0.0; dim];
    apply_hamiltonian(model, l, &re, &mut h);
    let mut acc = dot(&re, &h);
    apply_hamiltonian(model, l, &im, &mut h);
    acc += dot(&im, &h);
    acc / norm
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: [f64; 8] = [1.0, 0.3, 2.0, 0.0, -0.3, -1.0, -2.0, 0.999];

    fn rel_err(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1.0)
    }

    /// Dense `H` of an `l`-site chain, row-major, built column by column from `apply_hamiltonian`.
    fn dense_hamiltonian(model: Model, l: usize) -> Vec<f64> {
        let dim = 1usize << l;
        let mut h = vec![0.0; dim * dim];
        let mut e = vec![0.0; dim];
        let mut col = vec![0.0; dim];
        for c in 0..dim {
            e.fill(0.0);
            e[c] = 1.0;
            apply_hamiltonian(model, l, &e, &mut col);
            for r in 0..dim {
                h[r * dim + c] = col[r];
            }
        }
        h
    }

    /// Cyclic Jacobi eigen-decomposition of a dense symmetric matrix: (values, vectors with
    /// column k the eigenvector of values[k], row-major). Independent of the QL/Lanczos code.
    fn jacobi_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut v = vec![0.0; n * n];
        for i in 0..n {
            v[i * n + i] = 1.0;
        }
        let total: f64 = a.iter().map(|x| x * x).sum();
        for _ in 0..100 {
            let mut off = 0.0;
            for p in 0..n {
                for q in p + 1..n {
                    off += a[p * n + q] * a[p * n + q];
                }
            }
            if off <= 1e-32 * total {
                break;
            }
            for p in 0..n {
                for q in p + 1..n {
                    let apq = a[p * n + q];
                    if apq == 0.0 {
                        continue;
                    }
                    let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                    let t = theta.signum() / (theta.abs() + theta.hypot(1.0));
                    let c = 1.0 / t.hypot(1.0);
                    let s = t * c;
                    for k in 0..n {
                        let akp = a[k * n + p];
                        let akq = a[k * n + q];
                        a[k * n + p] = c * akp - s * akq;
                        a[k * n + q] = s * akp + c * akq;
                    }
                    for k in 0..n {
                        let apk = a[p * n + k];
                        let aqk = a[q * n + k];
                        a[p * n + k] = c * apk - s * aqk;
                        a[q * n + k] = s * apk + c * aqk;
                    }
                    for k in 0..n {
                        let vkp = v[k * n + p];
                        let vkq = v[k * n + q];
                        v[k * n + p] = c * vkp - s * vkq;
                        v[k * n + q] = s * vkp + c * vkq;
                    }
                }
            }
        }
        ((0..n).map(|i| a[i * n + i]).collect(), v)
    }

    fn dense_ground_energy(model: Model, l: usize) -> f64 {
        let n = 1usize << l;
        let (values, _) = jacobi_eigen(dense_hamiltonian(model, l), n);
        values.into_iter().fold(f64::INFINITY, f64::min)
    }

    fn random_state(l: usize, seed: u64) -> Vec<(f64, f64)> {
        let dim = 1usize << l;
        let re = pseudo_random_vector(dim, seed);
        let im = pseudo_random_vector(dim, seed ^ 0xABCD);
        let mut psi: Vec<(f64, f64)> = re.into_iter().zip(im).collect();
        let n = norm_sqr(&psi).sqrt();
        for z in &mut psi {
            z.0 /= n;
            z.1 /= n;
        }
        psi
    }

    fn neel(l: usize) -> Vec<(f64, f64)> {
        let dim = 1usize << l;
        let index: usize = (0..l).filter(|i| i % 2 == 1).map(|i| 1usize << i).sum();
        let mut psi = vec![(0.0, 0.0); dim];
        psi[index] = (1.0, 0.0);
        psi
    }

    #[test]
    fn tridiagonal_solver_matches_laplacian_spectrum() {
        // tridiag(-1, 2, -1) of size n: eigenvalues 2 - 2 cos(k π / (n + 1)).
        for n in [1usize, 2, 3, 10, 200, 400] {
            let diag = vec![2.0; n];
            let off = vec![-1.0; n - 1];
            let eig = tridiagonal_eigen(&diag, &off, n <= 10);
            let nn = f64::from(u32::try_from(n).unwrap());
            for (k, value) in eig.values.iter().enumerate() {
                let kk = f64::from(u32::try_from(k + 1).unwrap());
                let exact = 2.0 - 2.0 * (kk * std::f64::consts::PI / (nn + 1.0)).cos();
                assert!((value - exact).abs() < 1e-13, "n={n} k={k}: {value} vs {exact}");
            }
            if n <= 10 {
                // Check T v = λ v for each returned eigenvector.
                for k in 0..n {
                    for i in 0..n {
                        let mut tv = 2.0 * eig.vectors[i * n + k];
                        if i > 0 {
                            tv -= eig.vectors[(i - 1) * n + k];
                        }
                        if i + 1 < n {
                            tv -= eig.vectors[(i + 1) * n + k];
                        }
                        assert!((tv - eig.values[k] * eig.vectors[i * n + k]).abs() < 1e-13);
                    }
                }
            }
        }
    }

    #[test]
    fn free_fermion_matches_exact_diagonalisation() {
        for l in 2..=10 {
            for h in FIELDS {
                // J = 1 everywhere; the sign and scale of J at two lengths.
                let couplings: &[f64] = if l == 5 || l == 8 { &[1.0, -1.0, 0.5] } else { &[1.0] };
                for &j in couplings {
                    let ff = tfim_free_fermion_energy(l, j, h);
                    let ed = ground_energy_ed(Model::Tfim { j, h }, l);
                    assert!(rel_err(ff, ed) < 1e-10, "L={l} J={j} h={h}: ff {ff} vs ed {ed}");
                }
            }
        }
    }

    #[test]
    fn free_fermion_matches_ed_at_twelve_sites() {
        for h in [0.3, 1.0] {
            let ff = tfim_free_fermion_energy(12, 1.0, h);
            let ed = ground_energy_ed(Model::Tfim { j: 1.0, h }, 12);
            assert!(rel_err(ff, ed) < 1e-12, "h={h}: ff {ff} vs ed {ed}");
        }
    }

    #[test]
    fn free_fermion_limits_and_closed_form() {
        for l in [1usize, 2, 5, 50, 200] {
            let lf = f64::from(u32::try_from(l).unwrap());
            // h = 0: classical Ising, E0 = -(L-1)|J|; J = 0: free spins, E0 = -L|h|.
            let cases =
                [(1.0, 0.0, -(lf - 1.0)), (-2.5, 0.0, -2.5 * (lf - 1.0)), (0.0, -0.7, -0.7 * lf)];
            for (j, h, exact) in cases {
                let ff = tfim_free_fermion_energy(l, j, h);
                assert!(rel_err(ff, exact) < 1e-14, "L={l} J={j} h={h}: {ff} vs {exact}");
            }
            // h = J: σ_k = 2 sin((2k-1) x), x = π/(4L+2), summing to 2 sin²(L x) / sin x.
            let x = std::f64::consts::PI / (4.0 * lf + 2.0);
            let exact = -2.0 * (lf * x).sin().powi(2) / x.sin();
            let ff = tfim_free_fermion_energy(l, 1.0, 1.0);
            assert!((ff - exact).abs() <= 1e-13 * exact.abs(), "L={l}: {ff} vs {exact}");
        }
    }

    #[test]
    fn tfim_classical_limit_ed() {
        for l in 2..=10 {
            let lf = f64::from(u32::try_from(l).unwrap());
            let ed = ground_energy_ed(Model::Tfim { j: 1.0, h: 0.0 }, l);
            assert!((ed + (lf - 1.0)).abs() < 1e-12, "L={l}: {ed}");
        }
    }

    #[test]
    fn heisenberg_known_energies() {
        let e2 = ground_energy_ed(Model::Heisenberg { j: 1.0 }, 2);
        assert!((e2 + 0.75).abs() < 1e-13, "{e2}");
        let e4 = ground_energy_ed(Model::Heisenberg { j: 1.0 }, 4);
        // -(3/4 + √3/2)
        assert!((e4 + 1.616_025_403_784_438_6).abs() < 1e-13, "{e4}");
        assert!((e4 + 0.75 + 0.75_f64.sqrt()).abs() < 1e-13, "{e4}");
        // J scales the spectrum; J = 2.
        let e4j = ground_energy_ed(Model::Heisenberg { j: 2.0 }, 4);
        assert!((e4j - 2.0 * e4).abs() < 1e-12, "{e4j}");
        let e8 = ground_energy_ed(Model::Heisenberg { j: 1.0 }, 8);
        assert!((e8 + 3.374_932_598_687_897).abs() < 1e-12, "{e8}");
        let e10 = ground_energy_ed(Model::Heisenberg { j: 1.0 }, 10);
        assert!((e10 + 4.258_035_207_282_883).abs() < 1e-12, "{e10}");
    }

    #[test]
    fn xxz_isotropic_equals_heisenberg() {
        for l in 2..=10 {
            let couplings: &[f64] = if l == 6 || l == 7 { &[1.0, -1.0, 0.7] } else { &[1.0] };
            for &j in couplings {
                let xxz = ground_energy_ed(Model::Xxz { j, delta: 1.0 }, l);
                let heis = ground_energy_ed(Model::Heisenberg { j }, l);
                assert!(rel_err(xxz, heis) < 1e-12, "L={l} J={j}: {xxz} vs {heis}");
            }
        }
        // Ferromagnet: E0 = J (L-1) / 4 for J < 0.
        let ferro = ground_energy_ed(Model::Heisenberg { j: -1.0 }, 9);
        assert!((ferro + 2.0).abs() < 1e-12, "{ferro}");
    }

    #[test]
    fn xx_chain_matches_free_fermions() {
        // Δ = 0: H = (J/2) Σ (c†_i c_{i+1} + h.c.), single-particle energies J cos(kπ/(L+1)).
        for l in 2..=10 {
            let lf = f64::from(u32::try_from(l).unwrap());
            let exact: f64 = (1..=l)
                .map(|k| {
                    let kf = f64::from(u32::try_from(k).unwrap());
                    (kf * std::f64::consts::PI / (lf + 1.0)).cos().min(0.0)
                })
                .sum();
            let ed = ground_energy_ed(Model::Xxz { j: 1.0, delta: 0.0 }, l);
            assert!(rel_err(ed, exact) < 1e-12, "L={l}: {ed} vs {exact}");
        }
    }

    #[test]
    fn lanczos_matches_dense_jacobi() {
        let models = [
            Model::Tfim { j: 1.0, h: 0.3 },
            Model::Tfim { j: -0.8, h: 1.7 },
            Model::Heisenberg { j: 1.0 },
            Model::Heisenberg { j: -1.3 },
            Model::Xxz { j: 1.0, delta: 2.5 },
            Model::Xxz { j: 1.0, delta: -3.0 },
            Model::Xxz { j: -0.6, delta: 0.4 },
        ];
        for model in models {
            for l in 1..=6 {
                let dense = dense_ground_energy(model, l);
                let ed = ground_energy_ed(model, l);
                assert!(rel_err(ed, dense) < 1e-12, "{model:?} L={l}: {ed} vs {dense}");
            }
        }
    }

    #[test]
    fn hamiltonian_conventions() {
        // Heisenberg, two sites: |↑↑> (index 0) has energy J/4; singlet has -3J/4.
        let m = Model::Heisenberg { j: 1.0 };
        let mut out = vec![0.0; 4];
        apply_hamiltonian(m, 2, &[1.0, 0.0, 0.0, 0.0], &mut out);
        assert_eq!(out, vec![0.25, 0.0, 0.0, 0.0]);
        let r = 0.5_f64.sqrt();
        apply_hamiltonian(m, 2, &[0.0, r, -r, 0.0], &mut out);
        for (o, s) in out.iter().zip([0.0, r, -r, 0.0]) {
            assert!((o + 0.75 * s).abs() < 1e-15);
        }
        // TFIM: -J ZZ diagonal, -h X flips one bit.
        let t = Model::Tfim { j: 2.0, h: 0.5 };
        apply_hamiltonian(t, 2, &[0.0, 1.0, 0.0, 0.0], &mut out); // |↓↑>: site 0 down
        assert_eq!(out, vec![-0.5, 2.0, 0.0, -0.5]);
        // Z convention: bit set = spin down.
        let mut psi = vec![(0.0, 0.0); 8];
        psi[0b010] = (0.0, 1.0);
        assert_eq!(expect_z(3, &psi, 0), 1.0);
        assert_eq!(expect_z(3, &psi, 1), -1.0);
        assert_eq!(expect_x(3, &psi, 1), 0.0);
        let plus = vec![(0.5_f64.sqrt().powi(3), 0.0); 8];
        for site in 0..3 {
            assert!((expect_x(3, &plus, site) - 1.0).abs() < 1e-15);
            assert!(expect_z(3, &plus, site).abs() < 1e-15);
        }
        assert!((energy(Model::Tfim { j: 1.0, h: 1.0 }, 3, &plus) + 3.0).abs() < 1e-14);
    }

    #[test]
    fn single_spin_precession() {
        // exp(i h t X)|↑> = cos(ht)|↑> + i sin(ht)|↓>: <Z> = cos 2ht, <X> = 0.
        let h = 0.8;
        let psi0 = vec![(1.0, 0.0), (0.0, 0.0)];
        for t in [0.0, 0.3, 1.0, 2.0, -1.5] {
            let psi = evolve_exact(Model::Tfim { j: 1.0, h }, 1, &psi0, t, 1);
            assert!((psi[0].0 - (h * t).cos()).abs() < 1e-14);
            assert!((psi[1].1 - (h * t).sin()).abs() < 1e-14);
            assert!((expect_z(1, &psi, 0) - (2.0 * h * t).cos()).abs() < 1e-14);
            assert!(expect_x(1, &psi, 0).abs() < 1e-14);
        }
    }

    #[test]
    fn evolution_conserves_norm_and_energy() {
        let cases = [
            (Model::Tfim { j: 1.0, h: 0.7 }, random_state(8, 11)),
            (Model::Tfim { j: 1.0, h: 1.0 }, neel(10)),
            (Model::Heisenberg { j: 1.0 }, neel(10)),
            (Model::Xxz { j: 1.0, delta: 0.5 }, random_state(9, 3)),
        ];
        for (model, psi0) in cases {
            let l = psi0.len().trailing_zeros();
            let l = usize::try_from(l).unwrap();
            let e0 = energy(model, l, &psi0);
            let psi = evolve_exact(model, l, &psi0, 2.0, 10);
            assert!((norm_sqr(&psi) - 1.0).abs() < 1e-12, "{model:?}");
            assert!((energy(model, l, &psi) - e0).abs() < 1e-11, "{model:?}");
            // A genuinely non-trivial evolution, and back again.
            let back = evolve_exact(model, l, &psi, -2.0, 3);
            let err: f64 = back
                .iter()
                .zip(&psi0)
                .map(|(a, b)| (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(err < 1e-11, "{model:?}: {err}");
        }
    }

    #[test]
    fn evolution_matches_dense_spectral_decomposition() {
        let l = 5;
        let n = 1usize << l;
        for model in [Model::Tfim { j: 1.0, h: 0.9 }, Model::Xxz { j: 1.0, delta: 1.7 }] {
            let (values, vecs) = jacobi_eigen(dense_hamiltonian(model, l), n);
            let psi0 = random_state(l, 99);
            let t = 2.0;
            // psi(t) = Σ_k v_k e^{-i E_k t} <v_k|psi0>
            let mut exact = vec![(0.0, 0.0); n];
            for k in 0..n {
                let (mut cr, mut ci) = (0.0, 0.0);
                for b in 0..n {
                    cr += vecs[b * n + k] * psi0[b].0;
                    ci += vecs[b * n + k] * psi0[b].1;
                }
                let (s, c) = (-values[k] * t).sin_cos();
                let (pr, pi) = (cr * c - ci * s, cr * s + ci * c);
                for b in 0..n {
                    exact[b].0 += vecs[b * n + k] * pr;
                    exact[b].1 += vecs[b * n + k] * pi;
                }
            }
            for steps in [1, 7, 200] {
                let psi = evolve_exact(model, l, &psi0, t, steps);
                let err: f64 = psi
                    .iter()
                    .zip(&exact)
                    .map(|(a, b)| (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(err < 1e-12, "{model:?} steps={steps}: {err}");
            }
        }
    }
}
