//! Strided-to-contiguous copy: the body of `permute` and of einsum's operand copies.
//!
//! The destination is dense row-major over `shape`. When both sides run contiguously along the
//! destination's innermost axis, the copy moves runs. Otherwise, when the destination's innermost
//! block is short and the source is contiguous along other axes, it copies two-sided tiles
//! ([`super::tile`]); when one long source axis is transposed against a long destination axis, it
//! walks 16×16 panels of those two axes so that both sides stay in cache; and what is left goes
//! through a gather table over the innermost axes.

use holdfast_tensor::Element;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::tile::{Tile, tile_copy};
use super::{Axes, Nest, Order};

/// Tile edge of the blocked transpose.
const TILE: usize = 16;
/// An innermost axis shorter than this is copied through a gather table over the innermost
/// axes instead (many short axes, as in tensor networks of dimension-2 legs).
const SHORT_INNER: usize = 32;
/// A contiguous innermost run at least this long is copied as a slice; shorter ones are gathered.
const MIN_RUN: usize = 8;
/// Size of the gather table (elements per outer iteration).
const GATHER_BLOCK: usize = 512;
/// A transposed panel of fewer elements than this is gathered through the table instead of
/// tiled: for a 4×4 panel (tensor-network legs of dimension 4) the tile loop's setup per panel
/// costs more than the table's indirection (the `copy_probe` measurement is in
/// `docs/perf/measurements.md`).
const MIN_PANEL: usize = 64;

/// Copies the `shape`/`strides`/`offset` view of `src` into `dst` (dense row-major, exactly
/// `shape`'s element count long), using up to `threads` rayon tasks.
pub(crate) fn copy_strided<T: Element>(
    src: &[T],
    offset: usize,
    shape: &[usize],
    strides: &[usize],
    dst: &mut [T],
    threads: usize,
) {
    copy_prepared(&copy_nest_of(shape, strides), src, offset, dst, threads);
}

/// The loop nest of [`copy_strided`] for the `shape`/`strides` view, built once for a copy
/// repeated at other offsets ([`copy_prepared`]): building it sorts and merges the axes, and a
/// view of more axes than [`Axes`] keeps inline allocates.
pub(crate) fn copy_nest_of(shape: &[usize], strides: &[usize]) -> Nest {
    let dst_strides = row_major(shape);
    let zeros: Axes = SmallVec::from_elem(0, shape.len());
    Nest::new(shape, &dst_strides, strides, &zeros, Order::Out)
}

/// [`copy_strided`] with its nest from [`copy_nest_of`].
pub(crate) fn copy_prepared<T: Element>(
    nest: &Nest,
    src: &[T],
    offset: usize,
    dst: &mut [T],
    threads: usize,
) {
    if nest.numel() == 0 {
        return;
    }
    let d0 = nest.shape.first().copied().unwrap_or(1);
    let so0 = nest.so.first().copied().unwrap_or(0);
    if threads < 2 || d0 < 2 || so0 == 0 {
        return copy_nest(nest, src, offset, dst, 0);
    }
    let parts = (threads * 4).min(d0);
    let rows = d0.div_ceil(parts);
    let sa0 = nest.sa[0];
    dst.par_chunks_mut(rows * so0).enumerate().for_each(|(ci, chunk)| {
        let r0 = ci * rows;
        if r0 < d0 {
            let mut sub = nest.clone();
            sub.shape[0] = rows.min(d0 - r0);
            copy_nest(&sub, src, offset + r0 * sa0, chunk, 0);
        }
    });
}

/// Row-major strides of `shape`.
pub(crate) fn row_major(shape: &[usize]) -> Axes {
    let mut strides: Axes = SmallVec::from_elem(0, shape.len());
    let mut acc = 1;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc *= d;
    }
    strides
}

fn copy_nest<T: Element>(nest: &Nest, src: &[T], so: usize, dst: &mut [T], doff: usize) {
    let Some(last) = nest.shape.len().checked_sub(1) else {
        dst[doff] = src[so];
        return;
    };
    if nest.sa[last] == 1 && nest.shape[last] >= MIN_RUN {
        // Source and destination both run contiguously along the innermost axis, in runs long
        // enough for a slice copy (shorter ones go through the gather table below).
        return copy_runs(nest, src, so, dst, doff);
    }
    if let Some(tile) = Tile::of::<T>(nest) {
        return tile_copy(nest, &tile, src, so, dst, doff);
    }
    // The source's unit-stride axis, when it is not already innermost.
    let unit = (0..last).rev().find(|&j| nest.sa[j] == 1 && nest.shape[j] >= 4);
    let tiled = nest.sa[last] != 1
        && nest.shape[last] >= 4
        && unit.is_some_and(|j| nest.shape[j] * nest.shape[last] >= MIN_PANEL);
    let Some(j) = unit.filter(|_| tiled) else {
        if nest.shape[last] < SHORT_INNER && last > 0 {
            return gather_copy(nest, src, so, dst, doff);
        }
        let dummy: [T; 1] = [T::ZERO];
        return nest.run(dst, doff, src, so, &dummy, 0, &|o: &mut T, x: T, _| *o = x);
    };
    // Loop over every axis but `j` and `last`, transposing a (shape[j] × shape[last]) panel each time.
    let mut outer_shape: Axes = Axes::new();
    let mut outer_sd: Axes = Axes::new();
    let mut outer_ss: Axes = Axes::new();
    for k in 0..last {
        if k != j {
            outer_shape.push(nest.shape[k]);
            outer_sd.push(nest.so[k]);
            outer_ss.push(nest.sa[k]);
        }
    }
    let (dj, n, sdj, ssn) = (nest.shape[j], nest.shape[last], nest.so[j], nest.sa[last]);
    for_each_outer(&outer_shape, &outer_sd, &outer_ss, doff, so, |pd, ps, _| {
        transpose_panel(dst, pd, sdj, src, ps, ssn, dj, n);
    });
}

