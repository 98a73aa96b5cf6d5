//! [`Model`]: the open spin-1/2 chains of SPEC W2, as nearest-neighbour terms.
//!
//! Pauli matrices `X`, `Y`, `Z`; `S = σ/2`. The physical basis of a site is `0 = up` (`Z = +1`),
//! `1 = down`. Every model here is real in this basis: `S^x S^x + S^y S^y` is written as
//! `(S⁺S⁻ + S⁻S⁺)/2`.

use crate::MpsError;

/// A 2×2 real operator, row-major: `op[out][in]`.
pub(crate) type Op2 = [[f64; 2]; 2];

pub(crate) const IDENTITY: Op2 = [[1.0, 0.0], [0.0, 1.0]];
const PAULI_X: Op2 = [[0.0, 1.0], [1.0, 0.0]];
const PAULI_Z: Op2 = [[1.0, 0.0], [0.0, -1.0]];
const SZ: Op2 = [[0.5, 0.0], [0.0, -0.5]];
/// `S⁺ = |up⟩⟨down|`.
const S_PLUS: Op2 = [[0.0, 1.0], [0.0, 0.0]];
/// `S⁻ = |down⟩⟨up|`.
const S_MINUS: Op2 = [[0.0, 0.0], [1.0, 0.0]];

/// An open spin-1/2 chain (SPEC W2).
///
/// # Examples
///
/// ```
/// use holdfast_mps::Model;
///
/// let m: Model = "heisenberg".parse::<Model>()?.with_coupling(2.0);
/// assert_eq!(m, Model::Heisenberg { j: 2.0 });
/// # Ok::<(), holdfast_mps::MpsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// Transverse-field Ising: `H = -J Σ Z_i Z_{i+1} - h Σ X_i`.
    Tfim {
        /// The coupling `J`.
        j: f64,
        /// The transverse field `h`.
        h: f64,
    },
    /// Heisenberg: `H = J Σ S_i · S_{i+1}`.
    Heisenberg {
        /// The coupling `J`.
        j: f64,
    },
    /// XXZ: `H = J Σ (S^x S^x + S^y S^y + D S^z S^z)`.
    Xxz {
        /// The coupling `J`.
        j: f64,
        /// The anisotropy `D`.
        delta: f64,
    },
}

impl std::str::FromStr for Model {
    type Err = MpsError;

    /// `tfim`, `heisenberg` or `xxz`, with `J = 1`, `h = 1` and `D = 1`.
    fn from_str(name: &str) -> Result<Self, MpsError> {
        match name {
            "tfim" => Ok(Model::Tfim { j: 1.0, h: 1.0 }),
            "heisenberg" => Ok(Model::Heisenberg { j: 1.0 }),
            "xxz" => Ok(Model::Xxz { j: 1.0, delta: 1.0 }),
            other => Err(MpsError::InvalidParameter(format!(
                "unknown model {other:?} (expected tfim, heisenberg or xxz)"
            ))),
        }
    }
}

/// One nearest-neighbour term `c · A_i B_{i+1}`.
pub(crate) struct Bond {
    pub(crate) c: f64,
    pub(crate) left: Op2,
    pub(crate) right: Op2,
}

impl Model {
    /// The model with coupling `J`.
    #[must_use]
    pub fn with_coupling(self, j: f64) -> Self {
        match self {
            Model::Tfim { h, .. } => Model::Tfim { j, h },
            Model::Heisenberg { .. } => Model::Heisenberg { j },
            Model::Xxz { delta, .. } => Model::Xxz { j, delta },
        }
    }

    /// The model with transverse field `h` (only the Ising model has one).
    ///
    /// # Errors
    ///
    /// [`MpsError::InvalidParameter`] for a model without a field.
    pub fn with_field(self, h: f64) -> Result<Self, MpsError> {
        match self {
            Model::Tfim { j, .. } => Ok(Model::Tfim { j, h }),
            other => Err(MpsError::InvalidParameter(format!("{} has no field", other.name()))),
        }
    }

    /// The model with anisotropy `D` (only XXZ has one).
    ///
    /// # Errors
    ///
    /// [`MpsError::InvalidParameter`] for a model without an anisotropy.
    pub fn with_anisotropy(self, delta: f64) -> Result<Self, MpsError> {
        match self {
            Model::Xxz { j, .. } => Ok(Model::Xxz { j, delta }),
            other => Err(MpsError::InvalidParameter(format!("{} has no anisotropy", other.name()))),
        }
    }

