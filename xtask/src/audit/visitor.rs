//! The syntax-tree walk: every call, path value and struct construction in a library file, each
//! attributed to its innermost enclosing function.
//!
//! The walk does not know the mechanisms; it reports candidate [`Site`]s with their names already
//! resolved through renames ([`super::names`]), and [`super::matcher`] decides which ones matter.
//! Working on syn's tree is what makes the audit exact where a line scanner guesses: comments, doc
//! text, string, raw-string and char literals are literals, not calls; a `use` group over ten lines
//! is one tree; nesting is structure, not indentation.
//!
//! # Function keys
//!
//! A site's function is the chain of enclosing named items, joined by `::`:
//!
//! | code | key |
//! |---|---|
//! | `fn f() { … }` | `f` |
//! | `impl Foo { fn m() }`, `impl<T> Foo<T>`, `impl Trait for Foo` | `Foo::m` |
//! | `trait Tr { fn d() { … } }` (a default method) | `Tr::d` |
//! | `fn outer() { fn inner() { … } }` inside `impl Foo` | `Foo::outer::inner` (the innermost function, qualified) |
//! | a closure anywhere | the function that contains it |
//! | `mod m { fn f() }` (inline) | `m::f` |
//! | `const C` / `static S` initialisers, `impl Foo { const C }` | `C`, `S`, `Foo::C` |
//! | the body of `macro_rules! m` (identifiers only, see [`super::macros`]) | `m!` |
//! | an item-position invocation `m!(..);` outside any function | `m!` |
//!
//! Test-only items ([`super::cfg`]) are skipped with everything inside them.

use proc_macro2::Span;
use syn::visit::{self, Visit};
use syn::{Expr, ExprPath, Item, Macro, Stmt};

use super::cfg::is_test_only;
use super::macros::{Body, Piece, identifiers, parse_body};
use super::names::{NameScope, Resolver};

/// What kind of code a [`Site`] is. Paths are resolved: renames followed, `Self` replaced by the
/// implementing type, `<T as Tr>::f` read as `T::f`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SiteKind {
    /// `receiver.name(args)`.
    Method { name: String, args: usize },
    /// `a::b::name(args)` or `name(args)`.
    Call { path: Vec<String>, args: usize },
    /// A path used as a value, not called: `map(Type::name)`. `imported` is true when a
    /// one-segment path names something brought in by `use` (not a local variable).
    Value { path: Vec<String>, imported: bool },
    /// `Type { .. }`.
    Construct { path: Vec<String> },
    /// An identifier inside a macro body that could not be parsed, as the `::` path it ends.
    Token { path: Vec<String> },
}

/// Where a [`Site`] was read from, when not plain code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Via {
    /// Inside the parsed body of the named macro.
    Macro(String),
    /// An identifier in the unparsed body of the named macro.
    Unparsed(String),
}

/// One candidate occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
    /// The function key (see the module docs).
    pub(crate) function: String,
    /// The types whose `impl` or `trait` blocks enclose the site, outermost first.
    pub(crate) types: Vec<String>,
    /// What it is.
    pub(crate) kind: SiteKind,
    /// Macro provenance.
    pub(crate) via: Option<Via>,
}

/// A macro whose body (or part of it) the audit could not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnparsedMacro {
    /// 1-based line of the macro's name.
    pub(crate) line: usize,
    /// The macro's name, e.g. `macro_rules` or `my_dsl`.
    pub(crate) name: String,
    /// The enclosing function key.
    pub(crate) function: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Module,
    Type,
    Function,
}

struct Frame {
    name: String,
    kind: FrameKind,
}

/// Walks one file; collect the results from [`FileVisitor::sites`] and [`FileVisitor::unparsed`].
pub(crate) struct FileVisitor {
    resolver: Resolver,
    frames: Vec<Frame>,
    via: Vec<String>,
    /// The candidate sites found.
    pub(crate) sites: Vec<Site>,
    /// Macros not (fully) parsed.
    pub(crate) unparsed: Vec<UnparsedMacro>,
}

impl FileVisitor {
    /// Walks `file` with the workspace-wide renames `global`.
    pub(crate) fn walk(file: &syn::File, global: NameScope) -> Self {
        let mut v = Self {
            resolver: Resolver::new(global),
            frames: Vec::new(),
            via: Vec::new(),
            sites: Vec::new(),
            unparsed: Vec::new(),
        };
        v.resolver.push(NameScope::of_items(&file.items));
        for item in &file.items {
            v.visit_item(item);
        }
        v.resolver.pop();
        v
    }

    fn function_key(&self) -> String {
        let names: Vec<&str> = self.frames.iter().map(|f| f.name.as_str()).collect();
        if names.is_empty() { "(module)".to_string() } else { names.join("::") }
    }

    fn with_frame(&mut self, name: String, kind: FrameKind, f: impl FnOnce(&mut Self)) {
        self.frames.push(Frame { name, kind });
        f(self);
        self.frames.pop();
    }

