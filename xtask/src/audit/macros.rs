//! Reading the bodies of macro invocations.
//!
//! A macro's input is a token stream, not syntax; most macros in library code (`vec!`, `format!`,
//! `write!`, `assert!`, `matches!`, `thread_local!`) take expressions, patterns or items, so the audit
//! tries, in order:
//!
//! 1. the whole body as comma-separated expressions (`format!("{}", a.b())`, `vec![x, y]`), or as
//!    `value; count` (`vec![0; n]`);
//! 2. the whole body as a block's statements (`thread_local! { static … }`);
//! 3. piece by piece, split at top-level `,` and `;`: each piece as an expression, or as a pattern
//!    with an optional `if` guard (`matches!(x, Foo { .. } if ok)`); pieces that fail stay unparsed.
//!
//! Unparsed tokens are not ignored: the visitor reports the macro and scans its identifiers, so a
//! mechanism name inside a macro body the audit cannot read still counts as an occurrence.

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Block, Expr, Pat, Stmt, Token};

/// One top-level piece of a macro body.
pub(crate) enum Piece {
    /// An expression.
    Expr(Box<Expr>),
    /// A pattern with an optional guard (boxed: it is the rare, large variant).
    Pat(Box<(Pat, Option<Expr>)>),
    /// Tokens that parse as neither.
    Unparsed(TokenStream),
}

/// The result of reading a macro body.
pub(crate) enum Body {
    /// The body read as statements.
    Stmts(Vec<Stmt>),
    /// The body read piece by piece (possibly with unparsed pieces).
    Pieces(Vec<Piece>),
}

impl Body {
    /// True when some tokens could not be parsed.
    pub(crate) fn has_unparsed(&self) -> bool {
        match self {
            Self::Stmts(_) => false,
            Self::Pieces(p) => p.iter().any(|p| matches!(p, Piece::Unparsed(_))),
        }
    }
}

/// Reads a macro body; never fails (unreadable tokens come back as [`Piece::Unparsed`]).
pub(crate) fn parse_body(tokens: &TokenStream) -> Body {
    if let Ok(exprs) = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(tokens.clone()) {
        return Body::Pieces(exprs.into_iter().map(|e| Piece::Expr(Box::new(e))).collect());
    }
    if let Ok((value, count)) = repeat.parse2(tokens.clone()) {
        return Body::Pieces(vec![Piece::Expr(Box::new(value)), Piece::Expr(Box::new(count))]);
    }
    if let Ok(stmts) = Block::parse_within.parse2(tokens.clone()) {
        return Body::Stmts(stmts);
    }
    Body::Pieces(split_top_level(tokens).into_iter().map(parse_piece).collect())
}

/// `value; count`, as in `vec![0; n]`.
fn repeat(input: ParseStream) -> syn::Result<(Expr, Expr)> {
    let value = input.parse()?;
    input.parse::<Token![;]>()?;
    let count = input.parse()?;
    Ok((value, count))
}

fn parse_piece(tokens: TokenStream) -> Piece {
    if let Ok(expr) = syn::parse2::<Expr>(tokens.clone()) {
        return Piece::Expr(Box::new(expr));
    }
    match pat_with_guard.parse2(tokens.clone()) {
        Ok(pat_and_guard) => Piece::Pat(Box::new(pat_and_guard)),
        Err(_) => Piece::Unparsed(tokens),
    }
}

fn pat_with_guard(input: ParseStream) -> syn::Result<(Pat, Option<Expr>)> {
    let pat = Pat::parse_multi_with_leading_vert(input)?;
    let guard = if input.peek(Token![if]) {
        input.parse::<Token![if]>()?;
        Some(input.parse()?)
    } else {
        None
    };
    Ok((pat, guard))
}

/// Splits at `,` and `;` outside any group; empty pieces (a trailing comma) are dropped.
fn split_top_level(tokens: &TokenStream) -> Vec<TokenStream> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for tt in tokens.clone() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' || p.as_char() == ';' => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current).into_iter().collect());
                }
            }
            _ => current.push(tt),
        }
    }
    if !current.is_empty() {
        out.push(current.into_iter().collect());
    }
    out
}

/// Every identifier in `tokens`, at any depth, as the path it ends (`a::b::c` gives `[a]`,
/// `[a, b]`, `[a, b, c]`), with its 1-based line and 0-based column.
pub(crate) fn identifiers(tokens: &TokenStream, out: &mut Vec<(Vec<String>, usize, usize)>) {
    let mut path: Vec<String> = Vec::new();
    let mut colons = 0;
    for tt in tokens.clone() {
        match tt {
            TokenTree::Ident(id) => {
                if colons != 2 {
                    path.clear();
                }
                path.push(id.to_string());
                colons = 0;
                let at = id.span().start();
                out.push((path.clone(), at.line, at.column));
            }
            TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
            TokenTree::Group(g) => {
                identifiers(&g.stream(), out);
                path.clear();
                colons = 0;
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {
                path.clear();
                colons = 0;
            }
        }
    }
}
