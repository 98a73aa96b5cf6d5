//! Finding and parsing the library source files of a workspace.
//!
//! A *library source file* is a file of a library target: for every directory `crates/<name>/`
//! with a `src/lib.rs`, the files reached from `lib.rs` through `mod` declarations (following
//! `#[path]` attributes and inline modules), skipping `#[cfg(test)]` modules. Binaries
//! (`src/main.rs`, `src/bin/`), integration tests, benches, examples and build scripts are other
//! targets and are not audited. The walk uses the file tree, not `cargo metadata`, so the whole
//! audit stays well under a second.
//!
//! Every other `.rs` file below `crates/` is listed with the reason it was not audited, so the
//! census shows what the audit did not look at.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::Item;

use super::cfg::is_test_only;
use crate::DynError;

/// One parsed library source file.
pub(crate) struct SourceFile {
    /// Workspace-relative path with `/` separators, e.g. `crates/holdfast-session/src/held.rs`.
    pub(crate) rel: String,
    /// The syntax tree.
    pub(crate) ast: syn::File,
}

/// A library file that could not be read or parsed, or a declared module whose file is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceError {
    /// Workspace-relative path of the file at fault.
    pub(crate) file: String,
    /// 1-based line, when known.
    pub(crate) line: usize,
    /// What went wrong.
    pub(crate) message: String,
}

/// Every library source file of a workspace, and what was left out.
#[derive(Default)]
pub(crate) struct Sources {
    /// The audited files, sorted by path.
    pub(crate) files: Vec<SourceFile>,
    /// Files below `crates/` that are not audited, with the reason.
    pub(crate) skipped: Vec<(String, &'static str)>,
    /// Library files that could not be parsed (the audit cannot vouch for them).
    pub(crate) errors: Vec<SourceError>,
}

/// Walks every library target below `root/crates`.
///
/// # Errors
/// When a directory cannot be listed.
pub(crate) fn collect(root: &Path) -> Result<Sources, DynError> {
    let mut out = Sources::default();
    let mut test_only = BTreeSet::new();
    let crates_dir = root.join("crates");
    let mut crate_dirs = Vec::new();
    if crates_dir.is_dir() {
        for entry in std::fs::read_dir(&crates_dir)
            .map_err(|e| format!("cannot list {}: {e}", crates_dir.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                crate_dirs.push(path);
            }
        }
    }
    crate_dirs.sort();
    for dir in &crate_dirs {
        let lib = dir.join("src").join("lib.rs");
        if lib.is_file() {
            let mut walker = Walker { root, out: &mut out, test_only: &mut test_only };
            walker.file(&lib, &dir.join("src"));
        }
    }
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let audited: BTreeSet<String> = out.files.iter().map(|f| f.rel.clone()).collect();
    let mut all = Vec::new();
    for dir in &crate_dirs {
        list_rs(dir, &mut all)?;
    }
    all.sort();
    for path in all {
        let rel = relative(root, &path);
        if audited.contains(&rel) || out.errors.iter().any(|e| e.file == rel) {
            continue;
        }
        let reason = if test_only.contains(&rel) { "cfg(test) module" } else { skip_reason(&rel) };
        out.skipped.push((rel, reason));
    }
    Ok(out)
}

/// Why a file that is not reached from `lib.rs` is not audited.
fn skip_reason(rel: &str) -> &'static str {
    let parts: Vec<&str> = rel.split('/').collect();
    // crates/<name>/<area>/...
    match parts.get(2).copied() {
        Some("tests") => "integration test target",
        Some("benches") => "bench target",
        Some("examples") => "example target",
        Some("build.rs") => "build script",
        Some("src") if parts.get(3) == Some(&"main.rs") || parts.get(3) == Some(&"bin") => {
            "binary target"
        }
        _ => "not reached from lib.rs",
    }
}

struct Walker<'a> {
    root: &'a Path,
    out: &'a mut Sources,
    test_only: &'a mut BTreeSet<String>,
}

impl Walker<'_> {
    /// Parses `path` and follows its `mod` declarations; `mod_dir` is where its child modules live.
    fn file(&mut self, path: &Path, mod_dir: &Path) {
        let rel = relative(self.root, path);
        if self.out.files.iter().any(|f| f.rel == rel) {
            return; // two `#[path]`s to one file: audit it once
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                self.error(rel, 1, format!("cannot read: {e}"));
                return;
            }
        };
        let ast = match syn::parse_file(&text) {
            Ok(ast) => ast,
            Err(e) => {
                let line = e.span().start().line;
                self.error(rel, line, format!("cannot parse: {e}"));
                return;
            }
        };
        if is_test_only(&ast.attrs) {
            self.test_only.insert(rel);
            return;
        }
        let file_dir = path.parent().unwrap_or(self.root).to_path_buf();
        self.items(&ast.items, &file_dir, mod_dir, &rel);
        self.out.files.push(SourceFile { rel, ast });
    }

    fn items(&mut self, items: &[Item], file_dir: &Path, mod_dir: &Path, rel: &str) {
        for item in items {
            let Item::Mod(m) = item else { continue };
            let name = m.ident.to_string();
            let path_attr = path_attribute(&m.attrs);
            if let Some((_, inner)) = &m.content {
                if is_test_only(&m.attrs) {
                    continue;
                }
                let dir = path_attr.map_or_else(|| mod_dir.join(&name), |p| mod_dir.join(p));
                self.items(inner, file_dir, &dir, rel);
                continue;
            }
            let (file, child_dir) = if let Some(p) = path_attr {
                let file = file_dir.join(p);
                let dir = file.parent().map_or_else(|| mod_dir.to_path_buf(), Path::to_path_buf);
                (file, dir)
            } else {
                let flat = mod_dir.join(format!("{name}.rs"));
                let nested = mod_dir.join(&name).join("mod.rs");
                let file = if flat.is_file() || !nested.is_file() { flat } else { nested };
                (file, mod_dir.join(&name))
            };
            if is_test_only(&m.attrs) {
                self.test_only.insert(relative(self.root, &file));
                continue;
            }
            if file.is_file() {
                self.file(&file, &child_dir);
            } else {
                let line = m.ident.span().start().line;
                self.error(
                    rel.to_string(),
                    line,
                    format!("module `{name}` has no file ({})", relative(self.root, &file)),
                );
            }
        }
    }

    fn error(&mut self, file: String, line: usize, message: String) {
        self.out.errors.push(SourceError { file, line, message });
    }
}

/// The value of a `#[path = "…"]` attribute.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// `path` relative to `root`, with `/` separators.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    parts.join("/")
}

fn list_rs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DynError> {
    for entry in
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            list_rs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}
