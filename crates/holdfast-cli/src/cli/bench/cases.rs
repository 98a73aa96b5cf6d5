//! The campaign's cases (SPEC M3): f64 add of 2 and 1024 elements, square matmul of 2, 4, 8,
//! 16, 64 and 256, SVD, QR and eigh of a 32 × 32 matrix (SPEC T4), and every einsum-benchmark
//! instance end to end on its `opt_flops` path.
//!
//! Invariant: operands are generated from a fixed seed, so two runs measure the same numbers,
//! and a case owns its operands: the [`Op`] it hands out borrows them for one measurement.

use std::path::{Path, PathBuf};

use holdfast::{Tensor, TensorRead};

use super::super::error::CliError;
use super::super::exec::{Factorization, Op};
use super::super::instance::{Instance, PathChoice};
use super::super::rng::SplitMix64;

/// Square matmul sizes of the campaign.
pub(crate) const MATMUL_SIZES: [usize; 6] = [2, 4, 8, 16, 64, 256];
/// Element counts of the elementwise add.
pub(crate) const ADD_SIZES: [usize; 2] = [2, 1024];
/// The order of the factorized square matrix.
pub(crate) const FACTOR_SIZE: usize = 32;

/// What a case runs.
#[derive(Debug)]
enum Kind {
    Add(Tensor<f64>, Tensor<f64>),
    Matmul(Tensor<f64>, Tensor<f64>),
    Factor(Factorization, Tensor<f64>),
    Einsum { spec: String, path: Option<Vec<(usize, usize)>>, operands: Vec<Tensor<f64>> },
}

/// One measured operation with its operands.
#[derive(Debug)]
pub(crate) struct Case {
    /// The name in tables (`add/2`, `matmul/64`, `svd/32`, `einsum/<instance>`).
    pub(crate) name: String,
    /// The operation family (`add`, `matmul`, `linalg`, `einsum`).
    pub(crate) family: &'static str,
    kind: Kind,
}

impl Case {
    /// An einsum's operands as reads (empty for the other kinds).
    pub(crate) fn reads(&self) -> Vec<TensorRead<'_, f64>> {
        match &self.kind {
            Kind::Einsum { operands, .. } => operands.iter().map(Tensor::read).collect(),
            Kind::Add(..) | Kind::Matmul(..) | Kind::Factor(..) => Vec::new(),
        }
    }

    /// The operation, borrowing the operands (`reads` from [`Case::reads`]).
    pub(crate) fn op<'a>(&'a self, reads: &'a [TensorRead<'a, f64>]) -> Op<'a> {
        match &self.kind {
            Kind::Add(a, b) => Op::Add(a, b),
            Kind::Matmul(a, b) => Op::Matmul(a, b),
            Kind::Factor(which, a) => Op::Factor(*which, a),
            Kind::Einsum { spec, path, .. } => {
                Op::Einsum { spec, operands: reads, path: path.as_deref() }
            }
        }
    }
}

fn random(shape: &[usize], rng: &mut SplitMix64) -> Result<Tensor<f64>, CliError> {
    Ok(Tensor::from_vec(shape.to_vec(), rng.fill(shape.iter().product()))?)
}

/// The add, matmul and factorization cases.
///
/// # Errors
///
/// Never for the built-in sizes; a tensor error otherwise.
pub(crate) fn kernel_cases(seed: u64) -> Result<Vec<Case>, CliError> {
    let mut rng = SplitMix64::new(seed);
    let mut cases = Vec::new();
    for n in ADD_SIZES {
        cases.push(Case {
            name: format!("add/{n}"),
            family: "add",
            kind: Kind::Add(random(&[n], &mut rng)?, random(&[n], &mut rng)?),
        });
    }
    for n in MATMUL_SIZES {
        cases.push(Case {
            name: format!("matmul/{n}"),
            family: "matmul",
            kind: Kind::Matmul(random(&[n, n], &mut rng)?, random(&[n, n], &mut rng)?),
        });
    }
    for which in Factorization::ALL {
        let n = FACTOR_SIZE;
        cases.push(Case {
            name: format!("{}/{n}", which.name()),
            family: "linalg",
            kind: Kind::Factor(which, random(&[n, n], &mut rng)?),
        });
    }
    Ok(cases)
}

/// The instance folder: `dir` when given, else `$HOLDFAST_EINSUM_INSTANCES`, else
/// `../shared/einsum-instances` when it exists.
pub(crate) fn instance_dir(dir: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = dir {
        return Some(dir.to_path_buf());
    }
    if let Some(env) = std::env::var_os("HOLDFAST_EINSUM_INSTANCES") {
        return Some(PathBuf::from(env));
    }
    let default = PathBuf::from("../shared/einsum-instances");
    default.is_dir().then_some(default)
}

/// One case per `*.json` instance in `dir`, in file-name order, operands random from `seed`.
///
/// # Errors
///
/// An unreadable folder or a bad instance file.
pub(crate) fn einsum_cases(dir: &Path, seed: u64) -> Result<Vec<Case>, CliError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::io(dir, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::with_capacity(files.len());
    for file in files {
        let instance = Instance::load(&file)?;
        let path = instance.path(PathChoice::OptFlops, &file)?.map(<[_]>::to_vec);
        let mut rng = SplitMix64::new(seed);
        let operands =
            instance.shapes.iter().map(|s| random(s, &mut rng)).collect::<Result<_, _>>()?;
        cases.push(Case {
            name: format!("einsum/{}", instance.name),
            family: "einsum",
            kind: Kind::Einsum { spec: instance.spec, path, operands },
        });
    }
    Ok(cases)
}
