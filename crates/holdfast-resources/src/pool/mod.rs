//! [`BufferPool`]: the engine's reusable element buffers, served to kernels through
//! [`KernelAlloc`](holdfast_kernels::KernelAlloc).
//!
//! # What it owns and keeps
//!
//! - One free list per element type (`f32`, `f64`, `c32`, `c64`), sorted by capacity.
//!   [`KernelAlloc::take`](holdfast_kernels::KernelAlloc::take) serves the **best fit**: the
//!   smallest retained buffer whose capacity is at least the requested length (and at most a
//!   few times it, see below); otherwise it allocates a fresh zeroed buffer (a miss).
//! - A **retention limit** in bytes (default [`DEFAULT_RETENTION_LIMIT`], 100 MiB). Invariant:
//!   the capacity bytes of the retained buffers never exceed it. A returned buffer that would
//!   break it evicts the **smallest** retained buffers first; when the returned buffer is itself
//!   the smallest candidate (or larger than the limit) it is dropped instead (`rejected`).
//! - A request larger than the retention limit (a buffer the pool could never retain) first
//!   frees every retained buffer (`evictions`). The process is about to grow by more than the
//!   whole limit, and the retained buffers, which by their sizes did not serve this request,
//!   would only add to that peak: a contraction whose largest intermediate exceeds the limit
//!   then peaks near its live set, not its live set plus the limit. Requests within the limit
//!   never evict, so a loop of operations cannot trade buffers back and forth.
//! - Plain-integer statistics ([`BufferPoolStats`]).
//! - The in-flight record of the current [`BufferPoolLoan`](crate::BufferPoolLoan), kept here so
//!   that its storage is reused from one loan to the next.
//!
//! A taken buffer has exactly the requested length; its elements are initialised but
//! unspecified: a reused buffer keeps its old values (truncated, or extended with zeros within
//! its capacity), so `take` never allocates on a hit and never exposes uninitialised memory.
//! A request is served from a buffer of capacity at most `max(4·len, len + 64)`, so a tiny
//! output never pins a large buffer inside the caller's tensor.
//!
//! # Locking
//!
//! None. The pool is a plain owned value used through `&mut`: it lives inside
//! [`EngineResources`](crate::EngineResources), which one owner at a time checks out by value.
//! Statistics are plain integers; nothing here is atomic.

mod free_list;
mod retain;
#[cfg(test)]
mod tests;

use holdfast_tensor::DType;

use free_list::Lists;

/// The default retention limit: 100 MiB of buffer capacity.
pub const DEFAULT_RETENTION_LIMIT: usize = 100 << 20;

/// Initial room of the in-flight record (entries), so that ordinary loans never grow it.
const RECORD_RESERVE: usize = 16;

/// Statistics of a [`BufferPool`].
///
/// # Examples
///
/// ```
/// use holdfast_kernels::KernelAlloc;
/// use holdfast_resources::BufferPool;
///
/// let mut pool = BufferPool::new();
/// let v: Vec<f64> = pool.take(8);
/// pool.give(v);
/// let again: Vec<f64> = pool.take(8);
/// let s = pool.stats();
/// assert_eq!((s.misses, s.hits, s.len), (1, 1, 0));
/// # drop(again);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BufferPoolStats {
    /// Retained buffers.
    pub len: usize,
    /// Capacity bytes of the retained buffers (never above `retention_limit`).
    pub retained_bytes: usize,
    /// The retention limit in bytes.
    pub retention_limit: usize,
    /// Takes served from a retained buffer.
    pub hits: u64,
    /// Takes that allocated a fresh buffer.
    pub misses: u64,
    /// Retained buffers dropped to keep the retention limit.
    pub evictions: u64,
    /// Returned buffers not retained (larger than the limit, or the smallest candidate when
    /// room was needed).
    pub rejected: u64,
    /// Buffers the current loan took from the retained set and has not given back.
    pub in_flight: usize,
    /// Fresh buffers put back by loans that unwound.
    pub replenished: u64,
    /// Buffers given back during an unwind and dropped rather than retained (possibly
    /// partially written outputs).
    pub discarded: u64,
    /// Buffers released by [`BufferPool::trim`].
    pub trimmed: u64,
}

/// The engine's per-dtype buffer pool, the kernels'
/// [`KernelAlloc`](holdfast_kernels::KernelAlloc).
///
/// - `take` serves the best fit: the smallest retained buffer of the element type with
///   capacity ≥ the requested length (and ≤ `max(4·len, len + 64)`), truncated or zero-extended
///   to exactly that length (old contents are kept: "initialised but unspecified"); otherwise a
///   fresh zeroed buffer (a miss). A hit never allocates.
/// - `give` retains the buffer unless that would exceed the retention limit, in which case the
///   smallest retained buffers are evicted first (or the returned one is dropped when it is
///   itself the smallest candidate or larger than the limit).
/// - Plain owned value used through `&mut`: no lock, no atomics; statistics are integers.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{KernelAlloc, Par, elementwise};
/// use holdfast_resources::BufferPool;
/// use holdfast_tensor::Tensor;
///
/// let mut pool = BufferPool::with_retention_limit(1 << 20);
/// let a = Tensor::<f64>::from_vec([4], vec![1.0, 2.0, 3.0, 4.0])?;
/// let s = elementwise::add(a.read(), a.read(), &mut pool, Par::Seq)?;
/// assert_eq!(s.as_slice(), &[2.0, 4.0, 6.0, 8.0]);
/// pool.give(s.into_parts().0);
/// assert_eq!(pool.len(), 1);
/// let t = elementwise::add(a.read(), a.read(), &mut pool, Par::Seq)?;
/// assert_eq!((pool.stats().hits, pool.len()), (1, 0));
/// # drop(t);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BufferPool {
    lists: Lists,
    len: usize,
    retained_bytes: usize,
    limit: usize,
    hits: u64,
    misses: u64,
    evictions: u64,
    rejected: u64,
    replenished: u64,
    discarded: u64,
    trimmed: u64,
    /// `(dtype, capacity)` of each buffer the active loan took from the retained set and has
    /// not given back. Empty outside a loan.
    pub(crate) record: Vec<(DType, usize)>,
}

