//! Rendering: the census, the problems, and the JSON form of both (`--format json`).
//!
//! Human output names every place as `file:line` so an editor or terminal can jump to it; JSON
//! output is one object with stable field names for tools.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::allowlist::{ALLOWLIST_PATH, Allowlist, Status};
use super::check::Problem;
use super::inventory::{Inventory, Unparsed};
use super::matcher::Occurrence;

/// The counts of SPEC U3: entries, functions, groups, empty groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Census {
    /// Mechanism/function entries in the allowlist.
    pub(crate) entries: usize,
    /// Distinct functions named by those entries.
    pub(crate) functions: usize,
    /// Mechanism groups (declared mechanisms).
    pub(crate) groups: usize,
    /// Groups without entries.
    pub(crate) empty_groups: usize,
    /// Empty groups by mechanism status.
    pub(crate) empty_by_status: BTreeMap<&'static str, usize>,
    /// Occurrences found in library code.
    pub(crate) occurrences: usize,
    /// Library files audited.
    pub(crate) files: usize,
}

impl Census {
    /// Counts `list` (and the occurrences and files of `inv`).
    pub(crate) fn of(list: &Allowlist, inv: &Inventory) -> Self {
        let mut entries = 0;
        let mut functions = BTreeSet::new();
        let mut empty_by_status = BTreeMap::new();
        for m in &list.mechanisms {
            let group = list.entries.get(&m.name);
            let n = group.map_or(0, BTreeMap::len);
            entries += n;
            functions.extend(group.into_iter().flat_map(BTreeMap::keys));
            if n == 0 {
                *empty_by_status.entry(m.status.as_str()).or_insert(0) += 1;
            }
        }
        Self {
            entries,
            functions: functions.len(),
            groups: list.mechanisms.len(),
            empty_groups: empty_by_status.values().sum(),
            empty_by_status,
            occurrences: inv.occurrences.len(),
            files: inv.files.len(),
        }
    }

    /// One sentence, in the design record's words.
    pub(crate) fn sentence(&self) -> String {
        let by: Vec<String> =
            self.empty_by_status.iter().map(|(s, n)| format!("{n} {s}")).collect();
        format!(
            "{} mechanism/function entries over {} function locations in {} mechanism groups; \
             {} groups are empty ({})",
            self.entries,
            self.functions,
            self.groups,
            self.empty_groups,
            if by.is_empty() { "none".to_string() } else { by.join(", ") },
        )
    }
}

/// Everything one run knows, in the shape `--format json` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Report<'a> {
    /// The mode that ran.
    pub(crate) mode: &'static str,
    /// True when the mode passed.
    pub(crate) ok: bool,
    /// The allowlist file, workspace-relative.
    pub(crate) allowlist: &'static str,
    /// The counts.
    pub(crate) census: Census,
    /// Per-mechanism summary.
    pub(crate) mechanisms: Vec<MechanismSummary<'a>>,
    /// Every occurrence.
    pub(crate) occurrences: &'a [Occurrence],
    /// Every problem (empty for `--list`, which does not judge).
    pub(crate) problems: &'a [Problem],
    /// Macro bodies the audit could not parse.
    pub(crate) unparsed_macros: &'a [Unparsed],
    /// Files below `crates/` that are not library code, with the reason.
    pub(crate) skipped_files: Vec<SkippedFile<'a>>,
}

/// One mechanism in a [`Report`].
#[derive(Debug, Serialize)]
pub(crate) struct MechanismSummary<'a> {
    /// Its name.
    pub(crate) name: &'a str,
    /// Its rule.
    pub(crate) rule: &'a str,
    /// Its status.
    pub(crate) status: Status,
    /// What it matches.
    pub(crate) matches: Vec<String>,
    /// Occurrences in library code.
    pub(crate) occurrences: usize,
    /// Sites inside its own `defined_in` files (not reported).
    pub(crate) definition_sites: usize,
    /// Its entries: key → reason.
    pub(crate) entries: BTreeMap<&'a str, &'a str>,
}

/// A file that was not audited.
#[derive(Debug, Serialize)]
pub(crate) struct SkippedFile<'a> {
    /// Workspace-relative path.
    pub(crate) file: &'a str,
    /// Why.
    pub(crate) reason: &'a str,
}

