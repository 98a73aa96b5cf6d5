//! `--self-test`: fixtures proving each behaviour of the audit, positive and negative.
//!
//! Fixtures live in `xtask/fixtures/audit/` (see its README):
//!
//! - `syntax/` is a small workspace whose files each prove one behaviour. Every expected
//!   occurrence is marked on its line with `//~ <mechanism> @ <function key>`, every macro body the
//!   audit cannot parse with `//~ unparsed`, and every file that must not be audited with
//!   `//~ not audited: <reason>`. The found set must equal the marked set exactly, so each unmarked
//!   look-alike (a comment, a raw string, a `cfg(test)` module, a definition) is a negative case.
//!   Its allowlist is complete, so `--check` must pass there.
//! - `rules/` is a workspace whose allowlist breaks every `--check` rule once;
//!   `rules/expected-problems.json` lists the problems, and the mechanisms that must have none.
//!   The same fixture, copied to a temporary directory, proves what `--bless` may and may not do.
//! - `invalid/` holds allowlists that must be rejected on load (`invalid/expected.json`).
//!
//! One more case ties the fixtures to the real `scripts/session-entry-allowlist.json`: every
//! mechanism declared there (retired ones excepted), with its real patterns and scopes, must be
//! detected somewhere in `syntax/`, so a new mechanism cannot land without a case that proves it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::allowlist::{ALLOWLIST_PATH, Allowlist, Status, TODO_REASON};
use super::inventory::Inventory;
use super::modes;
use super::sources::relative;
use crate::DynError;

/// The result of one self-test case.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Case {
    /// What the case proves.
    pub(crate) name: String,
    /// Whether it held.
    pub(crate) passed: bool,
    /// Why not, when it failed.
    pub(crate) details: Vec<String>,
}

impl Case {
    fn new(name: impl Into<String>, details: Vec<String>) -> Self {
        Self { name: name.into(), passed: details.is_empty(), details }
    }
}

/// `xtask/fixtures/audit`.
pub(crate) fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join("audit")
}

/// Runs every case over the fixtures in `dir`.
///
/// # Errors
/// When a fixture is missing or unreadable (a failed case is not an error, it is a result).
pub(crate) fn run(dir: &Path) -> Result<Vec<Case>, DynError> {
    let mut cases = syntax_cases(&dir.join("syntax"))?;
    cases.extend(real_mechanism_cases(&dir.join("syntax"), &crate::cmd::workspace_root())?);
    cases.extend(rules_cases(&dir.join("rules"))?);
    cases.extend(bless_cases(&dir.join("rules"))?);
    cases.extend(invalid_cases(&dir.join("invalid"))?);
    Ok(cases)
}

/// What the markers of one fixture file expect.
#[derive(Default)]
struct Expected {
    case: String,
    occurrences: BTreeSet<(usize, String, String)>,
    unparsed: BTreeSet<usize>,
    not_audited: Option<String>,
}

fn read_markers(text: &str) -> Expected {
    let mut e = Expected::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(case) = line.trim().strip_prefix("//! Case:") {
            e.case = case.trim().to_string();
        }
        for marker in line.split("//~").skip(1).map(str::trim) {
            if marker == "unparsed" {
                e.unparsed.insert(n);
            } else if let Some(reason) = marker.strip_prefix("not audited:") {
                e.not_audited = Some(reason.trim().to_string());
            } else if let Some((mechanism, function)) = marker.split_once(" @ ") {
                e.occurrences.insert((
                    n,
                    mechanism.trim().to_string(),
                    function.trim().to_string(),
                ));
            } else {
                e.occurrences.insert((n, format!("<bad marker `{marker}`>"), String::new()));
            }
        }
    }
    e
}

