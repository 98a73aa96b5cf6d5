//! Two-site DMRG (SPEC W3): left-right sweeps over the bonds of an open chain, a Lanczos
//! eigensolver on each bond's effective Hamiltonian, truncation to the sweep's bond dimension
//! and cutoff (the truncated SVD's factors, by the reduced density matrix), and cached
//! environments.
//!
//! # The sweep
//!
//! The state starts random (fixed seed, bond dimension of the first sweep) and is brought to
//! right-canonical form, with every right environment `R[i]` built once. A sweep then visits the
//! bonds `(0,1) … (L-2,L-1)` moving right and back moving left. At each bond the two-site tensor
//! `θ = A[i]·A[i+1]` is improved by Lanczos, split and truncated by the reduced density matrix
//! (the SVD's factors, see `split`), and the orthogonality centre moves on: moving right
//! `A[i] = u`, `A[i+1] = s·vh` and `L[i+1]` grows; moving left `A[i+1] = vh`, `A[i] = u·s` and
//! `R[i+1]` grows. Environments are the only state kept between bonds; each is recomputed
//! exactly once per pass. The MPO pairs `W[i]·W[i+1]` the effective Hamiltonians read are built
//! once per run.
//!
//! Every tensor a bond replaces (the old site tensors and environments, θ, the split's
//! temporaries) goes back to the session's pool, in the entry of the next operation (a spent
//! list), and the Lanczos lists are kept from bond to bond: once the bond dimensions stop
//! changing, a sweep is served by the pool and allocates nothing on the calling thread.
//!
//! The sweep's energy is the eigenvalue of its last bond; the run stops after the configured
//! number of sweeps or once the energy moves less than the tolerance between two sweeps.
//!
//! # How far each bond is solved
//!
//! A local solve far more precise than the state it sits in is wasted: the next sweep replaces
//! it while the state still moves, and once the truncation limits the state, no solve gets the
//! energy below what the truncation allows. So each sweep sets its bonds a residual target from
//! what the previous sweep showed (`next_target`): `RESIDUAL_FACTOR · √x`, where `x` is the
//! larger of the energy's change over that sweep and its largest discarded weight (a local
//! eigenvalue is off by about the residual's square over the gap), between the configured
//! residual and `MAX_RESIDUAL`; the first sweep, with nothing to judge by, takes
//! `FIRST_RESIDUAL`. The floor below which no sweep goes is the configured residual, or
//! `RESIDUAL_FACTOR · √(discarded weight)` when the truncation is the larger limit. Every bond
//! also takes its start vector's residual down by a fixed factor (`lanczos::Tolerance`), so a
//! sweep with a loose target still moves the state; a loose solve that stalls (near degenerate
//! ground states, say) shows as a small change, which tightens the next sweep. The run stops on
//! the tolerance only after a sweep solved at the floor.

mod lanczos;
mod split;
#[cfg(test)]
mod tests;
mod tridiagonal;
#[cfg(test)]
mod uniform;

use std::time::Instant;

use holdfast::{OpError, Svd, Tensor, Truncation};

use crate::env::{grow_left, grow_right, trivial};
use crate::spent::Spent;
use crate::{Executor, Model, Mpo, Mps, MpsError};
use lanczos::{Bond, Krylov, Tolerance, lowest, pair};
use split::Split;

/// Settings of a [`dmrg`] run.
///
/// # Examples
///
/// ```
/// use holdfast_mps::DmrgConfig;
///
/// // ITensor's maxdim schedule: 16, then 32, then 64 for every later sweep.
/// let config = DmrgConfig::new(vec![16, 32, 64]).sweeps(6).cutoff(1e-12);
/// assert_eq!(config.bond_dim(0), 16);
/// assert_eq!(config.bond_dim(5), 64);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DmrgConfig {
    bond_dims: Vec<usize>,
    sweeps: usize,
    cutoff: f64,
    tolerance: f64,
    krylov: usize,
    residual: f64,
    seed: u64,
}

