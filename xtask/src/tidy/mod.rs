//! Repository checks ("tidy"), written as ordinary functions and run as tests of this crate, in the
//! manner of rust-analyzer's `xtask/src/tidy.rs`.
//!
//! Each check returns a list of [`Violation`]s naming the file, the line and the rule, so a failure
//! says exactly what to fix. `cargo xtask tidy` prints them; `cargo test -p xtask` (part of
//! `cargo xtask test`) fails on any of them. Every check also has a test on a bad fixture proving it
//! can fail.

mod layering;
mod module_docs;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::PathBuf;

pub(crate) use layering::check_layering;
pub(crate) use module_docs::check_module_docs;

use crate::DynError;

/// One broken repository rule at one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// The file that breaks the rule.
    pub(crate) file: PathBuf,
    /// 1-based line, when the rule points at one.
    pub(crate) line: Option<usize>,
    /// The rule's short name, e.g. `layering`.
    pub(crate) rule: &'static str,
    /// What is wrong and how to fix it.
    pub(crate) message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => {
                write!(f, "{}:{line}: [{}] {}", self.file.display(), self.rule, self.message)
            }
            None => write!(f, "{}: [{}] {}", self.file.display(), self.rule, self.message),
        }
    }
}

/// Runs every repository check on the real workspace.
pub(crate) fn all_violations() -> Result<Vec<Violation>, DynError> {
    let root = crate::cmd::workspace_root();
    let mut out = check_layering(&root)?;
    out.extend(check_module_docs(&root)?);
    Ok(out)
}

/// Entry point of `cargo xtask tidy`.
pub(crate) fn run() -> Result<(), DynError> {
    let violations = all_violations()?;
    for v in &violations {
        eprintln!("{v}");
    }
    if violations.is_empty() {
        eprintln!("xtask: repository checks passed");
        Ok(())
    } else {
        Err(format!("{} repository rule violation(s)", violations.len()).into())
    }
}
