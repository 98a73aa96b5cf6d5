//! TEBD (SPEC W4): second-order Trotter evolution of an MPS under a nearest-neighbour
//! Hamiltonian, in real time (complex throughout) or imaginary time, with SVD truncation.
//!
//! # The step
//!
//! With the bond Hamiltonians `h_i` (below, in `gates.rs`), one step of length `dt` is
//! `Π_{i = L-2 … 0} exp(-i h_i dt/2) · Π_{i = 0 … L-2} exp(-i h_i dt/2)`: a sweep to the right
//! applying every bond's half-step gate in order, then a sweep back to the left. The product is
//! symmetric, hence second order (error `O(dt³)` per step, `O(dt²)` over a fixed time). Each gate
//! acts on the two-site tensor of its bond while the orthogonality centre is there, so every
//! truncation (at most `χ` values, cutoff on the relative discarded weight) is optimal for that
//! bond; the kept singular values are renormalised, so the state stays normalised (imaginary
//! time needs it; real time loses only what truncation drops).
//!
//! # Observables
//!
//! After every step (and at time 0): `⟨Z_i⟩`, `⟨X_i⟩`, the energy `⟨H⟩` through the MPO, and the
//! entanglement entropy `-Σ p ln p` (`p = s²`) of every bond, from the singular values of the
//! backward sweep (the centre is on that bond then; the gates that follow act on one side only,
//! so in real time they leave its spectrum unchanged).
//!
//! The tensors a gate replaces go back to the session's pool in the entry of the next gate's
//! contraction, and the Schmidt values are written in a list kept for the whole run, so a step
//! at settled bond dimensions is served by the pool.

mod gates;

use std::time::Instant;

use holdfast::{OpError, Svd, Tensor, Truncation, c64};

use crate::centre::absorb;
use crate::observables::local_expectations;
use crate::spent::Spent;
use crate::{Executor, Model, Mpo, Mps, MpsError};

/// The initial product state of a [`tebd`] run (SPEC W4).
///
/// # Examples
///
/// ```
/// use holdfast_mps::tebd::InitialState;
///
/// assert_eq!("neel".parse::<InitialState>()?, InitialState::Neel);
/// # Ok::<(), holdfast_mps::MpsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitialState {
    /// Every spin up along +Z.
    #[default]
    Up,
    /// Up on even sites, down on odd ones.
    Neel,
    /// Every spin along +X.
    Plus,
}

impl std::str::FromStr for InitialState {
    type Err = MpsError;

    fn from_str(name: &str) -> Result<Self, MpsError> {
        match name {
            "up" => Ok(InitialState::Up),
            "neel" => Ok(InitialState::Neel),
            "plus" => Ok(InitialState::Plus),
            other => Err(MpsError::InvalidParameter(format!(
                "unknown initial state {other:?} (expected up, neel or plus)"
            ))),
        }
    }
}

/// Settings of a [`tebd`] run.
///
/// # Examples
///
/// ```
/// use holdfast_mps::tebd::TebdConfig;
///
/// let config = TebdConfig::new(0.05, 1.0).bond_dim(32);
/// assert_eq!(config.steps(), 20);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TebdConfig {
    dt: f64,
    time: f64,
    imaginary: bool,
    bond_dim: usize,
    cutoff: f64,
}

impl TebdConfig {
    /// Steps of `dt` up to `time` (real time, bond dimension 64, cutoff 1e-12).
    #[must_use]
    pub fn new(dt: f64, time: f64) -> Self {
        TebdConfig { dt, time, imaginary: false, bond_dim: 64, cutoff: 1e-12 }
    }

    /// Imaginary-time evolution `exp(-τH)` (towards the ground state) instead of `exp(-iHt)`.
    #[must_use]
    pub fn imaginary(self, imaginary: bool) -> Self {
        TebdConfig { imaginary, ..self }
    }

    /// The largest bond dimension kept.
    #[must_use]
    pub fn bond_dim(self, bond_dim: usize) -> Self {
        TebdConfig { bond_dim, ..self }
    }

    /// The relative discarded-weight cutoff of each truncation.
    #[must_use]
    pub fn cutoff(self, cutoff: f64) -> Self {
        TebdConfig { cutoff, ..self }
    }

