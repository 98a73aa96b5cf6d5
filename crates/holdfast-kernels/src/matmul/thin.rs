//! A thin `f64` product whose large operand is read across its contiguous axis, streamed in
//! address order.
//!
//! The shape: `C = A·B` (or `C += A·B`) with `C` `m × n`, `n` between 9 and 24 (two or three
//! 512-bit vectors of `f64`), rows of `B` and `C` contiguous, and `A` `m × k` with its columns
//! contiguous (unit row stride). A matrix chain does this over and over: the large input
//! matrix `ji` is contracted on its leading label against a thin intermediate `jx`.
//!
//! faer computes such a product by tiles of `C` held in registers over the whole of `k`. A tile
//! reads a narrow block of rows of `A` from every one of its `k` columns, so each step of `k`
//! lands on a new page and the next tile comes back to the same pages later; from memory this
//! ran at a third to a half of faer's in-cache rate. Here `k` is cut into chunks of [`KC`]
//! columns, which lie in one contiguous block of `A`. Within a chunk, groups of eight rows of
//! `C` (eight rows of `A`) run in order, each loading its rows of `C`, adding the chunk's
//! terms, and storing them back: `C` (at most 24 columns) stays in cache, and `A` is read in
//! one pass, a chunk at a time. While a group runs, it asks for the lines of `A` the group
//! [`AHEAD`] positions later will read (wrapping into the next chunk), so the reads are in
//! flight before they are needed.
//!
//! Every element of `C` gets the same terms as in one faer call, summed in `k` order within
//! each chunk and chunk by chunk. Rows past the last whole group (`m mod 8`) go to faer.
//!
//! # Unsafe
//!
//! The kernel reads and writes through raw pointers taken from faer views, with AVX-512
//! intrinsics, and only when the CPU reports AVX-512F at run time. Every address it forms is a
//! position inside one of the three views (masked loads and stores touch only the lanes inside
//! `C`'s and `B`'s `n` columns), except the prefetch hints, which never fault and read nothing.

use faer::{Accum, MatMut, MatRef};

/// Columns of `A` per chunk: a block of `32 · lda` elements, read in one pass while `C` stays
/// in cache.
const KC: usize = 32;

/// How many groups ahead a group asks for its lines of `A`.
const AHEAD: usize = 4;

/// Rows of `C` per group (one 512-bit vector of `f64` broadcasts, eight elements of `A`).
const GROUP: usize = 8;

/// Least `m · k` (elements of `A`) for which this path is taken: below it `A` is read from
/// cache, where faer's tiles run at full rate.
const MIN_A: usize = 1 << 15;

/// Runs `C = A·B` (or `C += A·B`) here and returns `true` when the product has this module's
/// shape (module docs) in either orientation and the CPU has AVX-512F; returns `false`, having
/// touched nothing, otherwise.
pub(super) fn try_run(
    c: MatMut<'_, f64>,
    accum: Accum,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
) -> bool {
    if !fits(c.as_ref(), a, b) {
        // `Cᵀ = Bᵀ·Aᵀ`: the same product seen from the other side.
        if !fits(c.as_ref().transpose(), b.transpose(), a.transpose()) {
            return false;
        }
        return run(c.transpose_mut(), accum, b.transpose(), a.transpose());
    }
    run(c, accum, a, b)
}

