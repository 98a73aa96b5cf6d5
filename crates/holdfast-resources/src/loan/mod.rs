//! [`BufferPoolLoan`]: the in-flight accounting around one operation (SPEC R6, S10).
//!
//! # Protocol
//!
//! 1. [`BufferPool::loan`] starts a loan; it borrows the pool mutably for the operation, and
//!    the kernel takes and gives its buffers through the loan (it implements [`KernelAlloc`]).
//! 2. Each take served from the retained set pushes `(dtype, capacity)` onto the pool's
//!    in-flight record; each give during the loan removes a matching entry (same dtype and
//!    capacity) if there is one. Fresh allocations (misses) are not recorded: they were never
//!    part of the pool.
//! 3. [`BufferPoolLoan::finish`] on normal return (whether the operation succeeded or returned
//!    an error) clears the record: the buffers still recorded went into the caller's result or
//!    were dropped by the kernel, and the pool is simply smaller by them, as after any take.
//! 4. If the loan is dropped without `finish` (a panic unwound through the operation, or the
//!    caller abandoned it), every recorded buffer is **replenished**: a fresh, empty buffer of
//!    the same capacity is retained in its place (an allocation failure skips that buffer), so
//!    the pool holds the same buffers as before the operation, at once.
//! 5. A buffer given back while the thread is panicking may be a partially written output;
//!    it is dropped, never retained (its entry stays recorded, so it is replenished by a fresh
//!    buffer instead). An output a panic interrupted inside the kernel is simply dropped with
//!    the kernel's frame and replenished the same way.
//!
//! The record is a `Vec` owned by the pool and reused by every loan (cleared, never shrunk), so
//! in steady state a loan allocates nothing. Replenishing allocates, but only on unwind.
//!
//! # Locking
//!
//! None: a loan holds `&mut BufferPool`. `std::thread::panicking()` on a give reads a global
//! counter (no read-modify-write).

#[cfg(test)]
mod tests;

use std::ops::Deref;

use holdfast_kernels::KernelAlloc;
use holdfast_tensor::Element;

use crate::BufferPool;

/// The in-flight accounting of one operation over a [`BufferPool`] (SPEC R6).
///
/// Takes served from the retained set are recorded as `(dtype, capacity)`; a give during the
/// loan removes a matching entry. [`finish`](Self::finish) on normal return clears the record
/// (the buffers belong to the result). Dropped without `finish` (unwinding), the loan retains a
/// fresh, empty buffer of each recorded capacity, so the pool holds the same buffers as before
/// the operation; an allocation failure skips that buffer. A buffer given back while the thread
/// panics may be a partially written output: it is dropped, never retained. The record's
/// storage is reused by every loan, so a loan allocates nothing in steady state.
///
/// # Examples
///
/// A panic inside a loan leaves the pool as it was:
///
/// ```
/// use std::panic::{AssertUnwindSafe, catch_unwind};
/// use holdfast_kernels::KernelAlloc;
/// use holdfast_resources::BufferPool;
///
/// let mut pool = BufferPool::new();
/// pool.give(Vec::<f64>::with_capacity(32));
/// let (len, bytes) = (pool.len(), pool.retained_bytes());
///
/// let r = catch_unwind(AssertUnwindSafe(|| {
///     let mut loan = pool.loan();
///     let out: Vec<f64> = loan.take(32); // a pooled output buffer...
///     assert_eq!(out.len(), 32);
///     panic!("...and the kernel fails while writing it");
/// }));
/// assert!(r.is_err());
/// assert_eq!((pool.len(), pool.retained_bytes()), (len, bytes));
///
/// // On normal return the output belongs to the caller:
/// let mut loan = pool.loan();
/// let out: Vec<f64> = loan.take(32);
/// loan.finish();
/// assert_eq!((pool.len(), out.len()), (0, 32));
/// ```
#[derive(Debug)]
#[must_use = "a loan dropped without `finish` replenishes what it took"]
pub struct BufferPoolLoan<'p> {
    pool: &'p mut BufferPool,
}

impl<'p> BufferPoolLoan<'p> {
    pub(crate) fn new(pool: &'p mut BufferPool) -> Self {
        // A previous loan always clears the record (finish or drop); this is defensive and
        // costs a store.
        pool.record.clear();
        BufferPoolLoan { pool }
    }

