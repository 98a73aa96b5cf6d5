//! [`GemmAnalysisCache`]: validated matrix products ([`MatmulPlan`]) by operand layouts.
//!
//! The key ([`GemmKey`]) is both operands' ranks, shapes and strides (offsets and element type
//! do not change the analysis), with a 64-bit fingerprint computed once when the key is built;
//! equality compares the full content. Matrix products take operands of rank 2 or 3, so a key
//! is a fixed array (no allocation).

use std::mem;

use holdfast_kernels::KernelError;
use holdfast_kernels::fingerprint::mix;
use holdfast_kernels::matmul::{BoundMatmul, MatmulPlan};
use holdfast_tensor::{Element, Layout, TensorRead};

use super::lru::Lru;
use super::{CacheLimits, PlanCacheStats};

/// Per-entry bookkeeping counted against the byte bound (links and index slot).
const ENTRY_OVERHEAD: usize = 48;

/// Words of a key: for each operand its rank, shape and strides (rank ≤ 3), zero-padded.
const KEY_WORDS: usize = 2 * (1 + 2 * 3);

/// The content key of a matrix product: both operands' shapes and strides.
///
/// Matrix products exist for operands of rank 2 or 3 only, so the key is a fixed array (no
/// allocation, a branch-free comparison); other ranks have no key.
///
/// # Examples
///
/// ```
/// use holdfast_resources::GemmKey;
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::zeros([2, 3]);
/// let b = Tensor::<f64>::zeros([3, 2]);
/// assert_eq!(GemmKey::new(a.layout(), b.layout()), GemmKey::new(a.layout(), b.layout()));
/// assert_ne!(GemmKey::new(a.layout(), b.layout()), GemmKey::new(b.layout(), a.layout()));
/// assert!(GemmKey::new(Tensor::<f64>::zeros([4]).layout(), b.layout()).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GemmKey {
    fingerprint: u64,
    words: [usize; KEY_WORDS],
}

impl GemmKey {
    /// The key of the product of operands laid out as `a` and `b`, or `None` unless both have
    /// rank 2 or 3.
    ///
    /// # Examples
    ///
    /// See [`GemmKey`].
    #[inline]
    pub fn new(a: &Layout, b: &Layout) -> Option<Self> {
        let mut words = [0usize; KEY_WORDS];
        let mut n = 0;
        for l in [a, b] {
            let (shape, strides) = (l.shape(), l.strides());
            if !(2..=3).contains(&shape.len()) {
                return None;
            }
            words[n] = shape.len();
            words[n + 1..n + 1 + shape.len()].copy_from_slice(shape);
            words[n + 4..n + 4 + strides.len()].copy_from_slice(strides);
            n += KEY_WORDS / 2;
        }
        // Two independent lanes halve the dependency chain of the multiply-rotate mix.
        let (mut h0, mut h1) = (0x6765_6d6d_u64, 0x6b65_7973_u64);
        for pair in words.chunks_exact(2) {
            h0 = mix(h0, pair[0] as u64);
            h1 = mix(h1, pair[1] as u64);
        }
        Some(GemmKey { fingerprint: mix(h0, h1), words })
    }

    /// The precomputed fingerprint.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::GemmKey;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f32>::zeros([2, 3]);
    /// let b = Tensor::<f32>::zeros([3, 2]);
    /// let k = GemmKey::new(a.layout(), b.layout()).expect("2-D");
    /// // Computed from the content: an equal key built again has the same fingerprint ...
    /// let again = GemmKey::new(a.layout(), b.layout()).expect("2-D");
    /// assert_eq!(k.fingerprint(), again.fingerprint());
    /// // ... and swapping the operands (other shapes) changes it.
    /// let swapped = GemmKey::new(b.layout(), a.layout()).expect("2-D");
    /// assert_ne!(k.fingerprint(), swapped.fingerprint());
    /// ```
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// A bounded LRU cache of [`MatmulPlan`]s by operand layouts (SPEC R8, B3).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par};
/// use holdfast_resources::{CacheLimits, GemmAnalysisCache};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let mut cache = GemmAnalysisCache::new(CacheLimits::new(8, 1 << 16));
/// for _ in 0..3 {
///     let plan = cache.get_or_prepare(a.layout(), a.layout())?;
///     let c = plan.execute(&a.read(), &a.read(), &mut HeapAlloc, Par::Seq)?;
///     assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
/// }
/// assert_eq!((cache.stats().misses, cache.stats().hits), (1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GemmAnalysisCache {
    lru: Lru<GemmKey, MatmulPlan>,
    /// The last plan too large for the byte bound: prepared, used once, replaced by the next.
    uncached: Option<Box<MatmulPlan>>,
}

