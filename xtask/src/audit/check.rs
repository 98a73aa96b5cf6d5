//! `--check`: the inventory compared with the allowlist, as a list of [`Problem`]s.
//!
//! | problem | when |
//! |---|---|
//! | `unparseable` | a library file cannot be read or parsed (the audit cannot vouch for it) |
//! | `unlisted` | a mechanism occurs in a function that has no entry for it (a suggested entry is given) |
//! | `retired-in-use` | a retired mechanism occurs anywhere |
//! | `retired-entry` | a retired mechanism still has entries |
//! | `unknown-mechanism` | an entry group names no declared mechanism |
//! | `malformed-key` | an entry key is not `crates/…/file.rs::function` |
//! | `stale` | an entry whose function no longer uses the mechanism (or no longer exists) |
//! | `empty-reason`, `todo-reason` | an entry without a real reason (what `--bless` writes) |
//! | `tracked-matches-nothing` | a `tracked` mechanism has no occurrence: its matcher went blind, or it should be `retired` |
//!
//! `planned` and `watched` mechanisms may match nothing; every other rule applies to them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::allowlist::{Allowlist, Status, TODO_REASON, reason_is_placeholder, split_key};
use super::inventory::Inventory;

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Problem {
    /// Workspace-relative file, when the problem has a place in the code.
    pub(crate) file: Option<String>,
    /// 1-based line (the first occurrence, for grouped occurrences).
    pub(crate) line: Option<usize>,
    /// The kind, e.g. `unlisted` (see the module docs).
    pub(crate) kind: &'static str,
    /// The mechanism concerned.
    pub(crate) mechanism: Option<String>,
    /// The entry key concerned.
    pub(crate) key: Option<String>,
    /// What is wrong and how to fix it.
    pub(crate) message: String,
    /// For `unlisted`: the entry to add (to be given a real reason in a reviewed change).
    pub(crate) suggestion: Option<String>,
}

impl Problem {
    fn new(kind: &'static str, message: String) -> Self {
        Self { file: None, line: None, kind, mechanism: None, key: None, message, suggestion: None }
    }

    /// Names the mechanism and entry key concerned. The place stays the allowlist file: only
    /// occurrences and unreadable files point into the code.
    fn about(mut self, mechanism: &str, key: Option<&str>) -> Self {
        self.mechanism = Some(mechanism.to_string());
        self.key = key.map(str::to_string);
        self
    }

    /// Points the problem at a place in the code.
    fn at(mut self, file: &str, line: usize) -> Self {
        self.file = Some(file.to_string());
        self.line = Some(line);
        self
    }
}

