//! [`KernelAlloc`]: where kernels get their output and scratch buffers, so that a pooled
//! allocator (the engine's buffer pool) can serve them; [`HeapAlloc`] is the plain one.
//!
//! # Contract
//!
//! [`KernelAlloc::take`] returns a vector of exactly the requested length whose elements are
//! initialised but otherwise **unspecified** (a pool may hand back a used buffer). Every kernel
//! overwrites each element it returns or zeroes the buffer itself before accumulating; no kernel
//! reads a taken element before writing it. Scratch and intermediate buffers a kernel no longer
//! needs go back through [`KernelAlloc::give`]; the buffer inside a returned tensor belongs to
//! the caller.

use holdfast_tensor::Element;

/// A source of element buffers for kernels.
///
/// Generic methods make the trait not object-safe; kernels take `&mut A` with
/// `A: KernelAlloc + ?Sized`.
///
/// # Examples
///
/// A counting allocator that recycles one buffer per dtype:
///
/// ```
/// use holdfast_kernels::{KernelAlloc, HeapAlloc};
/// use holdfast_tensor::Element;
///
/// #[derive(Default)]
/// struct Counting { takes: usize, gives: usize }
///
/// impl KernelAlloc for Counting {
///     fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
///         self.takes += 1;
///         HeapAlloc.take(len)
///     }
///     fn give<T: Element>(&mut self, buf: Vec<T>) {
///         self.gives += 1;
///         drop(buf);
///     }
/// }
///
/// let mut alloc = Counting::default();
/// let v: Vec<f64> = alloc.take(4);
/// assert_eq!(v.len(), 4);
/// alloc.give(v);
/// assert_eq!((alloc.takes, alloc.gives), (1, 1));
/// ```
pub trait KernelAlloc {
    /// A buffer of exactly `len` initialised elements with unspecified values.
    fn take<T: Element>(&mut self, len: usize) -> Vec<T>;

    /// Returns a buffer the kernel no longer needs (its length and contents are arbitrary).
    fn give<T: Element>(&mut self, buf: Vec<T>);

    /// A buffer of exactly `len` zeros.
    fn take_zeroed<T: Element>(&mut self, len: usize) -> Vec<T> {
        let mut buf = self.take(len);
        buf.fill(T::ZERO);
        buf
    }
}

/// The plain allocator: every `take` is a fresh zeroed `Vec`, every `give` drops.
///
/// Buffers of at least [`HUGE_PAGE_MIN_BYTES`] are advised for transparent huge pages on Linux
/// (as numpy does): a fresh multi-megabyte buffer is otherwise paid for in 4 KiB page faults on
/// first write, which on a virtual machine costs more than the arithmetic of a memory-bound
/// kernel (`docs/perf/measurements.md` has the figures).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, KernelAlloc};
///
/// let v: Vec<f32> = HeapAlloc.take(3);
/// assert_eq!(v, vec![0.0; 3]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapAlloc;

impl KernelAlloc for HeapAlloc {
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        fresh_buffer(len)
    }

    fn give<T: Element>(&mut self, buf: Vec<T>) {
        drop(buf);
    }

    fn take_zeroed<T: Element>(&mut self, len: usize) -> Vec<T> {
        fresh_buffer(len)
    }
}

/// Buffers at least this large are advised for transparent huge pages (numpy's threshold).
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// A fresh zeroed buffer of `len` elements, advised for transparent huge pages when it holds at
/// least [`HUGE_PAGE_MIN_BYTES`]: what [`HeapAlloc`] hands out, and what a pool allocates on a
/// miss, so a pooled first run pays no more page faults than a heap one.
///
/// # Examples
///
/// ```
/// let v: Vec<f64> = holdfast_kernels::fresh_buffer(1 << 20); // 8 MiB: advised
/// assert!(v.iter().all(|&x| x == 0.0));
/// ```
pub fn fresh_buffer<T: Element>(len: usize) -> Vec<T> {
    let buf = vec![T::ZERO; len];
    if len.saturating_mul(std::mem::size_of::<T>()) >= HUGE_PAGE_MIN_BYTES {
        advise_huge_pages(&buf);
    }
    buf
}

/// Asks the kernel to back the whole pages inside `buf` with transparent huge pages. Advisory:
/// failure (or another OS) changes nothing but speed.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(buf: &[T]) {
    const PAGE: usize = 4096;
    let start = buf.as_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let first = start.next_multiple_of(PAGE);
    let last = end & !(PAGE - 1);
    if last > first {
        // SAFETY:
        // - `first..last` is a page-aligned range inside `buf`'s live allocation (rounded inward),
        //   so the call names only memory this buffer owns.
        // - `MADV_HUGEPAGE` is advisory: it changes neither contents nor validity of the memory
        //   (calloc'd zero pages stay zero), and its error result is deliberately ignored.
        let _ =
            unsafe { libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_buf: &[T]) {}

impl<A: KernelAlloc + ?Sized> KernelAlloc for &mut A {
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        (**self).take(len)
    }

    fn give<T: Element>(&mut self, buf: Vec<T>) {
        (**self).give(buf);
    }

    fn take_zeroed<T: Element>(&mut self, len: usize) -> Vec<T> {
        (**self).take_zeroed(len)
    }
}
