//! Thread execution state: the shared execution scope frame and [`current_cpu_execution`] (A7).
//!
//! A shared scope ([`CpuBackend::with_execution_scope`](crate::CpuBackend::with_execution_scope))
//! holds one admission for the scoped entries of its callback. Its frame lives in a thread-local
//! slot: the engine it belongs to, the owner it admitted, the shared permit and whether a scoped
//! entry is running right now. The scope itself does not set the owner marker, so between its
//! entries the thread reports [`CpuThreadExecution::SharedScope`]; each scoped entry inside it sets
//! the marker for its own duration and the thread reports [`CpuThreadExecution::Active`].
//!
//! # Invariants
//!
//! - At most one frame per thread. A nested scope on the same engine reuses it; on another engine
//!   it is refused as a re-entry.
//! - The frame is removed by [`ScopeFrameGuard`]'s drop, on return and on unwind, so a panicking
//!   callback cannot leave a scope (and its admission) behind.

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::sync::Arc;

use holdfast_arbiter::{OwnerId, ResourcePermit, has_active_execution};

/// What the calling thread is doing with CPU engines right now (A7).
///
/// # Examples
///
/// ```
/// use holdfast_session::{CpuBackend, CpuThreadExecution, current_cpu_execution};
///
/// let backend = CpuBackend::builder().threads(1).private_arbiter().build()?;
/// assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
/// backend.with_execution_scope(|| {
///     assert_eq!(current_cpu_execution(), CpuThreadExecution::SharedScope);
///     backend.with_backend_session(|_| {
///         assert_eq!(current_cpu_execution(), CpuThreadExecution::Active);
///     })
/// })??;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuThreadExecution {
    /// No scope is open and no execution is active.
    Idle,
    /// A shared execution scope is open and no operation is active in it.
    SharedScope,
    /// A held session, a scoped entry or a child entry is active on this thread.
    Active,
}

/// Reports what the calling thread is doing with CPU engines.
pub fn current_cpu_execution() -> CpuThreadExecution {
    if has_active_execution() {
        CpuThreadExecution::Active
    } else if SCOPE.with(|s| s.borrow().is_some()) {
        CpuThreadExecution::SharedScope
    } else {
        CpuThreadExecution::Idle
    }
}

/// The open shared scope of a thread.
#[derive(Debug)]
pub(crate) struct ScopeFrame {
    /// The engine the scope admitted (its address-derived id).
    pub(crate) engine: u64,
    /// The owner the scope's admission was made for.
    pub(crate) owner: OwnerId,
    /// The shared admission; released when the frame and every clone are gone.
    pub(crate) permit: Arc<ResourcePermit>,
}

thread_local! {
    static SCOPE: RefCell<Option<ScopeFrame>> = const { RefCell::new(None) };
}

/// The open scope's engine and owner (and a clone of its permit), if a scope is open.
pub(crate) fn open_scope() -> Option<(u64, OwnerId, Arc<ResourcePermit>)> {
    SCOPE.with(|s| s.borrow().as_ref().map(|f| (f.engine, f.owner, Arc::clone(&f.permit))))
}

/// True when a shared scope is open on this thread.
pub(crate) fn scope_is_open() -> bool {
    SCOPE.with(|s| s.borrow().is_some())
}

/// Installs `frame` as this thread's scope until the guard drops.
pub(crate) fn enter_scope(frame: ScopeFrame) -> ScopeFrameGuard {
    SCOPE.with(|s| *s.borrow_mut() = Some(frame));
    ScopeFrameGuard { _not_send: std::marker::PhantomData }
}

/// Removes the thread's scope frame (and so its share of the admission) when dropped.
#[derive(Debug)]
pub(crate) struct ScopeFrameGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for ScopeFrameGuard {
    fn drop(&mut self) {
        // `try_with`: during thread teardown the slot may already be gone; nothing to release then.
        let frame = SCOPE.try_with(|s| s.borrow_mut().take()).ok().flatten();
        drop(frame);
    }
}
