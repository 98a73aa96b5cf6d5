//! The einsum peers measured in the same run as holdfast (SPEC N1, N2): numpy + opt_einsum,
//! JAX (XLA CPU) and TBLIS (pytblis as opt_einsum's backend), by `scripts/einsum_peers.py`.
//!
//! The peers are installed by this command into one virtual environment under the target
//! directory (`target/peers-venv`: numpy and opt_einsum pinned to the versions the kernels issue
//! quotes, JAX and pytblis to the versions named below), never by hand and never system-wide.
//! numpy and opt_einsum are required; when JAX or pytblis cannot be installed or imported, their
//! columns say so and the report goes on. The script runs pinned to CPU 0, every library at one
//! thread, the peers taking turns instance by instance, on the operands `holdfast bench` draws
//! (so each peer's result is checked against holdfast's by its sum and sum of squares). When asked,
//! holdfast takes its turn on each instance too (`holdfast einsum` at one thread, after the
//! peers), so that the ratios divide medians measured side by side. The OpenBLAS
//! core-type overrides some machines set for old OpenBLAS builds are removed for this command
//! alone: they slow a current numpy down.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::DynError;
use crate::cmd::{pinned, workspace_root};

/// The peers every run needs: the versions the kernels issue quotes.
const REQUIRED: &[&str] = &["numpy==2.4.*", "opt_einsum==3.4.*"];
/// The peers installed when the package index has them.
const OPTIONAL: &[&str] = &["jax[cpu]==0.10.*", "pytblis==0.0.16"];

/// Every peer, in the order of the report's columns.
pub(crate) const PEERS: [&str; 3] = ["numpy", "jax", "tblis"];

/// What one peer measured.
#[derive(Debug, Default, Clone)]
pub(crate) struct PeerRun {
    /// "numpy 2.4.6, opt_einsum 3.4.0"; `None` when the peer could not be imported.
    pub(crate) version: Option<String>,
    /// Why the peer was not measured at all.
    pub(crate) unavailable: Option<String>,
    /// Median milliseconds per instance name.
    pub(crate) medians_ms: BTreeMap<String, f64>,
    /// The result's sum and sum of squares per instance name.
    pub(crate) digests: BTreeMap<String, [f64; 2]>,
    /// Instances the peer failed on, with its message.
    pub(crate) errors: BTreeMap<String, String>,
}

/// One run of the peers script.
#[derive(Debug, Default)]
pub(crate) struct PeersRun {
    /// By peer name ([`PEERS`]).
    pub(crate) peers: BTreeMap<String, PeerRun>,
    /// The path's GEMM flops per instance name.
    pub(crate) gemm_flops: BTreeMap<String, f64>,
    /// OpenBLAS's single-thread DGEMM rate at 2048³ (GFLOP/s), when asked for.
    pub(crate) openblas_gflops: Option<f64>,
    /// holdfast's median milliseconds per instance name, from its turns beside the peers (empty
    /// when it was not asked to take them).
    pub(crate) holdfast_ms: BTreeMap<String, f64>,
}

impl PeersRun {
    /// numpy's medians (empty when numpy did not run).
    pub(crate) fn numpy_medians(&self) -> Option<&BTreeMap<String, f64>> {
        self.peers.get("numpy").map(|p| &p.medians_ms)
    }

    /// The versions of the peers that ran, joined for a sentence.
    pub(crate) fn versions(&self) -> String {
        let v: Vec<&str> = self.peers.values().filter_map(|p| p.version.as_deref()).collect();
        v.join("; ")
    }
}

/// How to run the script.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The instances folder.
    pub(crate) instances: &'a Path,
    /// Timed budget per instance and peer, seconds (after one untimed run).
    pub(crate) budget_s: f64,
    /// Only the instances whose file names contain one of these (all when empty).
    pub(crate) only: &'a [&'a str],
    /// `float64` or `complex128`.
    pub(crate) dtype: &'a str,
    /// The peers to run.
    pub(crate) peers: &'a [&'a str],
    /// Also time OpenBLAS's DGEMM at 2048³.
    pub(crate) gemm_bound: bool,
    /// The `holdfast` program, to take its turn on each instance after the peers.
    pub(crate) holdfast: Option<&'a Path>,
}

