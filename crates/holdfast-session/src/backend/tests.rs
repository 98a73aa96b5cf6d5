//! Tests of the backend's entries: shared scopes, child handles, scoped/held parity, builder
//! errors and the FIFO queue between openers.

use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use holdfast_tensor::Tensor;

use crate::{
    BuildError, CpuBackend, CpuThreadExecution, ReentryCause, ReentryReason, SessionEntryError,
    current_cpu_execution,
};

fn backend() -> CpuBackend {
    CpuBackend::builder().threads(1).private_arbiter().build().unwrap()
}

fn iota(shape: &[usize]) -> Tensor<f64> {
    let n: usize = shape.iter().product();
    Tensor::from_vec(shape.to_vec(), (0..n).map(|i| (i as f64) * 0.5 - 1.0).collect()).unwrap()
}

#[test]
fn a_held_root_inside_a_shared_scope_is_refused_and_the_scope_keeps_working() {
    let b = backend();
    let a = iota(&[2, 2]);
    let out = b
        .with_execution_scope(|| {
            assert_eq!(current_cpu_execution(), CpuThreadExecution::SharedScope);
            let refused = b.open_session();
            assert!(
                matches!(
                    refused,
                    Err(SessionEntryError::Reentered {
                        cause: ReentryReason::InsideSharedScope,
                        ..
                    })
                ),
                "{refused:?}"
            );
            let first = b.with_backend_session(|v| {
                assert_eq!(current_cpu_execution(), CpuThreadExecution::Active);
                // Nested scoped entry inside an active one: refused before blocking.
                assert!(matches!(
                    b.with_backend_session(|_| ()),
                    Err(SessionEntryError::Reentered { .. })
                ));
                v.add(a.read(), a.read())
            });
            assert_eq!(current_cpu_execution(), CpuThreadExecution::SharedScope);
            let second = b.with_backend_session(|v| v.matmul(a.read(), a.read()));
            (first.unwrap().unwrap(), second.unwrap().unwrap())
        })
        .unwrap();
    assert_eq!(out.0.as_slice(), &[-2.0, -1.0, 0.0, 1.0]);
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
    // The scope's admission is gone: another thread gets the engine at once.
    let other = b.clone();
    assert!(std::thread::spawn(move || other.try_open_session().is_ok()).join().unwrap());
}

#[test]
fn a_shared_scope_holds_admission_against_other_threads() {
    let b = backend();
    b.with_execution_scope(|| {
        let other = b.clone();
        let r = std::thread::spawn(move || {
            matches!(other.try_open_session(), Err(SessionEntryError::Contended { .. }))
        })
        .join()
        .unwrap();
        assert!(r, "the scope's admission is held for its whole callback");
    })
    .unwrap();
}

#[test]
fn a_scope_released_on_panic() {
    let b = backend();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.with_execution_scope(|| panic!("in scope")).unwrap();
    }));
    assert!(caught.is_err());
    assert_eq!(current_cpu_execution(), CpuThreadExecution::Idle);
    b.open_session().unwrap().close().unwrap();
}

#[test]
fn a_child_handle_cannot_open_a_held_root_but_its_scoped_entries_join_the_parent() {
    let b = backend();
    let a = iota(&[3]);
    let mut s = b.open_session().unwrap();
    let (child_sum, refused, scope_refused) = s.with_session(|v| {
        let child = v.child_execution();
        assert!(child.is_child() && child.same_engine(&b));
        let refused = child.open_session().map(|_| ());
        let scope_refused = child.with_execution_scope(|| ()).map(|_| ());
        let sum = child.with_backend_session(|cv| cv.add(a.read(), a.read())).unwrap().unwrap();
        (sum, refused, scope_refused)
    });
    assert!(matches!(
        refused,
        Err(SessionEntryError::Reentered { cause: ReentryReason::ChildHandle, .. })
    ));
    assert!(matches!(scope_refused, Err(SessionEntryError::Reentered { .. })));
    assert_eq!(child_sum.as_slice(), &[-2.0, -1.0, 0.0]);
    // The child used private resources: the session's pool saw no take.
    let st = s.close().unwrap();
    assert_eq!((st.buffer_hits, st.buffer_misses), (0, 0));
}

