//! The error types of this crate: [`ManagementError`] for the engine's management entry points
//! and [`WorkspaceError`] for the N-ary contraction scratch lease.
//!
//! Both are small closed sets for non-waiting operations (a try-operation fails with "busy" or
//! "poisoned", never blocks), marked `#[non_exhaustive]` so that variants may be added.

use std::fmt;

/// Which engine resource a management call or lease found unavailable.
///
/// # Examples
///
/// ```
/// use holdfast_resources::ResourceKind;
///
/// assert_eq!(ResourceKind::Slot.to_string(), "engine resource slot");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResourceKind {
    /// The engine's resource slot (the mutex around [`ResourceSlot`](crate::ResourceSlot)).
    Slot,
    /// The N-ary contraction scratch ([`ContractionWorkspaces`](crate::ContractionWorkspaces)).
    ContractionWorkspaces,
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResourceKind::Slot => "engine resource slot",
            ResourceKind::ContractionWorkspaces => "contraction workspaces",
        })
    }
}

/// Why a management call (statistics, `trim`, clearing caches) could not run.
///
/// Management never waits on a session (SPEC R5): while the engine's resources are checked out
/// it fails at once with [`Busy`](Self::Busy).
///
/// # Examples
///
/// ```
/// use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources, ManagementError};
///
/// let slot = EngineResourceSlot::new(EngineResources::default());
/// let checkout = EngineResourceCheckout::take(&slot).expect("ready");
/// assert!(matches!(slot.buffer_pool_len(), Err(ManagementError::Busy)));
/// drop(checkout);
/// assert_eq!(slot.buffer_pool_len()?, 0);
/// # Ok::<(), ManagementError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManagementError {
    /// The engine's resources are checked out by a session (or a resource they contain is
    /// leased); try again after it has been closed.
    #[error("engine resources are checked out by a session; try again after it is closed")]
    Busy,
    /// A panic poisoned `resource`; nothing was changed. Clear it with
    /// [`EngineResourceSlot::clear_poison`](crate::EngineResourceSlot::clear_poison).
    #[error("the {resource} is poisoned by an earlier panic")]
    Poisoned {
        /// The poisoned resource.
        resource: ResourceKind,
    },
}

/// Why the N-ary contraction scratch could not be leased (SPEC R7).
///
/// # Examples
///
/// ```
/// use holdfast_resources::{ContractionWorkspaces, WorkspaceError};
///
/// let ws = ContractionWorkspaces::new();
/// let lease = ws.lease()?;
/// assert_eq!(ws.lease().err(), Some(WorkspaceError::Busy));
/// drop(lease);
/// assert!(ws.lease().is_ok());
/// # Ok::<(), WorkspaceError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// Another lease is alive; the lease never waits.
    #[error("the contraction workspaces are leased by another operation")]
    Busy,
    /// An operation panicked while it held the lease; the scratch is not reused until
    /// [`ContractionWorkspaces::reset_poisoned`](crate::ContractionWorkspaces::reset_poisoned).
    #[error("the contraction workspaces are poisoned by a panic during an earlier lease")]
    Poisoned,
}
