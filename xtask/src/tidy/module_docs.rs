//! The documentation rule (SPEC L2, STYLE §3): every Rust source file of the workspace opens with
//! a `//!` comment saying what it owns, so every crate has crate-level docs and every module says
//! what it is for.

use std::path::{Path, PathBuf};

use super::Violation;
use crate::DynError;

/// Directories (relative to the root) whose `.rs` files are checked.
const ROOTS: &[&str] = &["crates", "xtask/src"];

/// Directory names never descended into.
const SKIP_DIRS: &[&str] = &["target", "fixtures", "ui"];

/// Checks every `.rs` file below the [`ROOTS`] of `root`.
///
/// # Errors
/// When a directory or file cannot be read.
pub(crate) fn check_module_docs(root: &Path) -> Result<Vec<Violation>, DynError> {
    let mut files = Vec::new();
    for dir in ROOTS {
        let dir = root.join(dir);
        if dir.is_dir() {
            collect_rs_files(&dir, &mut files)?;
        }
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        if !opens_with_module_doc(&text) {
            out.push(Violation {
                file,
                line: Some(1),
                rule: "module-docs",
                message: "file does not open with a `//!` comment saying what it owns".into(),
            });
        }
    }
    Ok(out)
}

/// True when the first non-blank line is an inner doc comment.
pub(crate) fn opens_with_module_doc(text: &str) -> bool {
    text.lines().map(str::trim).find(|l| !l.is_empty()).is_some_and(|l| l.starts_with("//!"))
}

fn collect_rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DynError> {
    for entry in
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            let skip =
                path.file_name().and_then(|n| n.to_str()).is_some_and(|n| SKIP_DIRS.contains(&n));
            if !skip {
                collect_rs_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}
