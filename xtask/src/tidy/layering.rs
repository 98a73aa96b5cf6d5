//! The layering rule (SPEC §1, L1): a crate's normal and build dependencies are only crates of a
//! strictly lower layer. Crates of one layer do not know each other.
//!
//! The program-dependency rule (SPEC L3): the argument parser, progress bars, `.npy` and JSON
//! crates are dependencies of the program (`holdfast-cli`, the top layer) only, so that a consumer
//! of the facade or of any library layer compiles none of them.
//!
//! The dependency graph is read from `cargo metadata --no-deps`, so the rule sees exactly what Cargo
//! builds, including renamed and target-specific dependencies. Dev-dependencies are exempt: a test
//! may use a helper of any layer that does not create a cycle, and Cargo rejects cycles itself.

use std::path::Path;

use serde::Deserialize;

use super::Violation;
use crate::DynError;

/// The layer of each workspace crate. A `holdfast*` crate missing here is itself a violation, so
/// a new crate cannot slip in without a place in the layering.
pub(crate) const LAYERS: &[(&str, u8)] = &[
    ("holdfast-cpuset", 0),
    ("holdfast-tensor", 0),
    ("holdfast-kernels", 1),
    ("holdfast-arbiter", 1),
    ("holdfast-affinity", 1),
    ("holdfast-resources", 2),
    ("holdfast-provider", 2),
    ("holdfast-session", 3),
    ("holdfast", 4),
    ("holdfast-mps", 5),
    ("holdfast-cli", 6),
];

/// The layer of the program; every lower layer is a library.
const PROGRAM_LAYER: u8 = 6;

/// Crates only the program may depend on (normal or build dependencies; tests may use them).
pub(crate) const PROGRAM_ONLY: &[&str] = &["clap", "indicatif", "npyz", "serde", "serde_json"];

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: String,
    manifest_path: String,
    dependencies: Vec<Dependency>,
}

#[derive(Deserialize)]
struct Dependency {
    name: String,
    kind: Option<String>,
}

fn layer_of(name: &str) -> Option<u8> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|&(_, l)| l)
}

/// Checks the workspace rooted at `root` (a directory with a workspace `Cargo.toml`).
///
/// # Errors
/// When `cargo metadata` cannot run or prints something that is not its JSON format.
pub(crate) fn check_layering(root: &Path) -> Result<Vec<Violation>, DynError> {
    let mut cmd = crate::cmd::cargo();
    cmd.current_dir(root).args(["metadata", "--format-version", "1", "--no-deps", "--offline"]);
    let output = cmd.output().map_err(|e| format!("could not run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed in {}: {}",
            root.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )
        .into());
    }
    let metadata: Metadata = serde_json::from_slice(&output.stdout)?;
    Ok(violations(&metadata))
}

fn violations(metadata: &Metadata) -> Vec<Violation> {
    let mut out = Vec::new();
    for package in &metadata.packages {
        let manifest = Path::new(&package.manifest_path);
        let Some(layer) = layer_of(&package.name) else {
            if package.name.starts_with("holdfast") {
                out.push(Violation {
                    file: manifest.to_path_buf(),
                    line: None,
                    rule: "layering",
                    message: format!(
                        "crate `{}` has no layer; add it to LAYERS in xtask/src/tidy/layering.rs",
                        package.name
                    ),
                });
            }
            continue;
        };
        for dep in &package.dependencies {
            if dep.kind.as_deref() == Some("dev") {
                continue;
            }
            if layer < PROGRAM_LAYER && PROGRAM_ONLY.contains(&dep.name.as_str()) {
                out.push(Violation {
                    file: manifest.to_path_buf(),
                    line: line_of(manifest, &dep.name),
                    rule: "layering",
                    message: format!(
                        "`{}` (layer {layer}, a library) depends on `{}`, a dependency of the \
                         program only (holdfast-cli, layer {PROGRAM_LAYER})",
                        package.name, dep.name
                    ),
                });
            }
            let Some(dep_layer) = layer_of(&dep.name) else { continue };
            if dep_layer >= layer {
                out.push(Violation {
                    file: manifest.to_path_buf(),
                    line: line_of(manifest, &dep.name),
                    rule: "layering",
                    message: format!(
                        "`{}` (layer {layer}) depends on `{}` (layer {dep_layer}); \
                         a crate may depend only on crates of a lower layer",
                        package.name, dep.name
                    ),
                });
            }
        }
    }
    out
}

/// The first line of `manifest` that names `dep` as a dependency key, for the message.
fn line_of(manifest: &Path, dep: &str) -> Option<usize> {
    let text = std::fs::read_to_string(manifest).ok()?;
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.starts_with(dep) && l[dep.len()..].trim_start().starts_with(['=', '.'])
        })
        .map(|i| i + 1)
}
