//! [`Truncation`]: which singular values a truncated SVD keeps, and the weight it discards.

use crate::KernelError;

/// How a truncated [`svd`](super::svd) chooses its rank: the fewest singular values that meet
/// every bound set, and always at least one (of a non-empty matrix). The default keeps all.
///
/// - [`max_rank`](Self::max_rank): at most this many values;
/// - [`cutoff`](Self::cutoff): drop the smallest values while the *relative discarded weight*,
///   the sum of the dropped `s²` over the sum of all `s²`, stays at or below this;
/// - [`absolute`](Self::absolute): drop every value at or below this.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::Truncation;
///
/// let t = Truncation::none().max_rank(32).cutoff(1e-12);
/// assert_eq!(t.rank_of(&[3.0, 2.0, 1.0]).unwrap(), (3, 0.0));
/// let (rank, discarded) = Truncation::none().max_rank(2).rank_of(&[3.0, 2.0, 1.0]).unwrap();
/// assert_eq!(rank, 2);
/// assert!((discarded - 1.0 / 14.0).abs() < 1e-15);
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[must_use]
pub struct Truncation {
    max_rank: Option<usize>,
    cutoff: f64,
    absolute: f64,
}

impl Truncation {
    /// Keep every singular value (the default).
    pub fn none() -> Self {
        Self::default()
    }

    /// Keep at most `rank` values (at least 1).
    pub fn max_rank(self, rank: usize) -> Self {
        Truncation { max_rank: Some(rank), ..self }
    }

    /// Drop values while the relative discarded weight stays at or below `cutoff` (in `[0, 1]`).
    pub fn cutoff(self, cutoff: f64) -> Self {
        Truncation { cutoff, ..self }
    }

    /// Drop every value at or below `absolute` (at least 0).
    pub fn absolute(self, absolute: f64) -> Self {
        Truncation { absolute, ..self }
    }

    /// The bounds are usable: a rank of at least one, a cutoff in `[0, 1]`, an absolute bound of
    /// at least 0 (NaN is neither).
    pub(crate) fn validate(&self) -> Result<(), KernelError> {
        let reason = if self.max_rank == Some(0) {
            "max_rank must be at least 1"
        } else if !(0.0..=1.0).contains(&self.cutoff) {
            "cutoff is a relative weight and must lie in [0, 1]"
        } else if !(self.absolute >= 0.0 && self.absolute.is_finite()) {
            "absolute must be a finite value of at least 0"
        } else {
            return Ok(());
        };
        Err(KernelError::InvalidTruncation { reason })
    }

    /// The rank these bounds keep of the singular values `s` (descending, non-negative), and
    /// the relative weight it discards (0 when every value is 0).
    ///
    /// # Errors
    ///
    /// [`KernelError::InvalidTruncation`] for a `max_rank` of 0, a cutoff outside `[0, 1]` or a
    /// negative or non-finite absolute bound.
    pub fn rank_of(&self, s: &[f64]) -> Result<(usize, f64), KernelError> {
        self.validate()?;
        Ok(self.rank_with(s.len(), |i| s[i] * s[i]))
    }

    /// [`rank_of`](Self::rank_of) on `k` values given by their squares, for validated bounds.
    pub(crate) fn rank_with(&self, k: usize, square: impl Fn(usize) -> f64) -> (usize, f64) {
        if k == 0 {
            return (0, 0.0);
        }
        let total: f64 = (0..k).map(&square).sum();
        let mut rank = self.max_rank.map_or(k, |r| r.min(k));
        let absolute = self.absolute * self.absolute;
        while rank > 1 && square(rank - 1) <= absolute && self.absolute > 0.0 {
            rank -= 1;
        }
        if self.cutoff > 0.0 && total > 0.0 {
            // The tail weight of dropping everything from `rank - 1` on, growing as we go.
            let mut tail: f64 = (rank..k).map(&square).sum();
            while rank > 1 && (tail + square(rank - 1)) / total <= self.cutoff {
                tail += square(rank - 1);
                rank -= 1;
            }
        }
        let discarded: f64 = (rank..k).map(&square).sum();
        let weight = if total > 0.0 { discarded / total } else { 0.0 };
        (rank, weight)
    }
}