/// Every problem of `inv` against `list`, sorted by file and line.
pub(crate) fn problems(list: &Allowlist, inv: &Inventory) -> Vec<Problem> {
    let mut out = Vec::new();
    for e in &inv.errors {
        out.push(
            Problem::new("unparseable", format!("library file not audited: {}", e.message))
                .at(&e.file, e.line),
        );
    }
    let pairs = inv.pairs();
    for (mechanism, functions) in &pairs {
        let Some(m) = list.mechanism(mechanism) else { continue };
        let rule = list.rule(&m.rule).map_or(m.rule.as_str(), |r| r.title.as_str());
        let entries = list.entries.get(*mechanism);
        for (key, occurrences) in functions {
            let lines: Vec<String> = occurrences.iter().map(|o| o.line.to_string()).collect();
            let Some(first) = occurrences.first() else { continue };
            let at = format!(
                "`{}`{} ({}{})",
                first.function,
                if lines.len() > 1 {
                    format!(" at lines {}", lines.join(", "))
                } else {
                    String::new()
                },
                first.pattern,
                first.via.as_ref().map_or_else(String::new, |v| format!(", {v}")),
            );
            let mut p = if m.status == Status::Retired {
                Problem::new(
                    "retired-in-use",
                    format!(
                        "[{rule}] retired mechanism `{mechanism}` is used in {at}: remove the use"
                    ),
                )
            } else if entries.is_some_and(|e| e.contains_key(key)) {
                continue;
            } else {
                let mut p = Problem::new(
                    "unlisted",
                    format!("[{rule}] `{mechanism}` is used in {at}, which has no allowlist entry"),
                );
                p.suggestion = Some(format!(
                    "\"{mechanism}\": {{ \"{key}\": \"<why this function may do this>\" }}"
                ));
                p
            };
            p = p.about(mechanism, Some(key)).at(&first.file, first.line);
            out.push(p);
        }
    }
    for (mechanism, entries) in &list.entries {
        let Some(m) = list.mechanism(mechanism) else {
            out.push(
                Problem::new(
                    "unknown-mechanism",
                    format!(
                        "entry group `{mechanism}` names no declared mechanism ({} entries)",
                        entries.len()
                    ),
                )
                .about(mechanism, None),
            );
            continue;
        };
        for (key, reason) in entries {
            if m.status == Status::Retired {
                out.push(
                    Problem::new(
                        "retired-entry",
                        format!("retired mechanism `{mechanism}` cannot have entries: `{key}`"),
                    )
                    .about(mechanism, Some(key)),
                );
                continue;
            }
            if split_key(key).is_none() {
                out.push(
                    Problem::new(
                        "malformed-key",
                        format!("entry `{key}` is not `crates/…/file.rs::Type::function`"),
                    )
                    .about(mechanism, Some(key)),
                );
                continue;
            }
            let used = pairs.get(mechanism.as_str()).is_some_and(|f| f.contains_key(key));
            if !used {
                out.push(
                    Problem::new(
                        "stale",
                        format!(
                            "stale entry: `{key}` no longer uses `{mechanism}`; remove it (`--bless` does)"
                        ),
                    )
                    .about(mechanism, Some(key)),
                );
            }
            if let Some(what) = reason_is_placeholder(reason) {
                let kind = if what.starts_with("TODO") { "todo-reason" } else { "empty-reason" };
                out.push(
                    Problem::new(
                        kind,
                        format!(
                            "{what} for `{key}` under `{mechanism}`: say why this function may do this"
                        ),
                    )
                    .about(mechanism, Some(key)),
                );
            }
        }
    }
    for m in &list.mechanisms {
        if m.status == Status::Tracked && inv.count(&m.name) == 0 {
            let patterns: Vec<String> =
                m.matches.iter().map(super::allowlist::Matcher::describe).collect();
            out.push(
                Problem::new(
                    "tracked-matches-nothing",
                    format!(
                        "tracked mechanism `{}` matches nothing ({}): fix the matcher, or mark it `retired`",
                        m.name,
                        patterns.join(", ")
                    ),
                )
                .about(&m.name, None),
            );
        }
    }
    out.sort();
    out
}

/// `--bless`: the allowlist with every entry that no longer matches removed, and every unlisted
/// occurrence added with [`TODO_REASON`] (which `--check` rejects until a reviewer writes the
/// reason). Existing reasons and mechanisms are never changed.
pub(crate) fn blessed(list: &Allowlist, inv: &Inventory) -> (Allowlist, BlessSummary) {
    let pairs = inv.pairs();
    let mut out = list.clone();
    let mut summary = BlessSummary::default();
    let mut entries: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (mechanism, group) in &list.entries {
        let keep = list.mechanism(mechanism).is_some_and(|m| m.status != Status::Retired);
        for (key, reason) in group {
            let used = pairs.get(mechanism.as_str()).is_some_and(|f| f.contains_key(key));
            if keep && used {
                entries.entry(mechanism.clone()).or_default().insert(key.clone(), reason.clone());
            } else {
                summary.removed.push(format!("{mechanism}: {key}"));
            }
        }
    }
    for m in &list.mechanisms {
        let group = entries.entry(m.name.clone()).or_default();
        if m.status == Status::Retired {
            continue;
        }
        for key in pairs.get(m.name.as_str()).into_iter().flat_map(BTreeMap::keys) {
            if !group.contains_key(key) {
                group.insert(key.clone(), TODO_REASON.to_string());
                summary.added_todo.push(format!("{}: {key}", m.name));
            }
        }
    }
    out.entries = entries;
    (out, summary)
}

/// What `--bless` changed.
#[derive(Debug, Default, Serialize)]
pub(crate) struct BlessSummary {
    /// `mechanism: key` of every removed entry.
    pub(crate) removed: Vec<String>,
    /// `mechanism: key` of every occurrence added with a TODO reason.
    pub(crate) added_todo: Vec<String>,
}
