//! Unit tests of the `workspaces` module: contention and poison are typed, the scratch is
//! reused.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

use crate::{ContractionWorkspaces, WorkspaceError};

#[test]
fn contention_is_busy_from_another_thread_without_waiting() {
    let ws = ContractionWorkspaces::new();
    let lease = ws.lease().unwrap();
    std::thread::scope(|s| {
        let start = std::time::Instant::now();
        let r = s.spawn(|| ws.lease().err()).join().unwrap();
        assert_eq!(r, Some(WorkspaceError::Busy));
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    });
    assert_eq!(ws.reset_poisoned(), Err(WorkspaceError::Busy));
    drop(lease);
    assert!(ws.lease().is_ok());
}

#[test]
fn a_panic_during_a_lease_poisons_until_reset() {
    let ws = ContractionWorkspaces::new();
    ws.lease().unwrap().scratch::<f64>(32).fill(7.0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut lease = ws.lease().unwrap();
        lease.scratch::<f64>(32).fill(f64::NAN);
        panic!("contraction failed half way");
    }));
    assert!(r.is_err());
    assert!(ws.is_poisoned());
    assert_eq!(ws.lease().err(), Some(WorkspaceError::Poisoned));
    assert_eq!(ws.lease().err(), Some(WorkspaceError::Poisoned), "still poisoned");
    assert_eq!(ws.reset_poisoned(), Ok(true));
    assert_eq!(ws.reset_poisoned(), Ok(false));
    let mut lease = ws.lease().unwrap();
    assert_eq!(lease.capacity_bytes(), 0, "the poisoned scratch was discarded");
    assert!(lease.scratch::<f64>(4).iter().all(|x| *x == 0.0));
}

#[test]
fn the_scratch_is_reused_across_leases_and_threads() {
    let ws = ContractionWorkspaces::new();
    ws.lease().unwrap().scratch::<f32>(100);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut lease = ws.lease().unwrap();
            let p = lease.scratch::<f32>(50).as_ptr();
            tx.send(p as usize).unwrap();
        });
    });
    let p = rx.recv().unwrap();
    let mut lease = ws.lease().unwrap();
    assert_eq!(lease.scratch::<f32>(10).as_ptr() as usize, p);
    assert_eq!((lease.grows(), lease.leases()), (1, 3));
}
