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
    // The affinity crate's Linux fallback (no hwloc), tested as well as the default backend.
    exec(with_args(cargo(), &["test", "-p", "holdfast-affinity", "--no-default-features"]))?;
    // The facade's `ndarray` feature (off by default): its interop, linted and tested.
    let ndarray = ["-p", "holdfast-tensor", "-p", "holdfast", "--features", "holdfast/ndarray"];
    let mut lint = with_args(cargo(), &["clippy"]);
    lint.args(ndarray).args(["--all-targets", "--", "-D", "warnings"]);
    exec(lint)?;
    exec(with_args(with_args(cargo(), &["test"]), &ndarray))?;
    // The loom models of the arbiter core (FIFO, no lost wake-up, exactly-once release) and of
    // the provider's lane crew (hand-off, close, panics, wake-ups), in their own target directory
    // so the normal build is not invalidated by `--cfg loom`.
    let mut loom = with_args(cargo(), &["test", "--release", "--lib"]);
    loom.args(["-p", "holdfast-arbiter", "-p", "holdfast-provider", "loom"]);
    let loom_target = crate::cmd::workspace_root().join("target").join("loom");
    loom.env("RUSTFLAGS", "--cfg loom")
        .env("LOOM_MAX_PREEMPTIONS", "2")
        .env("CARGO_TARGET_DIR", loom_target);
    exec(loom)?;
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
