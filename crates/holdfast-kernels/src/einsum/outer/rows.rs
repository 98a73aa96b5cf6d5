//! A product step's loop cut into blocks of C's rows over the threads.
//!
//! When the loop's outermost positions do not write apart in C, or its products are large
//! enough to fan out one by one (a join per product), the step may still cut along the rows of
//! its products' C (as the product runs). It does when C's rows hold everything below them, and
//! everything above them writes apart:
//! - *below*: the columns of a row, the batch, and every loop label whose C stride is under the
//!   row stride reach less than one row stride;
//! - *above*: every other loop label, taken outermost first, has a stride greater than the reach
//!   of all below it.
//!
//! C is then a sequence of disjoint blocks, one per position of the labels above and per part of
//! the rows, each holding whole rows. A block's products are the step's products restricted to
//! its rows (the left operand's rows as run), each element of C computed by the same kernel from
//! the same `k` terms in the same order: the result has the loop's bits, and adding into C keeps
//! its meaning. The blocks go to rayon as one list and meet once, at the end.
//!
//! Every part of the rows reads the whole right operand of its position. Rows are cut only as
//! far as an even share of blocks per thread needs (`threads / gcd(positions, threads)` parts),
//! and only where that reading is no extra cost: when the products would otherwise run one after
//! another, or when they would fan out by rows themselves (no fewer rows than columns). A batch
//! above the rows is left to the batch driver: cut apart, items that share an operand would
//! each read it again.

#[cfg(test)]
mod tests;

use holdfast_tensor::Element;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::each_product;
use crate::einsum::plan::GemmCore;
use crate::matmul::batch::PreparedGemm;
use crate::matmul::operand::{Accum, MatRef};
use crate::strided::{Axes, Nest};
use crate::{Family, Par};

/// How a loop is cut: the positions of `above` (outermost first, apart in C) times `parts`
/// blocks of rows, each block running the product on its rows at every position of `below`.
#[derive(Debug, Clone)]
pub(super) struct RowDeal {
    /// Sizes and strides in C, A and B of the labels above the rows, outermost first.
    pub(super) above: Nest,
    /// The labels each block loops over: those above the rows that are not dealt (when blocks
    /// hold whole rows), outermost first, then those below the rows in the loop's order.
    pub(super) below: Nest,
    /// Parts the rows are cut into, at most the rows.
    pub(super) parts: usize,
    /// Rows per part (the last may have fewer).
    pub(super) per: usize,
    /// The farthest element of C a block writes, from the start of its last row.
    reach: usize,
}

/// A loop label while the cut is planned: size, and strides in C, A and B.
type Label = (usize, usize, usize, usize);

fn nest_of(labels: impl IntoIterator<Item = Label>) -> Nest {
    let mut nest = Nest { shape: Axes::new(), so: Axes::new(), sa: Axes::new(), sb: Axes::new() };
    for (size, c, a, b) in labels {
        nest.shape.push(size);
        nest.so.push(c);
        nest.sa.push(a);
        nest.sb.push(b);
    }
    nest
}

