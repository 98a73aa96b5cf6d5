//! Chains of elementwise products run as one pass ([`Core::Fused`](super::plan::Core)).
//!
//! A step with nothing to contract and nothing to sum, whose result feeds another such step, is
//! not run: its result stays *deferred*, the list of operands (leaves) whose product it stands
//! for ([`Core::Defer`](super::plan::Core)). The first step of the chain whose result feeds
//! anything else (a product with contracted labels, or the output) writes
//! `out = x0 · x1 · … · x(n-1)` once, each leaf read through its own strides over the output's
//! axes (0 where it lacks a label). Run pairwise, a chain of broadcast products over large
//! intermediates writes every intermediate and reads it back: memory traffic, which a second
//! core hardly speeds up. Fused, the chain does a few multiplications per output element on
//! leaves that are mostly small and in cache.
//!
//! The output is walked in blocks of its innermost axes, at most [`BLOCK_MAX`] elements, which
//! stay in L1 while every leaf is multiplied into them in turn. A leaf is read in a block either
//! by one stride (0 when it is constant over the block, 1 when it is a contiguous run) or, when
//! the block spans axes it steps through unevenly, by a table of offsets prepared with the plan.
//! Small leaves are first multiplied together into a few dense pre-products, which the pass reads
//! in place of them; so an element's factors are not multiplied in leaf order, and the result
//! may differ from the pairwise one in the last bits.
//!
//! # Invariant
//!
//! The planner builds a [`Fused`] from leaf layouts that fit the buffers the executor passes, as
//! for every loop nest (`strided`'s invariant); indexing is checked, so a broken invariant
//! panics rather than reading out of bounds.

#[cfg(test)]
mod tests;

use holdfast_tensor::Element;
use rayon::prelude::*;
use smallvec::SmallVec;

use super::layout::dense_len;
use super::planner::{Labels, Operand};
use super::step::SCATTERED_COPY_MIN;
use crate::strided::{Axes, Nest, copy_nest_of};

/// The most elements a block holds when it spans several axes (`f64`: 16 KiB, in L1 with room
/// for the leaves' lines).
const BLOCK_MAX: usize = 2048;

/// The most elements of a pre-product (`f64`: 8 MiB, in L3). A larger pre-product stands for
/// more leaves, each one gather fewer per output element, and gathers from L3 still cost less
/// than the ones they replace.
const GROUP_MAX: usize = 1 << 20;

/// Where the main pass reads one of its factors.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// A leaf of the step, by its position.
    Leaf(usize),
    /// A pre-product, by its position.
    Pre(usize),
}

/// A chain's product: small leaves first multiplied together into a few small dense tensors
/// (pre-products), then one pass over the output reading the large leaves and the
/// pre-products.
#[derive(Debug, Clone)]
pub(crate) struct Fused {
    /// Each pre-product: the leaves it multiplies (by position) and its kernel, which writes a
    /// dense buffer of `kernel.len()` elements.
    pub(crate) pre: Vec<(Vec<usize>, Kernel)>,
    /// A large leaf the main pass would read scattered, copied into the output first by the
    /// blocked strided copy (which keeps both sides' lines in cache); the main pass then
    /// multiplies the others in.
    pub(crate) copy: Option<(usize, Nest)>,
    /// The main pass's factors, in multiplication order.
    pub(crate) sources: Vec<Source>,
    pub(crate) main: Kernel,
}

