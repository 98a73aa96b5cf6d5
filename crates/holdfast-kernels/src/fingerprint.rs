//! The mixing step of the plan caches' 64-bit content fingerprints ([`einsum::PlanKey`] and the
//! engine's GEMM keys).
//!
//! A fingerprint only sorts keys into buckets: every cache compares full content on a
//! fingerprint match, so a collision costs a comparison and is never a wrong hit. The mix is a
//! multiply-rotate in the style of rustc's FxHash: a few cycles a word, good enough spread for
//! keys made of small integers and short strings.
//!
//! [`einsum::PlanKey`]: crate::einsum::PlanKey

/// Folds `word` into the running fingerprint `h`.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::fingerprint::mix;
///
/// let a = mix(mix(0, 2), 3);
/// assert_eq!(a, mix(mix(0, 2), 3));
/// assert_ne!(a, mix(mix(0, 3), 2), "order matters");
/// ```
#[inline]
#[must_use]
pub const fn mix(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}
