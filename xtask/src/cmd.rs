//! Running child processes: one place that echoes the command, runs it from the workspace root and
//! turns a non-zero exit into an error naming the command.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::DynError;

/// The workspace root (the parent of `xtask/`).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Cargo's target directory: `$CARGO_TARGET_DIR`, or `target/` in the workspace.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// A `cargo` command run from the workspace root.
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(cargo_program());
    cmd.current_dir(workspace_root());
    cmd
}

/// Runs `cmd`, echoing it first; fails with the command line when it exits non-zero.
pub(crate) fn run(mut cmd: Command) -> Result<(), DynError> {
    let line = describe(&cmd);
    eprintln!("$ {line}");
    let status = cmd.status().map_err(|e| format!("could not start `{line}`: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{line}` failed ({status})").into()) }
}

fn describe(cmd: &Command) -> String {
    let mut parts = Vec::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            parts.push(format!("{}={}", k.to_string_lossy(), v.to_string_lossy()));
        }
    }
    parts.push(
        Path::new(cmd.get_program())
            .file_name()
            .map_or_else(|| cmd.get_program().to_string_lossy(), |n| n.to_string_lossy())
            .into_owned(),
    );
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// The `cargo` binary that invoked us (falls back to `cargo` on the `PATH`).
pub(crate) fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// `program` pinned to CPU 0 when `taskset` exists: single-thread measurements compared side by
/// side run on one CPU, so neither migrates nor shares its core with the other's helpers.
pub(crate) fn pinned(program: impl AsRef<OsStr>) -> Command {
    let taskset = Command::new("taskset")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if taskset {
        let mut cmd = Command::new("taskset");
        cmd.args(["-c", "0"]).arg(program);
        cmd.current_dir(workspace_root());
        cmd
    } else {
        let mut cmd = Command::new(program);
        cmd.current_dir(workspace_root());
        cmd
    }
}
