//! Admission arbiter of holdfast (layer 1): who may run on an engine, and in what order.
//!
//! **Status:** not yet implemented; tracked by the admission/affinity issue (SPEC §2, A1–A7).