    fn push_site(&mut self, span: Span, kind: SiteKind) {
        let at = span.start();
        let via = self.via.last().map(|m| Via::Macro(m.clone()));
        self.sites.push(Site {
            line: at.line,
            column: at.column + 1,
            function: self.function_key(),
            types: self.enclosing_types(),
            kind,
            via,
        });
    }

    /// The enclosing `impl`/`trait` types, renames followed (for rule scopes).
    fn enclosing_types(&self) -> Vec<String> {
        self.frames
            .iter()
            .filter(|f| f.kind == FrameKind::Type)
            .map(|f| self.resolver.resolve(&f.name))
            .collect()
    }

    /// The innermost implementing type, for `Self`.
    fn self_type(&self) -> Option<&str> {
        self.frames.iter().rev().find(|f| f.kind == FrameKind::Type).map(|f| f.name.as_str())
    }

    /// Resolved segments of an expression path, and the span of its last segment.
    fn resolve_path(&self, qself: Option<&syn::QSelf>, path: &syn::Path) -> (Vec<String>, Span) {
        let mut segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(q) = qself {
            let ty = type_name(&q.ty).unwrap_or_else(|| "_".to_string());
            let keep = segments.split_off(q.position.min(segments.len()));
            segments = std::iter::once(ty).chain(keep).collect();
        }
        for s in &mut segments {
            if s == "Self" {
                if let Some(t) = self.self_type() {
                    *s = self.resolver.resolve(t);
                }
            } else {
                *s = self.resolver.resolve(s);
            }
        }
        let span = path.segments.last().map_or_else(Span::call_site, |s| s.ident.span());
        (segments, span)
    }

    fn value_path(&mut self, p: &ExprPath) {
        let (path, span) = self.resolve_path(p.qself.as_ref(), &p.path);
        let imported = p.qself.is_none()
            && p.path.segments.len() == 1
            && p.path
                .segments
                .first()
                .is_some_and(|s| self.resolver.is_imported(&s.ident.to_string()));
        self.push_site(span, SiteKind::Value { path, imported });
    }

    fn macro_body(&mut self, mac: &Macro) {
        let name = mac.path.segments.last().map_or_else(String::new, |s| s.ident.to_string());
        let body = parse_body(&mac.tokens);
        if body.has_unparsed() {
            self.unparsed_macro(mac, &name, None);
        }
        self.via.push(name.clone());
        match body {
            Body::Stmts(stmts) => self.stmts(&stmts),
            Body::Pieces(pieces) => {
                for piece in pieces {
                    match piece {
                        Piece::Expr(e) => self.visit_expr(&e),
                        Piece::Pat(pat_and_guard) => {
                            let (pat, guard) = &*pat_and_guard;
                            self.visit_pat(pat);
                            if let Some(g) = guard {
                                self.visit_expr(g);
                            }
                        }
                        Piece::Unparsed(tokens) => self.unparsed_tokens(&tokens, &name),
                    }
                }
            }
        }
        self.via.pop();
    }

    /// Records a macro the audit cannot read; with `tokens`, scans all of them as well.
    fn unparsed_macro(
        &mut self,
        mac: &Macro,
        name: &str,
        tokens: Option<&proc_macro2::TokenStream>,
    ) {
        let line = mac.path.segments.last().map_or(0, |s| s.ident.span().start().line);
        self.unparsed.push(UnparsedMacro {
            line,
            name: name.to_string(),
            function: self.function_key(),
        });
        if let Some(tokens) = tokens {
            self.unparsed_tokens(tokens, name);
        }
    }

    fn unparsed_tokens(&mut self, tokens: &proc_macro2::TokenStream, macro_name: &str) {
        let mut idents = Vec::new();
        identifiers(tokens, &mut idents);
        let function = self.function_key();
        let types = self.enclosing_types();
        for (path, line, column) in idents {
            let path = path.iter().map(|s| self.resolver.resolve(s)).collect();
            self.sites.push(Site {
                line,
                column: column + 1,
                function: function.clone(),
                types: types.clone(),
                kind: SiteKind::Token { path },
                via: Some(Via::Unparsed(macro_name.to_string())),
            });
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        let scope = NameScope::of_items(stmts.iter().filter_map(|s| match s {
            Stmt::Item(i) => Some(i),
            _ => None,
        }));
        self.resolver.push(scope);
        for s in stmts {
            self.visit_stmt(s);
        }
        self.resolver.pop();
    }
}

/// The name of a type as used in a function key: the last path segment, through references,
/// parentheses and groups; `None` for types without a name (tuples, slices, `impl Trait`).
pub(crate) fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Reference(r) => type_name(&r.elem),
        syn::Type::Paren(p) => type_name(&p.elem),
        syn::Type::Group(g) => type_name(&g.elem),
        _ => None,
    }
}

