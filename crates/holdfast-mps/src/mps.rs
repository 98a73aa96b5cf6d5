//! [`Mps`]: a matrix product state of a spin-1/2 chain.
//!
//! Site tensors are `[left bond, physical, right bond]`, the outer bonds of dimension 1. The
//! physical basis is `0 = up` (`Z = +1`), `1 = down`.

use holdfast::{Element, LinalgElement, Tensor};

use crate::env::{grow_left, site_operator, trivial};
use crate::{Executor, Mpo, MpsError};

/// A matrix product state on an open chain.
///
/// # Examples
///
/// ```
/// use holdfast::CpuBackend;
/// use holdfast_mps::{Model, Mpo, Mps};
///
/// let backend = CpuBackend::builder().threads(1).build()?;
/// let up = Mps::<f64>::all_up(4)?;
/// let mpo = Mpo::from_model(&Model::Tfim { j: 1.0, h: 0.5 }, 4)?;
/// let mut session = backend.open_session()?;
/// // All up: each of the three bonds gives -J, the field has no expectation.
/// assert!((up.energy(&mut session, &mpo)? + 3.0).abs() < 1e-14);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Mps<T: Element = f64> {
    pub(crate) tensors: Vec<Tensor<T>>,
}

impl<T: LinalgElement> Mps<T> {
    /// The product state of `sites` sites, each in the single-site state `site` (amplitudes of
    /// up and down).
    ///
    /// # Errors
    ///
    /// [`MpsError::TooFewSites`] for fewer than two sites.
    pub fn product(sites: usize, site: impl Fn(usize) -> [T; 2]) -> Result<Self, MpsError> {
        if sites < 2 {
            return Err(MpsError::TooFewSites { sites });
        }
        let tensors = (0..sites)
            .map(|i| Tensor::from_vec([1, 2, 1], site(i).to_vec()))
            .collect::<Result<_, _>>()?;
        Ok(Mps { tensors })
    }

    /// Every spin up along +Z.
    ///
    /// # Errors
    ///
    /// As [`product`](Self::product).
    pub fn all_up(sites: usize) -> Result<Self, MpsError> {
        Self::product(sites, |_| [T::ONE, T::ZERO])
    }

    /// The Néel state: up on even sites, down on odd ones.
    ///
    /// # Errors
    ///
    /// As [`product`](Self::product).
    pub fn neel(sites: usize) -> Result<Self, MpsError> {
        Self::product(sites, |i| {
            if i.is_multiple_of(2) { [T::ONE, T::ZERO] } else { [T::ZERO, T::ONE] }
        })
    }

    /// Every spin along +X: `(|↑⟩ + |↓⟩)/√2` on each site.
    ///
    /// # Errors
    ///
    /// As [`product`](Self::product).
    pub fn all_plus(sites: usize) -> Result<Self, MpsError> {
        let a = T::from_f64(std::f64::consts::FRAC_1_SQRT_2);
        Self::product(sites, |_| [a, a])
    }

    /// Number of sites.
    #[must_use]
    pub fn sites(&self) -> usize {
        self.tensors.len()
    }

    /// The tensor of site `i` (`[left, physical, right]`).
    ///
    /// # Panics
    ///
    /// When `i` is not below [`sites`](Self::sites).
    #[must_use]
    pub fn tensor(&self, i: usize) -> &Tensor<T> {
        &self.tensors[i]
    }

    /// The dimensions of the `sites - 1` inner bonds.
    #[must_use]
    pub fn bond_dims(&self) -> Vec<usize> {
        self.tensors[1..].iter().map(|t| t.shape()[0]).collect()
    }

    /// The largest bond dimension.
    #[must_use]
    pub fn max_bond(&self) -> usize {
        self.tensors[1..].iter().map(|t| t.shape()[0]).max().unwrap_or(1)
    }

    /// `⟨ψ|H|ψ⟩ / ⟨ψ|ψ⟩` for the operator `mpo`, contracted from the left on `exec`.
    ///
    /// # Errors
    ///
    /// [`MpsError::InvalidParameter`] when `mpo` has another number of sites; an operation's
    /// error.
    pub fn energy(&self, exec: &mut impl Executor, mpo: &Mpo) -> Result<f64, MpsError> {
        if mpo.sites() != self.sites() {
            return Err(MpsError::InvalidParameter(format!(
                "an MPO of {} sites on an MPS of {}",
                mpo.sites(),
                self.sites()
            )));
        }
        let identity = site_operator([[T::ONE, T::ZERO], [T::ZERO, T::ONE]])?;
        let mut h = trivial()?;
        let mut n = trivial()?;
        for (i, a) in self.tensors.iter().enumerate() {
            h = grow_left(exec, &h, a, &mpo.tensor_as::<T>(i)?)?;
            n = grow_left(exec, &n, a, &identity)?;
        }
        Ok(h.as_slice()[0].re_f64() / n.as_slice()[0].re_f64())
    }
}

impl Mps<f64> {
    /// A random state of bond dimension at most `chi` (each bond also at most what its two sides
    /// can hold), from a fixed `seed`: entries uniform in `[-1, 1)`, not normalised.
    ///
    /// # Errors
    ///
    /// [`MpsError::TooFewSites`] for fewer than two sites; [`MpsError::InvalidParameter`] for a
    /// `chi` of 0.
    pub fn random(sites: usize, chi: usize, seed: u64) -> Result<Self, MpsError> {
        if sites < 2 {
            return Err(MpsError::TooFewSites { sites });
        }
        if chi == 0 {
            return Err(MpsError::InvalidParameter("bond dimension 0".to_owned()));
        }
        let bond = |i: usize| -> usize {
            // Bond i sits between sites i-1 and i; it can hold at most 2^min(i, sites - i).
            let side = i.min(sites - i);
            if side >= usize::BITS as usize - 1 { chi } else { chi.min(1 << side) }
        };
        let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            #[allow(clippy::cast_precision_loss, reason = "53 random bits into an f64")]
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            2.0 * unit - 1.0
        };
        let tensors = (0..sites)
            .map(|i| {
                let (l, r) = (bond(i), bond(i + 1));
                Tensor::from_vec([l, 2, r], (0..l * 2 * r).map(|_| next()).collect())
            })
            .collect::<Result<_, _>>()?;
        Ok(Mps { tensors })
    }
}
