//! The batch driver: [`PreparedGemm`], a batch of products decided once (orientation, kernel,
//! faer views, nano-gemm plans) and run many times, and the plain loop for tiny batched items.
//!
//! Every product of the crate goes through it: a matrix product's plan holds one, an einsum
//! plan holds one per contraction step, and the planless entry points prepare one per call.

use holdfast_tensor::Element;
use rayon::prelude::*;

use super::bridge::{FaerViews, NanoPlans};
use super::operand::{Accum, BatchSpec, MatMut, MatRef, MatSpec};
use crate::{Family, Par};

/// Largest `m·n·k` of a batched item computed by the plain loop instead of faer or nano-gemm
/// (their per-call cost dominates below it when it is paid once per item).
pub(crate) const SMALL_GEMM_MAX_MACS: usize = 8;

/// How each item of a prepared batch is computed.
#[allow(
    clippy::large_enum_variant,
    reason = "the prepared plans are read in place on every product; a box would add a dependent load"
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kernel {
    /// An empty output: nothing to do.
    Nothing,
    /// Nothing to contract (`k == 0`): C is zero (or, adding, unchanged).
    Zero,
    /// The plain loop (tiny items of a batch).
    Loop,
    /// faer on strided views, through nano-gemm's prepared plans when the product is small.
    Faer { views: FaerViews, nano: Option<NanoPlans> },
}

/// A batch of GEMMs prepared once: what to run is decided when it is made, only the operands'
/// positions change between runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PreparedGemm {
    /// The spec as run (transposed when that gives C a unit column stride).
    spec: BatchSpec,
    /// Operands swapped: the product is computed as `Cᵀ = Bᵀ·Aᵀ`.
    swapped: bool,
    kernel: Kernel,
    flops: u64,
}

impl PreparedGemm {
    /// Prepares `spec`.
    ///
    /// # Panics
    ///
    /// When the dimensions of `spec` disagree (a broken caller invariant: plans validate shapes
    /// first).
    pub(crate) fn new(spec: &BatchSpec) -> Self {
        let (spec, swapped) = Self::orient(spec);
        Self::oriented(spec, swapped)
    }

    /// Prepares `spec`, already in the orientation it runs in.
    fn oriented(spec: BatchSpec, swapped: bool) -> Self {
        let kernel = match Self::kernel_of(&spec) {
            Kernel::Faer { views, .. } => Kernel::Faer { views, nano: views.nano_plans() },
            other => other,
        };
        PreparedGemm { spec, swapped, kernel, flops: 2 * spec.macs() }
    }

    /// `spec` in the orientation it runs in, and whether that is transposed. C with a unit
    /// column stride is preferred: the loop kernel and faer both like row-contiguous output.
    fn orient(spec: &BatchSpec) -> (BatchSpec, bool) {
        let swapped = spec.c.cs != 1 && spec.c.rs == 1 && spec.c.rows > 1;
        (if swapped { spec.transposed() } else { *spec }, swapped)
    }

    /// The kernel of an oriented `spec`, without nano-gemm's plans (`nano: None`).
    fn kernel_of(spec: &BatchSpec) -> Kernel {
        let (m, n, k) = (spec.a.rows, spec.b.cols, spec.a.cols);
        if spec.batch == 0 || m == 0 || n == 0 {
            Kernel::Nothing
        } else if k == 0 {
            Kernel::Zero
        } else if spec.batch > 1 && m * n * k <= SMALL_GEMM_MAX_MACS {
            Kernel::Loop
        } else {
            Kernel::Faer { views: FaerViews::new(spec.a, spec.b, spec.c), nano: None }
        }
    }

    /// Elements nano-gemm moves through its scratch blocks per item, on every run, of the
    /// batch [`new`](Self::new) prepares from `spec` (found without preparing it): nonzero
    /// only for items small enough for nano-gemm whose left operand and output nano-gemm
    /// cannot read in place in either orientation (the planner's cost of such a layout).
    pub(crate) fn nano_scratch_of(spec: &BatchSpec) -> usize {
        match Self::kernel_of(&Self::orient(spec).0) {
            Kernel::Faer { views, .. } => views.nano_scratch(),
            _ => 0,
        }
    }

    /// Floating-point operations of one run.
    pub(crate) fn flops(&self) -> u64 {
        self.flops
    }

