//! A log-linear latency histogram (16 sub-buckets per power of two, about 6 % resolution) with
//! fixed storage, so a soak of any length records every admission wait in constant memory.

use std::time::Duration;

/// Sub-buckets per power of two (4 bits of mantissa).
const SUB: u32 = 16;
/// Number of buckets: values below 16 ns exactly, then 16 per octave up to 2^64.
const BUCKETS: usize = (SUB + (64 - 4) * SUB) as usize;

/// Counts of durations, in nanoseconds.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS], total: 0, max: 0 }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < u64::from(SUB) {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= 4
    let m = (v >> (e - 4)) & u64::from(SUB - 1);
    (SUB + (e - 4) * SUB) as usize + m as usize
}

/// The smallest value that falls in bucket `b`.
fn lower_bound(b: usize) -> u64 {
    let b = b as u64;
    let sub = u64::from(SUB);
    if b < sub {
        return b;
    }
    let e = (b - sub) / sub + 4;
    let m = (b - sub) % sub;
    (1u64 << e) | (m << (e - 4))
}

impl Histogram {
    /// Records one duration.
    pub fn record(&mut self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.counts[bucket_of(ns)] += 1;
        self.total += 1;
        self.max = self.max.max(ns);
    }

    /// Adds `other`'s counts to this one.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// Recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Recorded values that were not zero.
    pub fn nonzero(&self) -> u64 {
        self.total - self.counts[0]
    }

    /// The `q`-quantile (`0 < q <= 1`), as the lower bound of its bucket; zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        self.quantile_from(q, 0)
    }

    /// The `q`-quantile of the non-zero values only.
    pub fn quantile_nonzero(&self, q: f64) -> Duration {
        self.quantile_from(q, 1)
    }

    fn quantile_from(&self, q: f64, first: usize) -> Duration {
        let n: u64 = self.counts[first..].iter().sum();
        if n == 0 {
            return Duration::ZERO;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate().skip(first) {
            seen += c;
            if seen >= rank {
                return Duration::from_nanos(lower_bound(b));
            }
        }
        Duration::from_nanos(self.max)
    }

    /// The largest recorded value.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max)
    }
}

#[test]
fn buckets_round_trip_and_quantiles_are_ordered() {
    for v in [0u64, 1, 15, 16, 17, 31, 32, 1000, 123_456, 1 << 40, u64::MAX] {
        let b = bucket_of(v);
        assert!(lower_bound(b) <= v, "{v}");
        if b + 1 < BUCKETS {
            assert!(lower_bound(b + 1) > v, "{v}");
        }
    }
    let mut h = Histogram::default();
    for i in 0..1000u64 {
        h.record(Duration::from_nanos(i * 1000));
    }
    assert!(h.quantile(0.5) <= h.quantile(0.99));
    let p50 = h.quantile(0.5).as_nanos() as f64;
    assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.07, "{p50}");
}
