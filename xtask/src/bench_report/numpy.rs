//! numpy measured in the same run as holdfast: the side-by-side column of the einsum table.
//!
//! The kernels issue quotes numpy's medians from one earlier measurement; this machine is shared
//! and its speed drifts by tens of percent between hours, so the report also runs numpy now, on
//! the same instances, beside the campaign. numpy and opt_einsum are installed by this command
//! into a virtual environment under the target directory (`target/numpy-venv`, pinned to the
//! versions the issue quotes), never by hand and never system-wide. When python3 or the package
//! index is unavailable the column says "not measured" and the report goes on.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use crate::DynError;
use crate::cmd::{pinned, workspace_root};

/// The versions the kernels issue quotes (numpy 2.4, opt_einsum 3.4).
const REQUIREMENTS: &[&str] = &["numpy==2.4.*", "opt_einsum==3.4.*"];

/// numpy's medians from this run.
#[derive(Debug, Default)]
pub(crate) struct NumpyRun {
    /// "numpy 2.4.6, opt_einsum 3.4.0".
    pub(crate) versions: String,
    /// Median milliseconds per instance name.
    pub(crate) medians_ms: BTreeMap<String, f64>,
}

/// Installs numpy into `venv` when needed and times every instance of `instances` with it (or
/// those whose file names contain one of `only`, in `dtype` `float64` or `complex128`);
/// `budget_s` is the timed budget per instance (after one untimed run). The OpenBLAS core-type
/// overrides some machines set for old OpenBLAS builds are removed for this command alone: they
/// slow a current numpy down.
pub(crate) fn measure(
    venv: &Path,
    instances: &Path,
    budget_s: f64,
    only: &[&str],
    dtype: &str,
) -> Result<NumpyRun, DynError> {
    let python = super::venv::ensure(venv, REQUIREMENTS, "numpy, opt_einsum")?;
    let script = workspace_root().join("scripts/numpy_einsum_reference.py");
    let mut cmd = pinned(&python);
    cmd.arg(&script).arg(instances).args(["--budget-s", &budget_s.to_string()]);
    cmd.args(["--dtype", dtype]);
    if !only.is_empty() {
        cmd.args(["--filter", &only.join(",")]);
    }
    let out = cmd
        .env_remove("OPENBLAS_CORETYPE")
        .env_remove("OPENBLAS_L2_SIZE")
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("{} failed ({})", script.display(), out.status).into());
    }
    parse(&String::from_utf8_lossy(&out.stdout))
}

/// The script's one JSON line.
fn parse(text: &str) -> Result<NumpyRun, DynError> {
    let doc: serde_json::Value = serde_json::from_str(text.trim())?;
    let version = |k: &str| doc[k].as_str().unwrap_or("?").to_owned();
    let medians_ms = doc["medians_ms"]
        .as_object()
        .ok_or("numpy script: no medians_ms object")?
        .iter()
        .filter_map(|(k, v)| v.as_f64().map(|ms| (k.clone(), ms)))
        .collect();
    Ok(NumpyRun {
        versions: format!("numpy {}, opt_einsum {}", version("numpy"), version("opt_einsum")),
        medians_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parses_the_script_output() {
        let run = parse(
            r#"{"numpy": "2.4.6", "opt_einsum": "3.4.0", "medians_ms": {"a": 1.5, "b": 2}, "runs": {}}"#,
        )
        .unwrap();
        assert_eq!(run.versions, "numpy 2.4.6, opt_einsum 3.4.0");
        assert_eq!(run.medians_ms.get("a"), Some(&1.5));
        assert_eq!(run.medians_ms.get("b"), Some(&2.0));
        assert!(parse("not json").is_err());
        assert!(parse(r#"{"numpy": "2"}"#).is_err());
    }
}
