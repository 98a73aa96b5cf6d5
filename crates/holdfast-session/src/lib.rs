//! Held CPU sessions of holdfast (layer 3): engines, backend handles, scoped and held entries,
//! and the per-operation view.
//!
//! **Status:** not yet implemented; tracked by the sessions issue (SPEC §6, S1–S10).
