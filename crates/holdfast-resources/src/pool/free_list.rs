//! [`FreeList`]: the retained buffers of one element type, sorted by capacity, and [`Lists`],
//! one of them per element type (`f32`, `f64`, `c32`, `c64`) with the generic-to-concrete
//! selection.
//!
//! Invariant: `bufs` is sorted by ascending capacity and holds no zero-capacity buffer. Taking
//! and inserting shift the tail of the list (`O(n)` moves of three words, no allocation once the
//! outer vector has grown to the list's high-water mark); at the list's end, where a held loop
//! of one output size takes and returns its buffer, they are a pop and a push, with no move and
//! no call to `memmove`.

use std::any::Any;
use std::mem;

use holdfast_tensor::{DType, Element, c32, c64};

/// How much larger than requested a reused buffer may be: a request of `len` elements accepts a
/// capacity of at most `max(len * FIT_FACTOR, len + FIT_MIN_SLACK)`, so a two-element output
/// never pins a megabyte buffer inside the caller's tensor.
pub(crate) const FIT_FACTOR: usize = 4;
/// See [`FIT_FACTOR`].
pub(crate) const FIT_MIN_SLACK: usize = 64;

/// The largest capacity a request of `len` elements accepts.
#[inline]
pub(crate) fn max_fit(len: usize) -> usize {
    len.saturating_mul(FIT_FACTOR).max(len.saturating_add(FIT_MIN_SLACK))
}

/// Retained buffers of one element type, ascending by capacity.
#[derive(Debug)]
pub(crate) struct FreeList<T> {
    bufs: Vec<Vec<T>>,
}

impl<T> Default for FreeList<T> {
    fn default() -> Self {
        FreeList { bufs: Vec::new() }
    }
}

impl<T: Element> FreeList<T> {
    /// The largest retained buffer when it is the best fit for `len` (the only one of at least
    /// `len` elements) and at most [`max_fit`]`(len)`, removed from the list: a held loop of one
    /// output size. `None` sends the caller to [`take_searched`](Self::take_searched).
    ///
    /// Always inlined, and kept apart from the search: the popped buffer then goes straight to
    /// the caller's result, not through a slot the out-of-line search also writes.
    #[inline(always)]
    pub(crate) fn pop_fit(&mut self, len: usize) -> Option<Vec<T>> {
        let n = self.bufs.len();
        let last_fits =
            self.bufs.last().is_some_and(|b| b.capacity() >= len && b.capacity() <= max_fit(len));
        let below = n.checked_sub(2).and_then(|i| self.bufs.get(i)).map_or(0, Vec::capacity);
        if last_fits && below < len { self.bufs.pop() } else { None }
    }

    /// The smallest retained buffer whose capacity is at least `len` and at most
    /// [`max_fit`]`(len)`, removed from the list (its contents are whatever it held), found by
    /// binary search over the capacities.
    #[inline(never)]
    pub(crate) fn take_searched(&mut self, len: usize) -> Option<Vec<T>> {
        let idx = self.bufs.partition_point(|b| b.capacity() < len);
        match self.bufs.get(idx) {
            Some(b) if b.capacity() <= max_fit(len) => Some(self.bufs.remove(idx)),
            _ => None,
        }
    }

    /// Inserts `buf` (capacity > 0) at its place by capacity (after equal capacities).
    #[inline]
    pub(crate) fn insert(&mut self, buf: Vec<T>) {
        if self.bufs.last().is_none_or(|b| b.capacity() <= buf.capacity()) {
            self.bufs.push(buf);
        } else {
            self.insert_sorted(buf);
        }
    }

    /// [`insert`](Self::insert) before the end of the list.
    #[inline(never)]
    fn insert_sorted(&mut self, buf: Vec<T>) {
        let cap = buf.capacity();
        let idx = self.bufs.partition_point(|b| b.capacity() <= cap);
        self.bufs.insert(idx, buf);
    }

    /// Capacity of the smallest retained buffer.
    pub(crate) fn smallest_capacity(&self) -> Option<usize> {
        self.bufs.first().map(Vec::capacity)
    }

    /// Removes and returns the smallest retained buffer.
    pub(crate) fn pop_smallest(&mut self) -> Option<Vec<T>> {
        if self.bufs.is_empty() { None } else { Some(self.bufs.remove(0)) }
    }

    /// Capacities of the retained buffers, ascending.
    pub(crate) fn capacities(&self) -> impl Iterator<Item = usize> + '_ {
        self.bufs.iter().map(Vec::capacity)
    }
}

/// The retained buffers of every element type.
#[derive(Debug, Default)]
pub(crate) struct Lists {
    pub(crate) f32: FreeList<f32>,
    pub(crate) f64: FreeList<f64>,
    pub(crate) c32: FreeList<c32>,
    pub(crate) c64: FreeList<c64>,
}

impl Lists {
    /// The free list of `T`.
    ///
    /// `T::DTYPE` is a constant and the downcast compares two constant `TypeId`s, so after
    /// monomorphisation this is a plain field access (`None` is unreachable for the sealed
    /// element types).
    #[inline]
    pub(crate) fn get_mut<T: Element>(&mut self) -> Option<&mut FreeList<T>> {
        let any: &mut dyn Any = match T::DTYPE {
            DType::F32 => &mut self.f32,
            DType::F64 => &mut self.f64,
            DType::C32 => &mut self.c32,
            DType::C64 => &mut self.c64,
            _ => return None,
        };
        any.downcast_mut::<FreeList<T>>()
    }

    /// The smallest retained capacity of `dtype`, in elements.
    fn smallest_of(&self, dtype: DType) -> Option<usize> {
        match dtype {
            DType::F32 => self.f32.smallest_capacity(),
            DType::F64 => self.f64.smallest_capacity(),
            DType::C32 => self.c32.smallest_capacity(),
            DType::C64 => self.c64.smallest_capacity(),
            _ => None,
        }
    }

    /// The element type and size in bytes of the smallest retained buffer of any type.
    pub(crate) fn smallest(&self) -> Option<(DType, usize)> {
        DType::ALL
            .iter()
            .filter_map(|&d| self.smallest_of(d).map(|c| (d, c * d.size_bytes())))
            .min_by_key(|&(_, bytes)| bytes)
    }

    /// Drops the smallest retained buffer of `dtype`; returns its size in bytes.
    pub(crate) fn drop_smallest(&mut self, dtype: DType) -> usize {
        let capacity = match dtype {
            DType::F32 => self.f32.pop_smallest().map(|b| b.capacity()),
            DType::F64 => self.f64.pop_smallest().map(|b| b.capacity()),
            DType::C32 => self.c32.pop_smallest().map(|b| b.capacity()),
            DType::C64 => self.c64.pop_smallest().map(|b| b.capacity()),
            _ => None,
        };
        capacity.map_or(0, |c| c * dtype.size_bytes())
    }

    /// Capacities of the retained buffers of `dtype`, ascending.
    pub(crate) fn capacities(&self, dtype: DType) -> Vec<usize> {
        match dtype {
            DType::F32 => self.f32.capacities().collect(),
            DType::F64 => self.f64.capacities().collect(),
            DType::C32 => self.c32.capacities().collect(),
            DType::C64 => self.c64.capacities().collect(),
            _ => Vec::new(),
        }
    }

    /// Moves every retained buffer out (no allocation: the lists are left empty).
    pub(crate) fn drain(&mut self) -> Lists {
        mem::take(self)
    }
}
