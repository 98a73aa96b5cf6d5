//! The engine's plan caches (SPEC R8, B3): [`GemmAnalysisCache`] (validated matrix products by
//! operand layouts) and [`EinsumPlanCache`] (prepared einsum plans by content key, the
//! kernels' [`PlanStore`](holdfast_kernels::einsum::PlanStore)).
//!
//! Both are keyed by content (operation, dtype, shapes, strides, path), never by
//! caller-chosen slots, and both are bounded by entries **and** bytes ([`CacheLimits`]) with
//! least-recently-used eviction and [`PlanCacheStats`].
//!
//! # Locking
//!
//! None: the caches are plain owned values inside
//! [`EngineResources`](crate::EngineResources), used through `&mut` by the one owner that has
//! checked the resources out. Statistics are plain integers.

/// The bookkeeping methods both plan caches have (`stats`, `len`, `is_empty`, `limits`,
/// `set_limits`, `clear`), each delegating to the cache's `lru` field. Written once here with
/// examples that name the cache, as std writes one integer method for many types.
macro_rules! plan_cache_bookkeeping {
    ($cache:ident) => {
        impl $cache {
            /// The statistics so far.
            ///
            /// # Examples
            ///
            #[doc = concat!("See [`", stringify!($cache), "`].")]
            pub fn stats(&self) -> PlanCacheStats {
                self.lru.stats()
            }

            /// Number of cached plans.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use holdfast_resources::", stringify!($cache), ";")]
            ///
            #[doc = concat!("assert_eq!(", stringify!($cache), "::default().len(), 0);")]
            /// ```
            pub fn len(&self) -> usize {
                self.lru.len()
            }

            /// True when no plan is cached.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use holdfast_resources::", stringify!($cache), ";")]
            ///
            #[doc = concat!("assert!(", stringify!($cache), "::default().is_empty());")]
            /// ```
            pub fn is_empty(&self) -> bool {
                self.lru.len() == 0
            }

            /// The bounds.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use holdfast_resources::{CacheLimits, ", stringify!($cache), "};")]
            ///
            /// let l = CacheLimits::new(4, 4096);
            #[doc = concat!("assert_eq!(", stringify!($cache), "::new(l).limits(), l);")]
            /// ```
            pub fn limits(&self) -> CacheLimits {
                self.lru.limits()
            }

            /// Changes the bounds, evicting least recent entries until they hold.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use holdfast_resources::{CacheLimits, ", stringify!($cache), "};")]
            ///
            #[doc = concat!("let mut cache = ", stringify!($cache), "::default();")]
            /// cache.set_limits(CacheLimits::new(1, 1 << 20));
            /// assert_eq!(cache.limits().max_entries, 1);
            /// ```
            pub fn set_limits(&mut self, limits: CacheLimits) {
                self.lru.set_limits(limits);
            }

            /// Drops every cached plan (counted in [`PlanCacheStats::clears`]).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use holdfast_resources::", stringify!($cache), ";")]
            ///
            #[doc = concat!("let mut cache = ", stringify!($cache), "::default();")]
            /// cache.clear();
            /// assert_eq!(cache.stats().clears, 1);
            /// ```
            pub fn clear(&mut self) {
                self.lru.clear();
            }
        }
    };
}

mod einsum;
mod gemm;
mod lru;
#[cfg(test)]
mod tests;

pub use einsum::{EinsumHandle, EinsumPlanCache};
pub use gemm::{GemmAnalysisCache, GemmKey};

/// Bounds of a plan cache: at most `max_entries` entries and `max_bytes` approximate bytes
/// (keys, values and bookkeeping).
///
/// # Examples
///
/// ```
/// use holdfast_resources::CacheLimits;
///
/// let l = CacheLimits::new(64, 1 << 20);
/// assert_eq!((l.max_entries, l.max_bytes), (64, 1 << 20));
/// assert!(CacheLimits::default().max_entries > 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Maximum number of entries (0 disables the cache).
    pub max_entries: usize,
    /// Maximum total approximate size of the entries, in bytes.
    pub max_bytes: usize,
}

impl CacheLimits {
    /// Limits of `max_entries` entries and `max_bytes` bytes.
    ///
    /// # Examples
    ///
    /// See [`CacheLimits`].
    pub const fn new(max_entries: usize, max_bytes: usize) -> Self {
        CacheLimits { max_entries, max_bytes }
    }

    /// The slab is indexed by `u32`, with one value reserved.
    fn clamped(self) -> Self {
        CacheLimits { max_entries: self.max_entries.min(u32::MAX as usize - 1), ..self }
    }
}

impl Default for CacheLimits {
    /// 1024 entries, 16 MiB.
    fn default() -> Self {
        CacheLimits::new(1024, 16 << 20)
    }
}

/// Statistics of a plan cache: the kernels' type, which every store (the kernels' simple ones,
/// and both caches here) reports.
///
/// # Examples
///
/// ```
/// use holdfast_resources::{CacheLimits, GemmAnalysisCache};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::zeros([4, 4]);
/// let mut cache = GemmAnalysisCache::new(CacheLimits::default());
/// cache.get_or_prepare(a.layout(), a.layout())?;
/// cache.get_or_prepare(a.layout(), a.layout())?;
/// let s = cache.stats();
/// assert_eq!((s.entries, s.misses, s.hits), (1, 1, 1));
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
pub use holdfast_kernels::einsum::PlanCacheStats;