impl<'a> Report<'a> {
    /// Assembles a report.
    pub(crate) fn new(
        mode: &'static str,
        list: &'a Allowlist,
        inv: &'a Inventory,
        problems: &'a [Problem],
    ) -> Self {
        let mechanisms = list
            .mechanisms
            .iter()
            .map(|m| MechanismSummary {
                name: &m.name,
                rule: &m.rule,
                status: m.status,
                matches: m.matches.iter().map(super::allowlist::Matcher::describe).collect(),
                occurrences: inv.count(&m.name),
                definition_sites: inv.definitions.get(&m.name).copied().unwrap_or(0),
                entries: list
                    .entries
                    .get(&m.name)
                    .map(|g| g.iter().map(|(k, r)| (k.as_str(), r.as_str())).collect())
                    .unwrap_or_default(),
            })
            .collect();
        Self {
            mode,
            ok: problems.is_empty(),
            allowlist: ALLOWLIST_PATH,
            census: Census::of(list, inv),
            mechanisms,
            occurrences: &inv.occurrences,
            problems,
            unparsed_macros: &inv.unparsed,
            skipped_files: inv
                .skipped
                .iter()
                .map(|(file, reason)| SkippedFile { file, reason })
                .collect(),
        }
    }

    /// The JSON text.
    ///
    /// # Errors
    /// Only if serialisation fails.
    pub(crate) fn json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// The human census (`--list`).
    pub(crate) fn census_text(&self, list: &Allowlist) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "session-entry audit census ({})", self.allowlist);
        let _ = writeln!(s, "  {}", self.census.sentence());
        let _ = writeln!(
            s,
            "  {} occurrences in {} library files",
            self.census.occurrences, self.census.files
        );
        for rule in &list.rules {
            let _ = writeln!(s, "\nrule `{}`: {}", rule.name, rule.title);
            if let Some(scope) = &rule.scope {
                let mut parts = scope.paths.clone();
                parts.extend(scope.types.iter().map(|t| format!("impl {t}")));
                parts.extend(scope.functions.iter().map(|f| format!("fn {f}")));
                let _ = writeln!(s, "  applies to: {}", parts.join(", "));
            }
            for m in self.mechanisms.iter().filter(|m| m.rule == rule.name) {
                let _ = writeln!(
                    s,
                    "  [{}] {}: {} entries, {} occurrences{} — {}",
                    m.status,
                    m.name,
                    m.entries.len(),
                    m.occurrences,
                    if m.definition_sites > 0 {
                        format!(", {} in its own definition", m.definition_sites)
                    } else {
                        String::new()
                    },
                    m.matches.join(", ")
                );
                for (key, reason) in &m.entries {
                    let _ = writeln!(s, "      {key}: {reason}");
                }
            }
        }
        self.notes(&mut s);
        s
    }

    /// The human result of `--check`.
    pub(crate) fn check_text(&self) -> String {
        let mut s = String::new();
        for p in self.problems {
            let place = match (&p.file, p.line) {
                (Some(f), Some(l)) => format!("{f}:{l}: "),
                (Some(f), None) => format!("{f}: "),
                _ => format!("{}: ", self.allowlist),
            };
            let _ = writeln!(s, "{place}[{}] {}", p.kind, p.message);
            if let Some(sugg) = &p.suggestion {
                let _ = writeln!(s, "    suggested entry: {sugg}");
            }
        }
        self.notes(&mut s);
        let _ = writeln!(
            s,
            "session-entry audit: {} ({}; {} occurrences in {} library files)",
            if self.ok {
                "passed".to_string()
            } else {
                format!("{} problem(s)", self.problems.len())
            },
            self.census.sentence(),
            self.census.occurrences,
            self.census.files,
        );
        s
    }

    fn notes(&self, s: &mut String) {
        if !self.unparsed_macros.is_empty() {
            let _ = writeln!(
                s,
                "note: {} macro bodies could not be parsed; their identifiers were matched by name:",
                self.unparsed_macros.len()
            );
            for u in self.unparsed_macros {
                let shown = if u.name.starts_with("macro_rules!") {
                    format!("`{}` (a macro definition)", u.name)
                } else if u.function == format!("{}!", u.name) {
                    format!("`{}!` (an item-level invocation)", u.name)
                } else {
                    format!("`{}!` in `{}`", u.name, u.function)
                };
                let _ = writeln!(s, "    {}:{}: {shown}", u.file, u.line);
            }
        }
        if !self.skipped_files.is_empty() {
            let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
            for f in &self.skipped_files {
                *by_reason.entry(f.reason).or_default() += 1;
            }
            let parts: Vec<String> = by_reason.iter().map(|(r, n)| format!("{n} {r}")).collect();
            let _ = writeln!(s, "note: files below crates/ not audited: {}", parts.join(", "));
        }
    }
}
