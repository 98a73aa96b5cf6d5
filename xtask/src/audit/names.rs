//! Name resolution, as far as the audit needs it: which local name stands for which original name.
//!
//! Sources of renames, all followed:
//!
//! - `use a::b::{c as d, e::{f as g}}` — any nesting, any layout (syn parses the tree, so a group
//!   spread over many lines is no different from one on a single line);
//! - `use a::Type as Alias` then `Alias::method(..)` or `Alias { .. }`;
//! - `type Alias = a::Type<..>;`;
//! - `pub use … as …` (and `pub(crate)`, `pub(super)` …) re-exports: they are visible wherever the
//!   new name is imported, so they are collected from every file first and apply workspace-wide.
//!
//! Private renames apply to the module or block that declares them (and, conservatively, to the
//! blocks and inline modules nested in it). Resolution is by name, not by full path: the audit has
//! no type information and errs towards reporting.

use std::collections::{HashMap, HashSet};

use syn::{Item, UseTree, Visibility};

use super::cfg::is_test_only;
use super::sources::SourceFile;

/// Names brought into one scope (module, inline module or block).
#[derive(Debug, Default, Clone)]
pub(crate) struct NameScope {
    /// Local name → original name, for renames.
    aliases: HashMap<String, String>,
    /// Every name imported into the scope (renamed or not): used to tell an imported function
    /// passed as a value from a local variable of the same name.
    imported: HashSet<String>,
}

impl NameScope {
    /// The scope declared by `items` (their `use` and `type` items; nothing else).
    pub(crate) fn of_items<'a>(items: impl IntoIterator<Item = &'a Item>) -> Self {
        let mut scope = Self::default();
        for item in items {
            scope.add_item(item, false);
        }
        scope
    }

    /// The workspace-wide renames: every non-private `use … as …` and `type` alias in `files`.
    pub(crate) fn reexports(files: &[SourceFile]) -> Self {
        let mut scope = Self::default();
        for f in files {
            scope.add_public(&f.ast.items);
        }
        scope
    }

    fn add_public(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Mod(m) if !is_test_only(&m.attrs) => {
                    if let Some((_, inner)) = &m.content {
                        self.add_public(inner);
                    }
                }
                _ => self.add_item(item, true),
            }
        }
    }

    fn add_item(&mut self, item: &Item, public_only: bool) {
        match item {
            Item::Use(u) if !is_test_only(&u.attrs) => {
                if public_only && matches!(u.vis, Visibility::Inherited) {
                    return;
                }
                self.add_tree(&u.tree, None);
            }
            Item::Type(t) if !is_test_only(&t.attrs) => {
                if public_only && matches!(t.vis, Visibility::Inherited) {
                    return;
                }
                if let syn::Type::Path(p) = &*t.ty
                    && let Some(last) = p.path.segments.last()
                {
                    let alias = t.ident.to_string();
                    let original = last.ident.to_string();
                    if alias != original {
                        self.aliases.insert(alias.clone(), original);
                    }
                    self.imported.insert(alias);
                }
            }
            _ => {}
        }
    }

    /// Records `tree`; `parent` is the last path segment before it (for `self` in groups).
    fn add_tree(&mut self, tree: &UseTree, parent: Option<&str>) {
        match tree {
            UseTree::Path(p) => self.add_tree(&p.tree, Some(&p.ident.to_string())),
            UseTree::Name(n) => {
                let name = n.ident.to_string();
                let local = if name == "self" { parent.map(str::to_string) } else { Some(name) };
                if let Some(local) = local {
                    self.imported.insert(local);
                }
            }
            UseTree::Rename(r) => {
                let alias = r.rename.to_string();
                if alias == "_" {
                    return;
                }
                let ident = r.ident.to_string();
                let original =
                    if ident == "self" { parent.map(str::to_string) } else { Some(ident) };
                if let Some(original) = original {
                    if original != alias {
                        self.aliases.insert(alias.clone(), original);
                    }
                    self.imported.insert(alias);
                }
            }
            UseTree::Group(g) => {
                for t in &g.items {
                    self.add_tree(t, parent);
                }
            }
            UseTree::Glob(_) => {}
        }
    }
}

/// A stack of [`NameScope`]s (innermost last) over the workspace-wide re-exports.
#[derive(Debug, Default)]
pub(crate) struct Resolver {
    global: NameScope,
    stack: Vec<NameScope>,
}

/// How many renames are followed in a chain before giving up (a cycle is a compile error anyway).
const MAX_CHAIN: usize = 8;

impl Resolver {
    /// A resolver over the given workspace-wide renames.
    pub(crate) fn new(global: NameScope) -> Self {
        Self { global, stack: Vec::new() }
    }

    /// Enters a scope.
    pub(crate) fn push(&mut self, scope: NameScope) {
        self.stack.push(scope);
    }

    /// Leaves the innermost scope.
    pub(crate) fn pop(&mut self) {
        self.stack.pop();
    }

    /// The original name `name` stands for, following renames.
    pub(crate) fn resolve(&self, name: &str) -> String {
        let mut current = name.to_string();
        for _ in 0..MAX_CHAIN {
            let next = self
                .stack
                .iter()
                .rev()
                .chain(std::iter::once(&self.global))
                .find_map(|s| s.aliases.get(&current));
            match next {
                Some(n) if *n != current => current.clone_from(n),
                _ => break,
            }
        }
        current
    }

    /// True when `name` is brought in by a `use` (or `type`) visible here.
    pub(crate) fn is_imported(&self, name: &str) -> bool {
        self.stack.iter().any(|s| s.imported.contains(name)) || self.global.imported.contains(name)
    }
}
