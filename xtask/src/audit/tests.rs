//! Tests of the session-entry audit: the self-test fixtures pass, the real workspace passes, a
//! probe call added to any library function of a copy of the workspace fails naming that function,
//! and the pieces (cfg, renames, macro bodies, matcher, keys, reasons, command line) behave.

use std::path::{Path, PathBuf};

use syn::{ImplItem, Item};

use super::allowlist::{Allowlist, Matcher, Pattern, Status, reason_is_placeholder, split_key};
use super::cfg::is_test_only;
use super::macros::{Body, Piece, parse_body};
use super::matcher::site_matches;
use super::names::NameScope;
use super::selftest::{self, TempDir, copy_tree};
use super::visitor::{FileVisitor, SiteKind};
use super::{modes, sources};

fn workspace() -> PathBuf {
    crate::cmd::workspace_root()
}

#[test]
fn self_test_passes() {
    let cases = selftest::run(&selftest::fixtures_dir()).unwrap();
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}\n    {}", c.name, c.details.join("\n    ")))
        .collect();
    assert!(failed.is_empty(), "self-test failures:\n{}", failed.join("\n"));
    assert!(cases.len() >= 40, "the fixtures lost cases: {}", cases.len());
}

#[test]
fn workspace_check_passes() {
    let outcome = modes::check(&workspace()).unwrap();
    let text = outcome.report("check").check_text();
    assert!(outcome.problems.is_empty(), "{text}");
    assert!(!outcome.inventory.files.is_empty(), "no library files found");
}

/// Copies what the audit reads: every `.rs` file and manifest below `crates/`, the root manifest
/// and `scripts/`.
fn copy_workspace(to: &Path) {
    let root = workspace();
    copy_tree(&root.join("scripts"), &to.join("scripts")).unwrap();
    std::fs::copy(root.join("Cargo.toml"), to.join("Cargo.toml")).unwrap();
    fn walk(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" {
                    walk(&path, &to.join(&name));
                }
            } else if path.extension().is_some_and(|e| e == "rs") || name == "Cargo.toml" {
                std::fs::create_dir_all(to).unwrap();
                std::fs::copy(&path, to.join(&name)).unwrap();
            }
        }
    }
    walk(&root.join("crates"), &to.join("crates"));
}

/// A call (or construction) that `matcher` matches, as a statement.
fn probe_statement(matcher: &Matcher) -> String {
    let args = |n: usize| vec!["probe_arg"; n].join(", ");
    match matcher.pattern().unwrap() {
        Pattern::Call(name) => {
            format!("let _ = probe.{name}({});", args(matcher.args.unwrap_or(0)))
        }
        Pattern::Path(p) => {
            format!("let _ = {}({});", p.join("::"), args(matcher.args.unwrap_or(1)))
        }
        Pattern::Construct(t) => format!("let _ = {t} {{ probe: 0 }};"),
    }
}

