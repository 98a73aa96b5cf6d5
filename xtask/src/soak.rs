//! `cargo xtask soak`: the long soak of held sessions under load (SPEC B6).
//!
//! It runs the ignored test `soak` of `crates/holdfast-session/tests/session_soak.rs` in release:
//! worker threads open, use, close and drop sessions, scoped entries and shared scopes on two
//! engines over the same CPUs, run real and complex operations, factorizations, refused bad
//! inputs (faer's non-convergence on NaN among them), phase leases and management calls, with
//! injected panics and lane errors, checked results and a deadlock watchdog (the driver and its
//! invariants are documented in `tests/soak/mod.rs`). The short variant of the
//! same driver runs in the normal test suite, so in CI.
//!
//! Usage: `cargo xtask soak [--seconds N] [--threads LIST] [--seed S]`. `--seconds` (default 60)
//! is the whole run's length, split evenly between the thread counts of `--threads` (default
//! `2,4,8`); `--seed` fixes the random choices (the run prints the seed it used). The test prints
//! operations per second, admission-wait percentiles and the injected panics survived.

use crate::DynError;
use crate::cmd::{cargo, run as exec};

/// Entry point of `cargo xtask soak`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    let mut seconds = "60".to_owned();
    let mut threads = "2,4,8".to_owned();
    let mut seed = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next().cloned().ok_or_else(|| format!("`xtask soak {name}` needs a value"))
        };
        match a.as_str() {
            "--seconds" => seconds = value("--seconds")?,
            "--threads" => threads = value("--threads")?,
            "--seed" => seed = Some(value("--seed")?),
            other => return Err(format!("unknown argument to `xtask soak`: {other}").into()),
        }
    }
    if !seconds.parse::<f64>().is_ok_and(|s| s > 0.0 && s.is_finite()) {
        return Err(format!("`--seconds {seconds}`: expected a positive number").into());
    }
    if !threads.split(',').all(|t| t.trim().parse::<usize>().is_ok_and(|n| n > 0)) {
        return Err(
            format!("`--threads {threads}`: expected positive counts, comma-separated").into()
        );
    }
    crate::sysdeps::ensure()?;
    let mut cmd = cargo();
    cmd.args([
        "test",
        "--release",
        "-p",
        "holdfast-session",
        "--test",
        "session_soak",
        "--",
        "--ignored",
        "--exact",
        "soak",
        "--nocapture",
    ]);
    cmd.env("HOLDFAST_SOAK_SECONDS", &seconds).env("HOLDFAST_SOAK_THREADS", &threads);
    if let Some(seed) = seed {
        cmd.env("HOLDFAST_SOAK_SEED", seed);
    }
    exec(cmd)
}
