//! Plan stores (SPEC B3): the [`PlanStore`] trait a caller supplies, its one lookup path
//! ([`PlanStore::lookup`]), the statistics every store reports ([`PlanCacheStats`]) and two
//! simple stores, [`NoPlanCache`] and [`HashMapPlanCache`]. The engine's bounded store is the
//! resources crate's `EinsumPlanCache`.
//!
//! A store hands out *handles* (where a plan sits, valid until the store next changes) rather
//! than references or shared pointers: [`PlanStore::lookup`] can then try the most recent plan,
//! the content key and a fresh preparation in turn, and borrow the plan it found only at the
//! end, with no reference count touched on a hit.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use holdfast_tensor::{Element, TensorRead};

use super::key::PlanKey;
use super::matched::Matched;
use super::plan::EinsumPlan;
use crate::KernelError;
use crate::fingerprint::mix;

/// A cache of prepared einsum plans, supplied by the caller.
///
/// Implement [`find`](Self::find), [`insert`](Self::insert) and [`plan`](Self::plan) (and
/// [`find_recent`](Self::find_recent) when the store can test its most recent plan cheaply);
/// [`lookup`](Self::lookup) is the lookup every einsum of the workspace goes through.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::einsum::{HashMapPlanCache, PlanStore};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::zeros([2, 3]);
/// let mut cache = HashMapPlanCache::default();
/// let flops = cache.lookup("ij->ji", &[a.read()], None)?.flops();
/// assert_eq!(cache.lookup("ij->ji", &[a.read()], None)?.flops(), flops);
/// assert_eq!((cache.stats().misses, cache.stats().hits), (1, 1));
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
pub trait PlanStore {
    /// Where a stored plan sits; valid until the store is next changed.
    type Handle: Copy;

    /// The most recent plan, when it was made for `spec` on `operands` with `path` (their
    /// element type, count, shapes and strides), decided without building a key (counted as a
    /// hit when found, not counted otherwise). The default finds nothing.
    #[inline]
    fn find_recent<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Option<Self::Handle> {
        let _ = (spec, operands, path);
        None
    }

    /// The plan stored under `key` (equal to it, not only of its fingerprint), counted as a hit
    /// or a miss.
    fn find(&mut self, key: &PlanKey<'_>) -> Option<Self::Handle>;

    /// Stores `plan` under `key` (or keeps it aside, for this use only, when the store cannot
    /// keep it) and says where it is.
    fn insert(&mut self, key: PlanKey<'static>, plan: EinsumPlan) -> Self::Handle;

    /// The plan at `handle`.
    fn plan(&self, handle: Self::Handle) -> &EinsumPlan;

    /// The plan of `spec` on `operands` with `path` (the greedy path when `None`): the most
    /// recent plan when it is the one, else the plan stored under the content key, else a plan
    /// prepared now and stored.
    ///
    /// # Errors
    ///
    /// As [`EinsumPlan::prepare`] on a miss; nothing is stored then.
    #[inline]
    fn lookup<T: Element>(
        &mut self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Result<&EinsumPlan, KernelError> {
        self.lookup_matched(spec, operands, path).map(|m| m.plan())
    }

    /// [`lookup`](Self::lookup), the plan kept with the `operands` it was found for, so that
    /// running it ([`Matched::execute_as`]) does not compare their shapes and strides with the
    /// plan's a second time: the lookup has compared them with the plan's key.
    ///
    /// A store whose [`find_recent`](Self::find_recent) or [`find`](Self::find) hands out a
    /// plan made for other operands breaks that: the run then panics or computes a wrong
    /// result. It never reads outside the operands, whose extents every kernel checks. The
    /// engine's own store takes this path; [`einsum_cached`](super::einsum_cached), which runs
    /// on any store, checks the operands again.
    ///
    /// # Errors
    ///
    /// As [`lookup`](Self::lookup).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::einsum::{HashMapPlanCache, PlanStore};
    /// use holdfast_kernels::{HeapAlloc, KernelError, Par};
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let ops = [a.read(), a.read()];
    /// let mut cache = HashMapPlanCache::default();
    /// let matched = cache.lookup_matched("ij,jk->ik", &ops, None)?;
    /// assert_eq!(matched.plan().flops(), 16);
    /// let c: Result<Tensor<f64>, KernelError> = matched.execute_as(&mut HeapAlloc, Par::Seq);
    /// assert_eq!(c?.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    fn lookup_matched<'s, 'o, 'd, T: Element>(
        &'s mut self,
        spec: &str,
        operands: &'o [TensorRead<'d, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Result<Matched<'s, 'o, 'd, T>, KernelError> {
        let handle = match self.find_recent(spec, operands, path) {
            Some(handle) => handle,
            None => {
                let key = PlanKey::new(spec, operands, path);
                match self.find(&key) {
                    Some(handle) => handle,
                    None => {
                        let plan = EinsumPlan::prepare(spec, operands, path)?;
                        self.insert(key.into_owned(), plan)
                    }
                }
            }
        };
        Ok(Matched::new(self.plan(handle), operands))
    }
}

/// Statistics of a plan cache (einsum plans, and the engine's GEMM analyses).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::einsum::PlanCacheStats;
///
/// let s = PlanCacheStats { hits: 3, misses: 1, ..PlanCacheStats::default() };
/// assert_eq!(s.lookups(), 4);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanCacheStats {
    /// Entries stored.
    pub entries: usize,
    /// Approximate bytes of the stored entries.
    pub bytes: usize,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that found none (each is normally followed by a preparation).
    pub misses: u64,
    /// Insertions (including those rejected).
    pub insertions: u64,
    /// Entries evicted to keep the bounds.
    pub evictions: u64,
    /// Insertions not stored because the entry alone exceeds a bound.
    pub rejected: u64,
    /// Times the cache was cleared.
    pub clears: u64,
}

impl PlanCacheStats {
    /// Hits plus misses.
    ///
    /// # Examples
    ///
    /// See [`PlanCacheStats`].
    pub fn lookups(&self) -> u64 {
        self.hits + self.misses
    }
}

/// A store that keeps nothing: every einsum prepares its plan (counted as a miss), which is
/// kept only until the next one.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::{einsum_cached, NoPlanCache}};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let mut store = NoPlanCache::default();
/// einsum_cached("i->", &[a.read()], None, &mut store, &mut HeapAlloc, Par::Seq)?;
/// einsum_cached("i->", &[a.read()], None, &mut store, &mut HeapAlloc, Par::Seq)?;
/// assert_eq!((store.stats().misses, store.stats().hits), (2, 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct NoPlanCache {
    last: Option<EinsumPlan>,
    stats: PlanCacheStats,
}

