//! [`ChainArgs`]: the model flags `holdfast dmrg` and `holdfast tebd` share (SPEC W6), and the
//! mapping of the algorithms' errors to the program's.

use clap::Args;
use holdfast_mps::{Model, MpsError};

use super::error::CliError;

/// The spin chain of a run.
#[derive(Debug, Clone, Args)]
pub(crate) struct ChainArgs {
    /// The model: tfim, heisenberg or xxz.
    #[arg(long, value_name = "M")]
    pub(crate) model: String,
    /// Number of sites of the open chain (at least 2).
    #[arg(long, value_name = "L")]
    pub(crate) sites: usize,
    /// The coupling J (default 1).
    #[arg(long, value_name = "J", allow_negative_numbers = true)]
    pub(crate) coupling: Option<f64>,
    /// The transverse field h of tfim (default 1).
    #[arg(long, value_name = "H", allow_negative_numbers = true)]
    pub(crate) field: Option<f64>,
    /// The anisotropy D of xxz (default 1).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub(crate) anisotropy: Option<f64>,
}

impl ChainArgs {
    /// The model the flags name, its parameters checked on an MPO of the chain.
    ///
    /// # Errors
    ///
    /// A usage error for an unknown model, a parameter the model does not have, one that is not
    /// finite, or fewer than two sites.
    pub(crate) fn model(&self) -> Result<Model, CliError> {
        let mut model: Model = self.model.parse().map_err(mps_error)?;
        if let Some(j) = self.coupling {
            model = model.with_coupling(j);
        }
        if let Some(h) = self.field {
            model = model.with_field(h).map_err(mps_error)?;
        }
        if let Some(d) = self.anisotropy {
            model = model.with_anisotropy(d).map_err(mps_error)?;
        }
        holdfast_mps::Mpo::from_model(&model, self.sites).map_err(mps_error)?;
        Ok(model)
    }
}

/// The program's error for an algorithm's.
pub(crate) fn mps_error(e: MpsError) -> CliError {
    match e {
        MpsError::Op(op) => CliError::Op(op),
        MpsError::Entry(entry) => CliError::Entry(entry),
        other => CliError::Usage(other.to_string()),
    }
}

/// The model and its parameters, for a report's first line.
pub(crate) fn describe(model: &Model) -> String {
    match *model {
        Model::Tfim { j, h } => format!("tfim (J = {j}, h = {h})"),
        Model::Heisenberg { j } => format!("heisenberg (J = {j})"),
        Model::Xxz { j, delta } => format!("xxz (J = {j}, D = {delta})"),
    }
}