    /// One past the farthest element of C a call writes, from its C position (0 when it
    /// writes nothing): the last row and column of the last item.
    pub(crate) fn c_span(&self) -> usize {
        let s = &self.spec;
        if s.batch == 0 || s.c.rows == 0 || s.c.cols == 0 {
            return 0;
        }
        1 + (s.c.rows - 1) * s.c.rs + (s.c.cols - 1) * s.c.cs + (s.batch - 1) * s.sc
    }

    /// The rows of C as the batch runs, for cutting it into blocks of rows
    /// (`einsum::outer`'s row deal).
    pub(crate) fn row_axes(&self) -> RowAxes {
        let s = &self.spec;
        let (a_row, b_row) = if self.swapped { (0, s.a.rs) } else { (s.a.rs, 0) };
        RowAxes {
            rows: s.c.rows,
            cols: s.c.cols,
            c_rs: s.c.rs,
            a_row,
            b_row,
            row_reach: s.c.cols.saturating_sub(1) * s.c.cs,
            batch: s.batch,
            sc: s.sc,
        }
    }

    /// The same product on the first `rows` rows of C as run (and of the left operand as
    /// run), over `batch` items: a block of rows of this batch, run with operands shifted by
    /// [`row_axes`](Self::row_axes)'s strides.
    ///
    /// # Panics
    ///
    /// When `rows` exceeds the batch's rows or `batch` its items (a broken caller invariant).
    pub(crate) fn rows_part(&self, rows: usize, batch: usize) -> PreparedGemm {
        assert!(rows <= self.spec.c.rows && batch <= self.spec.batch, "a part of the batch");
        let mut spec = self.spec;
        (spec.a.rows, spec.c.rows, spec.batch) = (rows, rows, batch);
        Self::oriented(spec, self.swapped)
    }

    /// Runs the batch: `c`, `a`, `b` are item 0's operands. Always inlined: a single small
    /// product runs through its prepared nano-gemm plan from here, in the caller's frame.
    ///
    /// # Panics
    ///
    /// When an addressed position lies outside its slice (a broken caller invariant, never bad
    /// user input: the public kernels validate shapes first).
    #[inline(always)]
    pub(crate) fn run<T: Element>(
        &self,
        mut c: MatMut<'_, T>,
        a: MatRef<'_, T>,
        b: MatRef<'_, T>,
        accum: Accum,
        par: Par,
    ) {
        let (a, b) = if self.swapped { (b, a) } else { (a, b) };
        if self.spec.batch == 1
            && let Kernel::Faer { views, nano: Some(nano) } = &self.kernel
            && views.run_nano(c.shifted(0), a, b, nano, accum)
        {
            return;
        }
        self.run_items(c, a, b, accum, par);
    }

    /// Every item of the batch, fanned out over rayon when the batch is large and its items
    /// write disjoint blocks of C.
    fn run_items<T: Element>(
        &self,
        mut c: MatMut<'_, T>,
        a: MatRef<'_, T>,
        b: MatRef<'_, T>,
        accum: Accum,
        par: Par,
    ) {
        let spec = &self.spec;
        let par = par.for_size(Family::Gemm, self.flops);
        let item = |mut c: MatMut<'_, T>, i: usize, par: Par| {
            let (a, b) = (a.shifted(i * spec.sa), b.shifted(i * spec.sb));
            match &self.kernel {
                Kernel::Nothing => {}
                Kernel::Zero => {
                    if accum == Accum::Replace {
                        fill_zero(&mut c, spec.c);
                    }
                }
                Kernel::Loop => loop_gemm(c, spec.c, a, spec.a, b, spec.b, accum),
                Kernel::Faer { views, nano } => views.run(c, a, b, nano.as_ref(), accum, par),
            }
        };
        // Items `0..count` of `region` (item `i` at `i * sc`), one rayon task per group of `per`
        // items, each item at `item_par`. Only for items that write disjoint blocks of C.
        let groups = |region: &mut [T], count: usize, per: usize, item_par: Par| {
            region.par_chunks_mut(per * spec.sc).enumerate().for_each(|(g, chunk)| {
                let first = g * per;
                for i in first..(first + per).min(count) {
                    item(MatMut::new(chunk, (i - first) * spec.sc), i, item_par);
                }
            });
        };
        let threads = par.threads();
        let disjoint = spec.sc >= spec.c.extent() && spec.sc > 0;
        let uneven = threads > 1 && spec.batch > threads && !spec.batch.is_multiple_of(threads);
        let item_par = if uneven && disjoint {
            par.for_size(Family::Gemm, self.flops / spec.batch as u64)
        } else {
            Par::Seq
        };
        if item_par != Par::Seq {
            // Items large enough to fan out on their own, which do not divide evenly over the
            // threads: as many whole items per thread as divide evenly, then each left-over
            // item cut into blocks over all of them (`split`). Grouped by whole items, 3 items
            // over 2 threads would take 2 items' time.
            let even = spec.batch - spec.batch % threads;
            let region = &mut c.data[c.at..];
            let (head, tail) = region.split_at_mut((even * spec.sc).min(region.len()));
            groups(head, even, even / threads, Par::Seq);
            for i in even..spec.batch {
                item(MatMut::new(tail, (i - even) * spec.sc), i, item_par);
            }
            return;
        }
        if threads > 1 && spec.batch >= 2 && disjoint {
            // Items write disjoint blocks of C: one rayon task per group of items.
            let per = spec.batch.div_ceil(threads * 2).max(1);
            let per_item_par = if spec.batch >= threads { Par::Seq } else { par };
            groups(&mut c.data[c.at..], spec.batch, per, per_item_par);
        } else {
            for i in 0..spec.batch {
                item(c.shifted(i * spec.sc), i, par);
            }
        }
    }
}

