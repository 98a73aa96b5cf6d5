//! The program's global allocator: the system allocator, plus per-thread counts of the
//! allocations made, for `holdfast bench`'s heap-allocation counter (SPEC M2).
//!
//! It forwards every entry point of [`GlobalAlloc`] to [`System`] one for one — `alloc_zeroed`
//! to `calloc`-backed `System::alloc_zeroed` and `realloc` to `System::realloc` — so the program
//! allocates exactly as it would without counting. That matters for what the campaign measures:
//! a counter that implements only `alloc` and `dealloc` leaves `alloc_zeroed` to the trait's
//! default (allocate, then write zeros over every byte), which touches every page of a large
//! buffer at once, one 4 KiB page fault at a time, before the kernels' huge-page advice can apply;
//! on this project's first campaign that tripled the time of a 134 MB einsum output.
//!
//! # Invariants
//!
//! - The counters are `const`-initialised thread-locals of plain [`Cell`]s: reading or bumping
//!   them never allocates and has no destructor, so they are usable inside the allocator on any
//!   thread, including during thread start-up and teardown (where `try_with` fails, the count is
//!   skipped, never the allocation).
//! - Counting never changes what is allocated, where, or when.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Allocations (`alloc`, `alloc_zeroed`, `realloc`) made by this thread.
    static COUNT: Cell<u64> = const { Cell::new(0) };
    /// Bytes requested by those allocations (a `realloc` counts its new size).
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

/// Heap allocations made by the calling thread during [`measure`]'s callback.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Allocations {
    /// Number of allocations (a `realloc` counts as one: it may move the block).
    pub(crate) count: u64,
    /// Bytes requested by them.
    pub(crate) bytes: u64,
}

impl Allocations {
    /// What was allocated between `earlier` and this reading.
    pub(crate) fn since(self, earlier: Allocations) -> Allocations {
        Allocations { count: self.count - earlier.count, bytes: self.bytes - earlier.bytes }
    }
}

/// The system allocator with per-thread allocation counts.
struct Counting;

fn note(size: usize) {
    // `try_with`: a thread being torn down has no counters left; its allocation still happens.
    let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|b| b.set(b.get() + size as u64));
}

// SAFETY: every method forwards to `System` with the caller's own arguments, so `Counting`
// upholds `GlobalAlloc`'s contract exactly as `System` does. The counting around the calls
// touches only `const`-initialised thread-local `Cell`s, which neither allocate nor unwind.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's `layout` contract (non-zero size) is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as `alloc`; `System` zeroes through `calloc`, which leaves fresh pages untouched.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator, that is by `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: `ptr`/`layout` come from `System` (see `dealloc`); the caller guarantees
        // `new_size` is non-zero and fits `layout`'s alignment.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns the heap allocations the calling thread made during it (other threads'
/// allocations, such as a rayon worker's, are not counted).
pub(crate) fn measure(f: impl FnOnce()) -> Allocations {
    let before = snapshot();
    f();
    snapshot().since(before)
}

/// The heap allocations the calling thread has made so far (differences of two readings count
/// what happened between them).
pub(crate) fn snapshot() -> Allocations {
    Allocations {
        count: COUNT.try_with(Cell::get).unwrap_or(0),
        bytes: BYTES.try_with(Cell::get).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::{Allocations, measure};

    #[test]
    fn counts_allocations_of_this_thread() {
        let mut kept = Vec::with_capacity(2);
        let seen = measure(|| {
            kept.push(vec![0u8; 1000]);
            kept.push(Vec::with_capacity(24));
        });
        assert_eq!(seen, Allocations { count: 2, bytes: 1024 });
    }

    #[test]
    fn zeroed_and_grown_buffers_are_counted() {
        let seen = measure(|| {
            let zeroed = vec![0.0f64; 1 << 20];
            std::hint::black_box(&zeroed);
            let mut grown: Vec<u64> = Vec::with_capacity(4);
            grown.extend(0..100);
            std::hint::black_box(&grown);
        });
        // One calloc-backed buffer, one first allocation, and at least one realloc.
        assert!(seen.count >= 3, "{seen:?}");
        assert!(seen.bytes >= 8 << 20, "{seen:?}");
    }

    #[test]
    fn nothing_allocated_counts_nothing() {
        let mut x = 0u64;
        let seen = measure(|| x = std::hint::black_box(41) + 1);
        assert_eq!((x, seen), (42, Allocations::default()));
    }

    #[test]
    fn other_threads_are_not_counted() {
        let seen = measure(|| {
            std::thread::scope(|s| {
                s.spawn(|| std::hint::black_box(vec![1u8; 4096]));
            });
        });
        // Spawning itself may allocate on this thread (the thread's name, its packet), but the
        // worker's 4 KiB buffer is not among this thread's bytes.
        assert!(seen.bytes < 4096, "{seen:?}");
    }
}
