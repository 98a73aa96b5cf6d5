//! Facts about a tensor's storage that travel with it, and the copy counter.
//!
//! - [`AllocationDomain`]: who allocated the elements. Host memory is readable by every CPU
//!   engine with no copy; a foreign provider's memory (a device, another runtime) is not, and
//!   sessions reject it with a typed error (SPEC S9).
//! - [`Readiness`]: whether the elements may be read now, or a producer still owes them.
//! - [`copy_stats`] / [`record_copy`]: a per-thread count of element copies. It is touched only
//!   when a copy happens, so views and reads pay nothing for it.

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::num::NonZeroU64;

/// Identity of a non-host allocation provider (a device runtime, a foreign engine).
///
/// # Examples
///
/// ```
/// use holdfast_tensor::ProviderId;
///
/// let id = ProviderId::new(7).unwrap();
/// assert_eq!(id.get(), 7);
/// assert!(ProviderId::new(0).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProviderId(NonZeroU64);

impl ProviderId {
    /// A provider id; `None` for 0, which no provider may use.
    pub const fn new(id: u64) -> Option<Self> {
        match NonZeroU64::new(id) {
            Some(id) => Some(ProviderId(id)),
            None => None,
        }
    }

    /// The numeric id.
    pub const fn get(self) -> u64 {
        self.0.get()
    }
}

/// Who allocated a tensor's elements.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{AllocationDomain, ProviderId, Tensor};
///
/// let host = Tensor::<f32>::zeros([2]);
/// assert_eq!(host.domain(), AllocationDomain::Host);
/// let dev = host.with_domain(AllocationDomain::Foreign(ProviderId::new(3).unwrap()));
/// assert!(!dev.domain().is_host());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AllocationDomain {
    /// Ordinary process memory, readable by any CPU engine without a copy.
    #[default]
    Host,
    /// Memory owned by another provider; a CPU session must not read it directly.
    Foreign(ProviderId),
}

impl AllocationDomain {
    /// True for [`AllocationDomain::Host`].
    pub const fn is_host(self) -> bool {
        matches!(self, AllocationDomain::Host)
    }
}

/// Whether a tensor's elements may be read now.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{Readiness, Tensor};
///
/// let t = Tensor::<f64>::zeros([3]).with_readiness(Readiness::Pending);
/// assert!(!t.readiness().is_ready());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Readiness {
    /// The elements are written and may be read.
    #[default]
    Ready,
    /// A producer has not finished writing the elements.
    Pending,
}

impl Readiness {
    /// True for [`Readiness::Ready`].
    pub const fn is_ready(self) -> bool {
        matches!(self, Readiness::Ready)
    }
}

/// Element copies counted on the current thread since it started.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{Tensor, copy_stats};
///
/// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let before = copy_stats();
/// let _owned = t.read().transpose().to_tensor(); // materialises: one copy of 4 elements
/// let delta = copy_stats().since(before);
/// assert_eq!((delta.copies, delta.elements), (1, 4));
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CopyStats {
    /// Number of copy operations.
    pub copies: u64,
    /// Number of elements copied.
    pub elements: u64,
}

impl CopyStats {
    /// The copies made between `earlier` and `self`.
    #[must_use]
    pub fn since(self, earlier: CopyStats) -> CopyStats {
        CopyStats {
            copies: self.copies.wrapping_sub(earlier.copies),
            elements: self.elements.wrapping_sub(earlier.elements),
        }
    }
}

thread_local! {
    static COPIES: Cell<CopyStats> = const { Cell::new(CopyStats { copies: 0, elements: 0 }) };
}

/// The element copies counted on the calling thread so far.
///
/// The count is per thread so that concurrent tests do not see each other's copies; a copy made
/// on a worker thread is counted on that worker. See [`CopyStats`] for an example.
pub fn copy_stats() -> CopyStats {
    COPIES.with(Cell::get)
}

/// Records a copy of `elements` elements on the calling thread.
///
/// Every function of this crate that copies elements calls it; higher layers call it for copies
/// they make of tensor data (materialising a strided input, say), so tests can prove a path is
/// copy-free.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{copy_stats, record_copy};
///
/// let before = copy_stats();
/// record_copy(10);
/// assert_eq!(copy_stats().since(before).elements, 10);
/// ```
pub fn record_copy(elements: usize) {
    COPIES.with(|c| {
        let s = c.get();
        c.set(CopyStats {
            copies: s.copies.wrapping_add(1),
            elements: s.elements.wrapping_add(elements as u64),
        });
    });
}