/// The residual target of the first sweep, from a random state.
const FIRST_RESIDUAL: f64 = 1e-5;

/// The loosest residual target a sweep sets.
const MAX_RESIDUAL: f64 = 1e-3;

/// A sweep's residual target over the square root of what the previous sweep moved or dropped
/// (module docs).
const RESIDUAL_FACTOR: f64 = 0.1;

impl DmrgConfig {
    /// A schedule of bond dimensions, one per sweep, the last repeated; 10 sweeps at most, a
    /// cutoff of 1e-12, stopping once the energy moves less than 1e-12.
    #[must_use]
    pub fn new(bond_dims: Vec<usize>) -> Self {
        DmrgConfig {
            bond_dims,
            sweeps: 10,
            cutoff: 1e-12,
            tolerance: 1e-12,
            krylov: 8,
            residual: 1e-6,
            seed: 7,
        }
    }

    /// At most `sweeps` sweeps.
    #[must_use]
    pub fn sweeps(self, sweeps: usize) -> Self {
        DmrgConfig { sweeps, ..self }
    }

    /// The truncation's relative discarded-weight cutoff (`Σ dropped s² / Σ s²`).
    #[must_use]
    pub fn cutoff(self, cutoff: f64) -> Self {
        DmrgConfig { cutoff, ..self }
    }

    /// Stop once the energy moves less than `tolerance` (absolute) between two sweeps; 0 runs
    /// every sweep.
    #[must_use]
    pub fn tolerance(self, tolerance: f64) -> Self {
        DmrgConfig { tolerance, ..self }
    }

    /// The local eigensolver stops once the residual norm of its Ritz pair is at most this
    /// (default 1e-6: the local energy's error is of the order of its square) or after `krylov`
    /// Krylov vectors (default 8: the sweeps converge the state, so a bond needs no more than a
    /// few products per visit).
    #[must_use]
    pub fn solver(self, residual: f64, krylov: usize) -> Self {
        DmrgConfig { residual, krylov, ..self }
    }

    /// The seed of the random initial state.
    #[must_use]
    pub fn seed(self, seed: u64) -> Self {
        DmrgConfig { seed, ..self }
    }

    /// The bond dimension of sweep `sweep` (counted from 0).
    #[must_use]
    pub fn bond_dim(&self, sweep: usize) -> usize {
        self.bond_dims.get(sweep).or(self.bond_dims.last()).copied().unwrap_or(0)
    }

    fn validate(&self) -> Result<(), MpsError> {
        let bad = |what: String| Err(MpsError::InvalidParameter(what));
        if self.bond_dims.is_empty() || self.bond_dims.contains(&0) {
            return bad(format!("bond dimensions must be at least 1, got {:?}", self.bond_dims));
        }
        if self.sweeps == 0 {
            return bad("at least one sweep".to_owned());
        }
        if !(0.0..=1.0).contains(&self.cutoff) {
            return bad(format!("the cutoff {} is not in [0, 1]", self.cutoff));
        }
        if self.krylov < 2 || self.residual.is_nan() || self.residual <= 0.0 {
            return bad(format!(
                "the eigensolver needs at least 2 Krylov vectors and a positive residual, got {} and {}",
                self.krylov, self.residual
            ));
        }
        if self.tolerance.is_nan() || self.tolerance < 0.0 {
            return bad(format!("the tolerance {} is negative", self.tolerance));
        }
        Ok(())
    }
}

/// What one sweep measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepStats {
    /// The energy at the end of the sweep.
    pub energy: f64,
    /// The largest bond dimension after the sweep.
    pub max_bond: usize,
    /// The largest relative discarded weight of the sweep's truncations.
    pub discarded_weight: f64,
    /// Wall-clock seconds of the sweep.
    pub seconds: f64,
}

