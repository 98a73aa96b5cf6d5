//! CPU provider context of holdfast (layer 2): the immutable facts of one CPU execution domain
//! and the one place where its worker pool is installed around a lower-library call.
//!
//! - [`CpuDomain`] (P1): the domain's CPU set, its thread budget and, when the budget is above one,
//!   its rayon pool, whose workers are bound to the domain's CPUs through `holdfast-affinity`.
//! - [`ParallelMode`] (P1): `Serial` or `Inner`. Inner parallelism is used only when the mode is
//!   `Inner`, the budget is above one and a pool exists ([`CpuOperationEntry::uses_inner_parallelism`]).
//! - [`CpuOperationEntry`] (P4): a `Copy` value (domain and mode) with nothing to retire, made per
//!   operation.
//! - [`CpuOperationEntry::with_native_parallelism`] (P2, P3, B5): installs the pool for one
//!   lower-library call, and only when the operation is at or above its family's fan-out threshold
//!   ([`FAN_OUT`], owned here and handed to the kernels inside `Par`); everything else runs inline on the caller. The pool is never
//!   installed around the caller's continuation. Every install site is listed in
//!   `docs/design/provider-routes.md`.
//! - [`CpuDomain::lane_crew`] and [`LaneCrew`]: the lanes of a phase lease, the second and last
//!   pool site: for a phase, `threads - 1` workers stay parked in a crew (one rayon scope and
//!   broadcast job per crew, not per run); each [`LaneCrew::run`] runs lane 0 inline on the
//!   caller and lane `i` on worker `i`, or one lane inline for a one-thread budget.
//!
//! # Examples
//!
//! ```
//! use holdfast_affinity::Topology;
//! use holdfast_kernels::{Family, Par};
//! use holdfast_provider::{CpuDomain, CpuOperationEntry, ParallelMode, RouteCounters};
//!
//! let domain = CpuDomain::new(*Topology::get()?.allowed(), 2)?;
//! let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
//! let mut routes = RouteCounters::default();
//! // A 4-element add is far below the elementwise threshold: it runs inline, no install.
//! let par = entry.with_native_parallelism(Family::Elementwise, 4, &mut routes, |par| par);
//! assert_eq!(par, Par::Seq);
//! assert_eq!((routes.installs, routes.inline), (0, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod domain;
mod entry;
mod error;
mod lanes;
mod sync;
mod thresholds;

pub use domain::CpuDomain;
pub use entry::{CpuOperationEntry, ParallelMode, Route, RouteCounters};
pub use error::ProviderError;
pub use lanes::LaneCrew;
pub use thresholds::{
    CONTRACTION_PAR_MIN_FLOPS, ELEMENTWISE_PAR_MIN_ELEMENTS, FAN_OUT, GEMM_PAR_MIN_FLOPS,
    PERMUTE_PAR_MIN_ELEMENTS, REDUCE_PAR_MIN_ELEMENTS, threshold,
};