#[test]
fn a_child_entry_from_another_thread_joins_without_waiting_and_fails_once_the_parent_is_gone() {
    let b = backend();
    let a = iota(&[2]);
    let mut s = b.open_session().unwrap();
    let child = s.with_session(|v| v.child_execution());
    let c2 = child.clone();
    let a2 = a.clone();
    let joined = std::thread::spawn(move || {
        c2.with_backend_session(|v| v.scale(a2.read(), 2.0)).map(|r| r.unwrap())
    })
    .join()
    .unwrap()
    .unwrap();
    assert_eq!(joined.as_slice(), &[-2.0, -1.0]);
    s.close().unwrap();
    let gone = child.with_backend_session(|_| ());
    assert!(
        matches!(
            gone,
            Err(SessionEntryError::Reentered {
                cause: ReentryReason::Admission(ReentryCause::OwnerGone),
                ..
            })
        ),
        "{gone:?}"
    );
}

#[test]
fn held_and_scoped_entries_agree_on_every_operation() {
    let b = backend();
    let a = iota(&[2, 3]);
    let bt = iota(&[3, 2]);
    let row = iota(&[3]);
    let batch = iota(&[2, 2, 2]);
    type Op = fn(&mut crate::CpuExecSession<'_>, [&Tensor<f64>; 5]) -> Tensor<f64>;
    let ops: Vec<(&str, Op)> = vec![
        ("add", |v, [a, _, r, _, _]| v.add(a.read(), r.read()).unwrap()),
        ("sub", |v, [a, _, r, _, _]| v.sub(a.read(), r.read()).unwrap()),
        ("mul", |v, [a, _, r, _, _]| v.mul(a.read(), r.read()).unwrap()),
        ("div", |v, [a, _, r, _, _]| v.div(r.read(), a.read()).unwrap()),
        ("scale", |v, [a, ..]| v.scale(a.read(), 1.5).unwrap()),
        ("sum", |v, [a, ..]| v.sum(a.read(), &[1]).unwrap()),
        ("permute", |v, [a, ..]| v.permute(a.read(), &[1, 0]).unwrap()),
        ("matmul", |v, [a, b, ..]| v.matmul(a.read(), b.read()).unwrap()),
        ("batched matmul", |v, [.., x]| v.matmul(x.read(), x.read()).unwrap()),
        ("matmul_into", |v, [a, b, ..]| {
            let mut out = Tensor::zeros([2, 2]);
            v.matmul_into(a.read(), b.read(), &mut out).unwrap();
            out
        }),
        ("einsum", |v, [a, b, ..]| v.einsum("ij,jk->ki", &[a.read(), b.read()]).unwrap()),
        ("einsum_with_path", |v, [a, b, r, ..]| {
            v.einsum_with_path("ij,jk,j->i", &[a.read(), b.read(), r.read()], &[(0, 2), (0, 1)])
                .unwrap()
        }),
    ];
    let inputs = [&a, &bt, &row, &batch, &batch];
    let mut session = b.open_session().unwrap();
    let held: Vec<Tensor<f64>> =
        ops.iter().map(|(_, op)| session.with_session(|v| op(v, inputs))).collect();
    session.close().unwrap();
    for ((name, op), h) in ops.iter().zip(&held) {
        let scoped = b.with_backend_session(|v| op(v, inputs)).unwrap();
        assert_eq!(scoped.shape(), h.shape(), "{name}");
        let bits = |t: &Tensor<f64>| t.read().iter().map(f64::to_bits).collect::<Vec<_>>();
        assert_eq!(bits(&scoped), bits(h), "{name}: held and scoped differ");
    }
}

#[test]
fn openers_are_admitted_in_fifo_order() {
    let b = backend();
    let held = b.open_session().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for i in 0..3 {
        let (bb, order) = (b.clone(), Arc::clone(&order));
        let start = Arc::new(Barrier::new(2));
        let s2 = Arc::clone(&start);
        handles.push(std::thread::spawn(move || {
            s2.wait();
            let s = bb.open_session().unwrap();
            order.lock().unwrap().push(i);
            s.close().unwrap();
        }));
        start.wait();
        // Thread i+1 starts only once thread i is queued (the arbiter's FIFO is what is tested):
        // the private arbiter then holds the session and i+1 waiters. Bounded: 10 s.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while b.engine.arbiter.snapshot().unwrap().waiters < i + 1 {
            assert!(std::time::Instant::now() < deadline, "opener {i} never queued");
            std::thread::yield_now();
        }
    }
    held.close().unwrap();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
}

#[test]
fn builder_errors_are_typed() {
    assert!(matches!(CpuBackend::builder().threads(0).build(), Err(BuildError::Provider(_))));
    assert!(matches!(CpuBackend::builder().threads(100_000).build(), Err(BuildError::Provider(_))));
    assert!(matches!(
        CpuBackend::builder().cpus(holdfast_affinity::CpuSet::new()).build(),
        Err(BuildError::Provider(_))
    ));
    let d = CpuBackend::try_default().unwrap();
    assert_eq!(d.threads(), d.cpus().len());
}
