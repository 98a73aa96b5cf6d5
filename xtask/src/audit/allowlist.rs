//! The allowlist model: `scripts/session-entry-allowlist.json` read into typed values, validated,
//! and written back (for `--bless`) in one canonical layout.
//!
//! The file holds three things (SPEC U1):
//!
//! - `rules`: the repository rules the audit enforces (the session-entry rule, and the rule "blocking
//!   call on the operation path"), each with an optional [`Scope`] limiting where it applies;
//! - `mechanisms`: named groups of code patterns ([`Matcher`]s), each under one rule and with a
//!   [`Status`];
//! - `entries`: for every mechanism, the functions allowed to use it, keyed
//!   `crates/<crate>/src/<file>.rs::Type::function`, each with a reason.
//!
//! Invariants kept by [`Allowlist::parse`]: mechanism and rule names are unique, every mechanism names
//! a known rule and has at least one matcher, and every matcher is well formed. Unknown fields are
//! rejected so that a typo cannot silently disable a matcher. Problems that are about the *contents*
//! of the entries (stale, unknown mechanism, TODO reason) are not load errors: `--check` reports them
//! with everything else.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::DynError;

/// Where the allowlist lives, relative to the workspace root.
pub(crate) const ALLOWLIST_PATH: &str = "scripts/session-entry-allowlist.json";

/// The reason `--bless` writes for an occurrence nobody has explained yet; `--check` rejects it.
pub(crate) const TODO_REASON: &str = "TODO: say why this function may use the mechanism";

/// The whole allowlist file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Allowlist {
    /// Free text for the human reader: what the file is and where its rules are written down.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) about: Vec<String>,
    /// The rules, in report order.
    pub(crate) rules: Vec<Rule>,
    /// The mechanisms, in report order.
    pub(crate) mechanisms: Vec<Mechanism>,
    /// mechanism name → (function key → reason).
    #[serde(default)]
    pub(crate) entries: BTreeMap<String, BTreeMap<String, String>>,
}

/// A repository rule: a family of mechanisms and where it applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rule {
    /// Short name used in reports and by mechanisms, e.g. `session-entry`.
    pub(crate) name: String,
    /// Human title, e.g. "blocking call on the operation path".
    pub(crate) title: String,
    /// What the rule protects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) description: String,
    /// Where the rule applies; absent means every library source file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope: Option<Scope>,
}

/// A part of the library code. An occurrence is in scope when it matches any of the three lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scope {
    /// Workspace-relative path prefixes (`crates/holdfast-kernels/src/`, or a file stem such as
    /// `crates/holdfast-session/src/view` covering `view.rs` and `view/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) paths: Vec<String>,
    /// Type names: code inside `impl T`, `impl Trait for T` or `trait T` anywhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) types: Vec<String>,
    /// Function keys without the file (`CpuHeldSession::with_session`); nested functions and
    /// closures inside them are included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) functions: Vec<String>,
}

/// Lifecycle of a mechanism; see REPOSITORY_RULES.md "Backend Session Entry".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// In use: every occurrence needs an entry, and matching nothing is an error (the matcher went
    /// blind, or the mechanism should be retired).
    Tracked,
    /// Declared, awaiting its code: every occurrence needs an entry, matching nothing is expected.
    Planned,
    /// Guarded: every occurrence needs an entry, and matching nothing is the normal, good state
    /// (the blocking-call rule).
    Watched,
    /// Must not occur at all; it cannot have entries.
    Retired,
}

impl Status {
    /// The lowercase name used in the file and in reports.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Tracked => "tracked",
            Self::Planned => "planned",
            Self::Watched => "watched",
            Self::Retired => "retired",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One named group of code patterns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Mechanism {
    /// Unique name; the key of its group in `entries`.
    pub(crate) name: String,
    /// The [`Rule`] it belongs to.
    pub(crate) rule: String,
    /// Lifecycle state.
    pub(crate) status: Status,
    /// What the mechanism does and why it is audited.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) description: String,
    /// The code patterns; an occurrence is anything matching one of them.
    pub(crate) matches: Vec<Matcher>,
    /// Where the mechanism can occur at all, on top of its rule's scope: e.g. arbiter calls only
    /// in crates above the arbiter's layer (the layering check guarantees the others cannot call
    /// it), which keeps a name such as `join` from matching `parts.join(",")` in the kernels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope: Option<Scope>,
    /// Path prefixes holding the mechanism's own implementation (e.g. the arbiter crate for
    /// admission calls): occurrences there are the definition, not a use, and are not reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) defined_in: Vec<String>,
}

/// One code pattern. Exactly one of `call`, `path`, `construct` is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Matcher {
    /// A function or method called by name: `x.name(..)`, `name(..)`, `a::b::name(..)`, and the
    /// path `a::name` passed as a value. `use … as …` renames are followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) call: Option<String>,
    /// A path call `Type::name(..)` (also `Self::name` inside `impl Type`, `<Type as Tr>::name`,
    /// and renamed imports of `Type`), or that path passed as a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// Construction of the named type: a struct literal `T { .. }` (also `Self { .. }` inside
    /// `impl T`, and renamed imports), a tuple-struct constructor `T(..)`, or the unit value `T`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) construct: Option<String>,
    /// Only calls with exactly this many arguments (the receiver not counted), e.g. `join` with 0
    /// arguments is a thread join while `parts.join(",")` is not. A path call such as
    /// `JoinHandle::join(h)` may also carry the receiver as one more argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) args: Option<usize>,
}