/// The result of a [`dmrg`] run.
#[derive(Debug, Clone)]
pub struct DmrgRun {
    /// The final energy.
    pub energy: f64,
    /// One entry per sweep run.
    pub sweeps: Vec<SweepStats>,
    /// The final state, with its orthogonality centre on site 0.
    pub mps: Mps,
}

/// The ground state of `model` on an open chain of `sites` sites by two-site DMRG, every
/// operation run on `exec` (SPEC W3, W5).
///
/// # Errors
///
/// [`MpsError::TooFewSites`] for fewer than two sites, [`MpsError::InvalidParameter`] for a bad
/// configuration or model parameter (before any operation runs); an operation's error.
///
/// # Examples
///
/// See the [crate] documentation.
pub fn dmrg(
    exec: &mut impl Executor,
    model: &Model,
    sites: usize,
    config: &DmrgConfig,
) -> Result<DmrgRun, MpsError> {
    dmrg_observed(exec, model, sites, config, |_, _| ())
}

/// [`dmrg`], calling `observe(sweep, stats)` after every sweep (for progress reports).
///
/// # Errors
///
/// As [`dmrg`].
///
/// # Examples
///
/// ```
/// use holdfast::CpuBackend;
/// use holdfast_mps::{DmrgConfig, Model, dmrg::dmrg_observed};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let mut session = backend.open_session()?;
/// let mut seen = 0;
/// let config = DmrgConfig::new(vec![8]).sweeps(2).tolerance(0.0);
/// dmrg_observed(&mut session, &Model::Heisenberg { j: 1.0 }, 6, &config, |_, _| seen += 1)?;
/// assert_eq!(seen, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dmrg_observed(
    exec: &mut impl Executor,
    model: &Model,
    sites: usize,
    config: &DmrgConfig,
    mut observe: impl FnMut(usize, &SweepStats),
) -> Result<DmrgRun, MpsError> {
    config.validate()?;
    let mpo = Mpo::from_model(model, sites)?;
    let mut mps = Mps::random(sites, config.bond_dim(0), config.seed)?;
    right_canonicalise(exec, &mut mps)?;
    let mut lefts: Vec<Tensor<f64>> = Vec::with_capacity(sites + 1);
    lefts.push(trivial()?);
    let mut rights: Vec<Tensor<f64>> = vec![trivial()?; sites + 1];
    for i in (2..sites).rev() {
        rights[i] = grow_right(exec, &rights[i + 1], &mps.tensors[i], mpo.tensor(i))?;
    }
    let mut sweeps = Vec::with_capacity(config.sweeps);
    let mut energy = f64::NAN;
    // Each bond retires at most two site tensors, one environment (or, moving right, the left
    // environments past the bond) and the right environments it replaces.
    let mut spent = Spent::with_capacity(sites + 4);
    let mut krylov = Krylov::with_capacity(config.krylov);
    let mut split = Split::default();
    let pairs = exec.op(|v| {
        (0..sites - 1)
            .map(|i| pair(v, mpo.tensor(i), mpo.tensor(i + 1)))
            .collect::<Result<Vec<_>, OpError>>()
    })??;
    // Each sweep's residual target follows what the previous one moved and dropped; the run
    // stops only on a sweep solved at the floor (module docs).
    let mut tolerance =
        Tolerance { target: FIRST_RESIDUAL.max(config.residual), floor: config.residual };
    for sweep in 0..config.sweeps {
        let started = Instant::now();
        let trunc = Truncation::none().max_rank(config.bond_dim(sweep)).cutoff(config.cutoff);
        let mut discarded: f64 = 0.0;
        let mut e = f64::NAN;
        for (i, right_moving) in
            (0..sites - 1).map(|i| (i, true)).chain((0..sites - 1).rev().map(|i| (i, false)))
        {
            let (a, b) = (&mps.tensors[i], &mps.tensors[i + 1]);
            let theta = exec.op(|v| {
                spent.recycle_into(v);
                v.einsum_with_path("asb,btc->astc", &[a.read(), b.read()], &[(0, 1)])
            })??;
            let bond = Bond { left: &lefts[i], pair: &pairs[i], right: &rights[i + 2] };
            let (value, theta) = lowest(exec, &bond, theta, &mut krylov, config.krylov, tolerance)?;
            e = value;
            let parts = exec.op(|v| split.split(v, theta, trunc, right_moving))??;
            discarded = discarded.max(parts.discarded_weight);
            spent.push(std::mem::replace(&mut mps.tensors[i], parts.left));
            spent.push(std::mem::replace(&mut mps.tensors[i + 1], parts.right));
            if right_moving {
                spent.extend(lefts.drain(i + 1..));
                let grown = grow_left(exec, &lefts[i], &mps.tensors[i], mpo.tensor(i))?;
                lefts.push(grown);
            } else {
                let grown =
                    grow_right(exec, &rights[i + 2], &mps.tensors[i + 1], mpo.tensor(i + 1))?;
                spent.push(std::mem::replace(&mut rights[i + 1], grown));
            }
        }
        let stats = SweepStats {
            energy: e,
            max_bond: mps.max_bond(),
            discarded_weight: discarded,
            seconds: started.elapsed().as_secs_f64(),
        };
        observe(sweep, &stats);
        sweeps.push(stats);
        let change = (e - energy).abs();
        let tight = tolerance.target <= tolerance.floor;
        energy = e;
        if tight && change < config.tolerance {
            break;
        }
        tolerance = next_target(config.residual, change, discarded);
    }
    // The environments and the last spent tensors back to the pool, for whatever the session
    // runs next.
    exec.op(|v| {
        spent.recycle_into(v);
        krylov.recycle_into(v);
        for t in lefts.into_iter().chain(rights).chain(pairs) {
            v.recycle(t);
        }
    })?;
    Ok(DmrgRun { energy, sweeps, mps })
}

