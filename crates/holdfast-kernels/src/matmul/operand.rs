//! The GEMM engine's operand types: what a product is ([`MatSpec`], [`BatchSpec`]), where its
//! operands are ([`MatRef`], [`MatMut`]) and whether C is overwritten or added to ([`Accum`]).
//!
//! A spec is part of a plan (made once); operands change from call to call, so they carry only
//! the slice and the position of the first element. Kernels of this module take them in the
//! order C, A, B, then [`Accum`], then [`Par`](crate::Par) last, as faer's own `matmul` does.

/// One matrix operand's dimensions and strides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MatSpec {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) rs: usize,
    pub(crate) cs: usize,
}

impl MatSpec {
    /// One past the largest position addressed from offset 0 (0 when empty).
    pub(crate) fn extent(self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            0
        } else {
            (self.rows - 1) * self.rs + (self.cols - 1) * self.cs + 1
        }
    }

    /// The transposed operand.
    pub(crate) fn t(self) -> MatSpec {
        MatSpec { rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
}

/// A batch of GEMMs `C[i] = A[i]·B[i]`, item `i` at offsets `at + i·s` (`sa`, `sb`, `sc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BatchSpec {
    pub(crate) batch: usize,
    pub(crate) a: MatSpec,
    pub(crate) b: MatSpec,
    pub(crate) c: MatSpec,
    pub(crate) sa: usize,
    pub(crate) sb: usize,
    pub(crate) sc: usize,
}

impl BatchSpec {
    /// Multiply-adds of the whole batch.
    pub(crate) fn macs(&self) -> u64 {
        (self.batch as u64) * (self.a.rows as u64) * (self.b.cols as u64) * (self.a.cols as u64)
    }

    /// The same product computed as `Cᵀ = Bᵀ·Aᵀ`.
    pub(crate) fn transposed(self) -> BatchSpec {
        BatchSpec { a: self.b.t(), b: self.a.t(), c: self.c.t(), sa: self.sb, sb: self.sa, ..self }
    }
}

/// A read operand: the slice that holds it and the position of its first element.
#[derive(Debug)]
pub(crate) struct MatRef<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) at: usize,
}

impl<T> Clone for MatRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MatRef<'_, T> {}

impl<'a, T> MatRef<'a, T> {
    /// The operand at `at` in `data`.
    #[inline(always)]
    pub(crate) fn new(data: &'a [T], at: usize) -> Self {
        MatRef { data, at }
    }

    /// The operand `by` positions further on (the next item of a batch).
    #[inline(always)]
    pub(crate) fn shifted(self, by: usize) -> Self {
        MatRef { data: self.data, at: self.at + by }
    }
}

/// The written operand: the slice that holds it (exclusively borrowed) and the position of its
/// first element.
#[derive(Debug)]
pub(crate) struct MatMut<'a, T> {
    pub(crate) data: &'a mut [T],
    pub(crate) at: usize,
}

impl<'a, T> MatMut<'a, T> {
    /// The operand at `at` in `data`.
    #[inline(always)]
    pub(crate) fn new(data: &'a mut [T], at: usize) -> Self {
        MatMut { data, at }
    }

    /// A reborrow `by` positions further on (the next item of a batch).
    #[inline(always)]
    pub(crate) fn shifted(&mut self, by: usize) -> MatMut<'_, T> {
        MatMut { data: self.data, at: self.at + by }
    }
}

/// Whether a product overwrites C or is added to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Accum {
    /// `C = A·B`.
    Replace,
    /// `C += A·B` (items of a batch may then share C: `sc == 0` sums the batch, as einsum's
    /// loops over contracted labels do).
    Add,
}

impl Accum {
    /// faer's equivalent.
    pub(crate) fn to_faer(self) -> faer::Accum {
        match self {
            Accum::Replace => faer::Accum::Replace,
            Accum::Add => faer::Accum::Add,
        }
    }
}
