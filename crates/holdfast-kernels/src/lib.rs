//! Numerical kernels of holdfast (layer 1): elementwise arithmetic, reductions, permute, GEMM and
//! einsum over [`holdfast_tensor`] values.
//!
//! **Status:** not yet implemented; tracked by the kernels issue (SPEC §7, K1–K6).
