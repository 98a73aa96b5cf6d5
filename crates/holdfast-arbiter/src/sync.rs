//! The synchronisation primitives of the arbiter core, in one place.
//!
//! Every lock and condition variable of the private core goes through this module so that the
//! model-checking build (`RUSTFLAGS="--cfg loom" cargo test --lib loom`) can swap them for loom's
//! instrumented versions, as tokio's `loom/mod.rs` does. Only `cfg(all(test, loom))` switches:
//! an ordinary build with `--cfg loom` (for example of a downstream crate) keeps std.
//!
//! Invariant: no other module of this crate names `std::sync::{Mutex, Condvar}` directly.

#[cfg(not(all(test, loom)))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

#[cfg(all(test, loom))]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