/// The rows of a prepared batch's C as it runs ([`PreparedGemm::row_axes`]); the row shifts of
/// A and B are in the caller's orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowAxes {
    /// Rows and columns of C as run, and the rows' stride in C.
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) c_rs: usize,
    /// How far A and B move for one row of C.
    pub(crate) a_row: usize,
    pub(crate) b_row: usize,
    /// The farthest element of C one row writes, from its first.
    pub(crate) row_reach: usize,
    /// Items of the batch, and their stride in C.
    pub(crate) batch: usize,
    pub(crate) sc: usize,
}

/// Runs the batch `spec` once, prepared for this call only.
///
/// # Panics
///
/// As [`PreparedGemm::new`] and [`PreparedGemm::run`].
pub(crate) fn run_batch<T: Element>(
    spec: &BatchSpec,
    c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    accum: Accum,
    par: Par,
) {
    PreparedGemm::new(spec).run(c, a, b, accum, par);
}

fn fill_zero<T: Element>(c: &mut MatMut<'_, T>, cs: MatSpec) {
    for i in 0..cs.rows {
        for j in 0..cs.cols {
            c.data[c.at + i * cs.rs + j * cs.cs] = T::ZERO;
        }
    }
}

/// The plain triple loop (row of C outer, contraction middle, row of B inner); adding, C keeps
/// its values and the product is added to them.
pub(crate) fn loop_gemm<T: Element>(
    c: MatMut<'_, T>,
    cs: MatSpec,
    a: MatRef<'_, T>,
    asp: MatSpec,
    b: MatRef<'_, T>,
    bsp: MatSpec,
    accum: Accum,
) {
    let (m, n, k) = (asp.rows, bsp.cols, asp.cols);
    let (c, co, a, ao, b, bo) = (c.data, c.at, a.data, a.at, b.data, b.at);
    let add = accum == Accum::Add;
    if cs.cs == 1 && bsp.cs == 1 {
        for i in 0..m {
            let row = &mut c[co + i * cs.rs..co + i * cs.rs + n];
            if !add {
                row.fill(T::ZERO);
            }
            for p in 0..k {
                let x = a[ao + i * asp.rs + p * asp.cs];
                let brow = &b[bo + p * bsp.rs..bo + p * bsp.rs + n];
                for (o, &y) in row.iter_mut().zip(brow) {
                    *o += x * y;
                }
            }
        }
    } else {
        for i in 0..m {
            for j in 0..n {
                let at = co + i * cs.rs + j * cs.cs;
                let mut acc = if add { c[at] } else { T::ZERO };
                for p in 0..k {
                    acc += a[ao + i * asp.rs + p * asp.cs] * b[bo + p * bsp.rs + j * bsp.cs];
                }
                c[at] = acc;
            }
        }
    }
}

/// `C = A·B` through faer on views built from the strides without copying (small products
/// through nano-gemm, a plan chosen per call): one item, for the tests.
#[cfg(test)]
pub(crate) fn faer_gemm<T: Element>(
    c: MatMut<'_, T>,
    cs: MatSpec,
    a: MatRef<'_, T>,
    asp: MatSpec,
    b: MatRef<'_, T>,
    bsp: MatSpec,
    par: Par,
) {
    FaerViews::new(asp, bsp, cs).run(c, a, b, None, Accum::Replace, par);
}