impl Fused {
    /// The product of `leaves` into the dense `out`. Leaves are grouped while a group's labels
    /// span at most [`GROUP_MAX`] elements and a quarter of the output, the pair whose union is
    /// smallest first: each group of two or more becomes a pre-product, read once per output
    /// element in place of its members.
    pub(super) fn plan(out: &Operand, leaves: &[Operand], dims: &[usize]) -> Fused {
        let cap = GROUP_MAX.min(out.len() / 4);
        let labels_of = |members: &[usize]| -> Labels {
            let has = |l: u32| members.iter().any(|&m| leaves[m].pos(l).is_some());
            out.labels.iter().copied().filter(|&l| has(l)).collect()
        };
        let mut groups: Vec<Vec<usize>> = (0..leaves.len()).map(|k| vec![k]).collect();
        loop {
            let mut best: Option<(usize, usize, usize)> = None;
            for g in 0..groups.len() {
                for h in g + 1..groups.len() {
                    let members: Vec<usize> = groups[g].iter().chain(&groups[h]).copied().collect();
                    let size = dense_len(&labels_of(&members), dims);
                    if size <= cap && best.is_none_or(|(_, _, b)| size < b) {
                        best = Some((g, h, size));
                    }
                }
            }
            let Some((g, h, _)) = best else { break };
            let merged = groups.remove(h);
            groups[g].extend(merged);
        }
        let strides_over = |op: &Operand, labels: &[u32]| -> Axes {
            labels.iter().map(|&l| op.stride(l)).collect()
        };
        let mut pre = Vec::new();
        let mut sources = Vec::with_capacity(groups.len());
        let mut main_strides = Vec::with_capacity(groups.len());
        for members in groups {
            if let [k] = members[..] {
                sources.push(Source::Leaf(k));
                main_strides.push(strides_over(&leaves[k], &out.labels));
                continue;
            }
            let dense = Operand::dense(labels_of(&members), dims);
            let strides: Vec<Axes> =
                members.iter().map(|&m| strides_over(&leaves[m], &dense.labels)).collect();
            sources.push(Source::Pre(pre.len()));
            main_strides.push(strides_over(&dense, &out.labels));
            pre.push((members, Kernel::new(&dense.shape, &strides)));
        }
        let mut main = Kernel::new(&out.shape, &main_strides);
        let mut copy = None;
        let largest = (sources.iter().enumerate())
            .filter_map(|(q, s)| match *s {
                Source::Leaf(k) => Some((q, k, leaves[k].len())),
                Source::Pre(_) => None,
            })
            .max_by_key(|&(_, _, len)| len);
        if let Some((q, k, len)) = largest
            && len >= SCATTERED_COPY_MIN
            && main.scattered(q)
            && sources.len() > 1
        {
            copy = Some((k, copy_nest_of(&out.shape, &main_strides[q])));
            sources.remove(q);
            main_strides.remove(q);
            main = Kernel::new(&out.shape, &main_strides);
            main.overwrite = false;
        }
        Fused { pre, copy, sources, main }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        let pre: usize = self
            .pre
            .iter()
            .map(|(m, k)| m.len() * std::mem::size_of::<usize>() + k.heap_bytes())
            .sum();
        pre + self.main.heap_bytes() + self.sources.len() * std::mem::size_of::<Source>()
    }
}

/// How one block reads a leaf.
#[derive(Debug, Clone)]
enum Access {
    /// Element `e` of the block at `e · stride` from the block's base.
    Stride(usize),
    /// Element `e` of the block at `table[e]` from the block's base.
    Table(Box<[usize]>),
}

/// A prepared product of several operands over one dense, row-major output (see the module
/// docs).
#[derive(Debug, Clone)]
pub(crate) struct Kernel {
    /// The output's axes outside the block, outermost first (unit axes dropped, contiguous
    /// runs merged).
    outer: Axes,
    /// Per leaf, its strides along `outer`.
    outer_strides: Vec<Axes>,
    /// Elements per block: the product of the block's axes.
    block: usize,
    /// Per leaf, how a block reads it.
    access: Vec<Access>,
    /// Output elements.
    len: usize,
    /// The first leaf is written (else every leaf multiplies what `out` holds).
    overwrite: bool,
}