    /// The number of steps: `time / dt`, rounded.
    #[must_use]
    pub fn steps(&self) -> usize {
        let n = (self.time / self.dt).round();
        if (0.0..1e9).contains(&n) {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "checked range"
            )]
            let n = n as usize;
            n
        } else {
            0
        }
    }

    fn validate(&self) -> Result<(), MpsError> {
        let bad = |what: String| Err(MpsError::InvalidParameter(what));
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return bad(format!("the time step must be positive, got {}", self.dt));
        }
        if !(self.time.is_finite() && self.time >= 0.0) {
            return bad(format!("the total time must be at least 0, got {}", self.time));
        }
        if self.time / self.dt > 1e7 {
            return bad(format!("{} steps of {} is too many", self.time / self.dt, self.dt));
        }
        if self.bond_dim == 0 {
            return bad("bond dimension 0".to_owned());
        }
        if !(0.0..=1.0).contains(&self.cutoff) {
            return bad(format!("the cutoff {} is not in [0, 1]", self.cutoff));
        }
        Ok(())
    }
}

/// What a [`tebd`] run measured at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct TebdStep {
    /// The time (imaginary time for an imaginary-time run).
    pub time: f64,
    /// `⟨H⟩`.
    pub energy: f64,
    /// `⟨Z_i⟩` per site.
    pub z: Vec<f64>,
    /// `⟨X_i⟩` per site.
    pub x: Vec<f64>,
    /// The entanglement entropy of every bond (natural logarithm).
    pub entropy: Vec<f64>,
    /// The largest bond dimension.
    pub max_bond: usize,
    /// The largest relative discarded weight of the step's truncations.
    pub discarded_weight: f64,
    /// Wall-clock seconds of the step (0 at time 0).
    pub seconds: f64,
}

/// The result of a [`tebd`] run.
#[derive(Debug, Clone)]
pub struct TebdRun {
    /// Time 0, then one entry per step.
    pub steps: Vec<TebdStep>,
    /// The final state (orthogonality centre on site 0).
    pub mps: Mps<c64>,
}

/// Evolves `init` under `model` on an open chain of `sites` sites by second-order TEBD, every
/// operation on `exec` (SPEC W4, W5).
///
/// # Errors
///
/// [`MpsError::TooFewSites`], [`MpsError::InvalidParameter`] for a bad configuration or model
/// (before any operation runs); an operation's error.
///
/// # Examples
///
/// ```
/// use holdfast::CpuBackend;
/// use holdfast_mps::Model;
/// use holdfast_mps::tebd::{InitialState, TebdConfig, tebd};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let mut session = backend.open_session()?;
/// let model = Model::Tfim { j: 1.0, h: 1.0 };
/// let run = tebd(&mut session, &model, 6, InitialState::Up, &TebdConfig::new(0.05, 0.5))?;
/// assert_eq!(run.steps.len(), 11);
/// assert_eq!(run.steps[0].z, vec![1.0; 6]);
/// // Real-time evolution conserves the energy (up to the Trotter error).
/// assert!((run.steps[10].energy - run.steps[0].energy).abs() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tebd(
    exec: &mut impl Executor,
    model: &Model,
    sites: usize,
    init: InitialState,
    config: &TebdConfig,
) -> Result<TebdRun, MpsError> {
    tebd_observed(exec, model, sites, init, config, |_| ())
}

/// [`tebd`], calling `observe` with every recorded step (for progress reports).
///
/// # Errors
///
/// As [`tebd`].
///
/// # Examples
///
/// See [`tebd`].
pub fn tebd_observed(
    exec: &mut impl Executor,
    model: &Model,
    sites: usize,
    init: InitialState,
    config: &TebdConfig,
    mut observe: impl FnMut(&TebdStep),
) -> Result<TebdRun, MpsError> {
    config.validate()?;
    let mpo = Mpo::from_model(model, sites)?;
    let mut mps = match init {
        InitialState::Up => Mps::<c64>::all_up(sites)?,
        InitialState::Neel => Mps::neel(sites)?,
        InitialState::Plus => Mps::all_plus(sites)?,
    };
    let tau = config.dt / 2.0;
    let gates: Vec<Tensor<c64>> = (0..sites - 1)
        .map(|i| {
            gates::gate(exec, &gates::bond_hamiltonian(model, sites, i), tau, config.imaginary)
        })
        .collect::<Result<_, _>>()?;
    let trunc = Truncation::none().max_rank(config.bond_dim).cutoff(config.cutoff);
    let mut entropy = vec![0.0; sites - 1];
    let mut spent = Spent::with_capacity(2);
    let mut probabilities = Vec::with_capacity(config.bond_dim.min(1 << 20));
    let mut steps = Vec::with_capacity(config.steps() + 1);
    let first = measure(exec, &mps, &mpo, 0.0, &entropy, 0.0, 0.0)?;
    observe(&first);
    steps.push(first);
    for step in 1..=config.steps() {
        let started = Instant::now();
        let mut discarded: f64 = 0.0;
        for (i, right_moving) in
            (0..sites - 1).map(|i| (i, true)).chain((0..sites - 1).rev().map(|i| (i, false)))
        {
            let gate = Gate { tensor: &gates[i], trunc, right_moving };
            let weight = apply_gate(exec, &mut mps, i, &gate, &mut spent, &mut probabilities)?;
            discarded = discarded.max(weight);
            if !right_moving {
                entropy[i] = probabilities.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.ln()).sum();
            }
        }
        #[allow(clippy::cast_precision_loss, reason = "a step count")]
        let time = step as f64 * config.dt;
        let seconds = started.elapsed().as_secs_f64();
        let record = measure(exec, &mps, &mpo, time, &entropy, discarded, seconds)?;
        observe(&record);
        steps.push(record);
    }
    exec.op(|v| spent.recycle_into(v))?;
    Ok(TebdRun { steps, mps })
}

