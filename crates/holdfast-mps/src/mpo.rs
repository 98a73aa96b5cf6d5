//! [`Mpo`]: a matrix product operator, built from a model's nearest-neighbour terms.
//!
//! Site tensors are `[left bond, physical out, physical in, right bond]`. A nearest-neighbour
//! Hamiltonian `Σ_i F_i + Σ_i Σ_a c_a A^a_i B^a_{i+1}` is the operator-valued matrix product
//! `v_L W W … W v_R` with bond dimension `w = 2 + terms`, lower triangular:
//!
//! ```text
//!          to 0    to 1+a     to w-1
//! from 0     I       .          .
//! from 1+a   B^a     .          .
//! from w-1   F     c_a A^a      I
//! ```
//!
//! State `w-1` means "nothing placed yet", state `0` "the term is complete", `1+a` "term `a` has
//! placed `A^a` and waits for `B^a`". The first site keeps only row `w-1`, the last only column 0.

use holdfast::Tensor;

use crate::MpsError;
use crate::models::{IDENTITY, Model, Op2};

/// A matrix product operator on a chain of spin-1/2 sites.
///
/// # Examples
///
/// ```
/// use holdfast_mps::{Model, Mpo};
///
/// let mpo = Mpo::from_model(&Model::Heisenberg { j: 1.0 }, 4)?;
/// assert_eq!(mpo.sites(), 4);
/// assert_eq!(mpo.tensor(0).shape(), &[1, 2, 2, 5]);
/// assert_eq!(mpo.tensor(1).shape(), &[5, 2, 2, 5]);
/// assert_eq!(mpo.tensor(3).shape(), &[5, 2, 2, 1]);
/// # Ok::<(), holdfast_mps::MpsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Mpo {
    tensors: Vec<Tensor<f64>>,
}

impl Mpo {
    /// The Hamiltonian of `model` on an open chain of `sites` sites.
    ///
    /// # Errors
    ///
    /// [`MpsError::TooFewSites`] for fewer than two sites; [`MpsError::InvalidParameter`] for a
    /// parameter that is not finite.
    pub fn from_model(model: &Model, sites: usize) -> Result<Self, MpsError> {
        if sites < 2 {
            return Err(MpsError::TooFewSites { sites });
        }
        model.validate()?;
        let bonds = model.bonds();
        let w = bonds.len() + 2;
        let mut bulk = vec![0.0; w * 4 * w];
        let mut set = |from: usize, to: usize, op: &Op2| {
            for (s_out, row) in op.iter().enumerate() {
                for (s_in, &value) in row.iter().enumerate() {
                    bulk[((from * 2 + s_out) * 2 + s_in) * w + to] += value;
                }
            }
        };
        set(0, 0, &IDENTITY);
        set(w - 1, w - 1, &IDENTITY);
        set(w - 1, 0, &model.onsite());
        for (a, bond) in bonds.iter().enumerate() {
            set(1 + a, 0, &bond.right);
            let scaled = bond.left.map(|row| row.map(|x| x * bond.c));
            set(w - 1, 1 + a, &scaled);
        }
        let row = |from: usize| bulk[from * 4 * w..(from + 1) * 4 * w].to_vec();
        let column = |to: usize| (0..w * 4).map(|p| bulk[p * w + to]).collect::<Vec<_>>();
        let mut tensors = Vec::with_capacity(sites);
        tensors.push(Tensor::from_vec([1, 2, 2, w], row(w - 1))?);
        for _ in 1..sites - 1 {
            tensors.push(Tensor::from_vec([w, 2, 2, w], bulk.clone())?);
        }
        tensors.push(Tensor::from_vec([w, 2, 2, 1], column(0))?);
        Ok(Mpo { tensors })
    }

    /// Number of sites.
    #[must_use]
    pub fn sites(&self) -> usize {
        self.tensors.len()
    }

    /// The tensor of site `i` with elements of type `T` (the MPO is real; complex algorithms
    /// contract it with complex states).
    ///
    /// # Errors
    ///
    /// None in practice (the shape is the tensor's own).
    ///
    /// # Panics
    ///
    /// When `i` is not below [`sites`](Self::sites).
    pub fn tensor_as<T: holdfast::Element>(&self, i: usize) -> Result<Tensor<T>, MpsError> {
        let t = &self.tensors[i];
        let data = t.as_slice().iter().map(|&x| T::from_f64(x)).collect();
        Ok(Tensor::from_vec(t.shape().to_vec(), data)?)
    }

    /// The tensor of site `i` (`[left, out, in, right]`).
    ///
    /// # Panics
    ///
    /// When `i` is not below [`sites`](Self::sites).
    #[must_use]
    pub fn tensor(&self, i: usize) -> &Tensor<f64> {
        &self.tensors[i]
    }
}
