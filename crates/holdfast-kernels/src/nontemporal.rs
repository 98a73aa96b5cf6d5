//! Non-temporal stores: writing an output that will leave the cache anyway without reading it
//! first.
//!
//! An ordinary store to a line that is not in cache first reads the line from memory. For an
//! output written front to back that read is overlapped by the prefetchers; for one written in
//! short runs far apart (a band of a product's rows), each run costs its lines' reads, and the
//! lines a run shares with the next run are read twice when they leave the cache in between. A
//! non-temporal store sends the line to memory without reading it, at the price of not leaving
//! it in cache.
//!
//! So only outputs of at least [`MIN_BYTES`] are written this way: larger than any cache of a
//! core, they would not be found there by their consumer anyway. `matmul::stream` uses them.
//! They are no general rule for large outputs: the tiled copy of `strided::tile`, whose tiles
//! also write short runs, ran faster with them on one layout and twice as slow on another
//! (`docs/perf/2026-12-05-streamed-output-rows.md`).
//!
//! A run of elements is written by [`put_run`] a whole 64-byte line per store wherever the run
//! covers a line, and a word per store only at its two ends. The write-combining buffer that
//! collects a line's stores is then filled by one instruction instead of eight or sixteen, which
//! matters on a core whose memory takes writes faster than the core issues word stores
//! (`docs/perf/2026-12-06-line-wide-streaming-stores.md`).
//!
//! # Unsafe
//!
//! [`put_run`] issues the stores through `core::arch`, whose intrinsics take raw pointers; it
//! writes exactly the elements its `&mut` names and reads only the elements of `src`. These
//! stores are not ordered with the thread's later stores, so whoever issues them calls
//! [`fence`] before the output is handed on: whatever the thread does next (a rayon latch,
//! returning the output) is then seen by other threads only after the output is.

#[cfg(test)]
mod tests;

use std::any::TypeId;

use holdfast_tensor::{c32, c64};

/// Least size, in bytes, of an output written with non-temporal stores: eight times a 2 MiB
/// level-2 cache. Half of the 32 MiB first chosen, so that each half of a product whose rows a
/// step cuts over two threads is still written this way.
pub(crate) const MIN_BYTES: usize = 16 << 20;

/// `dst.copy_from_slice(src)` by non-temporal stores where the target has them and `T` is one
/// of the element types: whole 64-byte lines of `dst` by one store each (AVX-512) or four
/// (SSE2), the partial lines at its ends by 8- or 4-byte stores. Other types are copied by
/// ordinary stores. Copies `min(dst.len(), src.len())` elements.
pub(crate) fn put_run<T: Copy + 'static>(dst: &mut [T], src: &[T]) {
    let len = dst.len().min(src.len());
    #[cfg(target_arch = "x86_64")]
    if is_element::<T>() {
        // SAFETY:
        // - `T` is `f32`, `f64`, `c32` or `c64`: plain data of 4-byte words, aligned to at least
        //   4 bytes, with no padding, so its bytes may be read and written as words.
        // - The byte ranges are the first `len` elements of `dst` (exclusive: a `&mut`) and of
        //   `src` (shared), which cannot overlap; `len · size_of::<T>()` is a multiple of 4.
        unsafe {
            lines::copy(
                dst.as_mut_ptr().cast::<u8>(),
                src.as_ptr().cast::<u8>(),
                len * std::mem::size_of::<T>(),
                std::arch::is_x86_feature_detected!("avx512f"),
            );
        }
        return;
    }
    dst[..len].copy_from_slice(&src[..len]);
}

/// [`put_run`] with its whole lines stored 16 bytes at a time, as on a CPU without AVX-512F.
#[cfg(all(test, target_arch = "x86_64"))]
fn put_run_narrow(dst: &mut [f64], src: &[f64]) {
    let len = dst.len().min(src.len());
    // SAFETY: as in `put_run`, for `f64`; `wide` is false, which needs no CPU feature.
    unsafe { lines::copy(dst.as_mut_ptr().cast(), src.as_ptr().cast(), len * 8, false) };
}

/// Whether `T` is one of the element types (`f32`, `f64`, `c32`, `c64`); resolved at compile
/// time.
#[cfg(target_arch = "x86_64")]
fn is_element<T: 'static>() -> bool {
    let id = TypeId::of::<T>();
    [TypeId::of::<f32>(), TypeId::of::<f64>(), TypeId::of::<c32>(), TypeId::of::<c64>()]
        .contains(&id)
}