fn syntax_cases(root: &Path) -> Result<Vec<Case>, DynError> {
    let outcome = modes::check(root)?;
    let inv = &outcome.inventory;
    let mut files = Vec::new();
    list_files(&root.join("crates"), "rs", &mut files)?;
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let rel = relative(root, &path);
        let expected = read_markers(&std::fs::read_to_string(&path)?);
        let mut details = Vec::new();
        let found: BTreeSet<(usize, String, String)> = inv
            .occurrences
            .iter()
            .filter(|o| o.file == rel)
            .map(|o| (o.line, o.mechanism.clone(), o.function.clone()))
            .collect();
        for (line, m, f) in expected.occurrences.difference(&found) {
            details.push(format!("{rel}:{line}: expected `{m}` in `{f}`, not found"));
        }
        for (line, m, f) in found.difference(&expected.occurrences) {
            details.push(format!("{rel}:{line}: found `{m}` in `{f}`, not marked"));
        }
        let unparsed: BTreeSet<usize> =
            inv.unparsed.iter().filter(|u| u.file == rel).map(|u| u.line).collect();
        for line in expected.unparsed.symmetric_difference(&unparsed) {
            let what = if unparsed.contains(line) { "reported" } else { "expected" };
            details.push(format!("{rel}:{line}: unparsed macro {what} here, not marked/found"));
        }
        let skipped = inv.skipped.iter().find(|(f, _)| *f == rel).map(|(_, r)| (*r).to_string());
        if skipped != expected.not_audited {
            details.push(format!(
                "{rel}: expected {}, got {}",
                expected
                    .not_audited
                    .as_ref()
                    .map_or("audited".into(), |r| format!("not audited ({r})")),
                skipped.as_ref().map_or("audited".into(), |r| format!("not audited ({r})")),
            ));
        }
        let label = if expected.case.is_empty() { "(no `//! Case:` line)" } else { &expected.case };
        cases.push(Case::new(format!("{rel}: {label}"), details));
    }
    let details: Vec<String> =
        outcome.problems.iter().map(|p| format!("[{}] {}", p.kind, p.message)).collect();
    cases.push(Case::new(
        "syntax fixture: `--check` passes when every occurrence is listed with a reason",
        details,
    ));
    Ok(cases)
}

