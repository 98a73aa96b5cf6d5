//! Engine resources of holdfast (layer 2): the buffer pool, plan caches and contraction
//! workspaces an engine owns, and the resource slot a session checks them out of by value.
//!
//! **Status:** not yet implemented; tracked by the resources/provider issue (SPEC §4, R1–R8).