/// Copies a nest whose innermost axis is contiguous on both sides: one slice copy per run
/// (short runs, such as tensor-network legs of a few dozen elements, included), with an odometer
/// over the outer axes.
fn copy_runs<T: Element>(nest: &Nest, src: &[T], so: usize, dst: &mut [T], doff: usize) {
    let Some((&n, outer)) = nest.shape.split_last() else {
        return;
    };
    for_each_outer(outer, &nest.so, &nest.sa, doff, so, |pd, ps, _| {
        dst[pd..pd + n].copy_from_slice(&src[ps..ps + n]);
    });
}

/// `dst[pd + a·sdj + i] = src[ps + a + i·ssn]` for `a < rows`, `i < cols`, in tiles.
#[allow(clippy::too_many_arguments, reason = "two strided panels")]
fn transpose_panel<T: Element>(
    dst: &mut [T],
    pd: usize,
    sdj: usize,
    src: &[T],
    ps: usize,
    ssn: usize,
    rows: usize,
    cols: usize,
) {
    for a0 in (0..rows).step_by(TILE) {
        let a1 = (a0 + TILE).min(rows);
        for i0 in (0..cols).step_by(TILE) {
            let i1 = (i0 + TILE).min(cols);
            for a in a0..a1 {
                let drow = &mut dst[pd + a * sdj + i0..pd + a * sdj + i1];
                let mut p = ps + a + i0 * ssn;
                for d in drow {
                    *d = src[p];
                    p += ssn;
                }
            }
        }
    }
}

/// Copies with a table of source offsets over the innermost axes (whose destination block is
/// contiguous), looping over the outer axes with an odometer.
fn gather_copy<T: Element>(nest: &Nest, src: &[T], so: usize, dst: &mut [T], doff: usize) {
    let r = nest.shape.len();
    let (split, block) = innermost_block(&nest.shape, GATHER_BLOCK);
    if split == r {
        // The innermost axis alone is too long for a table: plain loops.
        let dummy: [T; 1] = [T::ZERO];
        return nest.run(dst, doff, src, so, &dummy, 0, &|o: &mut T, x: T, _| *o = x);
    }
    // Source offsets of the block, on the stack (`block <= GATHER_BLOCK`): a warm operation
    // allocates nothing here.
    let mut offsets = [0usize; GATHER_BLOCK];
    // The last axis as the least significant digit: row-major (destination) order.
    let filled = offset_table((split..r).rev().map(|a| (nest.shape[a], nest.sa[a])), &mut offsets);
    let table = &offsets[..filled];
    let outer = &nest.shape[..split];
    for_each_outer(outer, &nest.so, &nest.sa, doff, so, |pd, ps, _| {
        let d = &mut dst[pd..pd + block];
        for (o, &t) in d.iter_mut().zip(table) {
            *o = src[ps + t];
        }
    });
}

/// The innermost axes of `shape` whose product stays within `limit`: the first of them (the
/// rank when even the last axis alone is longer) and their product.
#[inline]
pub(super) fn innermost_block(shape: &[usize], limit: usize) -> (usize, usize) {
    let mut split = shape.len();
    let mut product = 1;
    while split > 0 && product * shape[split - 1] <= limit {
        split -= 1;
        product *= shape[split];
    }
    (split, product)
}

/// Fills `table` with the offsets of every position of `axes` (each an extent and a stride), the
/// first axis as the least significant digit, and returns how many it wrote. `table` must be at
/// least as long as the product of the extents.
pub(super) fn offset_table(
    axes: impl Iterator<Item = (usize, usize)>,
    table: &mut [usize],
) -> usize {
    table[0] = 0;
    let mut filled = 1;
    for (extent, stride) in axes {
        let len = filled;
        for i in 1..extent {
            for k in 0..len {
                table[filled] = table[k] + i * stride;
                filled += 1;
            }
        }
    }
    filled
}

/// Calls `f(pd, ps, index)` with the destination and source offsets and the index of every
/// position of the `outer` axes (destination strides `sd`, source strides `ss`, both at least as
/// long as `outer`), starting from `pd`, `ps`, the last axis fastest.
///
/// Kept out of line: each caller's instance is then one small loop with the caller's closure
/// inlined into it. Inlined into `copy_nest`, whose branches all call it, the copies compiled
/// to slower code, and which way the compiler went changed with unrelated code in the crate.
#[inline(never)]
pub(super) fn for_each_outer(
    outer: &[usize],
    sd: &[usize],
    ss: &[usize],
    mut pd: usize,
    mut ps: usize,
    mut f: impl FnMut(usize, usize, &[usize]),
) {
    let mut index: SmallVec<[usize; 8]> = SmallVec::from_elem(0, outer.len());
    loop {
        f(pd, ps, &index);
        let mut axis = outer.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            pd += sd[axis];
            ps += ss[axis];
            if index[axis] < outer[axis] {
                break;
            }
            pd -= sd[axis] * outer[axis];
            ps -= ss[axis] * outer[axis];
            index[axis] = 0;
        }
    }
}
