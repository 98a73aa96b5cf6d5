//! A seeded stream of uniform numbers in `[-0.5, 0.5)` for the unit tests' random matrices
//! (xorshift64; the tests need repeatable operands, not statistical quality).

/// The stream for `seed`.
pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}
