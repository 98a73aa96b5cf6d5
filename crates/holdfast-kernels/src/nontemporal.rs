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
//! # Unsafe
//!
//! [`put`] issues the store through `core::arch`, whose intrinsics take a raw pointer; it
//! writes exactly the element its `&mut` names. These stores are not ordered with the thread's
//! later stores, so whoever issues them calls [`fence`] before the output is handed on:
//! whatever the thread does next (a rayon latch, returning the output) is then seen by other
//! threads only after the output is.

use std::any::Any;

use holdfast_tensor::{c32, c64};

/// Least size, in bytes, of an output written with non-temporal stores: eight times a 2 MiB
/// level-2 cache. Half of the 32 MiB first chosen, so that each half of a product whose rows a
/// step cuts over two threads is still written this way.
pub(crate) const MIN_BYTES: usize = 16 << 20;

/// `*dst = x`, by a non-temporal store where the target has one and `T` is one of the element
/// types (`f32`, `f64`, `c32`, `c64`); an ordinary store otherwise. The type test is resolved
/// at compile time.
#[inline]
pub(crate) fn put<T: Copy + 'static>(dst: &mut T, x: T) {
    let value: &dyn Any = &x;
    let slot: &mut dyn Any = dst;
    if let (Some(d), Some(&v)) = (slot.downcast_mut::<f64>(), value.downcast_ref::<f64>()) {
        put_f64(d, v);
    } else if let (Some(d), Some(&v)) = (slot.downcast_mut::<c64>(), value.downcast_ref::<c64>()) {
        put_f64(&mut d.re, v.re);
        put_f64(&mut d.im, v.im);
    } else if let (Some(d), Some(&v)) = (slot.downcast_mut::<f32>(), value.downcast_ref::<f32>()) {
        put_f32(d, v);
    } else if let (Some(d), Some(&v)) = (slot.downcast_mut::<c32>(), value.downcast_ref::<c32>()) {
        put_f32(&mut d.re, v.re);
        put_f32(&mut d.im, v.im);
    } else if let Some(d) = slot.downcast_mut::<T>() {
        *d = x;
    }
}

/// `*dst = x`, by a non-temporal store where the target has one.
#[inline]
fn put_f64(dst: &mut f64, x: f64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `dst` is a live, aligned and exclusive reference to eight bytes, and the store
    // writes exactly those; `movnti` is part of SSE2, which every x86_64 target has.
    unsafe {
        core::arch::x86_64::_mm_stream_si64(
            std::ptr::from_mut(dst).cast(),
            x.to_bits().cast_signed(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = x;
    }
}

/// `*dst = x`, by a non-temporal store where the target has one.
#[inline]
fn put_f32(dst: &mut f32, x: f32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `put_f64`, for four bytes.
    unsafe {
        core::arch::x86_64::_mm_stream_si32(
            std::ptr::from_mut(dst).cast(),
            x.to_bits().cast_signed(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        *dst = x;
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
