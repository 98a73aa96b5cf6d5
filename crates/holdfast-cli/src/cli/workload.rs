//! The demo's built-in workloads, generated from a seed with no input files: a chain of small
//! GEMMs ([`GemmChain`]) and an MPS inner product swept site by site ([`MpsInnerProduct`]).
//!
//! Invariant: the values stay bounded however long the run (row-stochastic matrices; MPS tensors
//! scaled so each site keeps the environment's magnitude), so results can be compared at a
//! relative tolerance, and a workload run through any [`Exec`] performs the same operations in
//! the same order.

use holdfast::Tensor;

use super::error::CliError;
use super::exec::{Exec, Step};
use super::rng::SplitMix64;

/// A built-in workload: a fixed sequence of operations with one result.
pub(crate) trait Workload {
    /// A short name for tables.
    fn name(&self) -> String;
    /// Operations one [`run`](Self::run) performs.
    fn ops(&self) -> u64;
    /// Runs every operation through `exec` and returns the result.
    ///
    /// # Errors
    ///
    /// When an entry or an operation fails.
    fn run(&self, exec: &mut impl Exec) -> Result<Tensor<f64>, CliError>;
}

/// `acc ← acc · M[i mod k]` for `len` steps, starting from the identity: `n×n` row-stochastic
/// matrices, so every product is row-stochastic too.
#[derive(Debug)]
pub(crate) struct GemmChain {
    n: usize,
    len: usize,
    mats: Vec<Tensor<f64>>,
}

impl GemmChain {
    /// `len` products of `n×n` matrices drawn from a set of `distinct` generated ones.
    ///
    /// # Errors
    ///
    /// Never for valid sizes; a tensor error otherwise.
    pub(crate) fn new(
        n: usize,
        len: usize,
        distinct: usize,
        rng: &mut SplitMix64,
    ) -> Result<Self, CliError> {
        let mut mats = Vec::with_capacity(distinct);
        for _ in 0..distinct.max(1) {
            let mut data = rng.fill(n * n);
            for row in data.chunks_mut(n) {
                // Strictly positive entries, each row summing to one.
                row.iter_mut().for_each(|x| *x += 0.5);
                let sum: f64 = row.iter().sum();
                row.iter_mut().for_each(|x| *x /= sum);
            }
            mats.push(Tensor::from_vec([n, n], data)?);
        }
        Ok(GemmChain { n, len, mats })
    }
}

impl Workload for GemmChain {
    fn name(&self) -> String {
        format!("GEMM chain {0}x{0}", self.n)
    }

    fn ops(&self) -> u64 {
        self.len as u64
    }

    fn run(&self, exec: &mut impl Exec) -> Result<Tensor<f64>, CliError> {
        let mut identity = vec![0.0; self.n * self.n];
        identity.iter_mut().step_by(self.n + 1).for_each(|x| *x = 1.0);
        let mut acc = Tensor::from_vec([self.n, self.n], identity)?;
        for m in self.mats.iter().cycle().take(self.len) {
            exec.update(&mut acc, Step::MatmulBy(m))?;
        }
        Ok(acc)
    }
}

/// `⟨ψ|φ⟩` for two random open-boundary MPS of `sites` sites, physical dimension 2 and bond
/// dimension `bond`, contracted left to right two einsums per site, `sweeps` times.
#[derive(Debug)]
pub(crate) struct MpsInnerProduct {
    bond: usize,
    sweeps: usize,
    /// Per site: (ket tensor `[l, s, r]`, bra tensor `[l, s, r]`).
    sites: Vec<(Tensor<f64>, Tensor<f64>)>,
}

/// Physical dimension of the MPS sites.
const PHYS: usize = 2;

impl MpsInnerProduct {
    /// Two random MPS.
    ///
    /// # Errors
    ///
    /// Never for valid sizes; a tensor error otherwise.
    pub(crate) fn new(
        sites: usize,
        bond: usize,
        sweeps: usize,
        rng: &mut SplitMix64,
    ) -> Result<Self, CliError> {
        let dim = |i: usize| if i == 0 || i == sites { 1 } else { bond };
        let mut tensors = Vec::with_capacity(sites);
        for i in 0..sites {
            let (l, r) = (dim(i), dim(i + 1));
            // Mean entry 1/(l·√s): a site sums l²·s products of two entries, so the environment
            // keeps a magnitude near one however many sites there are.
            #[allow(clippy::cast_precision_loss, reason = "small dimensions")]
            let scale = 2.0 / (l as f64 * (PHYS as f64).sqrt());
            let mut make = || {
                let data = rng.fill(l * PHYS * r).into_iter().map(|x| x * scale).collect();
                Tensor::from_vec([l, PHYS, r], data)
            };
            tensors.push((make()?, make()?));
        }
        Ok(MpsInnerProduct { bond, sweeps, sites: tensors })
    }
}

impl Workload for MpsInnerProduct {
    fn name(&self) -> String {
        format!("MPS inner product, {} sites, bond {}", self.sites.len(), self.bond)
    }

    fn ops(&self) -> u64 {
        (self.sweeps * self.sites.len() * 2) as u64
    }

    fn run(&self, exec: &mut impl Exec) -> Result<Tensor<f64>, CliError> {
        let mut env = Tensor::from_vec([1, 1], vec![1.0])?;
        for sweep in 0..self.sweeps {
            if sweep > 0 {
                env = Tensor::from_vec([1, 1], vec![1.0])?;
            }
            for (ket, bra) in &self.sites {
                exec.update(&mut env, Step::Einsum { spec: "ab,asc->bsc", other: ket })?;
                exec.update(&mut env, Step::Einsum { spec: "bsc,bsd->cd", other: bra })?;
            }
        }
        Ok(env)
    }
}
