//! A single-threaded product whose output rows are short and far apart, written past the cache.
//!
//! A contraction step that loops over positions often gives each position's product a `C` made
//! of short rows far apart in a large output: each position writes a band of columns, and the
//! next positions write the bands beside it. Written in place, every cache line of such a row
//! is first read from memory (a store to a line not in cache fetches it), and the lines a row
//! shares with the neighbouring band have left the cache by the time that band is written, so
//! they are fetched again. The output then costs more than twice its size in memory traffic,
//! and the prefetchers, which follow long runs, do not help with runs of a few lines.
//!
//! [`run`] computes such a product into a dense scratch that stays in the level-2 cache, then
//! copies it out row by row with non-temporal stores, which send whole lines to memory without
//! reading them first. It is taken ([`Stream::of`]) only when the output would leave the cache
//! anyway and the product replaces `C`:
//! - one of `C`'s strides is 1: its rows (or columns) are runs;
//! - the runs span at least [`MIN_SPAN_BYTES`], far more than a core's caches;
//! - the scratch, as large as the runs together, holds at most [`MAX_SCRATCH_BYTES`].
//!
//! The last two make the runs at most a 32nd of the span they lie in: short rows far apart,
//! never a dense block, which the cache and the prefetchers serve well.
//!
//! The scratch product is the same call on the same operands with a dense output, so each
//! element is computed from the same terms in the same order: no bit of the result changes
//! (`stream/tests.rs` checks it). The scratch belongs to the thread (one buffer per element
//! type, allocated on the thread's first such product and kept): a warm product allocates
//! nothing.
//!
//! The stores are [`crate::nontemporal`]'s; [`run`] ends with its fence.

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::thread::LocalKey;

use faer::{Accum, MatMut, MatRef};
use holdfast_tensor::{c32, c64};

use crate::nontemporal;

/// Least span of `C`'s rows, in bytes: an output this spread out leaves every cache of a core
/// before its neighbouring bands are written.
pub(super) const MIN_SPAN_BYTES: usize = nontemporal::MIN_BYTES;

/// Largest scratch, in bytes: half of a 1 MiB level-2 cache, so that the product's own blocks
/// stay there beside it.
pub(super) const MAX_SCRATCH_BYTES: usize = 512 * 1024;

/// An element type with its thread's scratch.
pub(super) trait Streamed: Copy + Default + 'static {
    /// This thread's scratch for products of this element type.
    fn scratch() -> &'static LocalKey<RefCell<Vec<Self>>>;
}

/// Implements [`Streamed`] for each element type, with its thread-local scratch.
macro_rules! streamed {
    ($($t:ty => $key:ident),* $(,)?) => {
        $(
            thread_local! {
                static $key: RefCell<Vec<$t>> = const { RefCell::new(Vec::new()) };
            }

            impl Streamed for $t {
                fn scratch() -> &'static LocalKey<RefCell<Vec<Self>>> {
                    &$key
                }
            }
        )*
    };
}

streamed!(f32 => SCRATCH_F32, f64 => SCRATCH_F64, c32 => SCRATCH_C32, c64 => SCRATCH_C64);

/// A product to stream: `C`'s rows (or, with `transposed`, its columns) are the short runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stream {
    /// Whether the runs are `C`'s columns: the product is then streamed as `Cᵀ = Bᵀ·Aᵀ`.
    pub(super) transposed: bool,
}

impl Stream {
    /// Whether a product with a `rows × cols` output at strides `rs`, `cs` (elements of `size`
    /// bytes) is streamed, and along which side; `None` keeps it in place.
    pub(super) fn of(
        rows: usize,
        cols: usize,
        rs: isize,
        cs: isize,
        size: usize,
        accum: Accum,
    ) -> Option<Stream> {
        if !matches!(accum, Accum::Replace) {
            return None;
        }
        let (runs, len, gap, transposed) = if cs == 1 {
            (rows, cols, rs, false)
        } else if rs == 1 {
            (cols, rows, cs, true)
        } else {
            return None;
        };
        let gap = usize::try_from(gap).ok()?;
        let span = runs.saturating_mul(gap).saturating_mul(size);
        let scratch = runs.saturating_mul(len).saturating_mul(size);
        (len > 0 && span >= MIN_SPAN_BYTES && scratch <= MAX_SCRATCH_BYTES)
            .then_some(Stream { transposed })
    }
}

/// `C = A·B` by `product` into this thread's scratch, then `C` from it by non-temporal stores,
/// along the side `how` names. When the scratch is in use (a product inside a product), or the
/// side `how` names does not have unit stride, the product runs in place instead.
pub(super) fn run<U: Streamed>(
    how: Stream,
    c: MatMut<'_, U>,
    a: MatRef<'_, U>,
    b: MatRef<'_, U>,
    product: impl FnOnce(MatMut<'_, U>, Accum, MatRef<'_, U>, MatRef<'_, U>),
) {
    let (mut c, a, b) =
        if how.transposed { (c.transpose_mut(), b.transpose(), a.transpose()) } else { (c, a, b) };
    let (rows, cols) = (c.nrows(), c.ncols());
    if c.col_stride() != 1 {
        return product(c, Accum::Replace, a, b);
    }
    U::scratch().with(|cell| {
        let Ok(mut scratch) = cell.try_borrow_mut() else {
            return product(c.as_mut(), Accum::Replace, a, b);
        };
        let len = rows * cols;
        if scratch.len() < len {
            scratch.resize(len, U::default());
        }
        let dense = MatMut::from_row_major_slice_mut(&mut scratch[..len], rows, cols);
        product(dense, Accum::Replace, a, b);
        for (i, src) in scratch[..len].chunks_exact(cols.max(1)).enumerate() {
            // Every row is contiguous: `C`'s column stride is 1.
            if let Some(row) = c.as_mut().row_mut(i).try_as_row_major_mut() {
                nontemporal::put_run(row.as_slice_mut(), src);
            }
        }
        nontemporal::fence();
    });
}
