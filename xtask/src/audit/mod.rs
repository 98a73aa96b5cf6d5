//! The session-entry audit, `cargo xtask audit` (SPEC §8, U1–U5; REPOSITORY_RULES.md "Backend
//! Session Entry").
//!
//! It proves that every library occurrence of a session-entry mechanism (admission calls, view and
//! held-session construction, scoped entries, …) and every blocking call on the operation path sits
//! in a reviewed allowlist entry with a reason. The mechanisms and entries are data, in
//! `scripts/session-entry-allowlist.json`; the code here only knows how to find them.
//!
//! | module | concern |
//! |---|---|
//! | [`allowlist`] | the allowlist file: model, validation, canonical layout |
//! | [`sources`] | which files are library code (the module tree from each `lib.rs`) |
//! | [`cfg`](mod@cfg) | which items are test-only |
//! | [`names`] | `use … as …`, `pub use` and `type` renames |
//! | [`macros`] | reading macro bodies |
//! | [`visitor`] | the syn walk: candidate sites and their function keys |
//! | [`matcher`] | which sites are occurrences of which mechanism |
//! | [`inventory`] | all occurrences of one workspace |
//! | [`check`] | problems (`--check`) and removals (`--bless`) |
//! | [`report`] | census, human and JSON output |
//! | [`modes`] | the command-line modes |
//! | [`selftest`] | the fixtures of `--self-test` |
//!
//! Usage: `cargo xtask audit [--check | --self-test | --bless | --list] [--format human|json]
//! [--root DIR]`.

mod allowlist;
mod cfg;
mod check;
mod inventory;
mod macros;
mod matcher;
mod modes;
mod names;
mod report;
mod selftest;
mod sources;
#[cfg(test)]
mod tests;
mod visitor;

use std::path::PathBuf;

use modes::Format;

use crate::DynError;

const USAGE: &str = "usage: cargo xtask audit [--check | --self-test | --bless | --list] \
                     [--format human|json] [--root DIR]";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Check,
    SelfTest,
    Bless,
    List,
}

/// Entry point of `cargo xtask audit`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    let mut mode = None;
    let mut format = Format::Human;
    let mut root = crate::cmd::workspace_root();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let next_mode = match arg.as_str() {
            "--check" => Mode::Check,
            "--self-test" => Mode::SelfTest,
            "--bless" => Mode::Bless,
            "--list" => Mode::List,
            "--format" => {
                format = match it.next().map(String::as_str) {
                    Some("json") => Format::Json,
                    Some("human") => Format::Human,
                    _ => return Err(format!("`--format` takes `human` or `json`\n{USAGE}").into()),
                };
                continue;
            }
            "--root" => {
                root = it
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| format!("`--root` takes a directory\n{USAGE}"))?;
                continue;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}").into()),
        };
        if mode.is_some_and(|m| m != next_mode) {
            return Err(format!("choose one mode\n{USAGE}").into());
        }
        mode = Some(next_mode);
    }
    match mode.unwrap_or(Mode::Check) {
        Mode::Check => modes::run_check(&root, format),
        Mode::SelfTest => modes::run_self_test(format),
        Mode::Bless => modes::run_bless(&root, format),
        Mode::List => modes::run_list(&root, format),
    }
}

/// The gate's audit steps (`cargo xtask test`): `--check` on the workspace, then `--self-test`.
///
/// # Errors
/// When either fails.
pub(crate) fn gate() -> Result<(), DynError> {
    eprintln!("$ cargo xtask audit --check");
    modes::run_check(&crate::cmd::workspace_root(), Format::Human)?;
    eprintln!("$ cargo xtask audit --self-test");
    modes::run_self_test(Format::Human)
}
