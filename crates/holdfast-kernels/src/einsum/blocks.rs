//! [`Blocks`]: a step's large GEMM-layout copy made one block of batch items at a time, into one
//! reused buffer, each block multiplied as soon as it is copied.
//!
//! A step whose operand must be permuted into GEMM layout copies it whole before its product,
//! so for a moment the operand lives twice; when the operand is the largest tensor of the path,
//! that moment is the run's resident peak. The planner orders a copy with the step's loop labels
//! first (its batch labels, and labels looped over because an operand cannot be seen as one
//! matrix), so the items of the step that share the values of the copy's leading loop labels
//! read one contiguous block of it. The step then copies one block, runs those items' products on
//! it, and copies the next block into the same buffer: the same elements are copied, each item's
//! product is unchanged, and the extra memory is one block instead of the whole operand. A block
//! freshly written is also still in cache when the product reads it.
//!
//! A large source is not blocked over a label it holds closer together than a cache line
//! ([`BLOCK_STRIDE_MIN`]): each block would read one element of every line it touches, from
//! memory, where the whole copy reads those lines once.
//!
//! Given threads, a block whose products are too small to fan out on their own would leave all
//! but its copy on one thread. When every block writes a part of C no other block writes
//! (blocks over batch labels only), the blocks are dealt instead: each thread takes a run of
//! consecutive blocks, with a buffer of its own, and copies and multiplies them alone. The copy
//! and the products of each block are the same as on one thread.
//!
//! # Invariant
//!
//! A `Blocks` blocks one side, whose copy order starts with the loop labels its block nest runs
//! over. The inner nest and the prepared batch run over the step's other loop labels. Strides of
//! the blocked side are taken in the source over the block nest and in the block's dense copy
//! inside a block; every other stride, and the matrices, are the unblocked step's. With
//! contracted loop labels (accumulation) C starts zeroed and every product adds to it, as
//! unblocked.

#[cfg(test)]
mod tests;

use holdfast_tensor::{Element, record_copy};
use rayon::prelude::*;

use super::layout::dense_len;
use super::outer::each_product;
use super::plan::CopyOp;
use super::planner::Operand;
use crate::matmul::batch::PreparedGemm;
use crate::matmul::operand::{Accum, BatchSpec, MatMut, MatRef, MatSpec};
use crate::strided::{Axes, Nest, Order};
use crate::strided::{copy_nest_of, copy_prepared};
use crate::{Family, KernelAlloc, Par};

/// The least elements of a copy worth blocking: below it a whole copy is no memory concern.
/// (The crate's unit tests lower these sizes, so that every einsum they plan with small operands
/// takes the blocked path where it applies.)
pub(crate) const BLOCKED_COPY_MIN: usize = if cfg!(test) { 1 << 10 } else { 1 << 19 };

/// The most elements of one block, when the batch labels cut the copy that finely.
pub(crate) const BLOCK_TARGET: usize = if cfg!(test) { 1 << 8 } else { 1 << 17 };

/// The least source stride, in elements, of a label a copy of a source of at least
/// [`CLOSE_SOURCE_MIN`] elements is blocked over: one cache line of `f64`. Blocks over a label
/// the source holds closer together each read one element of every line they touch and leave
/// its neighbours to the next blocks; a block touches more lines than a core's caches hold, so
/// from a source that large each line is fetched from memory up to eight times, where the
/// whole copy, whose tiles take that label as a column, reads it once.
pub(crate) const BLOCK_STRIDE_MIN: usize = 8;

/// The fewest source elements for which [`BLOCK_STRIDE_MIN`] applies: 16 MiB of `f64`, eight
/// times a core's 2 MiB second-level cache. A smaller source stays in the last-level cache
/// between blocks, and blocking keeps the copy's memory small at little cost.
pub(crate) const CLOSE_SOURCE_MIN: usize = if cfg!(test) { 1 << 10 } else { 1 << 21 };

/// One side of a step, as [`Blocks::plan`] sees it: the operand before any copy, the operand
/// the product reads (its dense copy, or itself), and the copy's label order if it is copied.
pub(super) struct Side<'x> {
    pub(super) source: &'x Operand,
    pub(super) staged: &'x Operand,
    pub(super) copy: Option<&'x [u32]>,
}

