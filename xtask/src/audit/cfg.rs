//! Which code exists only in test builds: `#[cfg(test)]` items (and any `cfg` predicate that
//! requires `test`, such as `all(test, loom)`), and `#[test]` functions.
//!
//! `cfg(not(test))`, `cfg(any(test, feature = "x"))` and every other predicate that can hold in a
//! library build are audited: the rule is "skip only what cannot be compiled into the library".

use syn::punctuated::Punctuated;
use syn::{Attribute, Meta, Token};

/// True when `attrs` make the item test-only.
pub(crate) fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        if attr.path().is_ident("test") {
            return true;
        }
        if !attr.path().is_ident("cfg") {
            return false;
        }
        attr.parse_args::<Meta>().is_ok_and(|meta| requires_test(&meta))
    })
}

/// True when the predicate can only hold with `cfg(test)` set.
fn requires_test(meta: &Meta) -> bool {
    match meta {
        Meta::Path(p) => p.is_ident("test"),
        Meta::NameValue(_) => false,
        Meta::List(list) => {
            let Ok(args) = list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            else {
                return false;
            };
            if list.path.is_ident("all") {
                args.iter().any(requires_test)
            } else if list.path.is_ident("any") {
                !args.is_empty() && args.iter().all(requires_test)
            } else {
                // `not(..)` and anything unknown may hold without `test`.
                false
            }
        }
    }
}