impl Default for BufferPool {
    fn default() -> Self {
        Self::new()
    }
}

impl BufferPool {
    /// An empty pool with the [default retention limit](DEFAULT_RETENTION_LIMIT).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::{BufferPool, DEFAULT_RETENTION_LIMIT};
    ///
    /// assert_eq!(BufferPool::new().retention_limit(), DEFAULT_RETENTION_LIMIT);
    /// ```
    pub fn new() -> Self {
        Self::with_retention_limit(DEFAULT_RETENTION_LIMIT)
    }

    /// An empty pool that retains at most `bytes` of buffer capacity (0 retains nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::BufferPool;
    ///
    /// let mut pool = BufferPool::with_retention_limit(0);
    /// let v: Vec<f32> = pool.take(4);
    /// pool.give(v);
    /// assert!(pool.is_empty());
    /// ```
    pub fn with_retention_limit(bytes: usize) -> Self {
        BufferPool {
            lists: Lists::default(),
            len: 0,
            retained_bytes: 0,
            limit: bytes,
            hits: 0,
            misses: 0,
            evictions: 0,
            rejected: 0,
            replenished: 0,
            discarded: 0,
            trimmed: 0,
            record: Vec::with_capacity(RECORD_RESERVE),
        }
    }

    /// The retention limit in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::BufferPool;
    ///
    /// assert_eq!(BufferPool::with_retention_limit(4096).retention_limit(), 4096);
    /// ```
    pub fn retention_limit(&self) -> usize {
        self.limit
    }

    /// Changes the retention limit, evicting the smallest retained buffers until the retained
    /// bytes fit.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::BufferPool;
    ///
    /// let mut pool = BufferPool::new();
    /// pool.give(Vec::<f64>::with_capacity(16)); // 128 bytes
    /// pool.give(Vec::<f64>::with_capacity(64)); // 512 bytes
    /// pool.set_retention_limit(600);
    /// assert_eq!((pool.len(), pool.retained_bytes()), (1, 512));
    /// ```
    pub fn set_retention_limit(&mut self, bytes: usize) {
        self.limit = bytes;
        while self.retained_bytes > self.limit {
            let Some((dtype, _)) = self.lists.smallest() else { break };
            self.drop_smallest(dtype);
            self.evictions += 1;
        }
    }

    /// Number of retained buffers.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::BufferPool;
    ///
    /// assert_eq!(BufferPool::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no buffer is retained.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_resources::BufferPool;
    ///
    /// assert!(BufferPool::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Capacity bytes of the retained buffers.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::BufferPool;
    ///
    /// let mut pool = BufferPool::new();
    /// pool.give(Vec::<f32>::with_capacity(10));
    /// assert_eq!(pool.retained_bytes(), 40);
    /// ```
    pub fn retained_bytes(&self) -> usize {
        self.retained_bytes
    }

    /// The statistics so far.
    ///
    /// # Examples
    ///
    /// See [`BufferPoolStats`].
    pub fn stats(&self) -> BufferPoolStats {
        BufferPoolStats {
            len: self.len,
            retained_bytes: self.retained_bytes,
            retention_limit: self.limit,
            hits: self.hits,
            misses: self.misses,
            evictions: self.evictions,
            rejected: self.rejected,
            in_flight: self.record.len(),
            replenished: self.replenished,
            discarded: self.discarded,
            trimmed: self.trimmed,
        }
    }

    /// The capacities of the retained buffers of element type `dtype`, ascending (for tests
    /// and diagnostics).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::BufferPool;
    /// use holdfast_tensor::DType;
    ///
    /// let mut pool = BufferPool::new();
    /// pool.give(Vec::<f64>::with_capacity(9));
    /// pool.give(Vec::<f64>::with_capacity(3));
    /// assert_eq!(pool.capacities(DType::F64), vec![3, 9]);
    /// assert!(pool.capacities(DType::F32).is_empty());
    /// ```
    pub fn capacities(&self, dtype: DType) -> Vec<usize> {
        self.lists.capacities(dtype)
    }

    /// Releases every retained buffer (they are freed when the returned value is dropped, so a
    /// caller holding a lock can drop it after unlocking).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::BufferPool;
    ///
    /// let mut pool = BufferPool::new();
    /// pool.give(Vec::<f64>::with_capacity(8));
    /// drop(pool.trim());
    /// assert_eq!((pool.len(), pool.retained_bytes(), pool.stats().trimmed), (0, 0, 1));
    /// ```
    #[must_use = "the released buffers are freed when this value is dropped"]
    pub fn trim(&mut self) -> ReleasedBuffers {
        self.trimmed += self.len as u64;
        self.len = 0;
        self.retained_bytes = 0;
        ReleasedBuffers { _lists: self.lists.drain() }
    }

    /// Starts a [`BufferPoolLoan`](crate::BufferPoolLoan) around one operation.
    ///
    /// # Examples
    ///
    /// See [`BufferPoolLoan`](crate::BufferPoolLoan).
    pub fn loan(&mut self) -> crate::BufferPoolLoan<'_> {
        crate::BufferPoolLoan::new(self)
    }
}

/// Buffers released by [`BufferPool::trim`]; they are freed when this value is dropped.
///
/// # Examples
///
/// See [`BufferPool::trim`].
#[derive(Debug)]
pub struct ReleasedBuffers {
    _lists: Lists,
}
