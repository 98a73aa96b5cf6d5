//! The peers' Python environments: one virtual environment per peer under the target
//! directory, created and filled from the package index by this command, never by hand and
//! never system-wide.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::DynError;

/// The python of the venv at `venv`, creating the venv and installing `requirements` when
/// `python -c "import <modules>"` fails there.
///
/// # Errors
///
/// When `python3` or the package index is unavailable, or the modules still do not import.
pub(crate) fn ensure(
    venv: &Path,
    requirements: &[&str],
    modules: &str,
) -> Result<PathBuf, DynError> {
    let python = venv.join("bin/python");
    let ready = |py: &Path| {
        Command::new(py)
            .args(["-c", &format!("import {modules}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if ready(&python) {
        return Ok(python);
    }
    eprintln!("bench-report: installing {} into {}", requirements.join(" "), venv.display());
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(venv);
    crate::cmd::run(create)?;
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(requirements);
    crate::cmd::run(pip)?;
    if ready(&python) {
        Ok(python)
    } else {
        Err(format!("{} cannot import {modules} after installing them", python.display()).into())
    }
}