impl Kernel {
    /// The product over a dense row-major output of `shape` of leaves with `strides` (each one
    /// stride per output axis, 0 where the leaf lacks the axis). At least one leaf.
    pub(crate) fn new(shape: &[usize], strides: &[Axes]) -> Kernel {
        let len = shape.iter().product();
        // Axes (length, per-leaf strides), outermost first, without unit axes, each merged
        // into the one outside it when every leaf steps through both as through one.
        let mut axes: Vec<(usize, Axes)> = Vec::with_capacity(shape.len());
        for (k, &d) in shape.iter().enumerate() {
            if d == 1 {
                continue;
            }
            let s: Axes = strides.iter().map(|st| st[k]).collect();
            if let Some((pd, ps)) = axes.last_mut()
                && ps.iter().zip(&s).all(|(&p, &q)| p == q * d)
            {
                *pd *= d;
                ps.clone_from(&s);
                continue;
            }
            axes.push((d, s));
        }
        // The block: innermost axes while they fit, at least one.
        let mut cut = axes.len();
        let mut block = 1usize;
        while let Some(k) = cut.checked_sub(1) {
            let d = axes[k].0;
            if cut < axes.len() && block * d > BLOCK_MAX {
                break;
            }
            block *= d;
            cut = k;
        }
        let inner = &axes[cut..];
        let access = (0..strides.len()).map(|leaf| access_of(inner, leaf)).collect();
        let outer = axes[..cut].iter().map(|(d, _)| *d).collect();
        let outer_strides = (0..strides.len())
            .map(|leaf| axes[..cut].iter().map(|(_, s)| s[leaf]).collect())
            .collect();
        Kernel { outer, outer_strides, block, access, len, overwrite: true }
    }

    /// Output elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether a block reads leaf `k` other than as one contiguous run or one value.
    fn scattered(&self, k: usize) -> bool {
        !matches!(self.access.get(k), Some(Access::Stride(0 | 1)) | None)
    }

    /// Heap bytes held (offset tables and stride lists).
    pub(crate) fn heap_bytes(&self) -> usize {
        let tables: usize = self
            .access
            .iter()
            .map(|a| match a {
                Access::Stride(_) => 0,
                Access::Table(t) => t.len() * std::mem::size_of::<usize>(),
            })
            .sum();
        tables + self.access.len() * (std::mem::size_of::<Access>() + std::mem::size_of::<Axes>())
    }

    /// Writes the product of `leaves` (each its data and offset, in the order the plan was
    /// made for) into `out`, over up to `threads` rayon tasks, each a run of whole blocks.
    pub(crate) fn run<T: Element>(&self, out: &mut [T], leaves: &[(&[T], usize)], threads: usize) {
        if self.len == 0 {
            return;
        }
        let out = &mut out[..self.len];
        let blocks = self.len / self.block;
        if threads < 2 || blocks < 2 {
            self.run_blocks(out, 0, leaves);
            return;
        }
        let per = blocks.div_ceil((threads * 4).min(blocks));
        out.par_chunks_mut(per * self.block)
            .enumerate()
            .for_each(|(part, chunk)| self.run_blocks(chunk, part * per, leaves));
    }

    /// The blocks of `out` (whole blocks), the first being block number `first`.
    fn run_blocks<T: Element>(&self, out: &mut [T], first: usize, leaves: &[(&[T], usize)]) {
        let r = self.outer.len();
        let mut index: SmallVec<[usize; 16]> = SmallVec::from_elem(0, r);
        let mut rest = first;
        for axis in (0..r).rev() {
            index[axis] = rest % self.outer[axis];
            rest /= self.outer[axis];
        }
        let mut base: SmallVec<[usize; 16]> = leaves
            .iter()
            .zip(&self.outer_strides)
            .map(|(&(_, off), s)| off + index.iter().zip(s).map(|(i, s)| i * s).sum::<usize>())
            .collect();
        for chunk in out.chunks_mut(self.block) {
            self.run_block(chunk, leaves, &base);
            // Odometer step over the outer axes.
            let mut axis = r;
            while let Some(a) = axis.checked_sub(1) {
                axis = a;
                index[a] += 1;
                for (b, s) in base.iter_mut().zip(&self.outer_strides) {
                    *b += s[a];
                }
                if index[a] < self.outer[a] {
                    break;
                }
                for (b, s) in base.iter_mut().zip(&self.outer_strides) {
                    *b -= s[a] * self.outer[a];
                }
                index[a] = 0;
            }
        }
    }

