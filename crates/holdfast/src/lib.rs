//! holdfast: tensor operations on the CPU inside sessions that own their admission.
//!
//! This facade re-exports the public API of the workspace. Today it exposes the data model
//! ([`Tensor`], [`TensorRead`]); engines and sessions are re-exported once `holdfast-session`
//! implements them.
//!
//! ```
//! use holdfast::Tensor;
//!
//! let t = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! assert_eq!(t.shape(), &[2, 3]);
//! assert_eq!(t.read().transpose().get(&[2, 1]), Some(6.0));
//! # Ok::<(), holdfast::TensorError>(())
//! ```

pub use holdfast_tensor::{
    AllocationDomain, DType, Element, ProviderId, Readiness, Tensor, TensorError, TensorRead,
};