fn item_attrs(item: &Item) -> &[syn::Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for FileVisitor {
    fn visit_item(&mut self, item: &'ast Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        match item {
            Item::Fn(f) => {
                self.with_frame(f.sig.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_item_fn(v, f);
                });
            }
            Item::Impl(i) => {
                let name = type_name(&i.self_ty).unwrap_or_else(|| "_".to_string());
                self.with_frame(name, FrameKind::Type, |v| visit::visit_item_impl(v, i));
            }
            Item::Trait(t) => {
                self.with_frame(t.ident.to_string(), FrameKind::Type, |v| {
                    visit::visit_item_trait(v, t);
                });
            }
            Item::Const(c) => {
                self.with_frame(c.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_item_const(v, c);
                });
            }
            Item::Static(s) => {
                self.with_frame(s.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_item_static(v, s);
                });
            }
            Item::Mod(m) => {
                // Out-of-line modules are separate files, walked on their own.
                if let Some((_, items)) = &m.content {
                    self.resolver.push(NameScope::of_items(items));
                    self.with_frame(m.ident.to_string(), FrameKind::Module, |v| {
                        for i in items {
                            v.visit_item(i);
                        }
                    });
                    self.resolver.pop();
                }
            }
            Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                // A macro definition is a template, not code: report it, and match its identifiers
                // by name under the key `name!`, since its expansions cannot be seen.
                let name = m.ident.as_ref().map_or_else(String::new, ToString::to_string);
                self.with_frame(format!("{name}!"), FrameKind::Function, |v| {
                    v.unparsed_macro(&m.mac, &format!("macro_rules! {name}"), Some(&m.mac.tokens));
                });
            }
            Item::Macro(m) => {
                // An item-position invocation generates items: its sites belong to `name!`.
                let name =
                    m.mac.path.segments.last().map_or_else(String::new, |s| s.ident.to_string());
                self.with_frame(format!("{name}!"), FrameKind::Function, |v| {
                    visit::visit_item_macro(v, m);
                });
            }
            Item::Use(_) => {} // renames are read when the scope is entered
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        match item {
            syn::ImplItem::Fn(f) if !is_test_only(&f.attrs) => {
                self.with_frame(f.sig.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_impl_item_fn(v, f);
                });
            }
            syn::ImplItem::Const(c) if !is_test_only(&c.attrs) => {
                self.with_frame(c.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_impl_item_const(v, c);
                });
            }
            syn::ImplItem::Fn(_) | syn::ImplItem::Const(_) => {}
            syn::ImplItem::Macro(m) if is_test_only(&m.attrs) => {}
            _ => visit::visit_impl_item(self, item),
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        match item {
            syn::TraitItem::Fn(f) if !is_test_only(&f.attrs) => {
                self.with_frame(f.sig.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_trait_item_fn(v, f);
                });
            }
            syn::TraitItem::Const(c) if !is_test_only(&c.attrs) => {
                self.with_frame(c.ident.to_string(), FrameKind::Function, |v| {
                    visit::visit_trait_item_const(v, c);
                });
            }
            syn::TraitItem::Fn(_) | syn::TraitItem::Const(_) => {}
            _ => visit::visit_trait_item(self, item),
        }
    }

    fn visit_block(&mut self, block: &'ast syn::Block) {
        self.stmts(&block.stmts);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !is_test_only(&local.attrs) {
            visit::visit_local(self, local);
        }
    }

    fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
        if !is_test_only(&m.attrs) {
            visit::visit_stmt_macro(self, m);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !is_test_only(&arm.attrs) {
            visit::visit_arm(self, arm);
        }
    }

    fn visit_field_value(&mut self, fv: &'ast syn::FieldValue) {
        if !is_test_only(&fv.attrs) {
            visit::visit_field_value(self, fv);
        }
    }

    fn visit_expr(&mut self, expr: &'ast Expr) {
        // Statement-level `#[cfg(test)] call();` and similar attributed expressions.
        let attrs: &[syn::Attribute] = match expr {
            Expr::Call(e) => &e.attrs,
            Expr::MethodCall(e) => &e.attrs,
            Expr::Block(e) => &e.attrs,
            Expr::Macro(e) => &e.attrs,
            Expr::Struct(e) => &e.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            visit::visit_expr(self, expr);
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        self.push_site(
            call.method.span(),
            SiteKind::Method { name: call.method.to_string(), args: call.args.len() },
        );
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*call.func {
            let (path, span) = self.resolve_path(p.qself.as_ref(), &p.path);
            self.push_site(span, SiteKind::Call { path, args: call.args.len() });
            if let Some(q) = &p.qself {
                self.visit_type(&q.ty);
            }
            for arg in &call.args {
                self.visit_expr(arg);
            }
        } else {
            visit::visit_expr_call(self, call);
        }
    }

    fn visit_expr_path(&mut self, p: &'ast ExprPath) {
        self.value_path(p);
        visit::visit_expr_path(self, p);
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        let (path, span) = self.resolve_path(s.qself.as_ref(), &s.path);
        self.push_site(span, SiteKind::Construct { path });
        visit::visit_expr_struct(self, s);
    }

    fn visit_pat(&mut self, pat: &'ast syn::Pat) {
        // A path in a pattern (`Foo::Bar =>`) matches a value, it does not call or build anything.
        if !matches!(pat, syn::Pat::Path(_)) {
            visit::visit_pat(self, pat);
        }
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        self.macro_body(mac);
    }
}
