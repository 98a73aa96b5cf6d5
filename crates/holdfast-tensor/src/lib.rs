//! The data model of holdfast (layer 0): owned tensors, borrowed strided views, and the storage
//! facts (allocation domain, readiness) that sessions check before they compute.
//!
//! - [`Tensor<T>`] owns its elements. It is row-major and contiguous when built with
//!   [`Tensor::from_vec`] or [`Tensor::zeros`], and may carry any valid strides and offset when
//!   built with [`Tensor::from_parts`].
//! - [`TensorRead<'a, T>`] borrows a tensor's storage with its own shape, strides and offset, so
//!   permute, transpose, slice and broadcast views are made without copying a single element.
//! - [`AllocationDomain`] and [`Readiness`] travel with the storage, so that a session can reject
//!   foreign-domain or pending inputs before any fast path (SPEC S9).
//! - [`copy_stats`] counts element copies made by this crate (and by higher layers that report
//!   theirs through [`record_copy`]): tests use it to prove that a path did not copy.
//!
//! `T` ranges over [`Element`]: `f32`, `f64`, [`c32`] and [`c64`].
//!
//! # Examples
//!
//! ```
//! use holdfast_tensor::{Tensor, copy_stats};
//!
//! let t = Tensor::<f64>::from_vec([2, 3], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0])?;
//! let before = copy_stats();
//! let col = t.read().transpose().slice(0, 1..2)?; // the second column, as a 1×2 view
//! assert_eq!(col.shape(), &[1, 2]);
//! assert_eq!(col.get(&[0, 1]), Some(4.0));
//! assert_eq!(copy_stats(), before, "views never copy");
//! # Ok::<(), holdfast_tensor::TensorError>(())
//! ```

mod element;
mod error;
#[cfg(feature = "ndarray")]
mod interop;
mod layout;
mod read;
mod storage;
mod tensor;

pub use element::{DType, Element, c32, c64};
pub use error::TensorError;
pub use layout::{Dims, Layout, SizedLayout};
pub use read::{TensorRead, TensorReadIter};
pub use storage::{AllocationDomain, CopyStats, ProviderId, Readiness, copy_stats, record_copy};
pub use tensor::Tensor;
