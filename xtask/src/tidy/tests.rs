//! Tests of the repository checks: the real workspace passes, and each check fails on a bad fixture.

use std::path::PathBuf;

use super::{check_layering, check_module_docs, module_docs::opens_with_module_doc};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

#[test]
fn workspace_obeys_every_repository_rule() {
    let violations = super::all_violations().unwrap();
    let listing: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(violations.is_empty(), "repository rule violations:\n{}", listing.join("\n"));
}

#[test]
fn layering_rejects_a_lower_crate_that_depends_on_a_higher_one() {
    let violations = check_layering(&fixture("layering-bad")).unwrap();
    assert_eq!(violations.len(), 3, "{violations:#?}");
    let upward =
        violations.iter().find(|v| v.message.contains("`holdfast-session` (layer 3)")).unwrap();
    assert!(upward.message.starts_with("`holdfast-tensor` (layer 0)"), "{upward}");
    assert!(upward.file.ends_with("holdfast-tensor/Cargo.toml"));
    assert_eq!(upward.line, Some(7), "points at the dependency line: {upward}");
    assert!(
        violations.iter().any(|v| v
            .message
            .contains("`holdfast-kernels` (layer 1) depends on `holdfast-arbiter` (layer 1)")),
        "same-layer crates must not know each other: {violations:#?}"
    );
}

#[test]
fn layering_keeps_program_dependencies_out_of_the_libraries() {
    // The fixture's facade depends on clap (normal) and serde_json (dev only).
    let violations = check_layering(&fixture("layering-bad")).unwrap();
    let facade: Vec<_> =
        violations.iter().filter(|v| v.message.starts_with("`holdfast` (layer 4")).collect();
    assert_eq!(facade.len(), 1, "{violations:#?}");
    assert!(facade[0].message.contains("depends on `clap`"), "{}", facade[0]);
    assert_eq!(facade[0].line, Some(8), "points at the dependency line: {}", facade[0]);
}

#[test]
fn layering_accepts_dev_dependencies_on_any_layer() {
    // The fixture's holdfast-session has a dev-dependency on holdfast (layer 4): not a violation.
    let violations = check_layering(&fixture("layering-bad")).unwrap();
    assert!(
        violations.iter().all(|v| !v.message.starts_with("`holdfast-session`")),
        "{violations:#?}"
    );
}

#[test]
fn module_docs_rejects_a_file_without_an_opening_doc_comment() {
    let dir = std::env::temp_dir().join(format!("holdfast-tidy-{}", std::process::id()));
    let src = dir.join("crates/demo/src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("lib.rs"), "//! Documented crate.\npub mod a;\n").unwrap();
    std::fs::write(src.join("a.rs"), "// a plain comment is not a doc\npub fn f() {}\n").unwrap();
    let violations = check_module_docs(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(violations.len(), 1, "{violations:#?}");
    assert!(violations[0].file.ends_with("crates/demo/src/a.rs"));
    assert_eq!(violations[0].rule, "module-docs");
}

#[test]
fn module_doc_detection() {
    assert!(opens_with_module_doc("\n\n//! docs\nfn f() {}"));
    assert!(!opens_with_module_doc("#![allow(x)]\n//! late docs"));
    assert!(!opens_with_module_doc("/// item docs\nfn f() {}"));
    assert!(!opens_with_module_doc(""));
}
