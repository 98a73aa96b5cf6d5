//! [`IndexedPlanCache`]: prepared einsum plans by content [`PlanKey`], implementing the
//! kernels' [`PlanStore`].
//!
//! The fingerprint and the full-content equality come from [`PlanKey`] (spec, dtype, shapes,
//! strides, path). A hit clones the plan's `Arc` (one uncontended atomic increment, and a
//! decrement when the caller drops it): that is the shape of [`PlanStore::get`].

use std::sync::Arc;

use holdfast_kernels::einsum::{EinsumPlan, PlanKey, PlanStore};
use holdfast_tensor::{Element, TensorRead};

use super::lru::Lru;
use super::{CacheLimits, PlanCacheStats};

/// Per-entry bookkeeping counted against the byte bound (links, index slot, `Arc` header).
const ENTRY_OVERHEAD: usize = 64;

/// A bounded LRU cache of prepared [`EinsumPlan`]s by content key (SPEC R8, B3).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::einsum_cached};
/// use holdfast_resources::{CacheLimits, IndexedPlanCache};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let mut cache = IndexedPlanCache::new(CacheLimits::new(16, 1 << 20));
/// for _ in 0..3 {
///     let c = einsum_cached("ij,jk->ik", &[a.read(), a.read()], None, &mut cache, &mut HeapAlloc, Par::Seq)?;
///     assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
/// }
/// let s = cache.stats();
/// assert_eq!((s.entries, s.misses, s.hits), (1, 1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IndexedPlanCache {
    lru: Lru<PlanKey<'static>, Arc<EinsumPlan>>,
}

impl Default for IndexedPlanCache {
    fn default() -> Self {
        Self::new(CacheLimits::default())
    }
}

impl IndexedPlanCache {
    /// An empty cache with `limits`.
    ///
    /// # Examples
    ///
    /// See [`IndexedPlanCache`].
    pub fn new(limits: CacheLimits) -> Self {
        IndexedPlanCache { lru: Lru::new(limits) }
    }

    /// The plan stored under `key`, borrowed (no reference-count traffic), counted as a hit or
    /// a miss.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::{einsum::PlanKey, HeapAlloc, Par};
    /// use holdfast_resources::IndexedPlanCache;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::zeros([2, 2]);
    /// let mut cache = IndexedPlanCache::default();
    /// let key = PlanKey::new("ij->ji", &[a.read()], None);
    /// assert!(cache.get_ref(&key).is_none());
    /// ```
    #[inline]
    pub fn get_ref(&mut self, key: &PlanKey<'_>) -> Option<&EinsumPlan> {
        let i = self.lru.lookup(key.fingerprint(), |k| k == key)?;
        Some(self.lru.value(i))
    }

    /// The plan of `spec` on `operands` with `path` when it is the most recently used entry,
    /// found without building a key (no copy, no hash); counted as a hit when found, and not
    /// counted at all otherwise (the caller then looks up by key with [`get_ref`](Self::get_ref)).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::{einsum::einsum_cached, HeapAlloc, Par};
    /// use holdfast_resources::IndexedPlanCache;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::zeros([2, 2]);
    /// let mut cache = IndexedPlanCache::default();
    /// assert!(cache.get_recent("ij->ji", &[a.read()], None).is_none());
    /// einsum_cached("ij->ji", &[a.read()], None, &mut cache, &mut HeapAlloc, Par::Seq)?;
    /// assert!(cache.get_recent("ij->ji", &[a.read()], None).is_some());
    /// assert_eq!(cache.stats().hits, 1);
    /// # Ok::<(), holdfast_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn get_recent<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Option<&EinsumPlan> {
        let i = self.lru.lookup_front(|k, _| k.matches(spec, operands, path))?;
        Some(self.lru.value(i))
    }
}

plan_cache_bookkeeping!(IndexedPlanCache);

impl PlanStore for IndexedPlanCache {
    #[inline]
    fn get(&mut self, key: &PlanKey<'_>) -> Option<Arc<EinsumPlan>> {
        let i = self.lru.lookup(key.fingerprint(), |k| k == key)?;
        Some(Arc::clone(self.lru.value(i)))
    }

    fn insert(&mut self, key: PlanKey<'static>, plan: Arc<EinsumPlan>) {
        let bytes = key.approx_bytes() + plan.approx_bytes() + ENTRY_OVERHEAD;
        // A plan too large for the bounds is simply not retained.
        let _ = self.lru.insert(key.fingerprint(), key, plan, bytes, |x, y| x == y);
    }
}
