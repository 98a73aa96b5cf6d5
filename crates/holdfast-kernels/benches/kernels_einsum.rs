//! einsum end to end on each instance of `../shared/einsum-instances/` (SPEC M3): operands random
//! with a fixed seed, the instance's `opt_flops` path, one thread, intermediates from a pool (as
//! in a held session). Skips with a message when the folder is absent.
//!
//! The five instances that take seconds per run (mera, gm_queen, tensornetwork) run only with
//! `HOLDFAST_BENCH_LARGE=1`; the `einsum_instances` example times every instance (median of
//! 3–5 runs) for the report table.
//!
//! `cargo bench -p holdfast-kernels --bench kernels_einsum [-- FILTER]`

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

criterion_group!(benches, bench);
criterion_main!(benches);