/// The copy of one block: its length and its loop nest, prepared once (the nest of a view of
/// many axes would otherwise be built, and allocated, per block).
#[derive(Debug, Clone)]
struct BlockCopy {
    len: usize,
    nest: Nest,
}

impl BlockCopy {
    fn new(op: &CopyOp) -> BlockCopy {
        BlockCopy { len: op.len, nest: copy_nest_of(&op.shape, &op.strides) }
    }
}

/// A step's product run block by block (module docs).
#[derive(Debug, Clone)]
pub(crate) struct Blocks {
    /// Over the leading batch labels, one position per block: offsets in C, and in A and B
    /// (the source's offset of the block's copy on a blocked side, the staged operand's
    /// otherwise).
    blocks: Nest,
    /// Over the remaining batch labels but the innermost: offsets within a block.
    inner: Option<Nest>,
    /// The copy of one block of A (B), when that side is blocked.
    a: Option<BlockCopy>,
    b: Option<BlockCopy>,
    /// The product of the innermost batch label, prepared once.
    gemm: PreparedGemm,
    /// Every block's offsets `(C, A, B)` in increasing order of C, when each block writes a
    /// part of C no other block writes: the blocks may then run on different threads.
    disjoint: Option<Vec<(usize, usize, usize)>>,
}

impl Blocks {
    /// The blocked form of a step with loops `loops` (batch labels, and labels looped over
    /// because an operand cannot be seen as one matrix), result `c` and matrices `mats` (A, B,
    /// C) as the unblocked product sees them. The larger large copy is blocked, over the loop
    /// labels it starts with. `None` when no copy is large enough, none starts with a loop, or
    /// a source of at least [`CLOSE_SOURCE_MIN`] elements holds a block label's positions
    /// closer than [`BLOCK_STRIDE_MIN`].
    pub(super) fn plan(
        loops: &[u32],
        (a, b): (&Side<'_>, &Side<'_>),
        c: &Operand,
        mats: (MatSpec, MatSpec, MatSpec),
        dims: &[usize],
    ) -> Option<Blocks> {
        let size = |o: Option<&[u32]>| o.map_or(0, |o| dense_len(o, dims));
        let blocked_a = size(a.copy) >= size(b.copy);
        let (side, other) = if blocked_a { (a, b) } else { (b, a) };
        let order = side.copy.filter(|o| dense_len(o, dims) >= BLOCKED_COPY_MIN)?;
        let lead = order.iter().take_while(|l| loops.contains(l)).count();
        // The fewest leading labels to step over whose block fits the target; all of them when
        // not even one position does.
        let split =
            (1..=lead).find(|&p| dense_len(&order[p..], dims) <= BLOCK_TARGET).unwrap_or(lead);
        if split == 0 {
            return None;
        }
        let outer = &order[..split];
        let close = |l: &u32| dims[*l as usize] > 1 && side.source.stride(*l) < BLOCK_STRIDE_MIN;
        if side.source.len() >= CLOSE_SOURCE_MIN && outer.iter().any(close) {
            return None;
        }
        let rest: Vec<u32> = loops.iter().copied().filter(|l| !outer.contains(l)).collect();
        let block = Operand::dense(order[split..].into(), dims);
        let strides = |labels: &[u32], op: &Operand| -> Axes {
            labels.iter().map(|&l| op.stride(l)).collect()
        };
        let shape = |labels: &[u32]| -> Axes { labels.iter().map(|&l| dims[l as usize]).collect() };
        // (C, blocked side, other side) strides over `labels`, then as (C, A, B).
        let nest = |labels: &[u32], blocked: &Operand| {
            let (c, s, o) =
                (strides(labels, c), strides(labels, blocked), strides(labels, other.staged));
            let (sa, sb) = if blocked_a { (s, o) } else { (o, s) };
            Nest::new(&shape(labels), &c, &sa, &sb, Order::Out)
        };
        let blocks = nest(outer, side.source);
        let (inner, (n, sc, sa, sb)) = split_innermost(&nest(&rest, &block));
        let (am, bm, cm) = mats;
        let spec = BatchSpec { batch: n, a: am, b: bm, c: cm, sa, sb, sc };
        let copy = BlockCopy::new(&side.source.copy_to(&order[split..], dims));
        let (a, b) = if blocked_a { (Some(copy), None) } else { (None, Some(copy)) };
        let disjoint = disjoint_blocks(&blocks, inner.as_ref(), &spec);
        Some(Blocks { blocks, inner, a, b, gemm: PreparedGemm::new(&spec), disjoint })
    }