/// Whether `C = A·B` has this module's shape.
fn fits(c: MatRef<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> bool {
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    (9..=24).contains(&n)
        && m >= 2 * GROUP
        && k >= KC
        && m.saturating_mul(k) >= MIN_A
        && c.col_stride() == 1
        && b.col_stride() == 1
        && a.row_stride() == 1
        && c.row_stride() >= 0
        && b.row_stride() >= 0
        && a.col_stride() >= 0
}

#[cfg(target_arch = "x86_64")]
fn run(c: MatMut<'_, f64>, accum: Accum, a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> bool {
    if !std::arch::is_x86_feature_detected!("avx512f") {
        return false;
    }
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let whole = m / GROUP * GROUP;
    let (c_head, c_tail) = c.split_at_row_mut(whole);
    let (a_head, a_tail) = a.split_at_row(whole);
    let p = Strided {
        m: whole,
        n,
        k,
        a: a_head.as_ptr(),
        lda: a_head.col_stride().unsigned_abs(),
        b: b.as_ptr(),
        ldb: b.row_stride().unsigned_abs(),
        c: c_head.as_ptr_mut(),
        ldc: c_head.row_stride().unsigned_abs(),
        add: matches!(accum, Accum::Add),
    };
    // SAFETY: `fits` established the layout the kernel assumes: `C` and `B` have unit column
    // stride and `A` unit row stride, every other stride is non-negative, and `n ≤ 24`. `p`
    // describes the first `whole` rows of `C` and `A` (a multiple of `GROUP`) and all of `B`,
    // from views faer guarantees valid for every position inside their dimensions; `C` is an
    // exclusive borrow, so nothing else reads or writes it meanwhile. AVX-512F was detected
    // just above.
    unsafe { avx512::product(&p) };
    if c_tail.nrows() > 0 {
        faer::linalg::matmul::matmul(c_tail, accum, a_tail, b, 1.0, faer::Par::Seq);
    }
    true
}

#[cfg(not(target_arch = "x86_64"))]
fn run(_: MatMut<'_, f64>, _: Accum, _: MatRef<'_, f64>, _: MatRef<'_, f64>) -> bool {
    false
}

/// The product as the kernel sees it: `C[i, j]` at `c + i·ldc + j`, `A[i, l]` at `a + i + l·lda`,
/// `B[l, j]` at `b + l·ldb + j`, with `m` a multiple of [`GROUP`].
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Strided {
    m: usize,
    n: usize,
    k: usize,
    a: *const f64,
    lda: usize,
    b: *const f64,
    ldb: usize,
    c: *mut f64,
    ldc: usize,
    add: bool,
}

#[cfg(test)]
mod tests;

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m512d, __mmask8, _MM_HINT_T1, _mm_prefetch, _mm512_fmadd_pd, _mm512_mask_storeu_pd,
        _mm512_maskz_loadu_pd, _mm512_set1_pd, _mm512_setzero_pd,
    };

    use super::{AHEAD, GROUP, KC, Strided};

    /// Runs the whole product (module docs of `thin`).
    ///
    /// # Safety
    ///
    /// The CPU supports AVX-512F; `p` describes valid, non-overlapping `C`, `A` and `B` as its
    /// docs say, with `9 ≤ n ≤ 24`, `m` a multiple of [`GROUP`], and `C` not otherwise accessed
    /// during the call.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn product(p: &Strided) {
        if p.n > 16 {
            // SAFETY: forwarded from this function's contract; `n ≤ 24 = 3 · 8`.
            unsafe { chunks::<3>(p) }
        } else {
            // SAFETY: forwarded from this function's contract; `n ≤ 16 = 2 · 8`.
            unsafe { chunks::<2>(p) }
        }
    }

    /// The chunk loop, with `V` vectors per row of `C` (`8·(V−1) < n ≤ 8·V`).
    ///
    /// # Safety
    ///
    /// As for [`product`], and `n ≤ 8·V`.
    #[target_feature(enable = "avx512f")]
    unsafe fn chunks<const V: usize>(p: &Strided) {
        let mut masks: [__mmask8; V] = [0; V];
        for (v, mask) in masks.iter_mut().enumerate() {
            let lanes = p.n.saturating_sub(8 * v).min(8);
            *mask = u8::MAX >> (8 - lanes);
        }
        let groups = p.m / GROUP;
        let mut k0 = 0;
        while k0 < p.k {
            let width = KC.min(p.k - k0);
            let next = k0 + width;
            for g in 0..groups {
                // The lines the group `AHEAD` positions later reads: in this chunk, or the
                // first groups of the next one (none after the last chunk).
                let (ahead, lines) = if g + AHEAD < groups {
                    ((g + AHEAD) * GROUP + k0 * p.lda, width)
                } else if next < p.k {
                    ((g + AHEAD - groups) * GROUP + next * p.lda, KC.min(p.k - next))
                } else {
                    (0, 0)
                };
                // SAFETY: rows `g·8 .. g·8 + 8 ≤ m` and columns `k0 .. k0 + width ≤ k` are
                // inside the views; the prefetch offsets are hints only (never dereferenced).
                unsafe { group::<V>(p, &masks, g * GROUP, k0, width, ahead, lines) };
            }
            k0 = next;
        }
    }

    /// Adds the terms `k0 .. k0 + width` to rows `i0 .. i0 + 8` of `C`; the first chunk of a
    /// product that replaces `C` starts from zero instead of loading it.
    ///
    /// # Safety
    ///
    /// As for [`chunks`], with `i0 + 8 ≤ m` and `k0 + width ≤ k`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn group<const V: usize>(
        p: &Strided,
        masks: &[__mmask8; V],
        i0: usize,
        k0: usize,
        width: usize,
        ahead: usize,
        lines: usize,
    ) {
        let mut acc = [[_mm512_setzero_pd(); V]; GROUP];
        let load = p.add || k0 > 0;
        for (r, row) in acc.iter_mut().enumerate() {
            // SAFETY: row `i0 + r < m` of `C` starts at `c + (i0 + r)·ldc`; the masks keep
            // each load to its first `n` elements.
            let at = unsafe { p.c.add((i0 + r) * p.ldc) };
            for (v, lane) in row.iter_mut().enumerate() {
                if load {
                    // SAFETY: see above; lanes `8v ..` under the mask are inside row `i0 + r`.
                    *lane = unsafe { _mm512_maskz_loadu_pd(masks[v], at.add(8 * v)) };
                }
            }
        }
        for l in k0..k0 + width {
            // SAFETY: column `l < k` of `A`, rows `i0 .. i0 + 8`, and row `l` of `B`; the masks
            // keep the loads of `B` to its first `n` elements.
            unsafe {
                let col = p.a.add(i0 + l * p.lda);
                let brow = p.b.add(l * p.ldb);
                let mut bv = [_mm512_setzero_pd(); V];
                for (v, x) in bv.iter_mut().enumerate() {
                    *x = _mm512_maskz_loadu_pd(masks[v], brow.add(8 * v));
                }
                if l - k0 < lines {
                    // A hint: `wrapping_add` forms the address without a dereference.
                    let hint = p.a.wrapping_add(ahead + (l - k0) * p.lda);
                    _mm_prefetch::<_MM_HINT_T1>(hint.cast::<i8>());
                    _mm_prefetch::<_MM_HINT_T1>(hint.wrapping_add(GROUP - 1).cast::<i8>());
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let x: __m512d = _mm512_set1_pd(*col.add(r));
                    for (lane, y) in row.iter_mut().zip(bv) {
                        *lane = _mm512_fmadd_pd(x, y, *lane);
                    }
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            // SAFETY: as for the loads of `C` above; `C` is exclusively ours.
            unsafe {
                let at = p.c.add((i0 + r) * p.ldc);
                for (v, lane) in row.iter().enumerate() {
                    _mm512_mask_storeu_pd(at.add(8 * v), masks[v], *lane);
                }
            }
        }
    }
}