/// One gate application: the gate, the truncation, and where the centre moves.
struct Gate<'g> {
    tensor: &'g Tensor<c64>,
    trunc: Truncation,
    right_moving: bool,
}

/// Applies `gate` to bond `i`, splits the result by a truncated SVD, renormalises the kept
/// values and moves the orthogonality centre right or left. Writes the Schmidt probabilities
/// `s²` to `probabilities` and returns the relative discarded weight; the replaced site tensors
/// go to `spent`.
fn apply_gate(
    exec: &mut impl Executor,
    mps: &mut Mps<c64>,
    i: usize,
    gate: &Gate<'_>,
    spent: &mut Spent<c64>,
    probabilities: &mut Vec<f64>,
) -> Result<f64, MpsError> {
    let (a, b) = (&mps.tensors[i], &mps.tensors[i + 1]);
    let theta = exec.op(|v| {
        spent.recycle_into(v);
        v.einsum_with_path(
            "asc,ctb,uvst->auvb",
            &[a.read(), b.read(), gate.tensor.read()],
            &[(0, 1), (0, 1)],
        )
    })??;
    let trunc = gate.trunc;
    let svd = exec.op(|v| {
        let svd = v.svd(theta.read(), &[0, 1], trunc);
        v.recycle(theta);
        svd
    })??;
    let Svd { u, s, vh, discarded_weight } = svd;
    let norm = s.as_slice().iter().map(|x| x * x).sum::<f64>().sqrt();
    probabilities.clear();
    probabilities.extend(s.as_slice().iter().map(|&x| (x / norm) * (x / norm)));
    let rank = s.numel();
    let right_moving = gate.right_moving;
    let (next_i, next_j) = exec.op(|v| -> Result<_, OpError> {
        let mut kept = v.zeros::<c64>(&[rank])?;
        kept.as_mut_slice().iter_mut().zip(s.as_slice()).for_each(|(k, &x)| {
            *k = c64::new(x / norm, 0.0);
        });
        let pair = absorb(v, u, kept.read(), vh, right_moving)?;
        v.recycle(kept);
        v.recycle(s);
        Ok(pair)
    })??;
    spent.push(std::mem::replace(&mut mps.tensors[i], next_i));
    spent.push(std::mem::replace(&mut mps.tensors[i + 1], next_j));
    Ok(discarded_weight)
}

/// The observables of `mps` at `time`.
fn measure(
    exec: &mut impl Executor,
    mps: &Mps<c64>,
    mpo: &Mpo,
    time: f64,
    entropy: &[f64],
    discarded_weight: f64,
    seconds: f64,
) -> Result<TebdStep, MpsError> {
    let (zero, one) = (c64::new(0.0, 0.0), c64::new(1.0, 0.0));
    let z = [[one, zero], [zero, -one]];
    let x = [[zero, one], [one, zero]];
    let mut values = local_expectations(exec, mps, &[z, x])?.into_iter();
    let (z, x) = (values.next().unwrap_or_default(), values.next().unwrap_or_default());
    Ok(TebdStep {
        time,
        energy: mps.energy(exec, mpo)?,
        z,
        x,
        entropy: entropy.to_vec(),
        max_bond: mps.max_bond(),
        discarded_weight,
        seconds,
    })
}