    /// Bytes this holds on the heap beyond its own size (the dealt blocks' offsets).
    pub(super) fn heap_bytes(&self) -> usize {
        self.disjoint.as_ref().map_or(0, |o| o.len() * size_of::<(usize, usize, usize)>())
    }

    /// True when A (`false`: B) is copied block by block, not before the product.
    pub(super) fn blocks_side(&self, a: bool) -> bool {
        if a { self.a.is_some() } else { self.b.is_some() }
    }

    /// Runs the product into `out` (added to it with [`Accum::Add`]): A and B are the staged
    /// operands (their storage and offset), not yet copied on the blocked side. The block's
    /// buffer comes from `alloc` and goes back to it.
    pub(super) fn run<T: Element, A: KernelAlloc + ?Sized>(
        &self,
        out: &mut [T],
        (ad, ao): (&[T], usize),
        (bd, bo): (&[T], usize),
        accum: Accum,
        alloc: &mut A,
        par: Par,
    ) {
        if let Some(offsets) = &self.disjoint
            && par.threads() > 1
            && par.for_size(Family::Gemm, self.gemm.flops()) == Par::Seq
        {
            return self.run_dealt(offsets, out, (ad, ao), (bd, bo), accum, alloc, par.threads());
        }
        let (mut a_buf, mut b_buf) = self.take_buffers(alloc);
        self.blocks.for_each_offset(|pc, pa, pb| {
            let a = fill(self.a.as_ref(), a_buf.as_mut(), (ad, ao + pa), par);
            let b = fill(self.b.as_ref(), b_buf.as_mut(), (bd, bo + pb), par);
            self.record_copies(1);
            self.products(out, pc, a, b, accum, par);
        });
        give_buffers((a_buf, b_buf), alloc);
    }

    /// The blocks dealt over `threads`: consecutive blocks (in `offsets`' order) to each, every
    /// block copied and multiplied on its thread alone into the part of `out` it owns.
    #[allow(clippy::too_many_arguments, reason = "the step's operands, plus the threads")]
    fn run_dealt<T: Element, A: KernelAlloc + ?Sized>(
        &self,
        offsets: &[(usize, usize, usize)],
        out: &mut [T],
        (ad, ao): (&[T], usize),
        (bd, bo): (&[T], usize),
        accum: Accum,
        alloc: &mut A,
        threads: usize,
    ) {
        // Block `i` owns `out` from its first position to the next block's (the last, to the
        // end): it writes only there (`disjoint_blocks`).
        let Some(&(first, _, _)) = offsets.first() else { return };
        let mut rest = &mut out[first..];
        let mut parts: Vec<(&mut [T], usize, usize)> = Vec::with_capacity(offsets.len());
        for (i, &(pc, pa, pb)) in offsets.iter().enumerate() {
            let len = offsets.get(i + 1).map_or(rest.len(), |next| next.0 - pc);
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            parts.push((part, pa, pb));
        }
        let per = parts.len().div_ceil(threads);
        let mut bufs: Vec<Buffers<T>> =
            (0..parts.len().div_ceil(per)).map(|_| self.take_buffers(alloc)).collect();
        parts.par_chunks_mut(per).zip(bufs.par_iter_mut()).for_each(|(group, (a_buf, b_buf))| {
            for (part, pa, pb) in group.iter_mut() {
                let a = fill(self.a.as_ref(), a_buf.as_mut(), (ad, ao + *pa), Par::Seq);
                let b = fill(self.b.as_ref(), b_buf.as_mut(), (bd, bo + *pb), Par::Seq);
                self.products(part, 0, a, b, accum, Par::Seq);
            }
        });
        // Counted on the calling thread, as one thread would have.
        self.record_copies(offsets.len());
        for buffers in bufs {
            give_buffers(buffers, alloc);
        }
    }

