//! Numerical kernels of holdfast (layer 1): elementwise arithmetic, reductions, permute, GEMM and
//! einsum over [`holdfast_tensor`] values (SPEC §7, K1–K6).
//!
//! This crate knows nothing of sessions, admission or affinity (SPEC L1). Every kernel:
//! - reads its inputs as [`TensorRead`](holdfast_tensor::TensorRead) views, whatever their
//!   strides, without copying them first unless the algorithm needs a dense operand;
//! - takes its output and scratch buffers from a caller-supplied [`KernelAlloc`] (so the
//!   engine's buffer pool can serve them), [`matmul::matmul_into`] excepted, which allocates
//!   nothing;
//! - takes a [`Par`] as its last argument and fans out over rayon only above its family's
//!   size for its family ([`FanOut`], whose values the provider owns); it never installs a pool;
//! - validates once and reports a typed [`KernelError`]; it does not panic on bad input.
//!
//! | module | kernels |
//! | --- | --- |
//! | [`elementwise`] | `add`, `sub`, `mul`, `div` (numpy broadcasting), `scale` |
//! | [`reduce`] | `sum` over axes |
//! | [`permute`] | materialising `permute` |
//! | [`matmul`] | `matmul`, `matmul_into`, [`MatmulPlan`](matmul::MatmulPlan) (2-D and batched 3-D, faer) |
//! | [`einsum`] | `einsum`, `einsum_with_path`, `einsum_cached`, `parse`, [`EinsumPlan`](einsum::EinsumPlan) |
//! | [`linalg`] | `svd` (with [`Truncation`](linalg::Truncation)), `qr`, `eigh`, `solve`, `norm` (faer) |
//!
//! # Examples
//!
//! ```
//! use holdfast_kernels::{HeapAlloc, Par, einsum, elementwise, matmul};
//! use holdfast_tensor::Tensor;
//!
//! let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
//! let mut alloc = HeapAlloc;
//! let c = matmul::matmul(a.read(), a.read(), &mut alloc, Par::Seq)?;
//! let d = einsum::einsum("ij,jk->ik", &[a.read(), a.read()], &mut alloc, Par::Seq)?;
//! assert_eq!(c.as_slice(), d.as_slice());
//! let z = elementwise::sub(c.read(), d.read(), &mut alloc, Par::Seq)?;
//! assert!(z.as_slice().iter().all(|&x| x == 0.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Unsafe
//!
//! `unsafe` lives in five private places: `matmul::bridge` (`faer_typed` builds faer matrix
//! views from raw parts, `Checked::run_nano` runs a nano-gemm plan on the same pointers, both
//! after `Checked::new` checked bounds and the element type), `matmul::nano` (`NanoPlan::run`,
//! and the plan's `Send`/`Sync`), `matmul::thin` (an AVX-512 kernel on pointers taken from faer
//! views), `nontemporal` (non-temporal stores into elements it holds `&mut` to) and
//! `alloc::advise_huge_pages` (`madvise(MADV_HUGEPAGE)` on a fresh buffer).

mod alloc;
pub mod einsum;
pub mod elementwise;
mod error;
pub mod fingerprint;
pub mod linalg;
pub mod matmul;
mod nontemporal;
mod par;
pub mod permute;
pub mod reduce;
mod strided;

pub use alloc::{HUGE_PAGE_MIN_BYTES, HeapAlloc, KernelAlloc, fresh_buffer};
pub use error::KernelError;
pub use par::{Family, FanOut, Par};
