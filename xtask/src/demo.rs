//! `cargo xtask demo`: the main job. Installs the system packages the workspace links against
//! when they are missing (as `cargo xtask test` does), builds the `holdfast` program in release,
//! then runs
//!
//! 1. `holdfast dmrg` on the critical Ising chain (L = 64, bond dimensions 16 then 32), its energy
//!    beside the exact free-fermion value and its time per sweep in one held session against a
//!    scoped entry per operation and the naive baseline (`--compare`);
//! 2. `holdfast tebd`, a real-time quench of that chain from all spins up (L = 64, dt = 0.05 to
//!    t = 2, bond dimension 32): energy beside its exact (conserved) value, magnetisations, the
//!    middle bond's entanglement, and the same three ways timed (`--compare`);
//! 3. `holdfast demo`, the per-operation costs of a held session, a scoped entry and the naive
//!    baseline on small GEMMs and an MPS inner product, passing any extra arguments to it.

use crate::DynError;
use crate::cmd::{cargo, run as exec};

/// The DMRG run of the demo: the critical transverse-field Ising chain, six sweeps as in the
/// quimb comparison (`cargo xtask bench-report` times the same run).
pub(crate) const DMRG: &[&str] = &[
    "dmrg",
    "--model",
    "tfim",
    "--sites",
    "64",
    "--field",
    "1",
    "--bond-dim",
    "16,32",
    "--sweeps",
    "6",
    "--threads",
    "1",
    "--compare",
];

/// The TEBD run of the demo: a real-time quench of the same chain from all spins up.
const TEBD: &[&str] = &[
    "tebd",
    "--model",
    "tfim",
    "--sites",
    "64",
    "--field",
    "1",
    "--dt",
    "0.05",
    "--time",
    "2",
    "--bond-dim",
    "32",
    "--threads",
    "1",
    "--compare",
];

/// Entry point of `cargo xtask demo [args…]`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    crate::sysdeps::ensure()?;
    let mut build = cargo();
    build.args(["build", "--release", "-p", "holdfast-cli", "--bin", "holdfast"]);
    exec(build)?;
    let program = crate::cmd::target_dir().join("release").join("holdfast");
    let mut dmrg = std::process::Command::new(&program);
    dmrg.args(DMRG);
    exec(dmrg)?;
    println!();
    let mut tebd = std::process::Command::new(&program);
    tebd.args(TEBD);
    exec(tebd)?;
    println!();
    let mut demo = std::process::Command::new(&program);
    demo.arg("demo");
    // `cargo xtask demo -- --threads 1` (as the README writes it) and `cargo xtask demo
    // --threads 1` mean the same: a leading `--` is a separator, not an argument.
    let args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    };
    demo.args(args);
    exec(demo)
}
