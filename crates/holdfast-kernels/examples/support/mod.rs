//! What the measurement programs of this directory share.

/// The median of `samples` (the upper one of an even count).
pub(crate) fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}