    /// One block: the first leaf written, every other multiplied in, a slice of at most
    /// [`BLOCK_MAX`] elements at a time so that it stays in L1 over the leaves.
    fn run_block<T: Element>(&self, out: &mut [T], leaves: &[(&[T], usize)], base: &[usize]) {
        for (c, part) in out.chunks_mut(BLOCK_MAX).enumerate() {
            let c0 = c * BLOCK_MAX;
            let n = part.len();
            // Gathered leaves are multiplied in up to four at a time: one pass over the part
            // for all four instead of one each.
            let mut gathered: SmallVec<[Gathered<'_, T>; 4]> = SmallVec::new();
            for (k, ((data, _), access)) in leaves.iter().zip(&self.access).enumerate() {
                let b = base[k];
                let first = k == 0 && self.overwrite;
                match access {
                    Access::Table(t) if !first => {
                        gathered.push((data, b, &t[c0..c0 + n]));
                        if gathered.len() == 4 {
                            multiply_gathered(part, &gathered);
                            gathered.clear();
                        }
                    }
                    Access::Stride(0) => {
                        let x = data[b];
                        if first {
                            part.fill(x);
                        } else {
                            part.iter_mut().for_each(|o| *o *= x);
                        }
                    }
                    Access::Stride(1) => {
                        let src = &data[b + c0..b + c0 + n];
                        if first {
                            part.copy_from_slice(src);
                        } else {
                            part.iter_mut().zip(src).for_each(|(o, &x)| *o *= x);
                        }
                    }
                    &Access::Stride(s) => {
                        let at = b + c0 * s;
                        if first {
                            part.iter_mut().enumerate().for_each(|(e, o)| *o = data[at + e * s]);
                        } else {
                            part.iter_mut().enumerate().for_each(|(e, o)| *o *= data[at + e * s]);
                        }
                    }
                    Access::Table(t) => {
                        let t = &t[c0..c0 + n];
                        part.iter_mut().zip(t).for_each(|(o, &p)| *o = data[b + p]);
                    }
                }
            }
            multiply_gathered(part, &gathered);
        }
    }
}

/// A leaf read through a table: its data, the block's base and the part's offsets.
type Gathered<'a, T> = (&'a [T], usize, &'a [usize]);

/// Multiplies `part` by the gathered leaves `g`, element by element.
fn multiply_gathered<T: Element>(part: &mut [T], g: &[Gathered<'_, T>]) {
    let n = part.len();
    match *g {
        [(d0, b0, t0), (d1, b1, t1), (d2, b2, t2), (d3, b3, t3)] => {
            let (t0, t1, t2, t3) = (&t0[..n], &t1[..n], &t2[..n], &t3[..n]);
            for (e, o) in part.iter_mut().enumerate() {
                let x = d0[b0 + t0[e]] * d1[b1 + t1[e]];
                let y = d2[b2 + t2[e]] * d3[b3 + t3[e]];
                *o *= x * y;
            }
        }
        [(d0, b0, t0), (d1, b1, t1), ..] => {
            let (t0, t1) = (&t0[..n], &t1[..n]);
            for (e, o) in part.iter_mut().enumerate() {
                *o *= d0[b0 + t0[e]] * d1[b1 + t1[e]];
            }
            multiply_gathered(part, &g[2..]);
        }
        [(d0, b0, t0)] => {
            for (o, &p) in part.iter_mut().zip(&t0[..n]) {
                *o *= d0[b0 + p];
            }
        }
        [] => {}
    }
}

/// How a block over `inner` (lengths and per-leaf strides, outermost first) reads `leaf`: one
/// stride when its offsets are evenly spaced, else their table in row-major order.
fn access_of(inner: &[(usize, Axes)], leaf: usize) -> Access {
    if let [(_, s)] = inner {
        return Access::Stride(s[leaf]);
    }
    let mut table: Vec<usize> = vec![0];
    for (d, s) in inner {
        let s = s[leaf];
        let prev = std::mem::take(&mut table);
        table.reserve(prev.len() * d);
        for p in prev {
            table.extend((0..*d).map(|i| p + i * s));
        }
    }
    let step = table.get(1).copied().unwrap_or(0);
    if table.iter().enumerate().all(|(e, &p)| p == e * step) {
        Access::Stride(step)
    } else {
        Access::Table(table.into_boxed_slice())
    }
}
