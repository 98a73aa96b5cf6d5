//! einsum end to end on each instance of `../shared/einsum-instances/` (SPEC M3): operands random
//! with a fixed seed, the instance's `opt_flops` path, one thread, intermediates from a pool (as
//! in a held session). Skips with a message when the folder is absent.
//!
//! `einsum_plan`: the cost of preparing a plan, on the contractions a DMRG sweep makes at bond
//! dimension 24. A cutoff leaves every bond a slightly different size, so a sweep prepares a
//! plan for most of them while the sizes settle.
//!
//! The five instances that take seconds per run (mera, gm_queen, tensornetwork) run only with
//! `HOLDFAST_BENCH_LARGE=1`; the `einsum_instances` example times every instance (median of
//! 3–5 runs) for the report table.
//!
//! `cargo bench -p holdfast-kernels --bench kernels_einsum [-- FILTER]` (`-- einsum_plan` for
//! the plans alone)

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a benchmark, not a library")]
#![allow(clippy::print_stdout, reason = "a benchmark reports skipped instances")]

#[path = "../tests/support/instances.rs"]
mod instances;
#[path = "../tests/support/pool.rs"]
mod pool;
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use holdfast_kernels::Par;
use holdfast_kernels::einsum::EinsumPlan;
use holdfast_tensor::Tensor;
use support::{SplitMix64, random_tensor};

/// Instances whose single run takes seconds.
const LARGE: &[&str] = &["str_nw_mera", "gm_queen", "tensornetwork_permutation"];

fn bench(c: &mut Criterion) {
    let all = instances::load_all();
    if all.is_empty() {
        println!(
            "kernels_einsum: instance folder not found (set HOLDFAST_EINSUM_INSTANCES); skipped"
        );
        return;
    }
    let large = std::env::var_os("HOLDFAST_BENCH_LARGE").is_some();
    let mut g = c.benchmark_group("einsum_instance");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2));
    for inst in &all {
        if !large && LARGE.iter().any(|l| inst.name.starts_with(l)) {
            println!("kernels_einsum: {} skipped (set HOLDFAST_BENCH_LARGE=1)", inst.name);
            continue;
        }
        let mut rng = SplitMix64(0x5EED);
        let ts: Vec<Tensor<f64>> = inst.shapes.iter().map(|s| random_tensor(s, &mut rng)).collect();
        let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
        let plan = EinsumPlan::prepare(&inst.spec, &vs, Some(&inst.opt_flops)).unwrap();
        let mut alloc = pool::PoolAlloc::default();
        g.bench_function(&inst.name, |b| {
            b.iter(|| plan.execute(&vs, &mut alloc, Par::Seq).unwrap());
        });
    }
    g.finish();
}

/// A spec, its operands' shapes and its path (greedy when `None`).
type Contraction = (&'static str, &'static [&'static [usize]], Option<&'static [(usize, usize)]>);

/// A DMRG sweep's contractions at bond dimension 24 (MPO bond 3, spin 2): the environment
/// updates with their three-step paths, the effective Hamiltonian's three pairwise steps and
/// the split's products.
const DMRG_SPECS: &[Contraction] = &[
    (
        "pqr,rsb,qtsv,ptc->cvb",
        &[&[23, 3, 23], &[23, 2, 24], &[3, 2, 2, 3], &[23, 2, 24]],
        Some(&[(0, 1), (0, 2), (0, 1)]),
    ),
    (
        "asb,qtsv,ptc,cvb->pqa",
        &[&[23, 2, 24], &[3, 2, 2, 3], &[22, 2, 24], &[24, 3, 24]],
        Some(&[(0, 3), (0, 2), (0, 1)]),
    ),
    ("pqa,aijb->pqijb", &[&[23, 3, 23], &[23, 2, 2, 24]], None),
    ("pqijb,qijklv->pklvb", &[&[23, 3, 2, 2, 24], &[3, 2, 2, 2, 2, 3]], None),
    ("pklvb,cvb->pklc", &[&[23, 2, 2, 3, 24], &[24, 3, 24]], None),
    ("asr,astb->rtb", &[&[23, 2, 22], &[23, 2, 2, 24]], None),
];

fn bench_plan(c: &mut Criterion) {
    let mut g = c.benchmark_group("einsum_plan");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for &(spec, shapes, path) in DMRG_SPECS {
        let ts: Vec<Tensor<f64>> = shapes.iter().map(|s| Tensor::zeros(s.to_vec())).collect();
        let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
        g.bench_function(spec, |b| b.iter(|| EinsumPlan::prepare(spec, &vs, path).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench, bench_plan);
criterion_main!(benches);
