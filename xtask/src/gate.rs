//! `cargo xtask test`: the gate CI runs (`.ci/run`), and the one command a contributor runs
//! before pushing.
//!
//! Steps, in order, stopping at the first failure: system packages, `cargo fmt --check`,
//! `cargo clippy --workspace --all-targets -D warnings`, `cargo test --workspace` (unit,
//! integration and doc tests; the repository checks of [`crate::tidy`] run as tests of this
//! crate), the session-entry audit (`cargo xtask audit --check` and `--self-test`, called
//! directly, see [`crate::audit`]), extra feature and model-checking builds, and `cargo doc` with
//! warnings denied.

use std::process::Command;

use crate::DynError;
use crate::cmd::{cargo, run as exec};

/// Runs the gate. `--quick` skips rustdoc and the extra builds (for local iteration).
pub(crate) fn run_gate(quick: bool) -> Result<(), DynError> {
    crate::sysdeps::ensure()?;
    exec(with_args(cargo(), &["fmt", "--all", "--", "--check"]))?;
    exec(with_args(cargo(), &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
    exec(with_args(cargo(), &["test", "--workspace"]))?;
    crate::audit::gate()?;
    if quick {
        return Ok(());
    }
    let mut doc = with_args(cargo(), &["doc", "--workspace", "--no-deps"]);
    doc.env("RUSTDOCFLAGS", "-D warnings");
    exec(doc)?;
    eprintln!("xtask: gate passed");
    Ok(())
}

/// Entry point of `cargo xtask test [--quick]`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    let mut quick = false;
    for a in args {
        match a.as_str() {
            "--quick" => quick = true,
            other => return Err(format!("unknown argument to `xtask test`: {other}").into()),
        }
    }
    run_gate(quick)
}

fn with_args(mut cmd: Command, args: &[&str]) -> Command {
    cmd.args(args);
    cmd
}
