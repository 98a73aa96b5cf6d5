//! Held CPU sessions of holdfast (layer 3): engines, backend handles, scoped and held entries,
//! and the per-operation view.
//!
//! - [`CpuBackend`]: a clonable handle on one CPU engine (domain, admission, resources). Build it
//!   with [`CpuBackend::builder`].
//! - [`CpuHeldSession`]: opened by [`CpuBackend::open_session`] (or its try/timeout forms); owns
//!   admission, resources, owner marker and affinity until closed or dropped. `!Send + !Sync`.
//! - [`CpuExecSession`]: the view one callback gets to run operations.
//! - Scoped entry [`CpuBackend::with_backend_session`] and shared scope
//!   [`CpuBackend::with_execution_scope`].
//! - [`CpuPhase`]: a phase lease, opened by [`CpuHeldSession::phase`]: the engine's pool lent to
//!   an outer scheduler, one [`PhaseLane`] per thread of the budget, each admitted as a reentrant
//!   child of the session's owner with its own warm resources (SPEC B1).
//! - [`NaiveBaseline`]: the naive baseline the sessions are measured against (a `Mutex` around
//!   resources and a pool install per call; SPEC M1).
//! - Placement: [`CpuBackendBuilder::numa_node`] and [`CpuBackend::per_numa_node`] build engines
//!   whose pools are bound to one NUMA node's CPUs (SPEC F3).
//!
//! See `docs/design/held-session.md` for the ownership graph, release order, lock graph, error
//! precedence, access rules, the phase lease and NUMA placement.
//!
//! # Examples
//!
//! ```
//! use holdfast_session::{CpuBackend, Tensor};
//!
//! let backend = CpuBackend::builder().threads(1).build()?;
//! let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
//! let mut session = backend.open_session()?;
//! let c = session.with_session(|v| v.matmul(a.read(), a.read()))?;
//! assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
//! let stats = session.close()?;
//! assert_eq!(stats.operations, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod admission;
mod backend;
mod baseline;
mod child;
mod engine;
mod error;
mod held;
mod phase;
mod scope;
mod stats;
mod view;

pub use backend::{CpuBackend, CpuBackendBuilder};
pub use baseline::{BaselineError, BaselineStats, NaiveBaseline};
pub use error::{
    BuildError, CpuHeldSessionError, CpuPhaseError, OpError, PhaseRunError, ReentryReason,
    SessionEntryError,
};
pub use held::CpuHeldSession;
pub use phase::{CpuPhase, LaneStats, PhaseLane};
pub use scope::{CpuThreadExecution, current_cpu_execution};
pub use stats::SessionStats;
pub use view::CpuExecSession;

pub use holdfast_affinity::CpuSet;
pub use holdfast_arbiter::ReentryCause;
pub use holdfast_kernels::linalg::{LinalgElement, Svd, Truncation};
pub use holdfast_provider::ParallelMode;
pub use holdfast_resources::{BufferPoolStats, ManagementError, PlanCacheStats, ResourceLimits};
pub use holdfast_tensor::{Element, Tensor, TensorRead, c32, c64};