/// Installs the peers into `venv` when needed and runs the script as `request` says.
pub(crate) fn measure(venv: &Path, request: &Request<'_>) -> Result<PeersRun, DynError> {
    let python = super::venv::ensure(venv, REQUIRED, "numpy, opt_einsum")?;
    if request.peers.iter().any(|p| *p != "numpy")
        && let Err(e) = super::venv::ensure(venv, OPTIONAL, "jax, pytblis")
    {
        eprintln!("bench-report: JAX or TBLIS not installed ({e}); their columns say so");
    }
    let script = workspace_root().join("scripts/einsum_peers.py");
    let mut cmd = pinned(&python);
    cmd.arg(&script).arg(request.instances);
    cmd.args(["--budget-s", &request.budget_s.to_string(), "--dtype", request.dtype]);
    cmd.args(["--peers", &request.peers.join(",")]);
    if !request.only.is_empty() {
        cmd.args(["--filter", &request.only.join(",")]);
    }
    if request.gemm_bound {
        cmd.arg("--gemm-bound");
    }
    if let Some(holdfast) = request.holdfast {
        cmd.arg("--holdfast").arg(holdfast);
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

fn numbers(v: &Value) -> BTreeMap<String, f64> {
    v.as_object()
        .map(|o| o.iter().filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x))).collect())
        .unwrap_or_default()
}

/// The script's one JSON line.
fn parse(text: &str) -> Result<PeersRun, DynError> {
    let doc: Value = serde_json::from_str(text.trim())?;
    let peers = doc["peers"].as_object().ok_or("peers script: no peers object")?;
    let mut run = PeersRun {
        gemm_flops: numbers(&doc["gemm_flops"]),
        openblas_gflops: doc["openblas_dgemm_gflops"].as_f64(),
        holdfast_ms: numbers(&doc["holdfast"]["medians_ms"]),
        ..PeersRun::default()
    };
    for (name, p) in peers {
        let digests = p["digests"]
            .as_object()
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| Some((k.clone(), [v[0].as_f64()?, v[1].as_f64()?])))
                    .collect()
            })
            .unwrap_or_default();
        let errors = p["errors"]
            .as_object()
            .map(|o| {
                o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("?").to_owned())).collect()
            })
            .unwrap_or_default();
        let peer = PeerRun {
            version: doc["versions"][name].as_str().map(str::to_owned),
            unavailable: p["unavailable"].as_str().map(str::to_owned),
            medians_ms: numbers(&p["medians_ms"]),
            digests,
            errors,
        };
        run.peers.insert(name.clone(), peer);
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parses_the_script_output() {
        let run = parse(
            r#"{"versions": {"numpy": "numpy 2.4.6, opt_einsum 3.4.0"}, "dtype": "float64",
                "peers": {"numpy": {"medians_ms": {"a": 1.5, "b": 2}, "runs": {},
                                    "digests": {"a": [3.0, 4.5]}, "errors": {"c": "MemoryError"}},
                          "jax": {"unavailable": "ModuleNotFoundError: jax"}},
                "gemm_flops": {"a": 1e9}, "openblas_dgemm_gflops": 30.5,
                "holdfast": {"medians_ms": {"a": 0.5}, "runs": {"a": 9}, "errors": {}}}"#,
        )
        .unwrap();
        let numpy = &run.peers["numpy"];
        assert_eq!(numpy.version.as_deref(), Some("numpy 2.4.6, opt_einsum 3.4.0"));
        assert_eq!(numpy.medians_ms.get("b"), Some(&2.0));
        assert_eq!(numpy.digests.get("a"), Some(&[3.0, 4.5]));
        assert_eq!(numpy.errors.get("c").map(String::as_str), Some("MemoryError"));
        assert!(run.peers["jax"].unavailable.is_some() && run.peers["jax"].version.is_none());
        assert_eq!(run.gemm_flops.get("a"), Some(&1e9));
        assert_eq!(run.openblas_gflops, Some(30.5));
        assert_eq!(run.holdfast_ms.get("a"), Some(&0.5));
        assert!(!run.peers.contains_key("holdfast"));
        assert_eq!(run.versions(), "numpy 2.4.6, opt_einsum 3.4.0");
        assert!(parse("not json").is_err());
        assert!(parse(r#"{"versions": {}}"#).is_err());
    }
}
