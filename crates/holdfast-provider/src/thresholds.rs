//! The fan-out thresholds (SPEC P3, B5): per kernel family, the size from which an operation is
//! worth the engine's pool. The provider owns them because it is the layer that installs the
//! pool on them; it hands them to every kernel call inside [`Par::Rayon`](holdfast_kernels::Par),
//! so that a kernel (and each step of an einsum) splits its own work on the same sizes. Every
//! value, and every install site, is listed in `docs/design/provider-routes.md`.

use holdfast_kernels::{Family, FanOut};

/// Elementwise kernels (add, sub, mul, div, scale, conj) fan out from this many output elements.
pub const ELEMENTWISE_PAR_MIN_ELEMENTS: u64 = 1 << 15;
/// `sum` fans out from this many input elements.
pub const REDUCE_PAR_MIN_ELEMENTS: u64 = 1 << 15;
/// `permute` (and einsum's operand copies) fan out from this many elements.
pub const PERMUTE_PAR_MIN_ELEMENTS: u64 = 1 << 15;
/// `matmul` fans out from this many floating-point operations (`2·batch·m·n·k`), about a
/// 128×128×128 product.
pub const GEMM_PAR_MIN_FLOPS: u64 = 1 << 22;
/// `einsum` fans out (step by step, each step by its own family's threshold) when the whole
/// contraction costs at least this many floating-point operations.
pub const CONTRACTION_PAR_MIN_FLOPS: u64 = 1 << 22;

/// The thresholds above, as the kernels receive them.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::Family;
/// use holdfast_provider::{FAN_OUT, GEMM_PAR_MIN_FLOPS};
///
/// assert_eq!(FAN_OUT.min_size(Family::Gemm), GEMM_PAR_MIN_FLOPS);
/// assert!(!FAN_OUT.fans_out(Family::Elementwise, 4));
/// ```
pub static FAN_OUT: FanOut = FanOut {
    elementwise: ELEMENTWISE_PAR_MIN_ELEMENTS,
    reduce: REDUCE_PAR_MIN_ELEMENTS,
    permute: PERMUTE_PAR_MIN_ELEMENTS,
    gemm: GEMM_PAR_MIN_FLOPS,
    contraction: CONTRACTION_PAR_MIN_FLOPS,
};

/// The threshold of `family`, in its size unit ([`Family`]).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::Family;
/// assert_eq!(holdfast_provider::threshold(Family::Reduce), 1 << 15);
/// ```
pub const fn threshold(family: Family) -> u64 {
    FAN_OUT.min_size(family)
}
