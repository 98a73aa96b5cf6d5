//! What a take and a give do to a [`BufferPool`]'s retained set: the best fit and its
//! accounting on a hit, the fresh buffer of a miss and the outsized rule, retention under the
//! limit with eviction of the smallest buffers, and the replenishment of an unwound loan.
//!
//! Invariant (the pool's, kept here): `len` and `retained_bytes` count exactly the buffers in
//! the free lists, and `retained_bytes` never exceeds the retention limit. Every path that
//! moves a buffer into or out of a list updates both in the same function.

use std::mem;

use holdfast_kernels::KernelAlloc;
use holdfast_tensor::{DType, Element};

use super::BufferPool;

impl BufferPool {
    /// Takes a buffer of exactly `len` elements; returns whether it came from the retained set.
    ///
    /// The hit of a held loop ([`take_fit`](Self::take_fit)) is the inline part; the searched
    /// hit and the miss are out of line.
    #[inline]
    pub(crate) fn take_inner<T: Element>(&mut self, len: usize) -> (Vec<T>, bool) {
        match self.take_fit(len) {
            Some(buf) => (buf, true),
            None => self.take_searched_or_fresh(len),
        }
    }

    /// The retained buffer a held loop of one output size takes back: the largest, when it is
    /// the best fit for `len` (see `FreeList::pop_fit`). `None` for `len` 0 or any other case.
    #[inline(always)]
    pub(crate) fn take_fit<T: Element>(&mut self, len: usize) -> Option<Vec<T>> {
        if len == 0 {
            return None;
        }
        let buf = self.lists.get_mut::<T>()?.pop_fit(len)?;
        Some(self.hit(buf, len))
    }

    /// [`take_inner`](Self::take_inner) past the held loop's case: the best fit found by search,
    /// or a fresh buffer (a miss); returns whether it came from the retained set.
    #[inline(never)]
    pub(crate) fn take_searched_or_fresh<T: Element>(&mut self, len: usize) -> (Vec<T>, bool) {
        if len != 0
            && let Some(list) = self.lists.get_mut::<T>()
            && let Some(buf) = list.take_searched(len)
        {
            return (self.hit(buf, len), true);
        }
        (self.take_miss(len), false)
    }

    /// Counts a retained buffer leaving the pool and gives it `len` elements.
    #[inline(always)]
    fn hit<T: Element>(&mut self, mut buf: Vec<T>, len: usize) -> Vec<T> {
        self.len -= 1;
        self.retained_bytes -= buf.capacity() * mem::size_of::<T>();
        self.hits += 1;
        buf.resize(len, T::ZERO);
        buf
    }

    /// A fresh buffer of `len` elements (empty for 0), counted as a miss unless `len` is 0.
    #[cold]
    #[inline(never)]
    fn take_miss<T: Element>(&mut self, len: usize) -> Vec<T> {
        if len == 0 {
            return Vec::new();
        }
        self.misses += 1;
        if len.saturating_mul(mem::size_of::<T>()) > self.limit && self.len > 0 {
            self.release_for_outsized();
        }
        // As `HeapAlloc` does: a large fresh buffer is advised for huge pages, so a cold pooled
        // output pays no more page faults than a heap one.
        holdfast_kernels::fresh_buffer(len)
    }

    /// Retains `buf` if the limit allows (evicting smaller buffers first), else drops it.
    ///
    /// A buffer that fits under the limit as it stands is retained inline; eviction and
    /// rejection are out of line.
    #[inline(always)]
    pub(crate) fn give_inner<T: Element>(&mut self, buf: Vec<T>) {
        let bytes = buf.capacity().saturating_mul(mem::size_of::<T>());
        if bytes != 0
            && self.retained_bytes + bytes <= self.limit
            && let Some(list) = self.lists.get_mut::<T>()
        {
            list.insert(buf);
            self.len += 1;
            self.retained_bytes += bytes;
            return;
        }
        self.give_over_limit(buf, bytes);
    }

    /// `give_inner` for a buffer that does not fit under the limit as it stands (or holds
    /// nothing): evicts smaller buffers to make room, or drops it.
    #[cold]
    #[inline(never)]
    fn give_over_limit<T: Element>(&mut self, buf: Vec<T>, bytes: usize) {
        if bytes == 0 {
            return;
        }
        if bytes > self.limit {
            self.rejected += 1;
            return;
        }
        while self.retained_bytes + bytes > self.limit {
            match self.lists.smallest() {
                Some((dtype, smallest)) if smallest < bytes => {
                    self.drop_smallest(dtype);
                    self.evictions += 1;
                }
                _ => {
                    self.rejected += 1;
                    return;
                }
            }
        }
        if let Some(list) = self.lists.get_mut::<T>() {
            list.insert(buf);
            self.len += 1;
            self.retained_bytes += bytes;
        }
    }

    /// Puts back a fresh, empty buffer of capacity `cap` for a loan that unwound; an allocation
    /// failure is skipped.
    pub(crate) fn replenish(&mut self, dtype: DType, cap: usize) {
        match dtype {
            DType::F32 => self.replenish_typed::<f32>(cap),
            DType::F64 => self.replenish_typed::<f64>(cap),
            DType::C32 => self.replenish_typed::<holdfast_tensor::c32>(cap),
            DType::C64 => self.replenish_typed::<holdfast_tensor::c64>(cap),
            _ => {}
        }
    }

    fn replenish_typed<T: Element>(&mut self, cap: usize) {
        let mut buf: Vec<T> = Vec::new();
        if buf.try_reserve_exact(cap).is_ok() {
            let before = self.len;
            self.give_inner(buf);
            if self.len > before {
                self.replenished += 1;
            }
        }
    }

    /// Frees every retained buffer before a request larger than the retention limit is
    /// allocated (module docs); they count as evictions.
    #[cold]
    fn release_for_outsized(&mut self) {
        self.evictions += self.len as u64;
        self.len = 0;
        self.retained_bytes = 0;
        drop(self.lists.drain());
    }

    /// Counts a buffer dropped instead of retained because it was given back during an unwind.
    pub(crate) fn count_discarded(&mut self) {
        self.discarded += 1;
    }

    /// Drops the smallest retained buffer of `dtype`, keeping the counts.
    pub(super) fn drop_smallest(&mut self, dtype: DType) {
        let freed = self.lists.drop_smallest(dtype);
        self.len -= 1;
        self.retained_bytes -= freed;
    }
}

impl KernelAlloc for BufferPool {
    #[inline]
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        self.take_inner(len).0
    }

    #[inline]
    fn give<T: Element>(&mut self, buf: Vec<T>) {
        self.give_inner(buf);
    }
}
