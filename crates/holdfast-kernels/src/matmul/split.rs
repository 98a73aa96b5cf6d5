//! One product over several threads as independent single-threaded products on blocks of the
//! output.
//!
//! Given [`Par::Rayon`](crate::Par) with `n > 1` threads, a product that is not small is cut
//! into `n` blocks along the longer of its output's two dimensions: blocks of rows of `C` and
//! `A` when `m >= n`, blocks of columns of `C` and `B` otherwise. Each block is one faer call at
//! `Par::Seq`, and the blocks run under `rayon::join` on the installed pool. faer's own parallel
//! product packs panels that all its threads share, and its threads meet at a barrier around
//! each packing; the blocks here share nothing and meet once, at the end. On a machine whose
//! cores are descheduled now and then (a shared virtual machine), a barrier makes every thread
//! wait for the slowest; independent blocks only delay the last one. Each block packs its own
//! copy of the shared operand's panels, which costs little next to a product large enough to
//! fan out.
//!
//! Block edges fall on multiples of [`ALIGN`] rows or columns, so every block but the last
//! fills whole microkernel tiles. A product whose longer output dimension is under
//! `2 · ALIGN` is not cut: faer's own parallelism (which may split the other dimensions)
//! runs it. Each block runs on the kernel the caller passes (`Seq`): the bridge's, which is
//! faer or, for the shapes it serves, this crate's own (`thin`).
//!
//! Every element of `C` is computed by exactly one block, from the same `k` terms as one call
//! would use, so `Accum::Add` keeps its meaning.

use faer::{Accum, MatMut, MatRef, Par};

/// The granularity of a cut: a whole number of 512-bit vectors of every element type (16 `f32`,
/// two vectors of `f64`), so a cut through rows never splits a vector of a column-major block.
const ALIGN: usize = 16;

/// One single-threaded product `C = A·B` (or `C += A·B`): the caller's choice of kernel for a
/// block.
pub(super) type Seq<U> = for<'c, 'a, 'b> fn(MatMut<'c, U>, Accum, MatRef<'a, U>, MatRef<'b, U>);

/// `C = A·B` (or `C += A·B`) with `threads` threads: cut into blocks, each run by `seq`, when
/// the output is large enough, else one faer call with `Par::Rayon(threads)`.
pub(super) fn matmul<U>(
    c: MatMut<'_, U>,
    accum: Accum,
    a: MatRef<'_, U>,
    b: MatRef<'_, U>,
    seq: Seq<U>,
    threads: std::num::NonZeroUsize,
) where
    U: faer::traits::ComplexField + Copy,
{
    if c.nrows().max(c.ncols()) < 2 * ALIGN {
        faer::linalg::matmul::matmul(c, accum, a, b, U::one_impl(), Par::Rayon(threads));
    } else {
        blocks(c, accum, a, b, seq, threads.get());
    }
}

/// Runs the product as `parts` blocks (module docs), recursively halving the part count.
fn blocks<U>(
    c: MatMut<'_, U>,
    accum: Accum,
    a: MatRef<'_, U>,
    b: MatRef<'_, U>,
    seq: Seq<U>,
    parts: usize,
) where
    U: faer::traits::ComplexField + Copy,
{
    let by_rows = c.nrows() >= c.ncols();
    let len = if by_rows { c.nrows() } else { c.ncols() };
    let at = if parts > 1 { cut(len, parts / 2, parts) } else { 0 };
    if at == 0 || at == len {
        seq(c, accum, a, b);
        return;
    }
    let (left, right) = (parts / 2, parts - parts / 2);
    if by_rows {
        let (c0, c1) = c.split_at_row_mut(at);
        let (a0, a1) = a.split_at_row(at);
        rayon::join(
            || blocks(c0, accum, a0, b, seq, left),
            || blocks(c1, accum, a1, b, seq, right),
        );
    } else {
        let (c0, c1) = c.split_at_col_mut(at);
        let (b0, b1) = b.split_at_col(at);
        rayon::join(
            || blocks(c0, accum, a, b0, seq, left),
            || blocks(c1, accum, a, b1, seq, right),
        );
    }
}

/// Where `len` rows (or columns) are cut so that the first block holds about `left` of `parts`
/// shares, rounded to the nearest multiple of [`ALIGN`] and at most `len` (0 or `len` means no
/// cut).
pub(super) fn cut(len: usize, left: usize, parts: usize) -> usize {
    if parts == 0 {
        return 0;
    }
    let share = len.saturating_mul(left) / parts;
    (share.saturating_add(ALIGN / 2) / ALIGN).saturating_mul(ALIGN).min(len)
}
