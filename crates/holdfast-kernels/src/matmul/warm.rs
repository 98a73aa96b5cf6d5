//! Reading a left operand into cache, column by column, before faer multiplies it.
//!
//! faer reads a left operand with contiguous columns (unit row stride) in place, a few lines
//! from every column for each block of `C` it computes. When those columns lie a page or more
//! apart, consecutive reads land on different pages, a pattern the hardware prefetchers do not
//! follow, so a product whose `A` comes from memory waits on nearly every line and runs at
//! about half its rate with `A` in cache. A batched contraction step that walks a large operand
//! block by block does exactly this, once per block.
//!
//! [`warm`] first reads one element of every cache line of `A`, column by column: each column
//! is a sequential stream the prefetchers follow, and faer then finds `A` in cache. It is only
//! taken for operands that fit in cache beside the product's other blocks ([`MAX_BYTES`]).
//!
//! The pass is not free when `A` is in cache already (one load per line, where faer's own reads
//! would have hit), so a left operand at the same address, with the same shape, as the last
//! one this thread read ahead is taken to be in cache still and is not read again: the items of
//! a batch that share `A`, and the inner loop of a contraction step that reuses `A`, read it
//! once. When something else evicted it in between, faer reads it as it would have without
//! this module.
//!
//! Nothing is written and no element changes: the product faer computes afterwards is the same.

use std::cell::Cell;
use std::hint::black_box;

use faer::MatRef;

/// Bytes of a cache line.
const LINE: usize = 64;

/// Column strides of at least this many bytes put consecutive columns on different pages.
const PAGE: usize = 4096;

/// Largest operand read ahead: half of a 1 MiB level-2 cache, so that it stays there beside
/// the blocks of `B` and `C` faer works on.
pub(super) const MAX_BYTES: usize = 512 * 1024;

/// Shortest column worth streaming: eight lines. Shorter columns are read line by line either
/// way.
const MIN_COLUMN_BYTES: usize = 8 * LINE;

thread_local! {
    /// The last operand this thread read ahead: its address, rows, columns and column stride.
    static LAST: Cell<(usize, usize, usize, isize)> = const { Cell::new((0, 0, 0, 0)) };
}

/// Whether [`warm`] reads `a` ahead: unit row stride, columns at least [`MIN_COLUMN_BYTES`]
/// long and a page or more apart, at least two of them, and at most [`MAX_BYTES`] in all.
pub(super) fn worth<U>(a: MatRef<'_, U>) -> bool {
    let size = size_of::<U>();
    let (m, k) = (a.nrows(), a.ncols());
    a.row_stride() == 1
        && k >= 2
        && a.col_stride().unsigned_abs().saturating_mul(size) >= PAGE
        && m.saturating_mul(size) >= MIN_COLUMN_BYTES
        && m.saturating_mul(k).saturating_mul(size) <= MAX_BYTES
}

/// Reads one element of every cache line of `a`, column by column, when [`worth`] says so
/// and this thread did not just read it ahead; returns whether it did.
pub(super) fn warm<U: Copy>(a: MatRef<'_, U>) -> bool {
    if !worth(a) {
        return false;
    }
    let key = (a.as_ptr() as usize, a.nrows(), a.ncols(), a.col_stride());
    if LAST.replace(key) == key {
        return false;
    }
    let step = (LINE / size_of::<U>()).max(1);
    for j in 0..a.ncols() {
        if let Some(col) = a.col(j).try_as_col_major() {
            let col = col.as_slice();
            for &x in col.iter().step_by(step) {
                black_box(x);
            }
            // The last line, when the column starts part-way into its first one.
            if let Some(&x) = col.last() {
                black_box(x);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests;
