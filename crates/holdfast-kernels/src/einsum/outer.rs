//! A product step's outer loop dealt over the threads.
//!
//! A step whose operands cannot each be seen as one batch of matrices loops over some of its
//! labels around its product (`GemmCore::outer`), one product per position. A product too small
//! to fan out runs on one thread, and so did the whole loop, however many threads the step had.
//! When the positions of the loop's outermost label write apart in C (no position adds into C,
//! and each one's writes end before the next one's start), runs of consecutive positions are
//! dealt over the threads instead, each run writing only its own part of C. Every product is
//! the one the loop would have made, on the same operands, so the result is the same.

mod rows;
#[cfg(test)]
mod tests;

use holdfast_tensor::Element;
use rayon::prelude::*;

use super::plan::GemmCore;
use crate::matmul::batch::PreparedGemm;
use crate::matmul::operand::{Accum, MatMut, MatRef};
use crate::strided::Nest;
use crate::{Family, Par};

/// How a loop is dealt: `threads` threads take runs of `rows` positions of its outermost label,
/// `stride` elements of C apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Deal {
    pub(super) threads: usize,
    pub(super) rows: usize,
    stride: usize,
}

/// Runs per thread, so that a thread that finishes early takes another.
const RUNS_PER_THREAD: usize = 4;

/// Whether `count` equal runs share out over `threads` threads without one waiting on another:
/// they divide evenly, or there are enough for a thread that finishes early to take another.
fn shares_evenly(count: usize, threads: usize) -> bool {
    count >= threads * RUNS_PER_THREAD || count.is_multiple_of(threads)
}

/// How `g`'s loop `nest` is dealt over `par`'s threads, or `None` when it runs in order: one
/// product fans out on its own, the whole loop is too small to, or its outermost positions do
/// not write apart in C.
pub(super) fn deal(g: &GemmCore, nest: &Nest, par: Par) -> Option<Deal> {
    let total = g.gemm.flops().saturating_mul(nest.numel() as u64);
    let threads = par.for_size(Family::Gemm, total).threads();
    let alone = par.for_size(Family::Gemm, g.gemm.flops()) == Par::Seq;
    if threads < 2 || !alone || g.accumulate {
        return None;
    }
    let (&d0, &stride) = nest.shape.first().zip(nest.so.first())?;
    // The farthest element of C one position of the outermost label writes, from its start.
    let inner = (nest.shape.iter().zip(&nest.so)).skip(1).map(|(&d, &s)| (d - 1) * s);
    let reach = g.gemm.c_span().saturating_sub(1) + inner.sum::<usize>();
    if d0 < 2 || reach >= stride {
        return None;
    }
    let rows = d0.div_ceil((threads * RUNS_PER_THREAD).min(d0));
    Some(Deal { threads, rows, stride })
}

/// `g`'s product at every position of its loop `nest` into `out`, dealt over the threads
/// when [`deal`] says so.
pub(super) fn run_outer<T: Element>(
    g: &GemmCore,
    nest: &Nest,
    out: &mut [T],
    (a, b): (MatRef<'_, T>, MatRef<'_, T>),
    accum: Accum,
    par: Par,
) {
    // Runs of the outermost label when they share out evenly, else blocks of the labels writing
    // apart and of C's rows (`rows`), else runs of the outermost label however they share out.
    let dealt = deal(g, nest, par);
    let even = dealt.is_some_and(|d| shares_evenly(nest.shape[0], d.threads));
    if !even && let Some(cut) = rows::row_deal(g, nest, par) {
        return rows::run_rows(g, &cut, out, (a, b), accum);
    }
    let Some(deal) = dealt else {
        return each_product(&g.gemm, nest, out, 0, (a, b), accum, par);
    };
    let (d0, sa0, sb0) = (nest.shape[0], nest.sa[0], nest.sb[0]);
    // Run `i` owns C from its first position to the next run's first: it writes only there.
    out.par_chunks_mut(deal.rows * deal.stride).enumerate().for_each(|(i, part)| {
        let first = i * deal.rows;
        if first >= d0 {
            return;
        }
        let mut run = nest.clone();
        run.shape[0] = deal.rows.min(d0 - first);
        let (a, b) = (a.shifted(first * sa0), b.shifted(first * sb0));
        each_product(&g.gemm, &run, part, 0, (a, b), accum, Par::Seq);
    });
}

/// `gemm` at every position of `nest`, its C at `pc` plus the position's offset in `out`, A and
/// B shifted by theirs.
pub(super) fn each_product<T: Element>(
    gemm: &PreparedGemm,
    nest: &Nest,
    out: &mut [T],
    pc: usize,
    (a, b): (MatRef<'_, T>, MatRef<'_, T>),
    accum: Accum,
    par: Par,
) {
    nest.for_each_offset(|qc, qa, qb| {
        gemm.run(MatMut::new(out, pc + qc), a.shifted(qa), b.shifted(qb), accum, par);
    });
}