    /// The model's name (`tfim`, `heisenberg`, `xxz`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Model::Tfim { .. } => "tfim",
            Model::Heisenberg { .. } => "heisenberg",
            Model::Xxz { .. } => "xxz",
        }
    }

    /// The exact ground-state energy where this crate knows it in closed form: the Ising chain,
    /// from its free-fermion single-particle energies (Lieb, Schultz and Mattis; Pfeuty). In
    /// Majorana operators the chain is `H = i Σ a_j M_jk b_k` with `M` bidiagonal (`h` on the
    /// diagonal, `-J` beside it), so `E₀ = -Σ_k σ_k(M)`. The singular values are read from the
    /// `2L × 2L` symmetric tridiagonal matrix with zero diagonal and `h, J, h, J, …, h` beside
    /// it, whose eigenvalues are `±σ_k` (no squaring, so the exponentially small edge mode of
    /// the ordered phase keeps its accuracy), through the session's `eigh`. `None` for the
    /// other models.
    ///
    /// # Errors
    ///
    /// [`MpsError::TooFewSites`] for fewer than two sites; an operation's error.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast::CpuBackend;
    /// use holdfast_mps::Model;
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let mut session = backend.open_session()?;
    /// // No field: the classical ground state, -J per bond.
    /// let e = Model::Tfim { j: 1.0, h: 0.0 }.exact_energy(&mut session, 5)?.unwrap();
    /// assert!((e + 4.0).abs() < 1e-12);
    /// assert!(Model::Heisenberg { j: 1.0 }.exact_energy(&mut session, 5)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exact_energy(
        &self,
        exec: &mut impl crate::Executor,
        sites: usize,
    ) -> Result<Option<f64>, MpsError> {
        if sites < 2 {
            return Err(MpsError::TooFewSites { sites });
        }
        let Model::Tfim { j, h } = *self else { return Ok(None) };
        let n = 2 * sites;
        let mut majorana = vec![0.0; n * n];
        for k in 0..n - 1 {
            let value = if k % 2 == 0 { h } else { j };
            majorana[k * n + k + 1] = value;
            majorana[(k + 1) * n + k] = value;
        }
        let majorana = holdfast::Tensor::from_vec([n, n], majorana)?;
        let (w, _) = exec.op(|v| v.eigh(majorana.read()))??;
        Ok(Some(-0.5 * w.as_slice().iter().map(|x| x.abs()).sum::<f64>()))
    }

    /// Its parameters are finite numbers.
    pub(crate) fn validate(&self) -> Result<(), MpsError> {
        let finite = match *self {
            Model::Tfim { j, h } => j.is_finite() && h.is_finite(),
            Model::Heisenberg { j } => j.is_finite(),
            Model::Xxz { j, delta } => j.is_finite() && delta.is_finite(),
        };
        if finite {
            Ok(())
        } else {
            Err(MpsError::InvalidParameter(format!("{self:?} has a parameter that is not finite")))
        }
    }

    /// The on-site term of every site.
    pub(crate) fn onsite(&self) -> Op2 {
        match *self {
            Model::Tfim { h, .. } => scaled(PAULI_X, -h),
            Model::Heisenberg { .. } | Model::Xxz { .. } => [[0.0; 2]; 2],
        }
    }

    /// The nearest-neighbour terms of every bond.
    pub(crate) fn bonds(&self) -> Vec<Bond> {
        let xy_z = |j: f64, jz: f64| {
            vec![
                Bond { c: j / 2.0, left: S_PLUS, right: S_MINUS },
                Bond { c: j / 2.0, left: S_MINUS, right: S_PLUS },
                Bond { c: jz, left: SZ, right: SZ },
            ]
        };
        match *self {
            Model::Tfim { j, .. } => vec![Bond { c: -j, left: PAULI_Z, right: PAULI_Z }],
            Model::Heisenberg { j } => xy_z(j, j),
            Model::Xxz { j, delta } => xy_z(j, j * delta),
        }
    }
}

fn scaled(op: Op2, c: f64) -> Op2 {
    [[op[0][0] * c, op[0][1] * c], [op[1][0] * c, op[1][1] * c]]
}
