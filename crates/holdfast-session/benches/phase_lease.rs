//! `phase_lease`: what lending the engine's pool costs per phase run, next to rayon's own
//! install and broadcast on the same pool, in one run (issue "Phase lease", acceptance: a warm run
//! of 2 lanes with empty bodies ≤ 10 µs on the project's 2-core machines).
//!
//! | id | what |
//! |---|---|
//! | `rayon_install_empty` | `pool.install(|| ())` on the engine's pool (no session) |
//! | `rayon_broadcast_empty` | `pool.broadcast(|_| ())` on the engine's pool (no session) |
//! | `run_lanes_empty` | a warm `CpuPhase::run` with empty lane bodies, one lane per thread |
//! | `run_lanes_matmul4` | the same, each lane running one 4×4 `matmul_into` |
//! | `run_inline_empty` | a one-thread budget: one lane inline on the caller |
//! | `phase_open_empty` | `session.phase(|_| ())`: opening and closing a phase, no run |
//!
//! Run: `cargo bench -p holdfast-session --bench phase_lease`.
#![allow(clippy::unwrap_used, reason = "benchmark setup: a failure should stop the run loudly")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use holdfast_session::{CpuBackend, Tensor};

fn phase_lease(c: &mut Criterion) {
    let threads = holdfast_affinity::Topology::get().unwrap().allowed().len().min(2);
    let backend = CpuBackend::builder().threads(threads).private_arbiter().build().unwrap();
    let inline = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let a = Tensor::<f64>::from_vec([4, 4], (0..16).map(f64::from).collect()).unwrap();
    let outs: Vec<_> =
        (0..threads).map(|_| std::sync::Mutex::new(Tensor::<f64>::zeros([4, 4]))).collect();

    let mut g = c.benchmark_group(format!("phase_lease/{threads}_threads"));
    if let Some(pool) = backend.domain().pool() {
        g.bench_function("rayon_install_empty", |bench| {
            bench.iter(|| pool.install(|| black_box(())));
        });
        g.bench_function("rayon_broadcast_empty", |bench| {
            bench.iter(|| black_box(pool.broadcast(|ctx| black_box(ctx.index()))));
        });
    }
    let mut session = backend.open_session().unwrap();
    session
        .phase(|phase| {
            g.bench_function("run_lanes_empty", |bench| {
                bench.iter(|| {
                    phase
                        .run(|lane, _| {
                            black_box(lane);
                            Ok::<(), ()>(())
                        })
                        .unwrap();
                });
            });
            g.bench_function("run_lanes_matmul4", |bench| {
                bench.iter(|| {
                    phase
                        .run(|lane, view| {
                            let mut out = outs[lane].lock().unwrap();
                            view.matmul_into(black_box(&a).read(), a.read(), &mut out)
                        })
                        .unwrap();
                });
            });
        })
        .unwrap();
    g.bench_function("phase_open_empty", |bench| {
        bench.iter(|| session.phase(|phase| black_box(phase.lanes())).unwrap());
    });
    session.close().unwrap();

    let mut one = inline.open_session().unwrap();
    one.phase(|phase| {
        g.bench_function("run_inline_empty", |bench| {
            bench.iter(|| {
                phase
                    .run(|lane, _| {
                        black_box(lane);
                        Ok::<(), ()>(())
                    })
                    .unwrap();
            });
        });
    })
    .unwrap();
    one.close().unwrap();
    g.finish();
}

criterion_group!(benches, phase_lease);
criterion_main!(benches);
