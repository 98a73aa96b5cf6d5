//! Deciding which [`Site`]s are occurrences of which mechanism.
//!
//! | pattern | matches |
//! |---|---|
//! | `call: name` | `x.name(..)`, `name(..)`, `a::b::name(..)`; `a::name` passed as a value; an imported `name` passed as a value; the identifier `name` in an unparsed macro body |
//! | `path: T::name` | `T::name(..)`, `Self::name(..)` in `impl T`, `<T as Tr>::name(..)`, `Alias::name(..)` with `use …::T as Alias`; `T::name` as a value; the tokens `T::name` in an unparsed macro body |
//! | `construct: T` | `T { .. }`, `Self { .. }` in `impl T`, `Alias { .. }`; `T(..)`; the value `T`; the identifier `T` in an unparsed macro body |
//!
//! `args: n` narrows `call` and `path` patterns to calls with `n` arguments (a path call may also
//! pass the receiver explicitly, so `n + 1` is accepted there). A method call is never matched by
//! a `path` pattern: without types the receiver's type is unknown, so a mechanism that is reached
//! through method syntax uses a `call` pattern.
//!
//! Definitions are never occurrences, because they are not sites: a `fn name` item, a trait
//! method's signature, a `struct T` item, a `use` import, a destructuring pattern `let T { a } = t`.
//! Beyond that, a mechanism may name the files that implement it (`defined_in`); sites there are
//! counted as definitions and not reported.
//!
//! An occurrence must lie in its rule's scope and in its mechanism's scope, when they have one.

use super::allowlist::{Allowlist, Matcher, Pattern, Scope};
use super::visitor::{Site, SiteKind, Via};

/// One occurrence of a mechanism in library code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub(crate) struct Occurrence {
    /// Workspace-relative file.
    pub(crate) file: String,
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
    /// The mechanism's name.
    pub(crate) mechanism: String,
    /// The mechanism's rule.
    pub(crate) rule: String,
    /// The function key, without the file.
    pub(crate) function: String,
    /// Which pattern matched, e.g. ``call `open_session` ``.
    pub(crate) pattern: String,
    /// `None` for plain code, else the macro it was read from (and whether its body was parsed).
    pub(crate) via: Option<String>,
}

/// The result of matching one file's sites.
#[derive(Debug, Default)]
pub(crate) struct Matches {
    /// Occurrences, one per mechanism and site.
    pub(crate) occurrences: Vec<Occurrence>,
    /// Sites inside a mechanism's own `defined_in` files, per mechanism name.
    pub(crate) definitions: Vec<String>,
}

/// Matches `sites` of `file` against every mechanism of `list`.
pub(crate) fn match_sites(list: &Allowlist, file: &str, sites: &[Site]) -> Matches {
    let mut out = Matches::default();
    for m in &list.mechanisms {
        let Some(rule) = list.rule(&m.rule) else { continue };
        for site in sites {
            let Some(hit) = m.matches.iter().find(|p| site_matches(p, site)) else { continue };
            if !in_scope(rule.scope.as_ref(), file, site) || !in_scope(m.scope.as_ref(), file, site)
            {
                continue;
            }
            if m.defined_in.iter().any(|prefix| file.starts_with(prefix.as_str())) {
                out.definitions.push(m.name.clone());
                continue;
            }
            out.occurrences.push(Occurrence {
                file: file.to_string(),
                line: site.line,
                column: site.column,
                mechanism: m.name.clone(),
                rule: m.rule.clone(),
                function: site.function.clone(),
                pattern: hit.describe(),
                via: site.via.as_ref().map(|v| match v {
                    Via::Macro(name) => format!("inside `{name}!`"),
                    Via::Unparsed(name) if name.starts_with("macro_rules!") => {
                        format!("identifier in the macro definition `{name}`")
                    }
                    Via::Unparsed(name) => format!("identifier in the unparsed body of `{name}!`"),
                }),
            });
        }
    }
    out
}

/// True when `site` lies in `scope` (no scope: everywhere).
fn in_scope(scope: Option<&Scope>, file: &str, site: &Site) -> bool {
    let Some(Scope { paths, types, functions }) = scope else { return true };
    paths.iter().any(|p| file.starts_with(p.as_str()))
        || site.types.iter().any(|t| types.contains(t))
        || functions.iter().any(|f| {
            site.function == *f
                || site.function.strip_prefix(f.as_str()).is_some_and(|rest| rest.starts_with("::"))
        })
}

/// True when `matcher` matches `site`.
pub(crate) fn site_matches(matcher: &Matcher, site: &Site) -> bool {
    let Ok(pattern) = matcher.pattern() else { return false };
    let arity = |args: usize, path_len: usize| {
        matcher.args.is_none_or(|n| args == n || (path_len >= 2 && args == n + 1))
    };
    match (&pattern, &site.kind) {
        (Pattern::Call(name), SiteKind::Method { name: n, args }) => n == name && arity(*args, 0),
        (Pattern::Call(name), SiteKind::Call { path, args }) => {
            last_is(path, name) && arity(*args, path.len())
        }
        (Pattern::Call(name), SiteKind::Value { path, imported }) => {
            last_is(path, name) && (path.len() >= 2 || *imported)
        }
        (Pattern::Path(segments), SiteKind::Call { path, args }) => {
            ends_with(path, segments) && arity(*args, path.len())
        }
        (Pattern::Path(segments), SiteKind::Value { path, .. } | SiteKind::Token { path }) => {
            ends_with(path, segments)
        }
        (Pattern::Call(name) | Pattern::Construct(name), SiteKind::Token { path }) => {
            last_is(path, name)
        }
        (
            Pattern::Construct(ty),
            SiteKind::Construct { path }
            | SiteKind::Call { path, .. }
            | SiteKind::Value { path, .. },
        ) => last_is(path, ty),
        _ => false,
    }
}

fn last_is(path: &[String], name: &str) -> bool {
    path.last().is_some_and(|l| l == name)
}

fn ends_with(path: &[String], segments: &[&str]) -> bool {
    path.len() >= segments.len()
        && path[path.len() - segments.len()..].iter().zip(segments).all(|(a, b)| a == b)
}
