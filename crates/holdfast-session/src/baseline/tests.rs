//! The naive baseline: the same results as a held session, one lock and one install per call,
//! nothing lost on a panic, typed refusals.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::{
    BaselineError, BaselineStats, CpuBackend, NaiveBaseline, ReentryReason, ResourceLimits,
    SessionEntryError, Tensor, Truncation, c64,
};

fn backend(threads: usize) -> CpuBackend {
    CpuBackend::builder().threads(threads).private_arbiter().build().expect("a backend")
}

fn operands() -> (Tensor<c64>, Tensor<c64>) {
    let a = (0..12).map(|i| c64::new(f64::from(i) * 0.5, 1.0 - f64::from(i))).collect();
    let b = (0..12).map(|i| c64::new(f64::from(i % 5), f64::from(i) * 0.25)).collect();
    (Tensor::from_vec([3, 4], a).expect("3x4"), Tensor::from_vec([4, 3], b).expect("4x3"))
}

#[test]
fn runs_the_held_sessions_operations_with_one_lock_and_one_install_per_call() {
    for threads in [1, 2] {
        let backend = backend(threads);
        let (a, b) = operands();
        let naive = NaiveBaseline::new(&backend, ResourceLimits::default()).expect("baseline");
        let mut session = backend.open_session().expect("held");
        for _ in 0..3 {
            let held = session
                .with_session(|v| v.einsum("ij,jk->ik", &[a.read(), b.read()]))
                .expect("held einsum");
            let ours = naive
                .with_view(|v| v.einsum("ij,jk->ik", &[a.read(), b.read()]))
                .expect("naive einsum");
            assert_eq!(held.as_slice(), ours.as_slice());
            let held_svd = session
                .with_session(|v| v.svd(a.read(), &[0], Truncation::none()))
                .expect("held svd");
            let our_svd =
                naive.with_view(|v| v.svd(a.read(), &[0], Truncation::none())).expect("naive svd");
            assert_eq!(held_svd.s.as_slice(), our_svd.s.as_slice());
        }
        drop(session);
        let stats = naive.stats();
        assert_eq!(stats, BaselineStats { calls: 6, locks: 6, installs: 6, operations: 6 });
    }
}

#[test]
fn a_call_runs_on_the_installed_pool() {
    let backend = backend(2);
    let naive = NaiveBaseline::new(&backend, ResourceLimits::default()).expect("baseline");
    assert!(naive.with_view(|_| rayon::current_thread_index().is_some()));
    let one = self::backend(1);
    let naive = NaiveBaseline::new(&one, ResourceLimits::default()).expect("baseline");
    let name = naive.with_view(|_| std::thread::current().name().map(str::to_owned));
    assert_eq!(name.as_deref(), Some("holdfast-naive-0"));
}

#[test]
fn a_panic_inside_loses_no_buffer_and_the_next_call_runs() {
    let backend = backend(1);
    let naive = NaiveBaseline::new(&backend, ResourceLimits::default()).expect("baseline");
    let a = Tensor::<f64>::from_vec([8], vec![1.0; 8]).expect("a");
    let warm = naive.with_view(|v| v.add(a.read(), a.read())).expect("warm");
    naive.with_view(|v| v.recycle(warm));
    let retained = naive.with_resources(|r| r.buffers.stats().len);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        naive.with_view(|v| {
            let _taken = v.add(a.read(), a.read()).expect("add");
            panic!("inside the baseline");
        })
    }));
    assert!(unwound.is_err());
    let pool = naive.with_resources(|r| r.buffers.stats());
    assert_eq!((pool.len, pool.in_flight), (retained, 0), "{pool:?}");
    let after = naive.with_view(|v| v.add(a.read(), a.read())).expect("after the panic");
    assert_eq!(after.as_slice(), &[2.0; 8]);
    assert_eq!(naive.stats().calls, 4);
}

#[test]
fn is_refused_inside_an_execution_and_its_children_are_refused() {
    let backend = backend(1);
    let session = backend.open_session().expect("held");
    assert!(matches!(
        NaiveBaseline::new(&backend, ResourceLimits::default()),
        Err(BaselineError::InsideExecution)
    ));
    drop(session);
    let naive = NaiveBaseline::new(&backend, ResourceLimits::default()).expect("baseline");
    let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0]).expect("a");
    let child = naive.with_view(|v| {
        let child = v.child_execution();
        child.with_backend_session(|cv| cv.add(a.read(), a.read())).map(|_| ())
    });
    assert!(
        matches!(
            child,
            Err(SessionEntryError::Reentered { cause: ReentryReason::Admission(_), .. })
        ),
        "{child:?}"
    );
}
