//! The inventory: every occurrence of every mechanism in the library code of one workspace, plus
//! what the audit could not read. This is the "current state" that `--check` compares with the
//! allowlist, `--bless` records and `--list` counts.

use std::collections::BTreeMap;
use std::path::Path;

use super::allowlist::{Allowlist, make_key};
use super::matcher::{Occurrence, match_sites};
use super::names::NameScope;
use super::sources::{self, SourceError};
use super::visitor::FileVisitor;
use crate::DynError;

/// A macro body the audit could not (fully) parse, with its file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub(crate) struct Unparsed {
    /// Workspace-relative file.
    pub(crate) file: String,
    /// 1-based line.
    pub(crate) line: usize,
    /// The macro (`name` or `macro_rules! name`).
    pub(crate) name: String,
    /// The enclosing function key.
    pub(crate) function: String,
}

/// The audit's view of one workspace.
#[derive(Debug, Default)]
pub(crate) struct Inventory {
    /// Audited library files.
    pub(crate) files: Vec<String>,
    /// Files below `crates/` not audited, with the reason.
    pub(crate) skipped: Vec<(String, &'static str)>,
    /// Library files that could not be read or parsed.
    pub(crate) errors: Vec<SourceError>,
    /// Every occurrence, sorted by file, line, column, mechanism.
    pub(crate) occurrences: Vec<Occurrence>,
    /// Macro bodies not (fully) parsed.
    pub(crate) unparsed: Vec<Unparsed>,
    /// Sites inside a mechanism's `defined_in` files, counted per mechanism.
    pub(crate) definitions: BTreeMap<String, usize>,
}

impl Inventory {
    /// Scans the library code of the workspace at `root` for the mechanisms of `list`.
    ///
    /// # Errors
    /// When the source tree cannot be listed.
    pub(crate) fn scan(root: &Path, list: &Allowlist) -> Result<Self, DynError> {
        let sources = sources::collect(root)?;
        let global = NameScope::reexports(&sources.files);
        let mut inv = Self {
            files: sources.files.iter().map(|f| f.rel.clone()).collect(),
            skipped: sources.skipped,
            errors: sources.errors,
            ..Self::default()
        };
        for file in &sources.files {
            let walked = FileVisitor::walk(&file.ast, global.clone());
            let matches = match_sites(list, &file.rel, &walked.sites);
            inv.occurrences.extend(matches.occurrences);
            for m in matches.definitions {
                *inv.definitions.entry(m).or_default() += 1;
            }
            inv.unparsed.extend(walked.unparsed.into_iter().map(|u| Unparsed {
                file: file.rel.clone(),
                line: u.line,
                name: u.name,
                function: u.function,
            }));
        }
        inv.occurrences.sort();
        inv.occurrences.dedup();
        inv.unparsed.sort();
        inv.unparsed.dedup();
        Ok(inv)
    }

    /// The mechanism/function pairs in use: mechanism → entry key → occurrences there.
    pub(crate) fn pairs(&self) -> BTreeMap<&str, BTreeMap<String, Vec<&Occurrence>>> {
        let mut out: BTreeMap<&str, BTreeMap<String, Vec<&Occurrence>>> = BTreeMap::new();
        for o in &self.occurrences {
            out.entry(o.mechanism.as_str())
                .or_default()
                .entry(make_key(&o.file, &o.function))
                .or_default()
                .push(o);
        }
        out
    }

    /// Number of occurrences of `mechanism`.
    pub(crate) fn count(&self, mechanism: &str) -> usize {
        self.occurrences.iter().filter(|o| o.mechanism == mechanism).count()
    }
}