/// Each live mechanism of the real allowlist (at `root`), with its real patterns and scopes, is
/// detected somewhere in the syntax fixture: a mechanism nobody proved detectable fails here.
fn real_mechanism_cases(fixture: &Path, root: &Path) -> Result<Vec<Case>, DynError> {
    let real = Allowlist::load(root)?;
    let inv = Inventory::scan(fixture, &real)?;
    Ok(real
        .mechanisms
        .iter()
        .filter(|m| m.status != Status::Retired)
        .map(|m| {
            let n = inv.count(&m.name);
            let details = if n == 0 {
                vec![format!("no occurrence in {}: add a marked case", fixture.display())]
            } else {
                Vec::new()
            };
            Case::new(
                format!(
                    "real mechanism `{}` is detected by the syntax fixture ({n} sites)",
                    m.name
                ),
                details,
            )
        })
        .collect())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedProblems {
    problems: Vec<ExpectedProblem>,
    absent: Vec<Absent>,
}

#[derive(Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
struct ExpectedProblem {
    kind: String,
    #[serde(default)]
    mechanism: Option<String>,
    #[serde(default)]
    key: Option<String>,
    /// Compared only when given.
    #[serde(default)]
    file: Option<String>,
}

impl ExpectedProblem {
    fn matches(&self, found: &Self) -> bool {
        self.kind == found.kind
            && self.mechanism == found.mechanism
            && self.key == found.key
            && (self.file.is_none() || self.file == found.file)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Absent {
    mechanism: String,
    why: String,
}

fn load_expected(root: &Path) -> Result<ExpectedProblems, DynError> {
    let path = root.join("expected-problems.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
}

fn rules_cases(root: &Path) -> Result<Vec<Case>, DynError> {
    let expected = load_expected(root)?;
    let outcome = modes::check(root)?;
    let found: Vec<ExpectedProblem> = outcome
        .problems
        .iter()
        .map(|p| ExpectedProblem {
            kind: p.kind.to_string(),
            mechanism: p.mechanism.clone(),
            key: p.key.clone(),
            file: p.file.clone(),
        })
        .collect();
    let mut by_kind: BTreeMap<&str, (Vec<&ExpectedProblem>, Vec<&ExpectedProblem>)> =
        BTreeMap::new();
    for e in &expected.problems {
        by_kind.entry(&e.kind).or_default().0.push(e);
    }
    for f in &found {
        by_kind.entry(&f.kind).or_default().1.push(f);
    }
    let mut cases = Vec::new();
    for (kind, (want, got)) in &by_kind {
        let mut details = Vec::new();
        let mut left: Vec<&ExpectedProblem> = got.clone();
        for w in want {
            match left.iter().position(|g| w.matches(g)) {
                Some(i) => {
                    left.remove(i);
                }
                None => details.push(format!("expected, not reported: {}", show(w))),
            }
        }
        for g in left {
            details.push(format!("reported, not expected: {}", show(g)));
        }
        cases.push(Case::new(
            format!("`--check` rule `{kind}`: {} problem(s)", want.len()),
            details,
        ));
    }
    for p in outcome.problems.iter().filter(|p| p.kind == "unlisted") {
        let mut details = Vec::new();
        if p.file.is_none() || p.line.is_none() {
            details.push(format!("no file:line for {}", p.message));
        }
        let key = p.key.clone().unwrap_or_default();
        if !p.suggestion.as_ref().is_some_and(|s| s.contains(&key)) {
            details.push(format!("suggested entry does not name `{key}`"));
        }
        cases.push(Case::new(format!("`unlisted` names file:line and suggests `{key}`"), details));
    }
    for a in &expected.absent {
        let details: Vec<String> = outcome
            .problems
            .iter()
            .filter(|p| p.mechanism.as_deref() == Some(a.mechanism.as_str()))
            .map(|p| format!("[{}] {}", p.kind, p.message))
            .collect();
        cases.push(Case::new(format!("no problem for `{}`: {}", a.mechanism, a.why), details));
    }
    Ok(cases)
}

fn show(p: &ExpectedProblem) -> String {
    format!(
        "[{}] mechanism {} key {} file {}",
        p.kind,
        p.mechanism.as_deref().unwrap_or("-"),
        p.key.as_deref().unwrap_or("-"),
        p.file.as_deref().unwrap_or("-"),
    )
}

type Entries = BTreeMap<(String, String), String>;

fn flat_entries(list: &Allowlist) -> Entries {
    list.entries
        .iter()
        .flat_map(|(m, g)| g.iter().map(move |(k, r)| ((m.clone(), k.clone()), r.clone())))
        .collect()
}

fn bless_cases(fixture: &Path) -> Result<Vec<Case>, DynError> {
    let expected = load_expected(fixture)?;
    let dir = TempDir::new("bless")?;
    copy_tree(fixture, dir.path())?;
    let before = Allowlist::load(dir.path())?;
    let summary = modes::bless(dir.path())?;
    let after = Allowlist::load(dir.path())?;
    let (old, new) = (flat_entries(&before), flat_entries(&after));
    let removable = ["stale", "retired-entry", "unknown-mechanism", "malformed-key"];
    let want_removed: BTreeSet<(String, String)> = old
        .keys()
        .filter(|(m, k)| {
            expected.problems.iter().any(|p| {
                removable.contains(&p.kind.as_str())
                    && p.mechanism.as_deref() == Some(m)
                    && (p.key.as_deref() == Some(k) || p.kind == "unknown-mechanism")
            })
        })
        .cloned()
        .collect();
    let want_added: BTreeSet<(String, String)> = expected
        .problems
        .iter()
        .filter(|p| p.kind == "unlisted")
        .filter_map(|p| Some((p.mechanism.clone()?, p.key.clone()?)))
        .collect();
    let removed: BTreeSet<(String, String)> =
        old.keys().filter(|k| !new.contains_key(*k)).cloned().collect();
    let added: BTreeSet<(String, String)> =
        new.keys().filter(|k| !old.contains_key(*k)).cloned().collect();

    let mut cases = Vec::new();
    let diff = |want: &BTreeSet<(String, String)>,
                got: &BTreeSet<(String, String)>|
     -> Vec<String> {
        want.symmetric_difference(got)
            .map(|(m, k)| {
                format!(
                    "{} `{m}`: `{k}`",
                    if want.contains(&(m.clone(), k.clone())) { "missing" } else { "unexpected" }
                )
            })
            .collect()
    };
    cases.push(Case::new(
        "`--bless` removes exactly the stale, retired, unknown and malformed entries",
        diff(&want_removed, &removed),
    ));
    let mut details = diff(&want_added, &added);
    details.extend(
        added.iter().filter(|k| new.get(*k).map(String::as_str) != Some(TODO_REASON)).map(
            |(m, k)| {
                format!("`{m}`: `{k}` was added with a reason other than the TODO placeholder")
            },
        ),
    );
    cases.push(Case::new(
        "`--bless` records new occurrences only with a TODO reason (it never invents a reason)",
        details,
    ));
    let changed: Vec<String> = old
        .iter()
        .filter(|(k, r)| new.get(*k).is_some_and(|n| n != *r))
        .map(|((m, k), _)| format!("reason of `{m}`: `{k}` changed"))
        .collect();
    cases.push(Case::new("`--bless` keeps every existing reason and mechanism as written", {
        let mut d = changed;
        if before.mechanisms != after.mechanisms || before.rules != after.rules {
            d.push("mechanisms or rules changed".into());
        }
        d
    }));
    let recheck = modes::check(dir.path())?;
    let mut details: Vec<String> = recheck
        .problems
        .iter()
        .filter(|p| {
            ["unlisted", "stale", "retired-entry", "unknown-mechanism", "malformed-key"]
                .contains(&p.kind)
        })
        .map(|p| format!("still reported after bless: [{}] {}", p.kind, p.message))
        .collect();
    for (m, k) in &added {
        let todo = recheck.problems.iter().any(|p| {
            p.kind == "todo-reason"
                && p.mechanism.as_deref() == Some(m)
                && p.key.as_deref() == Some(k)
        });
        if !todo {
            details
                .push(format!("`--check` after bless does not fail on the TODO reason of `{k}`"));
        }
    }
    cases.push(Case::new("after `--bless`, `--check` still fails on every TODO reason", details));
    let text = std::fs::read_to_string(dir.path().join(ALLOWLIST_PATH))?;
    let again = modes::bless(dir.path())?;
    let text_again = std::fs::read_to_string(dir.path().join(ALLOWLIST_PATH))?;
    let mut details = Vec::new();
    if text != text_again || !again.removed.is_empty() || !again.added_todo.is_empty() {
        details.push("a second `--bless` changed the file".to_string());
    }
    if summary.removed.len() != removed.len() || summary.added_todo.len() != added.len() {
        details.push("the bless summary does not match the file's change".to_string());
    }
    cases.push(Case::new("`--bless` is idempotent and its summary matches the file", details));
    Ok(cases)
}

fn invalid_cases(dir: &Path) -> Result<Vec<Case>, DynError> {
    let path = dir.join("expected.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let expected: BTreeMap<String, String> = serde_json::from_str(&text)?;
    let mut cases = Vec::new();
    for (file, needle) in expected {
        let text = std::fs::read_to_string(dir.join(&file))?;
        let details = match Allowlist::parse(&text) {
            Ok(_) => vec!["accepted".to_string()],
            Err(e) if e.to_string().contains(&needle) => Vec::new(),
            Err(e) => vec![format!("rejected, but not for `{needle}`: {e}")],
        };
        cases
            .push(Case::new(format!("allowlist `invalid/{file}` is rejected ({needle})"), details));
    }
    Ok(cases)
}

fn list_files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) -> Result<(), DynError> {
    for entry in
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            list_files(&path, ext, out)?;
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
    Ok(())
}

/// Copies the tree at `from` into `to` (created), skipping `target/`.
///
/// # Errors
/// When a file cannot be read or written.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), DynError> {
    std::fs::create_dir_all(to)?;
    for entry in
        std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?
    {
        let entry = entry?;
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&path, &dest)?;
            }
        } else {
            std::fs::copy(&path, &dest)?;
        }
    }
    Ok(())
}

/// A directory below the system temporary directory, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh, empty directory whose name contains `label`.
    ///
    /// # Errors
    /// When it cannot be created.
    pub(crate) fn new(label: &str) -> Result<Self, DynError> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("holdfast-audit-{label}-{}-{n}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path)?;
        Ok(Self(path))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
