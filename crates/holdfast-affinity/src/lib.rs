//! CPU topology and caller affinity of holdfast (layer 1).
//!
//! **Status:** not yet implemented; tracked by the admission/affinity issue (SPEC §3, F1–F4).