const fn gcd(mut x: usize, mut y: usize) -> usize {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// How `g`'s loop `nest` is cut by rows over `par`'s threads, or `None` when it is not: one
/// thread, too little work to fan out, a product that adds into C, or a C whose rows do not hold
/// what lies below them or whose labels above do not write apart.
pub(super) fn row_deal(g: &GemmCore, nest: &Nest, par: Par) -> Option<RowDeal> {
    let total = g.gemm.flops().saturating_mul(nest.numel() as u64);
    let threads = par.for_size(Family::Gemm, total).threads();
    if threads < 2 || g.accumulate || nest.numel() == 0 {
        return None;
    }
    let r = g.gemm.row_axes();
    if r.rows == 0 || r.batch == 0 {
        return None;
    }
    let labels = (0..nest.shape.len()).map(|i| (nest.shape[i], nest.so[i], nest.sa[i], nest.sb[i]));
    let (mut above, below): (SmallVec<[Label; 8]>, SmallVec<[Label; 8]>) =
        labels.filter(|&(size, ..)| size > 1).partition(|&(_, c, ..)| c >= r.c_rs);
    // A batch above the rows reaches past the row stride: no cut (module docs).
    let mut reach = r.row_reach
        + (r.batch - 1) * r.sc
        + below.iter().map(|&(size, c, ..)| (size - 1) * c).sum::<usize>();
    if reach >= r.c_rs && r.rows > 1 {
        return None;
    }
    above.sort_by_key(|&(_, c, ..)| std::cmp::Reverse(c));
    let mut whole = (r.rows - 1) * r.c_rs + reach;
    for &(size, c, ..) in above.iter().rev() {
        if whole >= c {
            return None;
        }
        whole += (size - 1) * c;
    }
    let positions: usize = above.iter().map(|&(size, ..)| size).product();
    let alone = par.for_size(Family::Gemm, g.gemm.flops()) == Par::Seq;
    let parts = if super::shares_evenly(positions, threads) {
        1
    } else if alone || r.rows >= r.cols {
        (threads / gcd(positions, threads)).min(r.rows)
    } else {
        return None;
    };
    let per = r.rows.div_ceil(parts);
    let parts = r.rows.div_ceil(per);
    if positions * parts < threads {
        return None;
    }
    // Blocks of whole rows hold every label above the outermost ones that give enough blocks:
    // those run inside the blocks, outermost first, before the labels below the rows.
    let want = threads * super::RUNS_PER_THREAD;
    let mut dealt = 0;
    let mut blocks = 1;
    while dealt < above.len() && (parts > 1 || blocks < want) {
        blocks *= above[dealt].0;
        dealt += 1;
    }
    let inside = &above[dealt..];
    reach += inside.iter().map(|&(size, c, ..)| (size - 1) * c).sum::<usize>();
    Some(RowDeal {
        above: nest_of(above[..dealt].iter().copied()),
        below: nest_of(inside.iter().chain(&below).copied()),
        parts,
        per,
        reach,
    })
}

/// One block: its part of C, the offsets of A and B at its first product, and its rows.
type Block<'c, T> = (&'c mut [T], usize, usize, usize);

/// `g`'s product at every position of its loop into `out`, cut as `deal` says.
///
/// # Panics
///
/// When `out` ends before the loop's last write, or the operands before their last read (a
/// broken plan invariant: the plan sized every buffer for its step).
pub(super) fn run_rows<T: Element>(
    g: &GemmCore,
    deal: &RowDeal,
    out: &mut [T],
    (a, b): (MatRef<'_, T>, MatRef<'_, T>),
    accum: Accum,
) {
    let r = g.gemm.row_axes();
    let full = g.gemm.rows_part(deal.per, r.batch);
    let last_rows = r.rows - deal.per * (deal.parts - 1);
    let last = g.gemm.rows_part(last_rows, r.batch);
    // What one block of `rows` rows writes: its rows, then what lies below the last one.
    let span = |rows: usize| (rows - 1) * r.c_rs + deal.reach + 1;
    // Blocks in the order of C (the labels above go outermost first and write apart).
    let mut blocks: Vec<Block<'_, T>> = Vec::with_capacity(deal.above.numel() * deal.parts);
    let mut rest = out;
    let mut taken = 0;
    deal.above.for_each_offset(|pc, pa, pb| {
        for part in 0..deal.parts {
            let (first, rows) =
                (part * deal.per, if part + 1 == deal.parts { last_rows } else { deal.per });
            let start = pc + first * r.c_rs;
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - taken);
            let (block, tail) = tail.split_at_mut(span(rows));
            (rest, taken) = (tail, start + span(rows));
            blocks.push((block, pa + first * r.a_row, pb + first * r.b_row, rows));
        }
    });
    blocks.into_par_iter().for_each(|(block, pa, pb, rows)| {
        let gemm: &PreparedGemm = if rows == deal.per { &full } else { &last };
        each_product(gemm, &deal.below, block, 0, (a.shifted(pa), b.shifted(pb)), accum, Par::Seq);
    });
}
