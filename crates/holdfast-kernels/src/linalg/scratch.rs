//! [`LinalgScratch`]: faer's workspace for factorizations, grown once and reused.
//!
//! faer takes its temporaries from a `MemStack` the caller provides. The scratch keeps one byte
//! buffer and the two pivot vectors of an LU factorization; each call asks for what it needs and
//! the buffers grow only when a request is larger than any before, so a warm factorization of a
//! size already seen allocates nothing.

use std::mem::MaybeUninit;

use faer::dyn_stack::{MemStack, StackReq};

/// Reusable workspace of the factorizations: faer's memory stack and LU pivots.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::{LinalgScratch, Truncation, svd};
/// use holdfast_kernels::{HeapAlloc, Par};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![2.0, 0.0, 0.0, 1.0])?;
/// let mut scratch = LinalgScratch::new();
/// svd(a.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq)?;
/// let grown = scratch.grows();
/// svd(a.read(), &[0], Truncation::none(), &mut scratch, &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(scratch.grows(), grown, "the second call reuses the workspace");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct LinalgScratch {
    bytes: Vec<MaybeUninit<u8>>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    grows: u64,
}

impl LinalgScratch {
    /// An empty workspace (it grows on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// Times a buffer had to grow (each is one allocation).
    pub fn grows(&self) -> u64 {
        self.grows
    }

    /// Bytes held.
    pub fn capacity_bytes(&self) -> usize {
        self.bytes.capacity()
            + (self.perm.capacity() + self.perm_inv.capacity()) * size_of::<usize>()
    }

    /// Releases the memory (the next factorization grows it again).
    pub fn release(&mut self) {
        *self = LinalgScratch { grows: self.grows, ..LinalgScratch::default() };
    }

    /// A memory stack that can hold `req`, and `n` entries of each pivot vector.
    pub(crate) fn parts(&mut self, req: StackReq, n: usize) -> ScratchParts<'_> {
        // Enough bytes for `req` at any start address (faer aligns inside the stack).
        let need = req.unaligned_bytes_required();
        if self.bytes.len() < need {
            self.bytes.resize(need, MaybeUninit::uninit());
            self.grows += 1;
        }
        if self.perm.len() < n {
            self.perm.resize(n, 0);
            self.perm_inv.resize(n, 0);
            self.grows += 1;
        }
        ScratchParts {
            stack: MemStack::new(&mut self.bytes[..need]),
            perm: &mut self.perm[..n],
            perm_inv: &mut self.perm_inv[..n],
        }
    }
}

/// The borrowed pieces of a [`LinalgScratch`] for one call.
pub(crate) struct ScratchParts<'s> {
    pub(crate) stack: &'s mut MemStack,
    pub(crate) perm: &'s mut [usize],
    pub(crate) perm_inv: &'s mut [usize],
}
