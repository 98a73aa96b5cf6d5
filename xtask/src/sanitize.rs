//! `cargo xtask sanitize`: the tensor, arbiter, provider, resources, session and kernels test
//! suites under AddressSanitizer and ThreadSanitizer (nightly toolchain), and valgrind memcheck on
//! the tests of the kernels' `unsafe` blocks (SPEC B6; Miri cannot be installed on this project's machines).
//!
//! | step | toolchain and flags | target directory |
//! |---|---|---|
//! | `asan` | `rustup run nightly cargo test`, `RUSTFLAGS=-Zsanitizer=address`; then `holdfast-affinity --no-default-features` (the Linux backend's `unsafe` libc calls) | `target/sanitize-asan` |
//! | `tsan` | same, `RUSTFLAGS=-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer`, `-Zbuild-std`, suppressions in `scripts/tsan-suppressions.txt` | `target/sanitize-tsan` |
//! | `valgrind` | the pinned toolchain; `valgrind --tool=memcheck` on `holdfast-kernels`' `kernels_unsafe` test binary | `target/` (normal dev build) |
//!
//! Both sanitizer steps build for `--target x86_64-unknown-linux-gnu`, so build scripts and
//! proc-macros are not instrumented, and in their own target directories, so the normal build
//! stays valid. AddressSanitizer uses the pre-built standard library. ThreadSanitizer rebuilds it
//! with instrumentation (`-Zbuild-std`, which needs the nightly `rust-src` component): with the
//! pre-built one, the acquire of a contended `std::sync::Mutex` and the re-acquire in
//! `Condvar::wait` happen in uninstrumented code, and every mutex-protected structure (the
//! arbiter's state, rayon's latches) is reported as racy — 1216 false reports on these suites
//! when tried. `-Cunsafe-allow-abi-mismatch=sanitizer` stays for a run without `-Zbuild-std`.
//! The suppression file may name standard-library internals only, each with its reason. The
//! trybuild compile-fail test is skipped: its snapshots belong to the pinned stable compiler. The
//! first run compiles every dependency (faer above all) twice from scratch, and the standard
//! library once: expect tens of minutes on two cores. None of this is part of the CI gate
//! (`cargo xtask test`).
//!
//! Usage: `cargo xtask sanitize [asan] [tsan] [valgrind]` (default: all three, in that order;
//! every step runs, and the command fails if any step failed).

use std::path::Path;
use std::process::Command;

use crate::DynError;
use crate::cmd::{cargo, run as exec, workspace_root};

/// The host target: sanitizer flags then apply to the tests only, not to build scripts.
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// The crates whose tests run under the sanitizers: every crate with synchronisation, resource
/// accounting or `unsafe` code.
const CRATES: &[&str] = &[
    "holdfast-tensor",
    "holdfast-arbiter",
    "holdfast-provider",
    "holdfast-resources",
    "holdfast-session",
    "holdfast-kernels",
];

/// Test names skipped under the nightly toolchain: trybuild snapshots of the stable compiler.
const SKIP: &[&str] = &["session_compile_contracts"];

/// A sanitizer step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Address,
    Thread,
    Valgrind,
}

impl Step {
    fn parse(s: &str) -> Option<Step> {
        match s {
            "asan" | "address" => Some(Step::Address),
            "tsan" | "thread" => Some(Step::Thread),
            "valgrind" | "memcheck" => Some(Step::Valgrind),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Step::Address => "asan",
            Step::Thread => "tsan",
            Step::Valgrind => "valgrind",
        }
    }
}

/// Entry point of `cargo xtask sanitize [asan] [tsan] [valgrind]`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    let mut steps = Vec::new();
    for a in args {
        match Step::parse(a) {
            Some(step) if !steps.contains(&step) => steps.push(step),
            Some(_) => {}
            None => {
                return Err(format!(
                    "unknown argument to `xtask sanitize`: {a} (expected asan, tsan or valgrind)"
                )
                .into());
            }
        }
    }
    if steps.is_empty() {
        steps = vec![Step::Address, Step::Thread, Step::Valgrind];
    }
    crate::sysdeps::ensure()?;
    let mut failed = Vec::new();
    for step in steps {
        let outcome = match step {
            Step::Address | Step::Thread => sanitizer(step),
            Step::Valgrind => valgrind(),
        };
        match outcome {
            Ok(()) => eprintln!("xtask: sanitize {}: passed", step.name()),
            Err(e) => {
                eprintln!("xtask: sanitize {}: FAILED: {e}", step.name());
                failed.push(step.name());
            }
        }
    }
    if failed.is_empty() {
        eprintln!("xtask: sanitize passed");
        Ok(())
    } else {
        Err(format!("sanitize failed: {}", failed.join(", ")).into())
    }
}

/// `cargo` of the nightly toolchain through rustup, with the variables that would pin the
/// stable toolchain removed.
fn nightly_cargo() -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", "nightly", "cargo"])
        .current_dir(workspace_root())
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("CARGO")
        .env_remove("RUSTC_WRAPPER");
    cmd
}