    /// A buffer of one block for each blocked side.
    fn take_buffers<T: Element, A: KernelAlloc + ?Sized>(&self, alloc: &mut A) -> Buffers<T> {
        let take =
            |alloc: &mut A, copy: &Option<BlockCopy>| copy.as_ref().map(|s| alloc.take(s.len));
        (take(alloc, &self.a), take(alloc, &self.b))
    }

    /// The products of one block, its C at `pc` in `out`.
    fn products<T: Element>(
        &self,
        out: &mut [T],
        pc: usize,
        a: MatRef<'_, T>,
        b: MatRef<'_, T>,
        accum: Accum,
        par: Par,
    ) {
        match &self.inner {
            None => self.gemm.run(MatMut::new(out, pc), a, b, accum, par),
            Some(nest) => each_product(&self.gemm, nest, out, pc, (a, b), accum, par),
        }
    }

    /// Records the copies of `blocks` blocks.
    fn record_copies(&self, blocks: usize) {
        for op in [&self.a, &self.b].into_iter().flatten() {
            for _ in 0..blocks {
                record_copy(op.len);
            }
        }
    }
}

/// Every block's offsets `(C, A, B)` in increasing order of C, when each block writes only
/// below the next one's first position in C (so no two write the same element); `None`
/// otherwise, or with fewer than two blocks. A block writes its products' C, at most `reach`
/// positions from its own first one.
fn disjoint_blocks(
    blocks: &Nest,
    inner: Option<&Nest>,
    spec: &BatchSpec,
) -> Option<Vec<(usize, usize, usize)>> {
    if spec.batch == 0 || spec.c.extent() == 0 {
        return None;
    }
    let span = |n: &Nest| -> usize {
        n.shape.iter().zip(&n.so).map(|(&d, &s)| d.saturating_sub(1) * s).sum()
    };
    let reach = inner.map_or(0, span) + (spec.batch - 1) * spec.sc + spec.c.extent();
    let mut offsets = Vec::new();
    blocks.for_each_offset(|pc, pa, pb| offsets.push((pc, pa, pb)));
    offsets.sort_unstable_by_key(|o| o.0);
    let apart = offsets.windows(2).all(|w| w[1].0 - w[0].0 >= reach);
    (offsets.len() >= 2 && apart).then_some(offsets)
}

/// One block's buffers, for A and for B, on the sides that are blocked.
type Buffers<T> = (Option<Vec<T>>, Option<Vec<T>>);

fn give_buffers<T: Element, A: KernelAlloc + ?Sized>((a, b): Buffers<T>, alloc: &mut A) {
    for buf in [a, b].into_iter().flatten() {
        alloc.give(buf);
    }
}

/// The innermost axis of `nest` as a GEMM batch `(count, sc, sa, sb)`, and the rest as loops.
pub(super) fn split_innermost(nest: &Nest) -> (Option<Nest>, (usize, usize, usize, usize)) {
    match nest.shape.len() {
        0 => (None, (1, 0, 0, 0)),
        r => {
            let inner = (nest.shape[r - 1], nest.so[r - 1], nest.sa[r - 1], nest.sb[r - 1]);
            let outer = (r > 1).then(|| Nest {
                shape: nest.shape[..r - 1].into(),
                so: nest.so[..r - 1].into(),
                sa: nest.sa[..r - 1].into(),
                sb: nest.sb[..r - 1].into(),
            });
            (outer, inner)
        }
    }
}

/// One side of a block: copied from `(data, from)` into `buf` when the side is blocked, else
/// the staged operand at `(data, from)`.
fn fill<'a, T: Element>(
    copy: Option<&BlockCopy>,
    buf: Option<&'a mut Vec<T>>,
    (data, from): (&'a [T], usize),
    par: Par,
) -> MatRef<'a, T> {
    match (copy, buf) {
        (Some(op), Some(buf)) => {
            let threads = par.for_size(Family::Permute, op.len as u64).threads();
            copy_prepared(&op.nest, data, from, buf, threads);
            let done: &'a Vec<T> = buf;
            MatRef::new(done.as_slice(), 0)
        }
        _ => MatRef::new(data, from),
    }
}
