//! The four modes of `cargo xtask audit`, as functions over a workspace root, so that the command
//! line, the gate and the tests call the same code.

use std::path::Path;

use super::allowlist::{ALLOWLIST_PATH, Allowlist};
use super::check::{BlessSummary, Problem, blessed, problems};
use super::inventory::Inventory;
use super::report::Report;
use super::selftest;
use crate::DynError;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Lines for people, `file:line: [kind] message`.
    Human,
    /// One JSON object for tools.
    Json,
}

/// What `--check` found.
pub(crate) struct CheckOutcome {
    /// The allowlist checked.
    pub(crate) list: Allowlist,
    /// The inventory it was checked against.
    pub(crate) inventory: Inventory,
    /// Everything wrong (empty: passed).
    pub(crate) problems: Vec<Problem>,
}

impl CheckOutcome {
    /// The report of this outcome.
    pub(crate) fn report(&self, mode: &'static str) -> Report<'_> {
        Report::new(mode, &self.list, &self.inventory, &self.problems)
    }
}

/// Loads the allowlist of `root`, scans its library code and compares the two.
///
/// # Errors
/// When the allowlist cannot be loaded or the tree cannot be listed (not for problems found).
pub(crate) fn check(root: &Path) -> Result<CheckOutcome, DynError> {
    let list = Allowlist::load(root)?;
    let inventory = Inventory::scan(root, &list)?;
    let problems = problems(&list, &inventory);
    Ok(CheckOutcome { list, inventory, problems })
}

/// `--check`: prints the result; fails when there is any problem.
///
/// # Errors
/// On any problem, or when the audit cannot run.
pub(crate) fn run_check(root: &Path, format: Format) -> Result<(), DynError> {
    let outcome = check(root)?;
    let report = outcome.report("check");
    match format {
        Format::Human => print!("{}", report.check_text()),
        Format::Json => println!("{}", report.json()?),
    }
    if outcome.problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "session-entry audit failed with {} problem(s); see REPOSITORY_RULES.md \"Backend Session Entry\"",
            outcome.problems.len()
        )
        .into())
    }
}

/// `--list`: prints the census; never fails on problems (it does not judge).
///
/// # Errors
/// When the audit cannot run.
pub(crate) fn run_list(root: &Path, format: Format) -> Result<(), DynError> {
    let outcome = check(root)?;
    let report = Report::new("list", &outcome.list, &outcome.inventory, &[]);
    match format {
        Format::Human => print!("{}", report.census_text(&outcome.list)),
        Format::Json => println!("{}", report.json()?),
    }
    Ok(())
}

/// `--bless`: rewrites the allowlist of `root` (removals, plus TODO entries for new occurrences).
///
/// # Errors
/// When the audit cannot run or the file cannot be written.
pub(crate) fn bless(root: &Path) -> Result<BlessSummary, DynError> {
    let list = Allowlist::load(root)?;
    let inventory = Inventory::scan(root, &list)?;
    let (new_list, summary) = blessed(&list, &inventory);
    if new_list != list || list.to_text()? != std::fs::read_to_string(root.join(ALLOWLIST_PATH))? {
        new_list.store(root)?;
    }
    Ok(summary)
}

/// `--bless` on the command line: rewrites, prints what changed, then what `--check` says.
///
/// # Errors
/// When the audit cannot run or the file cannot be written. A bless that leaves TODO reasons
/// succeeds; the following `--check` does not.
pub(crate) fn run_bless(root: &Path, format: Format) -> Result<(), DynError> {
    let summary = bless(root)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
        Format::Human => {
            for r in &summary.removed {
                println!("removed   {r}");
            }
            for a in &summary.added_todo {
                println!("added     {a} (TODO reason: write why, in a reviewed change)");
            }
            println!(
                "{ALLOWLIST_PATH}: {} entries removed, {} new occurrences recorded with a TODO reason",
                summary.removed.len(),
                summary.added_todo.len()
            );
            if !summary.added_todo.is_empty() {
                println!("`--check` fails until every TODO reason is replaced by a real one.");
            }
        }
    }
    Ok(())
}

/// `--self-test`: runs the fixtures.
///
/// # Errors
/// When a case fails.
pub(crate) fn run_self_test(format: Format) -> Result<(), DynError> {
    let results = selftest::run(&selftest::fixtures_dir())?;
    let failed = results.iter().filter(|c| !c.passed).count();
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&results)?),
        Format::Human => {
            for c in &results {
                println!("{} {}", if c.passed { "ok  " } else { "FAIL" }, c.name);
                for d in &c.details {
                    println!("       {d}");
                }
            }
            println!("session-entry audit self-test: {} cases, {failed} failed", results.len());
        }
    }
    if failed == 0 { Ok(()) } else { Err(format!("{failed} self-test case(s) failed").into()) }
}
