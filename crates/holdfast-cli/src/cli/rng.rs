//! [`SplitMix64`]: the small deterministic generator behind every generated operand (`--seed`).
//!
//! Invariant: the same seed gives the same sequence on every platform and build, so a demo or an
//! `einsum` run with random operands is reproducible.

/// Sebastiano Vigna's SplitMix64: 64 bits of state, full period, good enough for test data.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub(crate) const fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `[0, 1)` (53 random bits).
    pub(crate) fn next_f64(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "53 bits convert exactly")]
        let mantissa = (self.next_u64() >> 11) as f64;
        mantissa * (1.0 / (1u64 << 53) as f64)
    }

    /// `len` uniform values in `[0, 1)`.
    pub(crate) fn fill(&mut self, len: usize) -> Vec<f64> {
        (0..len).map(|_| self.next_f64()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn reference_sequence() {
        // The first outputs for seed 0 (Vigna's reference implementation).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn unit_interval() {
        let mut g = SplitMix64::new(7);
        assert!(g.fill(10_000).iter().all(|&x| (0.0..1.0).contains(&x)));
    }
}