/// What a [`Matcher`] looks for, once validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pattern<'a> {
    /// See [`Matcher::call`].
    Call(&'a str),
    /// See [`Matcher::path`]: the segments, at least two.
    Path(Vec<&'a str>),
    /// See [`Matcher::construct`].
    Construct(&'a str),
}

impl Matcher {
    /// The validated pattern.
    ///
    /// # Errors
    /// When not exactly one kind is set, or a name is not a Rust path.
    pub(crate) fn pattern(&self) -> Result<Pattern<'_>, String> {
        match (&self.call, &self.path, &self.construct) {
            (Some(name), None, None) => {
                check_ident(name)?;
                Ok(Pattern::Call(name))
            }
            (None, Some(path), None) => {
                let segments: Vec<&str> = path.split("::").collect();
                if segments.len() < 2 {
                    return Err(format!("`path` matcher `{path}` needs `Type::name`"));
                }
                for s in &segments {
                    check_ident(s)?;
                }
                Ok(Pattern::Path(segments))
            }
            (None, None, Some(name)) => {
                check_ident(name)?;
                if self.args.is_some() {
                    return Err(format!("`construct` matcher `{name}` cannot take `args`"));
                }
                Ok(Pattern::Construct(name))
            }
            _ => Err("a matcher sets exactly one of `call`, `path`, `construct`".into()),
        }
    }

    /// A short human description, e.g. ``call `join` (0 args)``.
    pub(crate) fn describe(&self) -> String {
        let base = match self.pattern() {
            Ok(Pattern::Call(n)) => format!("call `{n}`"),
            Ok(Pattern::Path(p)) => format!("path call `{}`", p.join("::")),
            Ok(Pattern::Construct(n)) => format!("construction of `{n}`"),
            Err(e) => e,
        };
        match self.args {
            Some(1) => format!("{base} (1 arg)"),
            Some(n) => format!("{base} ({n} args)"),
            None => base,
        }
    }
}

fn check_ident(s: &str) -> Result<(), String> {
    let mut chars = s.chars();
    let ok = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_');
    if ok { Ok(()) } else { Err(format!("`{s}` is not a Rust identifier")) }
}

impl Allowlist {
    /// Parses and validates the JSON text.
    ///
    /// # Errors
    /// On malformed JSON, unknown fields, duplicate names, a mechanism under an unknown rule, or a
    /// malformed matcher.
    pub(crate) fn parse(text: &str) -> Result<Self, DynError> {
        let list: Self =
            serde_json::from_str(text).map_err(|e| format!("invalid allowlist: {e}"))?;
        list.validate()?;
        Ok(list)
    }

    /// Reads and validates the allowlist of the workspace at `root`.
    ///
    /// # Errors
    /// When the file cannot be read, or [`Allowlist::parse`] fails.
    pub(crate) fn load(root: &Path) -> Result<Self, DynError> {
        let path = root.join(ALLOWLIST_PATH);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()).into())
    }

    /// The canonical text: two-space JSON, entries sorted, a final newline.
    ///
    /// # Errors
    /// Only if serialisation fails, which it does not for these types.
    pub(crate) fn to_text(&self) -> Result<String, DynError> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }

    /// Writes [`Allowlist::to_text`] to the workspace at `root`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub(crate) fn store(&self, root: &Path) -> Result<(), DynError> {
        let path = root.join(ALLOWLIST_PATH);
        std::fs::write(&path, self.to_text()?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()).into())
    }

    /// The rule called `name`.
    pub(crate) fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.name == name)
    }

    /// The mechanism called `name`.
    pub(crate) fn mechanism(&self, name: &str) -> Option<&Mechanism> {
        self.mechanisms.iter().find(|m| m.name == name)
    }

    fn validate(&self) -> Result<(), DynError> {
        let mut errors = Vec::new();
        for (i, r) in self.rules.iter().enumerate() {
            if r.name.trim().is_empty() {
                errors.push(format!("rule #{} has an empty name", i + 1));
            }
            if self.rules[..i].iter().any(|o| o.name == r.name) {
                errors.push(format!("rule `{}` is declared twice", r.name));
            }
        }
        for (i, m) in self.mechanisms.iter().enumerate() {
            if m.name.trim().is_empty() {
                errors.push(format!("mechanism #{} has an empty name", i + 1));
            }
            if self.mechanisms[..i].iter().any(|o| o.name == m.name) {
                errors.push(format!("mechanism `{}` is declared twice", m.name));
            }
            if self.rule(&m.rule).is_none() {
                errors.push(format!("mechanism `{}` names unknown rule `{}`", m.name, m.rule));
            }
            if m.matches.is_empty() {
                errors.push(format!("mechanism `{}` has no matcher", m.name));
            }
            for matcher in &m.matches {
                if let Err(e) = matcher.pattern() {
                    errors.push(format!("mechanism `{}`: {e}", m.name));
                }
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ").into()) }
    }
}

/// Splits an entry key `crates/x/src/f.rs::Type::method` into its file and its function.
pub(crate) fn split_key(key: &str) -> Option<(&str, &str)> {
    let at = key.find(".rs::")?;
    let (file, rest) = key.split_at(at + 3);
    let function = &rest[2..];
    (!function.is_empty()).then_some((file, function))
}

/// Joins a file and a function into an entry key.
pub(crate) fn make_key(file: &str, function: &str) -> String {
    format!("{file}::{function}")
}

/// True for a reason that does not explain anything: empty, or a `TODO` placeholder.
pub(crate) fn reason_is_placeholder(reason: &str) -> Option<&'static str> {
    let r = reason.trim();
    if r.is_empty() {
        Some("empty reason")
    } else if r.get(..4).is_some_and(|head| head.eq_ignore_ascii_case("todo")) {
        Some("TODO reason")
    } else {
        None
    }
}