    /// Ends the loan on normal return: buffers still in flight belong to the operation's
    /// result (or were dropped by it), and the record is cleared.
    ///
    /// # Examples
    ///
    /// See [`BufferPoolLoan`].
    #[inline]
    pub fn finish(self) {
        self.pool.record.clear();
        // Drop sees an empty record and replenishes nothing.
    }

    /// Buffers taken from the retained set during this loan and not given back.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::KernelAlloc;
    /// use holdfast_resources::BufferPool;
    ///
    /// let mut pool = BufferPool::new();
    /// pool.give(Vec::<f32>::with_capacity(4));
    /// let mut loan = pool.loan();
    /// let a: Vec<f32> = loan.take(4); // hit: recorded
    /// let b: Vec<f32> = loan.take(4); // miss: a fresh buffer, not recorded
    /// assert_eq!(loan.in_flight(), 1);
    /// loan.give(a);
    /// assert_eq!(loan.in_flight(), 0);
    /// loan.finish();
    /// # drop(b);
    /// ```
    pub fn in_flight(&self) -> usize {
        self.pool.record.len()
    }

    /// Replenishes every recorded take, in reverse, popping, so the record ends empty whatever
    /// happens (the unwinding path of R6).
    #[cold]
    #[inline(never)]
    fn replenish_all(&mut self) {
        while let Some((dtype, cap)) = self.pool.record.pop() {
            self.pool.replenish(dtype, cap);
        }
    }
}

impl KernelAlloc for BufferPoolLoan<'_> {
    /// Always inlined, as far as a held loop's hit: the buffer then goes straight into the
    /// kernel's output instead of through a call's return slot; a searched hit or a miss is one
    /// call.
    #[inline(always)]
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        if let Some(buf) = self.pool.take_fit::<T>(len) {
            return self.recorded(buf);
        }
        self.take_other(len)
    }

    /// Always inlined, as far as the retention of a buffer that fits under the limit: the
    /// caller's buffer is then read where it lies; eviction, rejection and a give during a
    /// panic are calls.
    #[inline(always)]
    fn give<T: Element>(&mut self, buf: Vec<T>) {
        if std::thread::panicking() {
            self.give_while_panicking(buf);
            return;
        }
        let key = (T::DTYPE, buf.capacity());
        let record = &mut self.pool.record;
        if let Some(pos) = record.iter().rposition(|e| *e == key) {
            record.swap_remove(pos);
        }
        self.pool.give_inner(buf);
    }
}

impl BufferPoolLoan<'_> {
    /// [`take`](KernelAlloc::take) past a held loop's hit: a searched hit (recorded) or a miss.
    #[inline(never)]
    fn take_other<T: Element>(&mut self, len: usize) -> Vec<T> {
        match self.pool.take_searched_or_fresh::<T>(len) {
            (buf, true) => self.recorded(buf),
            (buf, false) => buf,
        }
    }

    /// `buf`, a hit taken from the retained set, entered in the in-flight record.
    #[inline(always)]
    fn recorded<T: Element>(&mut self, buf: Vec<T>) -> Vec<T> {
        self.pool.record.push((T::DTYPE, buf.capacity()));
        buf
    }

    /// A buffer given back while the thread panics may be a partially written output: it is
    /// dropped, never retained (R6). Its record entry, if any, stays, so the unwind replenishes
    /// a fresh buffer in its place.
    #[cold]
    #[inline(never)]
    fn give_while_panicking<T: Element>(&mut self, buf: Vec<T>) {
        let held_memory = buf.capacity() != 0;
        drop(buf);
        if held_memory {
            self.pool.count_discarded();
        }
    }
}

impl Drop for BufferPoolLoan<'_> {
    /// Inline, so that a finished loan (empty record) costs a length test and no call.
    #[inline]
    fn drop(&mut self) {
        if !self.pool.record.is_empty() {
            self.replenish_all();
        }
    }
}

/// Read access to the pool (statistics) during the loan; takes and gives go through the loan.
impl Deref for BufferPoolLoan<'_> {
    type Target = BufferPool;

    fn deref(&self) -> &BufferPool {
        self.pool
    }
}