/// The byte-level copy of [`put_run`].
#[cfg(target_arch = "x86_64")]
mod lines {
    use core::arch::x86_64::{
        _mm_loadu_si128, _mm_stream_si32, _mm_stream_si64, _mm_stream_si128, _mm512_loadu_si512,
        _mm512_stream_si512,
    };

    /// Bytes of a cache line.
    const LINE: usize = 64;

    /// Copies `len` bytes from `src` to `dst` by non-temporal stores.
    ///
    /// # Safety
    ///
    /// `dst` is valid for writes and `src` for reads of `len` bytes, the ranges do not overlap,
    /// `dst` is 4-byte aligned and `len` is a multiple of 4; with `wide`, the CPU has AVX-512F
    /// (whole lines are then stored 64 bytes at a time, else 16).
    pub(super) unsafe fn copy(dst: *mut u8, src: *const u8, len: usize, wide: bool) {
        let mut at = 0;
        while len - at >= 4 && !(dst as usize + at).is_multiple_of(LINE) {
            // SAFETY: at least 4 bytes from `at` lie in both ranges; `dst + at` is 4-byte
            // aligned, as `dst` is and `at` is a sum of widths that are multiples of 4.
            at += unsafe { word(dst.add(at), src.add(at), len - at) };
        }
        let count = (len - at) / LINE;
        if wide {
            // SAFETY: the CPU has AVX-512F (the caller's word); `dst + at` is on a line boundary
            // (the loop above stopped there, or `len - at < 4` and `count` is 0); `count` lines
            // from `at` lie in both ranges.
            unsafe { lines_avx512(dst.add(at), src.add(at), count) };
        } else {
            // SAFETY: as for `lines_avx512`, whose CPU feature this path does not need.
            unsafe { lines_sse2(dst.add(at), src.add(at), count) };
        }
        at += count * LINE;
        while len - at >= 4 {
            // SAFETY: as in the first loop.
            at += unsafe { word(dst.add(at), src.add(at), len - at) };
        }
    }

    /// Stores one word of `src` at `dst`, 8 bytes when `dst` is 8-byte aligned and 8 remain,
    /// else 4; returns the width.
    ///
    /// # Safety
    ///
    /// As for [`copy`], with `len >= 4`.
    #[inline]
    unsafe fn word(dst: *mut u8, src: *const u8, len: usize) -> usize {
        if len >= 8 && (dst as usize).is_multiple_of(8) {
            // SAFETY: 8 bytes lie in both ranges (`len >= 8`) and `dst` is 8-byte aligned;
            // `movnti` is part of SSE2.
            unsafe { _mm_stream_si64(dst.cast(), src.cast::<i64>().read_unaligned()) };
            8
        } else {
            // SAFETY: 4 bytes lie in both ranges (`len >= 4`) and `dst` is 4-byte aligned.
            unsafe { _mm_stream_si32(dst.cast(), src.cast::<i32>().read_unaligned()) };
            4
        }
    }

    /// Stores `count` whole lines of `src` at `dst`, four 16-byte stores each.
    ///
    /// # Safety
    ///
    /// `dst` is 64-byte aligned; both ranges hold `count · 64` bytes.
    unsafe fn lines_sse2(dst: *mut u8, src: *const u8, count: usize) {
        for i in 0..count * 4 {
            // SAFETY: 16-byte piece `i` lies in both ranges; its store address is 16-byte
            // aligned, as `movntdq` requires, and the load is unaligned. Both are SSE2, which
            // every x86_64 target has.
            unsafe {
                let piece = _mm_loadu_si128(src.add(16 * i).cast());
                _mm_stream_si128(dst.add(16 * i).cast(), piece);
            }
        }
    }

    /// Stores `count` whole lines of `src` at `dst`, one 64-byte store each.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512F; `dst` is 64-byte aligned; both ranges hold `count · 64` bytes.
    #[target_feature(enable = "avx512f")]
    unsafe fn lines_avx512(dst: *mut u8, src: *const u8, count: usize) {
        for i in 0..count {
            // SAFETY: line `i` lies in both ranges; the store's address is 64-byte aligned, as
            // `vmovntdq` requires; the load is unaligned.
            unsafe {
                _mm512_stream_si512(
                    dst.add(i * LINE).cast(),
                    _mm512_loadu_si512(src.add(i * LINE).cast()),
                );
            }
        }
    }
}

/// Orders this thread's non-temporal stores before its later stores.
#[inline]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` is part of SSE, which every x86_64 target has; it only orders stores.
    unsafe {
        core::arch::x86_64::_mm_sfence();
    }
}
