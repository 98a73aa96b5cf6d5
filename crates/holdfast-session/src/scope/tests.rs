//! Tests of the thread execution state (A7).

use crate::{CpuBackend, CpuThreadExecution, current_cpu_execution};

#[test]
fn states_follow_scope_and_entries() {
    let b = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
    b.with_execution_scope(|| {
        assert_eq!(current_cpu_execution(), CpuThreadExecution::SharedScope);
        // A nested scope on the same engine reuses this one.
        b.with_execution_scope(|| {
            assert_eq!(current_cpu_execution(), CpuThreadExecution::SharedScope);
        })
        .unwrap();
        let other = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
        assert!(other.with_execution_scope(|| ()).is_err(), "one scope per thread");
    })
    .unwrap();
    let s = b.open_session().unwrap();
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Active);
    assert!(b.with_execution_scope(|| ()).is_err());
    s.close().unwrap();
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
}