impl Default for GemmAnalysisCache {
    fn default() -> Self {
        Self::new(CacheLimits::new(256, 1 << 20))
    }
}

impl GemmAnalysisCache {
    /// An empty cache with `limits`.
    ///
    /// # Examples
    ///
    /// See [`GemmAnalysisCache`].
    pub fn new(limits: CacheLimits) -> Self {
        GemmAnalysisCache { lru: Lru::new(limits), uncached: None }
    }

    /// The plan of the product of `a` and `b` if cached (counted as a hit or a miss).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::GemmAnalysisCache;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::zeros([3, 3]);
    /// let mut cache = GemmAnalysisCache::default();
    /// assert!(cache.get(a.layout(), a.layout()).is_none());
    /// assert_eq!(cache.stats().misses, 1);
    /// ```
    #[inline]
    pub fn get(&mut self, a: &Layout, b: &Layout) -> Option<&MatmulPlan> {
        let key = GemmKey::new(a, b)?;
        let i = self.lru.lookup(key.fingerprint, |k| *k == key)?;
        Some(self.lru.value(i))
    }

    /// The plan of the product of `a` and `b`, prepared and stored on a miss. A plan too large
    /// for the cache's byte bound is prepared all the same and kept aside until the next such
    /// plan (it counts as a miss, and no entry is evicted for it).
    ///
    /// # Errors
    ///
    /// [`KernelError::MatmulShape`] (from [`MatmulPlan::new`]) for operands that cannot be
    /// multiplied; nothing is stored then.
    ///
    /// # Examples
    ///
    /// See [`GemmAnalysisCache`].
    pub fn get_or_prepare(&mut self, a: &Layout, b: &Layout) -> Result<&MatmulPlan, KernelError> {
        // A session that repeats one product (the common case) hits the most recent entry: the
        // plan's own layouts are compared, with no key built and nothing hashed.
        if let Some(i) = self.lru.lookup_front(|_, plan| plan.matches(a, b)) {
            return Ok(self.lru.value(i));
        }
        self.prepare(a, b)
    }

    /// [`get_or_prepare`](Self::get_or_prepare) past its most-recent-entry check, which the
    /// caller has just made and missed.
    fn prepare(&mut self, a: &Layout, b: &Layout) -> Result<&MatmulPlan, KernelError> {
        let Some(key) = GemmKey::new(a, b) else {
            // No product exists for these ranks: `MatmulPlan::new` reports why.
            return Ok(&**self.uncached.insert(Box::new(MatmulPlan::new(a, b)?)));
        };
        let fingerprint = key.fingerprint;
        let i = match self.lru.lookup(fingerprint, |k| *k == key) {
            Some(i) => i,
            None => {
                let plan = MatmulPlan::new(a, b)?;
                let bytes = mem::size_of::<(GemmKey, MatmulPlan)>() + ENTRY_OVERHEAD;
                match self.lru.insert(fingerprint, key, plan, bytes, |x, y| x == y) {
                    Ok(i) => i,
                    Err((_, plan)) => return Ok(&**self.uncached.insert(Box::new(plan))),
                }
            }
        };
        Ok(self.lru.value(i))
    }

    /// The plan of the product of `a` and `b` bound to them ([`MatmulPlan::bind`]: their
    /// layouts checked once, not again when it executes), prepared and stored on a miss. This
    /// is a session's per-operation lookup: when the most recent plan is the one (a session
    /// repeating one product), it is checked against the operands directly, with no key built
    /// and nothing hashed, and that check is the only one.
    ///
    /// # Errors
    ///
    /// [`KernelError::MatmulShape`] for operands that cannot be multiplied.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::Par;
    /// use holdfast_resources::GemmAnalysisCache;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let mut out = Tensor::<f64>::zeros([2, 2]);
    /// let mut cache = GemmAnalysisCache::default();
    /// let (ra, rb) = (a.read(), a.read());
    /// for _ in 0..3 {
    ///     cache.bind(&ra, &rb)?.execute_into(&mut out, Par::Seq)?;
    /// }
    /// assert_eq!(out.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// assert_eq!((cache.stats().misses, cache.stats().hits), (1, 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn bind<'x, T: Element>(
        &'x mut self,
        a: &'x TensorRead<'_, T>,
        b: &'x TensorRead<'_, T>,
    ) -> Result<BoundMatmul<'x, T>, KernelError> {
        // Only the plan's address crosses the two paths; the bound product is built after
        // them, so it is never stored whole and read back wider than it was written.
        let plan = match self.lru.lookup_front(|_, plan| plan.matches(a.layout(), b.layout())) {
            Some(i) => self.lru.value(i),
            None => self.prepare(a.layout(), b.layout())?,
        };
        Ok(plan.bind_matched(a, b))
    }
}

plan_cache_bookkeeping!(GemmAnalysisCache);
