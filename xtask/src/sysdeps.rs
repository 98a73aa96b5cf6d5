//! System packages the workspace links against, installed by the project's own commands.
//!
//! `holdfast-affinity` links the system hwloc library through `hwlocality` (its default `hwloc`
//! feature). On Debian that needs `libhwloc-dev`, `libudev-dev` (hwloc's link line names `-ludev`)
//! and `pkg-config`. A fresh machine needs no manual step: when they are missing and we run as
//! root with `apt-get`, we install them; otherwise we stop with one line naming the exact command.

use std::process::{Command, Stdio};

use crate::DynError;

/// Debian packages needed to build the default feature set.
const PACKAGES: &[&str] = &["libhwloc-dev", "libudev-dev", "pkg-config"];

/// pkg-config modules whose presence proves the packages are installed.
const PKG_CONFIG_MODULES: &[&str] = &["hwloc", "libudev"];

/// Makes sure the system packages are present, installing them when we can.
pub(crate) fn ensure() -> Result<(), DynError> {
    if present() {
        return Ok(());
    }
    let install = format!("apt-get update && apt-get install -y {}", PACKAGES.join(" "));
    if !is_root() || !succeeds(Command::new("apt-get").arg("--version")) {
        return Err(format!(
            "missing system packages for hwloc; run as root: {install} \
             (or build without them: cargo test -p holdfast-affinity --no-default-features)"
        )
        .into());
    }
    eprintln!("xtask: installing system packages: {}", PACKAGES.join(" "));
    let mut update = Command::new("apt-get");
    update.args(["update", "-qq"]);
    crate::cmd::run(update)?;
    let mut cmd = Command::new("apt-get");
    cmd.env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y", "-qq"]).args(PACKAGES);
    crate::cmd::run(cmd)?;
    if present() {
        Ok(())
    } else {
        Err(format!("installed {} but pkg-config still cannot find hwloc", PACKAGES.join(" "))
            .into())
    }
}

fn present() -> bool {
    PKG_CONFIG_MODULES.iter().all(|m| succeeds(Command::new("pkg-config").args(["--exists", m])))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}
