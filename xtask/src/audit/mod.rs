//! The session-entry audit (SPEC §8, U1–U5).
//!
//! **Status:** not implemented yet; tracked by the audit issue. Until then `cargo xtask audit`
//! fails with a message instead of pretending to pass.

use crate::DynError;

/// Entry point of `cargo xtask audit`.
pub(crate) fn run(_args: &[String]) -> Result<(), DynError> {
    Err("`cargo xtask audit` is not implemented yet (audit issue)".into())
}
