//! One single-threaded faer product cut into panels along its output's contiguous dimension.
//!
//! faer's x86 kernels size their blocks from the cache sizes the CPU reports, and they pack the
//! operand that runs along the output's contiguous dimension (A's rows for a column-major `C`,
//! B's columns for a row-major one) in blocks as long as the reported last-level cache allows.
//! A virtual machine may report far more cache than its core can use: faer then packs an
//! operand of hundreds of megabytes in one block, writing it to memory and reading it back,
//! where a panel that stays in the core's own cache costs one read. The loss is largest when the
//! other dimension is short, since each packed element is then used by few columns.
//!
//! So a product whose output is long along its contiguous dimension is run as one faer call
//! per panel of [`PANEL_BYTES`] bytes of that dimension: each call packs at most
//! `PANEL_BYTES · 512` bytes, 1 MiB (faer's depth block is at most 512), which a core's own
//! caches hold. Every call reads the whole other operand in place, so the cut adds calls and
//! reads of that operand, never copies.
//!
//! Each element of `C` is computed by exactly one call, from its `k` terms in the order one call
//! would use (faer blocks `k` the same way whatever the width), so the cut changes no bit of the
//! result and `Accum::Add` keeps its meaning (`panels/tests.rs` checks both).

use faer::{Accum, MatMut, MatRef};

/// A panel's length along the contiguous dimension, in bytes of elements: 256 `f64`, 128
/// complex `f64` (the choice is measured in `docs/perf/measurements.md`).
pub(super) const PANEL_BYTES: usize = 2048;

/// The least work, in multiply-adds, of one panel: below it the calls' fixed costs would show,
/// and the packed operand is small enough for any cache anyway.
const PANEL_MIN_WORK: usize = 1 << 18;

/// How one product is cut: the panel length along the contiguous dimension and whether that
/// dimension is `C`'s columns (a row-major `C`) or its rows (a column-major one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Panels {
    /// Rows or columns of `C` per call (the last call takes what is left).
    pub(super) len: usize,
    /// `true` when the panels are blocks of columns.
    pub(super) by_cols: bool,
}

impl Panels {
    /// The cut for `C` (`rows × cols`, strides `rs`, `cs`) over a depth of `k`, with elements
    /// of `elem` bytes; `None`, to run the product as one call, when the output is not long
    /// enough along a unit-stride dimension to gain from one.
    pub(super) fn of(
        rows: usize,
        cols: usize,
        rs: isize,
        cs: isize,
        k: usize,
        elem: usize,
    ) -> Option<Self> {
        let len = PANEL_BYTES / elem.max(1);
        let (long, other, by_cols) = if cs == 1 && cols > 1 {
            (cols, rows, true)
        } else if rs == 1 && rows > 1 {
            (rows, cols, false)
        } else {
            return None;
        };
        let cut = long >= 2 * len && len.saturating_mul(other).saturating_mul(k) >= PANEL_MIN_WORK;
        cut.then_some(Self { len, by_cols })
    }
}

/// Runs `seq` on every panel of `C = A·B` (or `C += A·B`) that `panels` makes, in order.
pub(super) fn run<U>(
    panels: Panels,
    mut c: MatMut<'_, U>,
    accum: Accum,
    a: MatRef<'_, U>,
    b: MatRef<'_, U>,
    seq: impl Fn(MatMut<'_, U>, Accum, MatRef<'_, U>, MatRef<'_, U>),
) {
    let long = if panels.by_cols { c.ncols() } else { c.nrows() };
    let mut at = 0;
    while at < long {
        let len = panels.len.min(long - at);
        if panels.by_cols {
            seq(c.as_mut().subcols_mut(at, len), accum, a, b.subcols(at, len));
        } else {
            seq(c.as_mut().subrows_mut(at, len), accum, a.subrows(at, len), b);
        }
        at += len;
    }
}

#[cfg(test)]
mod tests;
