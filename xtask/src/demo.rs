//! `cargo xtask demo`: the main job. Installs the system packages the workspace links against
//! when they are missing (as `cargo xtask test` does), then builds the `holdfast` program in
//! release and runs `holdfast demo`, passing any extra arguments through.

use crate::DynError;
use crate::cmd::{cargo, run as exec};

/// Entry point of `cargo xtask demo [args…]`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    crate::sysdeps::ensure()?;
    let mut cmd = cargo();
    cmd.args(["run", "--release", "-p", "holdfast-cli", "--bin", "holdfast", "--", "demo"]);
    // `cargo xtask demo -- --threads 1` (as the README writes it) and `cargo xtask demo
    // --threads 1` mean the same: a leading `--` is a separator, not an argument.
    let args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    };
    cmd.args(args);
    exec(cmd)
}