/// The residual target and floor of the next sweep, from the configured residual and what the
/// sweep just run moved (`change`, NaN after the first) and dropped (module docs).
fn next_target(residual: f64, change: f64, discarded: f64) -> Tolerance {
    let floor = (RESIDUAL_FACTOR * discarded.sqrt()).max(residual);
    let moved = if change.is_nan() { f64::INFINITY } else { change };
    let target = (RESIDUAL_FACTOR * moved.max(discarded).sqrt()).min(MAX_RESIDUAL).max(floor);
    Tolerance { target, floor }
}

/// Brings `mps` to right-canonical form (every site but the first right-orthonormal) and
/// normalises it.
fn right_canonicalise(exec: &mut impl Executor, mps: &mut Mps) -> Result<(), MpsError> {
    for i in (1..mps.sites()).rev() {
        let svd = exec.op(|v| v.svd(mps.tensors[i].read(), &[0], Truncation::none()))??;
        let Svd { u, s, vh, .. } = svd;
        let prev = &mps.tensors[i - 1];
        let absorbed = exec.op(|v| -> Result<_, OpError> {
            let us = v.mul(u.read(), s.read())?;
            let absorbed =
                v.einsum_with_path("asb,bk->ask", &[prev.read(), us.read()], &[(0, 1)])?;
            v.recycle(u);
            v.recycle(s);
            v.recycle(us);
            Ok(absorbed)
        })??;
        let old = [
            std::mem::replace(&mut mps.tensors[i - 1], absorbed),
            std::mem::replace(&mut mps.tensors[i], vh),
        ];
        exec.op(|v| old.into_iter().for_each(|t| v.recycle(t)))?;
    }
    let first = &mps.tensors[0];
    let normalised = exec.op(|v| -> Result<_, OpError> {
        let norm = v.norm(first.read())?;
        v.scale(first.read(), 1.0 / norm)
    })??;
    let old = std::mem::replace(&mut mps.tensors[0], normalised);
    exec.op(|v| v.recycle(old))?;
    Ok(())
}
