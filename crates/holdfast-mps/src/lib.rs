//! Tensor-network algorithms on holdfast's public API (layer 5, SPEC §12): matrix product states
//! ([`Mps`]), matrix product operators ([`Mpo`]), the spin-1/2 chain [`Model`]s, two-site
//! [`dmrg()`] and [`tebd`](tebd::tebd) in real and imaginary time.
//!
//! Every operation of an algorithm runs through an [`Executor`]: one held session for the whole
//! run (the point of holdfast), or, for comparison, a scoped entry per operation ([`Scoped`]) or
//! the naive baseline ([`Naive`]) (SPEC W5). The
//! crate uses only what the `holdfast` facade exports (SPEC L4).
//!
//! Conventions (written up for a tensor-network user in `docs/design/mps-conventions.md`):
//! an MPS site tensor is `[left bond, physical, right bond]`; an MPO site tensor is
//! `[left bond, physical out, physical in, right bond]`; the physical basis of a spin-1/2 site is
//! `0 = up` (Z = +1), `1 = down`.
//!
//! # Examples
//!
//! The ground state of a short critical Ising chain:
//!
//! ```
//! use holdfast::CpuBackend;
//! use holdfast_mps::{DmrgConfig, Model, dmrg};
//!
//! let backend = CpuBackend::builder().threads(1).build()?;
//! let model = Model::Tfim { j: 1.0, h: 1.0 };
//! let mut session = backend.open_session()?;
//! let run = dmrg(&mut session, &model, 8, &DmrgConfig::new(vec![16]).sweeps(6))?;
//! session.close()?;
//! // The exact free-fermion energy of the open chain of 8 sites at h = J.
//! assert!((run.energy - -9.837951447459439).abs() < 1e-8, "{}", run.energy);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod centre;
pub mod dmrg;
mod env;
mod error;
mod exec;
mod models;
mod mpo;
mod mps;
mod observables;
mod spent;
pub mod tebd;

pub use dmrg::{DmrgConfig, DmrgRun, SweepStats, dmrg};
pub use error::MpsError;
pub use exec::{Executor, Naive, Scoped};
pub use models::Model;
pub use mpo::Mpo;
pub use mps::Mps;
