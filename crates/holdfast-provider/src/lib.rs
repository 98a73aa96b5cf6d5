//! CPU provider context of holdfast (layer 2): immutable domain facts (CPU set, thread budget,
//! rayon pool), the parallel mode and the per-family fan-out thresholds.
//!
//! **Status:** not yet implemented; tracked by the resources/provider issue (SPEC §5, P1–P4).
