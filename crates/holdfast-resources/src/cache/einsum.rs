//! [`EinsumPlanCache`]: the engine's bounded store of prepared einsum plans by content
//! [`PlanKey`], implementing the kernels' [`PlanStore`].
//!
//! The fingerprint and the full-content equality come from [`PlanKey`] (spec, dtype, shapes,
//! strides, path). A handle is the entry's slab index, so a hit touches no reference count; a
//! plan too large for the bounds is kept aside for the one use it was prepared for.

use holdfast_kernels::einsum::{EinsumPlan, PlanKey, PlanStore};
use holdfast_tensor::{Element, TensorRead};

use super::lru::Lru;
use super::{CacheLimits, PlanCacheStats};

/// Per-entry bookkeeping counted against the byte bound (links and index slot).
const ENTRY_OVERHEAD: usize = 48;

/// A bounded LRU cache of prepared [`EinsumPlan`]s by content key (SPEC R8, B3).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::einsum_cached};
/// use holdfast_resources::{CacheLimits, EinsumPlanCache};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let mut cache = EinsumPlanCache::new(CacheLimits::new(16, 1 << 20));
/// for _ in 0..3 {
///     let c = einsum_cached("ij,jk->ik", &[a.read(), a.read()], None, &mut cache, &mut HeapAlloc, Par::Seq)?;
///     assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
/// }
/// let s = cache.stats();
/// assert_eq!((s.entries, s.misses, s.hits), (1, 1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EinsumPlanCache {
    lru: Lru<PlanKey<'static>, EinsumPlan>,
    /// The last plan too large for the bounds: prepared, used once, replaced by the next.
    uncached: Option<EinsumPlan>,
}

impl Default for EinsumPlanCache {
    fn default() -> Self {
        Self::new(CacheLimits::default())
    }
}

impl EinsumPlanCache {
    /// An empty cache with `limits`.
    ///
    /// # Examples
    ///
    /// See [`EinsumPlanCache`].
    pub fn new(limits: CacheLimits) -> Self {
        EinsumPlanCache { lru: Lru::new(limits), uncached: None }
    }
}

plan_cache_bookkeeping!(EinsumPlanCache);

/// Where [`EinsumPlanCache`] keeps a plan: a cache entry, or aside (too large to cache).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::einsum::{PlanKey, PlanStore};
/// use holdfast_resources::{CacheLimits, EinsumHandle, EinsumPlanCache};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::zeros([2, 3]);
/// let mut cache = EinsumPlanCache::default();
/// cache.lookup("ij->ji", &[a.read()], None)?;
/// let key = PlanKey::new("ij->ji", &[a.read()], None);
/// assert!(matches!(cache.find(&key), Some(EinsumHandle::Entry(_))));
/// // A cache that can keep nothing keeps the plan aside for its one use.
/// let mut none = EinsumPlanCache::new(CacheLimits::new(0, 0));
/// assert_eq!(none.lookup("ij->ji", &[a.read()], None)?.out_shape(), &[3, 2]);
/// assert!(none.find(&key).is_none());
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EinsumHandle {
    /// The entry at this slab index.
    Entry(u32),
    /// The plan kept aside for its one use.
    Uncached,
}

impl PlanStore for EinsumPlanCache {
    type Handle = EinsumHandle;

    #[inline]
    fn find_recent<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Option<EinsumHandle> {
        self.lru.lookup_front(|k, _| k.matches(spec, operands, path)).map(EinsumHandle::Entry)
    }

    #[inline]
    fn find(&mut self, key: &PlanKey<'_>) -> Option<EinsumHandle> {
        self.lru.lookup(key.fingerprint(), |k| k == key).map(EinsumHandle::Entry)
    }

    fn insert(&mut self, key: PlanKey<'static>, plan: EinsumPlan) -> EinsumHandle {
        let bytes = key.approx_bytes() + plan.approx_bytes() + ENTRY_OVERHEAD;
        match self.lru.insert(key.fingerprint(), key, plan, bytes, |x, y| x == y) {
            Ok(i) => EinsumHandle::Entry(i),
            Err((_, plan)) => {
                self.uncached = Some(plan);
                EinsumHandle::Uncached
            }
        }
    }

    #[inline]
    #[allow(clippy::expect_used, reason = "invariant: `Uncached` is handed out only by insert")]
    fn plan(&self, handle: EinsumHandle) -> &EinsumPlan {
        match handle {
            EinsumHandle::Entry(i) => self.lru.value(i),
            EinsumHandle::Uncached => {
                self.uncached.as_ref().expect("insert stores the plan it hands `Uncached` out for")
            }
        }
    }
}
