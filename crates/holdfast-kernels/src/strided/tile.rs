//! The two-sided blocked copy: each tile's rows run along the destination's innermost axes and
//! its columns along the source's most contiguous axes, so that a tile reads and writes whole
//! cache lines on both sides.
//!
//! A tensor-network operand copy often has neither side's contiguous run in the other's innermost
//! axis: the destination's last legs sit at huge source strides, and the source's unit-stride
//! leg is somewhere in the middle of the destination's order. Copying destination runs alone
//! reads one element per source line and comes back for the line's neighbours much later; a
//! tile brings those neighbours in as columns while the line is in cache.

use holdfast_tensor::Element;
use smallvec::SmallVec;

use super::copy::{for_each_outer, innermost_block, offset_table};
use super::{Axes, Nest};

/// Most elements along a tile's rows (the destination's innermost block): twelve f64 cache
/// lines. A destination whose innermost axis alone is longer writes whole lines already and is
/// left to the panel transpose.
const ROWS: usize = 96;
/// Most elements along a tile's columns.
const COLS: usize = 512;
/// Most bytes a tile reads (and writes): the tile stays in a core's second-level cache.
const AREA_BYTES: usize = 128 * 1024;
/// A cache line: a source axis whose stride is shorter shares its lines between neighbours.
const LINE_BYTES: usize = 64;

/// The shape of the tiles for one nest (see [`Tile::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tile {
    /// The rows' axes are `split..`: the destination's innermost axes, a dense block.
    split: usize,
    /// The columns' axes, the source's smallest stride first.
    cols: SmallVec<[usize; 8]>,
    /// How much of the last column axis one tile takes: its whole length, or a block of it
    /// when it is longer than the tile has room for.
    block: usize,
}

impl Tile {
    /// The tiles for copying `nest` (destination-ordered, as [`super::copy_nest_of`] builds
    /// it) of elements of `T`, or `None` when a tile would not help: the destination's
    /// innermost axis alone is longer than [`ROWS`] (its runs are whole lines already), or no
    /// axis outside the destination's block is local in the source, that is, more contiguous
    /// there than the block's own axes, strided by less than a cache line, or strided by
    /// exactly the contiguous source run the tile's axes already form (the tile then reads a
    /// longer run).
    pub(crate) fn of<T>(nest: &Nest) -> Option<Tile> {
        let rank = nest.shape.len();
        let (split, rows) = innermost_block(&nest.shape, ROWS);
        if split == rank || split == 0 {
            return None;
        }
        let row_min = nest.sa[split..].iter().copied().min()?;
        let elem = std::mem::size_of::<T>().max(1);
        let room = (AREA_BYTES / elem / rows).min(COLS);
        let mut candidates: SmallVec<[usize; 8]> = (0..split).collect();
        candidates.sort_by_key(|&k| nest.sa[k]);
        let mut cols = SmallVec::new();
        let mut width = 1;
        let mut block = 1;
        // Columns taken because they are local, not because they extend the run.
        let mut local = 0;
        for k in candidates {
            // An axis whose stride is the length of the source run the tile already reads
            // contiguously extends that run, however long its stride.
            let span = contiguous_span(nest, split, &cols);
            let extends = span > 1 && nest.sa[k] == span;
            if !extends && nest.sa[k] >= row_min && nest.sa[k] * elem >= LINE_BYTES {
                break;
            }
            local += usize::from(!extends);
            let len = nest.shape[k];
            if width * len <= room {
                cols.push(k);
                width *= len;
                block = len;
                continue;
            }
            if room / width >= 2 {
                cols.push(k);
                block = room / width;
            }
            break;
        }
        // Nothing to gain over the panel transpose when the tile is one destination axis
        // against one whole unit-stride source axis (whatever axes extend it): the panels walk
        // the same elements without offset tables.
        let whole = cols.len() > 1 || cols.first().is_some_and(|&c| block == nest.shape[c]);
        let plain = split + 1 == rank && local == 1 && whole;
        if cols.is_empty() || (plain && nest.sa[cols[0]] == 1) {
            return None;
        }
        Some(Tile { split, cols, block })
    }
}

#[cfg(test)]
impl Tile {
    /// How many axes a tile's columns run over.
    pub(super) fn column_axes(&self) -> usize {
        self.cols.len()
    }
}

/// The length of the contiguous source run the tile's axes (rows `split..`, and `cols`) form
/// from its first element: their source strides, smallest first, each equal to the product of
/// the extents before it.
fn contiguous_span(nest: &Nest, split: usize, cols: &[usize]) -> usize {
    let mut axes: SmallVec<[usize; 16]> =
        (split..nest.shape.len()).chain(cols.iter().copied()).collect();
    axes.sort_by_key(|&k| nest.sa[k]);
    let mut span = 1;
    for k in axes {
        if nest.sa[k] != span {
            break;
        }
        span *= nest.shape[k];
    }
    span
}

/// Copies `nest` (source `src` from `so`, destination `dst` from `doff`) tile by tile.
pub(crate) fn tile_copy<T: Element>(
    nest: &Nest,
    tile: &Tile,
    src: &[T],
    so: usize,
    dst: &mut [T],
    doff: usize,
) {
    let rank = nest.shape.len();
    // Source offsets of the destination's innermost block, in destination (row-major) order.
    let mut rows = [0usize; ROWS];
    let nrows =
        offset_table((tile.split..rank).rev().map(|a| (nest.shape[a], nest.sa[a])), &mut rows);
    let rows = &rows[..nrows];
    // Source and destination offsets of the columns, the first column axis fastest, so that a
    // prefix of the table is a tile whose blocked axis is cut short.
    let last = tile.cols.len() - 1;
    let extent = |c: usize, axis: usize| if c == last { tile.block } else { nest.shape[axis] };
    let (mut cs, mut cd) = ([0usize; COLS], [0usize; COLS]);
    let columns = || tile.cols.iter().enumerate();
    let ncols = offset_table(columns().map(|(c, &a)| (extent(c, a), nest.sa[a])), &mut cs);
    offset_table(columns().map(|(c, &a)| (extent(c, a), nest.so[a])), &mut cd);
    let per_block = ncols / tile.block;
    // The outer axes, in destination order; the blocked column axis counts its blocks.
    let blocked = tile.cols[last];
    let whole = nest.shape[blocked];
    let (mut shape, mut sd, mut ss) = (Axes::new(), Axes::new(), Axes::new());
    let mut block_axis = None;
    for k in 0..tile.split {
        if k == blocked && tile.block < whole {
            block_axis = Some(shape.len());
            shape.push(whole.div_ceil(tile.block));
            sd.push(tile.block * nest.so[k]);
            ss.push(tile.block * nest.sa[k]);
        } else if !tile.cols.contains(&k) {
            shape.push(nest.shape[k]);
            sd.push(nest.so[k]);
            ss.push(nest.sa[k]);
        }
    }
    let short = (whole - (whole.div_ceil(tile.block) - 1) * tile.block) * per_block;
    for_each_outer(&shape, &sd, &ss, doff, so, |pd, ps, index| {
        let n = match block_axis {
            Some(b) if index[b] + 1 == shape[b] => short,
            _ => ncols,
        };
        for (&s, &d) in cs[..n].iter().zip(&cd[..n]) {
            let out = &mut dst[pd + d..pd + d + nrows];
            let base = ps + s;
            for (o, &t) in out.iter_mut().zip(rows) {
                *o = src[base + t];
            }
        }
    });
}