/// The first function with a body in `text` (top-level `fn`, or a method of a top-level `impl`),
/// not test-only: its key and the byte offset just after its opening brace.
fn first_function(text: &str) -> Option<(String, usize)> {
    let ast = syn::parse_file(text).ok()?;
    let offset = |line: usize, column: usize| -> usize {
        text.split_inclusive('\n').take(line - 1).map(str::len).sum::<usize>()
            + text
                .split_inclusive('\n')
                .nth(line - 1)
                .map_or(0, |l| l.char_indices().nth(column).map_or(l.len(), |(i, _)| i))
            + 1
    };
    for item in &ast.items {
        match item {
            Item::Fn(f) if !is_test_only(&f.attrs) => {
                let at = f.block.brace_token.span.open().start();
                return Some((f.sig.ident.to_string(), offset(at.line, at.column)));
            }
            Item::Impl(i) if !is_test_only(&i.attrs) => {
                let syn::Type::Path(ty) = &*i.self_ty else { continue };
                let ty = ty.path.segments.last()?.ident.to_string();
                for it in &i.items {
                    if let ImplItem::Fn(f) = it
                        && !is_test_only(&f.attrs)
                    {
                        let at = f.block.brace_token.span.open().start();
                        return Some((
                            format!("{ty}::{}", f.sig.ident),
                            offset(at.line, at.column),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn a_probe_in_any_library_function_fails_check_naming_that_function() {
    let dir = TempDir::new("probe").unwrap();
    copy_workspace(dir.path());
    let before = modes::check(dir.path()).unwrap();
    assert!(
        before.problems.is_empty(),
        "the copy must pass first:\n{}",
        before.report("check").check_text()
    );
    let list = Allowlist::load(dir.path()).unwrap();
    let files: Vec<String> =
        sources::collect(dir.path()).unwrap().files.into_iter().map(|f| f.rel).collect();

    // One probe per mechanism, spread over the library files its rule and scope cover.
    let mut expected = Vec::new();
    for (i, m) in list.mechanisms.iter().enumerate() {
        let rule = list.rule(&m.rule).unwrap();
        let covers = |scope: Option<&super::allowlist::Scope>, f: &str| {
            scope.is_none_or(|s| s.paths.iter().any(|p| f.starts_with(p.as_str())))
        };
        let eligible: Vec<&String> = files
            .iter()
            .filter(|f| covers(rule.scope.as_ref(), f) && covers(m.scope.as_ref(), f))
            .filter(|f| !m.defined_in.iter().any(|d| f.starts_with(d.as_str())))
            .collect();
        assert!(!eligible.is_empty(), "no library file to probe `{}` in", m.name);
        let file = eligible[i % eligible.len()];
        let path = dir.path().join(file);
        let mut text = std::fs::read_to_string(&path).unwrap();
        let (function, at) = first_function(&text).unwrap_or_else(|| {
            text.push_str("\npub fn audit_probe() {\n}\n");
            first_function(&text).unwrap()
        });
        let stmt = probe_statement(&m.matches[0]);
        let line = text[..at].lines().count();
        text.insert_str(at, &format!(" {stmt}"));
        std::fs::write(&path, text).unwrap();
        let kind = if m.status == Status::Retired { "retired-in-use" } else { "unlisted" };
        expected.push((kind, m.name.clone(), format!("{file}::{function}"), line));
    }

    let after = modes::check(dir.path()).unwrap();
    let report = after.report("check").check_text();
    for (kind, mechanism, key, line) in &expected {
        let found = after.problems.iter().any(|p| {
            p.kind == *kind
                && p.mechanism.as_deref() == Some(mechanism)
                && p.key.as_deref() == Some(key)
                && p.line == Some(*line)
        });
        assert!(found, "no [{kind}] for `{mechanism}` at `{key}`:{line}:\n{report}");
        let (_, function) = split_key(key).unwrap();
        assert!(
            report.contains(&format!("`{function}`")),
            "the report must name `{function}`:\n{report}"
        );
    }
    assert_eq!(after.problems.len(), expected.len(), "only the probes fail:\n{report}");
}

#[test]
fn cfg_predicates() {
    let attrs =
        |src: &str| syn::parse_str::<syn::ItemFn>(&format!("{src} fn f() {{}}")).unwrap().attrs;
    assert!(is_test_only(&attrs("#[cfg(test)]")));
    assert!(is_test_only(&attrs("#[test]")));
    assert!(is_test_only(&attrs("#[cfg(all(test, loom))]")));
    assert!(is_test_only(&attrs("#[cfg(any(test, all(test, loom)))]")));
    assert!(!is_test_only(&attrs("#[cfg(not(test))]")));
    assert!(!is_test_only(&attrs("#[cfg(any(test, feature = \"x\"))]")));
    assert!(!is_test_only(&attrs("#[cfg(loom)]")));
    assert!(!is_test_only(&attrs("#[cfg_attr(test, allow(dead_code))]")));
}

fn sites(src: &str) -> Vec<(String, SiteKind)> {
    let file = syn::parse_file(src).unwrap();
    FileVisitor::walk(&file, NameScope::default())
        .sites
        .into_iter()
        .map(|s| (s.function, s.kind))
        .collect()
}

fn call(path: &[&str], args: usize) -> SiteKind {
    SiteKind::Call { path: path.iter().map(ToString::to_string).collect(), args }
}

#[test]
fn renames_in_nested_use_groups_are_followed() {
    let found = sites(
        "use a::{b::{c as d, T as U}, e::{self as f}};\n\
         fn g() { d(); U::new(); f::h(); }",
    );
    assert!(found.contains(&("g".into(), call(&["c"], 0))), "{found:?}");
    assert!(found.contains(&("g".into(), call(&["T", "new"], 0))), "{found:?}");
    assert!(found.contains(&("g".into(), call(&["e", "h"], 0))), "{found:?}");
}

#[test]
fn block_scoped_renames_do_not_leak() {
    let found = sites("fn a() { use x::open as go; go(); }\nfn b() { go(); }");
    assert!(found.contains(&("a".into(), call(&["open"], 0))), "{found:?}");
    assert!(found.contains(&("b".into(), call(&["go"], 0))), "{found:?}");
}

#[test]
fn function_keys() {
    let found = sites(
        "impl<T> S<T> { fn m() { fn inner() { x(); } let c = || y(); } }\n\
         trait Tr { fn d() { z(); } }\n\
         impl Tr for &S2 { fn d() { w(); } }\n\
         mod inl { fn f() { v(); } }\n\
         static K: u8 = k();",
    );
    let key_of =
        |name: &str| found.iter().find(|(_, k)| *k == call(&[name], 0)).map(|(f, _)| f.clone());
    assert_eq!(key_of("x").as_deref(), Some("S::m::inner"));
    assert_eq!(key_of("y").as_deref(), Some("S::m"));
    assert_eq!(key_of("z").as_deref(), Some("Tr::d"));
    assert_eq!(key_of("w").as_deref(), Some("S2::d"));
    assert_eq!(key_of("v").as_deref(), Some("inl::f"));
    assert_eq!(key_of("k").as_deref(), Some("K"));
}

#[test]
fn self_and_qualified_paths_resolve_to_the_type() {
    let found = sites(
        "impl Guard { fn a() { Self::enter(1); <Guard as Tr>::enter(2); <Guard>::enter(3); } }",
    );
    let n = found.iter().filter(|(_, k)| *k == call(&["Guard", "enter"], 1)).count();
    assert_eq!(n, 3, "{found:?}");
}

#[test]
fn macro_bodies() {
    let body = |src: &str| parse_body(&src.parse().unwrap());
    assert!(matches!(body("a.b(), c"), Body::Pieces(p) if p.len() == 2));
    assert!(matches!(body("0; n"), Body::Pieces(p) if p.len() == 2));
    assert!(matches!(body("HashMap::<K, V>::new()"), Body::Pieces(p) if p.len() == 1));
    assert!(matches!(body("static X: u8 = 0;"), Body::Stmts(_)));
    let guarded = body("x, Some(Foo { .. }) if ok");
    assert!(!guarded.has_unparsed());
    assert!(
        matches!(&guarded, Body::Pieces(p) if matches!(&p[1], Piece::Pat(pg) if pg.1.is_some()))
    );
    assert!(body("enter => b.open()").has_unparsed());
}

#[test]
fn matcher_arity_and_kinds() {
    let m = |json: &str| serde_json::from_str::<Matcher>(json).unwrap();
    let site = |kind: SiteKind| super::visitor::Site {
        line: 1,
        column: 1,
        function: "f".into(),
        types: Vec::new(),
        kind,
        via: None,
    };
    let join0 = m(r#"{"call": "join", "args": 0}"#);
    assert!(site_matches(&join0, &site(SiteKind::Method { name: "join".into(), args: 0 })));
    assert!(!site_matches(&join0, &site(SiteKind::Method { name: "join".into(), args: 1 })));
    assert!(site_matches(&join0, &site(call(&["JoinHandle", "join"], 1))), "explicit receiver");
    assert!(!site_matches(&join0, &site(call(&["join"], 1))), "a free fn has no receiver");
    let path = m(r#"{"path": "Guard::enter"}"#);
    assert!(site_matches(&path, &site(call(&["arbiter", "Guard", "enter"], 1))));
    assert!(!site_matches(&path, &site(call(&["Other", "enter"], 1))));
    assert!(!site_matches(&path, &site(SiteKind::Method { name: "enter".into(), args: 1 })));
    let value = |p: &[&str], imported| SiteKind::Value {
        path: p.iter().map(ToString::to_string).collect(),
        imported,
    };
    let open = m(r#"{"call": "open_session"}"#);
    assert!(site_matches(&open, &site(value(&["CpuBackend", "open_session"], false))));
    assert!(site_matches(&open, &site(value(&["open_session"], true))));
    assert!(!site_matches(&open, &site(value(&["open_session"], false))), "a local variable");
    let build = m(r#"{"construct": "CpuExecSession"}"#);
    assert!(site_matches(
        &build,
        &site(SiteKind::Construct { path: vec!["CpuExecSession".into()] })
    ));
    assert!(!site_matches(&build, &site(call(&["CpuExecSession", "new"], 0))));
}

#[test]
fn keys_and_reasons() {
    assert_eq!(split_key("crates/a/src/b.rs::T::m"), Some(("crates/a/src/b.rs", "T::m")));
    assert_eq!(split_key("crates/a/src/b.rs"), None);
    assert_eq!(split_key("crates/a/src/b.rs::"), None);
    assert!(reason_is_placeholder("").is_some());
    assert!(reason_is_placeholder("  ").is_some());
    assert!(reason_is_placeholder("todo: later").is_some());
    assert!(reason_is_placeholder(super::allowlist::TODO_REASON).is_some());
    assert!(reason_is_placeholder("é").is_none(), "non-ASCII reasons do not panic");
    assert!(reason_is_placeholder("the held entry adopts the permit here").is_none());
}

#[test]
fn the_real_allowlist_is_canonical_and_documents_every_mechanism() {
    let root = workspace();
    let list = Allowlist::load(&root).unwrap();
    let text = std::fs::read_to_string(root.join(super::allowlist::ALLOWLIST_PATH)).unwrap();
    assert_eq!(
        text,
        list.to_text().unwrap(),
        "keep the file in canonical layout (`--bless` writes it)"
    );
    for m in &list.mechanisms {
        assert!(!m.description.trim().is_empty(), "mechanism `{}` has no description", m.name);
    }
    for r in &list.rules {
        assert!(!r.description.trim().is_empty(), "rule `{}` has no description", r.name);
    }
}

#[test]
fn json_report_has_the_census() {
    let outcome = modes::check(&selftest::fixtures_dir().join("syntax")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&outcome.report("check").json().unwrap()).unwrap();
    for field in ["entries", "functions", "groups", "empty_groups"] {
        assert!(json["census"][field].is_u64(), "census.{field} missing: {json}");
    }
    assert_eq!(json["ok"], serde_json::Value::Bool(true));
    assert!(json["occurrences"].as_array().is_some_and(|o| !o.is_empty()));
    assert!(json["unparsed_macros"].as_array().is_some_and(|u| u.len() == 2));
}

#[test]
fn command_line() {
    let args = |a: &[&str]| a.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert!(super::run(&args(&["--bogus"])).is_err());
    assert!(super::run(&args(&["--check", "--list"])).is_err());
    assert!(super::run(&args(&["--format", "xml"])).is_err());
    let rules = selftest::fixtures_dir().join("rules");
    let rules = rules.to_string_lossy();
    assert!(super::run(&args(&["--check", "--root", &rules])).is_err(), "the rules fixture fails");
    let syntax = selftest::fixtures_dir().join("syntax");
    let syntax = syntax.to_string_lossy();
    assert!(super::run(&args(&["--check", "--root", &syntax, "--format", "json"])).is_ok());
    assert!(super::run(&args(&["--list", "--root", &rules])).is_ok(), "`--list` does not judge");
}