impl NoPlanCache {
    /// The counts so far.
    pub fn stats(&self) -> PlanCacheStats {
        self.stats
    }
}

impl PlanStore for NoPlanCache {
    type Handle = ();

    fn find(&mut self, _key: &PlanKey<'_>) -> Option<()> {
        self.stats.misses += 1;
        None
    }

    fn insert(&mut self, _key: PlanKey<'static>, plan: EinsumPlan) {
        self.last = Some(plan);
    }

    #[allow(clippy::expect_used, reason = "invariant: a handle exists only after an insert")]
    fn plan(&self, (): ()) -> &EinsumPlan {
        self.last.as_ref().expect("a handle is only given out by insert, which stores the plan")
    }
}

/// Passes a precomputed 64-bit fingerprint through unchanged.
#[derive(Debug, Default, Clone, Copy)]
pub struct FingerprintHasher(u64);

impl Hasher for FingerprintHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0, u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The entries that share one fingerprint.
type Bucket = Vec<(PlanKey<'static>, EinsumPlan)>;

/// An unbounded map from key to plan, for tests and simple callers (the engine's cache is
/// bounded, in the resources crate).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::{einsum_cached, HashMapPlanCache}};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let mut cache = HashMapPlanCache::default();
/// for _ in 0..3 {
///     einsum_cached("ij,jk->ik", &[a.read(), a.read()], None, &mut cache, &mut HeapAlloc, Par::Seq)?;
/// }
/// let s = cache.stats();
/// assert_eq!((s.misses, s.hits, cache.len()), (1, 2, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct HashMapPlanCache {
    /// Entries bucketed by fingerprint (a bucket holds more than one entry only on a collision).
    map: HashMap<u64, Bucket, BuildHasherDefault<FingerprintHasher>>,
    len: usize,
    stats: PlanCacheStats,
}

impl HashMapPlanCache {
    /// The counts so far.
    pub fn stats(&self) -> PlanCacheStats {
        PlanCacheStats { entries: self.len, ..self.stats }
    }

    /// Number of stored plans.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no plan is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl PlanStore for HashMapPlanCache {
    /// The fingerprint and the position in its bucket.
    type Handle = (u64, usize);

    fn find(&mut self, key: &PlanKey<'_>) -> Option<(u64, usize)> {
        // A `HashMap<PlanKey<'static>, _>` cannot be queried with a shorter-lived key through
        // `Borrow`, so entries are bucketed by fingerprint and compared by content.
        let fingerprint = key.fingerprint();
        let found = self
            .map
            .get(&fingerprint)
            .and_then(|bucket| bucket.iter().position(|(k, _)| k == key))
            .map(|i| (fingerprint, i));
        match found {
            Some(_) => self.stats.hits += 1,
            None => self.stats.misses += 1,
        }
        found
    }

    fn insert(&mut self, key: PlanKey<'static>, plan: EinsumPlan) -> (u64, usize) {
        self.stats.insertions += 1;
        let fingerprint = key.fingerprint();
        let bucket = self.map.entry(fingerprint).or_default();
        match bucket.iter().position(|(k, _)| *k == key) {
            Some(i) => {
                bucket[i].1 = plan;
                (fingerprint, i)
            }
            None => {
                bucket.push((key, plan));
                self.len += 1;
                (fingerprint, bucket.len() - 1)
            }
        }
    }

    #[allow(clippy::indexing_slicing, reason = "invariant: handles come from find or insert")]
    fn plan(&self, (fingerprint, i): (u64, usize)) -> &EinsumPlan {
        &self.map[&fingerprint][i].1
    }
}