/// One sanitizer run of the test suites of [`CRATES`]; under AddressSanitizer, also the Linux
/// affinity backend (`holdfast-affinity --no-default-features`, whose `sched_{get,set}affinity`
/// calls are `unsafe`; the default hwloc backend has none of ours) and the `holdfast` program's
/// unit tests (its counting global allocator is `unsafe`).
fn sanitizer(step: Step) -> Result<(), DynError> {
    suites(step)?;
    if step == Step::Address {
        let mut cmd = nightly_cargo();
        cmd.args(["test", "--target", TARGET, "-p", "holdfast-affinity", "--no-default-features"])
            .args(["--lib", "--tests"]);
        address_env(&mut cmd);
        exec(cmd)?;
        // The `holdfast` program's counting global allocator (`cli/alloc_count.rs`): its unit
        // tests run inside the binary whose every allocation goes through it.
        let mut cmd = nightly_cargo();
        cmd.args(["test", "--target", TARGET, "-p", "holdfast-cli", "--bin", "holdfast"]);
        address_env(&mut cmd);
        exec(cmd)?;
    }
    Ok(())
}

/// The environment of an AddressSanitizer run.
fn address_env(cmd: &mut Command) {
    let root = workspace_root();
    cmd.env("CARGO_TARGET_DIR", root.join("target").join("sanitize-asan"))
        .env("RUSTFLAGS", "-Zsanitizer=address")
        // Leak checking on; stop at the first error, then fail the test binary.
        .env("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1");
}

/// The test suites of [`CRATES`] under one sanitizer.
fn suites(step: Step) -> Result<(), DynError> {
    let root = workspace_root();
    let mut cmd = nightly_cargo();
    cmd.args(["test", "--target", TARGET]);
    if step == Step::Thread {
        ensure_rust_src()?;
        cmd.arg("-Zbuild-std");
    }
    for c in CRATES {
        cmd.args(["-p", c]);
    }
    cmd.args(["--lib", "--tests", "--"]);
    for s in SKIP {
        cmd.args(["--skip", s]);
    }
    if step == Step::Address {
        address_env(&mut cmd);
    } else {
        let suppressions = root.join("scripts").join("tsan-suppressions.txt");
        check_suppressions(&suppressions)?;
        cmd.env("CARGO_TARGET_DIR", root.join("target").join("sanitize-tsan"))
            .env("RUSTFLAGS", "-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer")
            .env(
                "TSAN_OPTIONS",
                format!(
                    "suppressions={}:halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0",
                    suppressions.display()
                ),
            );
    }
    exec(cmd)
}

/// `-Zbuild-std` needs the standard library's sources in the nightly toolchain: installed here
/// (once, by rustup) when missing, as a fresh machine lacks them.
fn ensure_rust_src() -> Result<(), DynError> {
    let out = Command::new("rustup")
        .args(["component", "list", "--toolchain", "nightly", "--installed"])
        .output()
        .map_err(|e| format!("could not run rustup: {e}"))?;
    if String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim().starts_with("rust-src")) {
        return Ok(());
    }
    let mut add = Command::new("rustup");
    add.args(["component", "add", "rust-src", "--toolchain", "nightly"]);
    eprintln!("$ rustup component add rust-src --toolchain nightly");
    exec(add).map_err(|e| -> DynError {
        format!(
            "ThreadSanitizer rebuilds the standard library (-Zbuild-std), which needs the nightly \
             `rust-src` component, and installing it failed: {e}"
        )
        .into()
    })
}

/// Every suppression must name a standard-library frame and carry a `# reason:` line above it.
fn check_suppressions(path: &Path) -> Result<(), DynError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut reason = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            reason = false;
        } else if line.starts_with("# reason:") {
            reason = true;
        } else if !line.starts_with('#') {
            let (_, frame) = line.split_once(':').unwrap_or(("", line));
            let std_frame = ["std::", "core::", "alloc::"].iter().any(|p| frame.starts_with(p));
            if !reason || !std_frame {
                return Err(format!(
                    "{}:{}: `{line}`: a suppression names a standard-library frame \
                     (std::, core::, alloc::) and follows a `# reason:` line",
                    path.display(),
                    n + 1
                )
                .into());
            }
        }
    }
    Ok(())
}

/// valgrind memcheck on the tests of the kernels' two `unsafe` blocks (`faer_typed` and
/// `advise_huge_pages`), built by the pinned toolchain.
fn valgrind() -> Result<(), DynError> {
    let probe = Command::new("valgrind").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err("valgrind is not installed (Debian: apt-get install valgrind)".into());
    }
    let mut build = cargo();
    build.args([
        "test",
        "-p",
        "holdfast-kernels",
        "--test",
        "kernels_unsafe",
        "--no-run",
        "--message-format=json",
    ]);
    eprintln!("$ cargo test -p holdfast-kernels --test kernels_unsafe --no-run");
    let out = build.output().map_err(|e| format!("could not start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building kernels_unsafe failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let mut executable = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if msg["target"]["name"] == "kernels_unsafe"
            && let Some(path) = msg["executable"].as_str()
        {
            executable = Some(path.to_owned());
        }
    }
    let executable = executable.ok_or("cargo reported no kernels_unsafe test executable")?;
    let mut cmd = Command::new("valgrind");
    cmd.args([
        "--tool=memcheck",
        "--error-exitcode=99",
        "--track-origins=yes",
        "--leak-check=no",
        "--quiet",
        &executable,
        "--test-threads=1",
    ])
    .current_dir(workspace_root());
    exec(cmd)
}
