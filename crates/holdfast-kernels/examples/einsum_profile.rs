//! Runs one einsum benchmark instance's `opt_flops` plan a few times, for profilers
//! (`valgrind --tool=callgrind --toggle-collect='*EinsumPlan*execute*'`, `perf`), and prints the
//! median time; `--plan` also prints the prepared plan (every step's copies, GEMM shapes and
//! loop nests).
//!
//! ```text
//! cargo build --release -p holdfast-kernels --example einsum_profile
//! target/release/examples/einsum_profile NAME_FILTER [--runs N] [--heap] [--plan] [--recycle]
//! ```
//!
//! `--recycle` gives each result's buffer back to the pool, as a session that recycles its
//! results does (`holdfast bench`'s ways): the output is then not page-faulted in every run.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a measurement program, not a library")]
#![allow(clippy::print_stdout, reason = "a measurement program prints its results")]

#[path = "../tests/support/instances.rs"]
mod instances;
#[path = "../tests/support/pool.rs"]
mod pool;
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use holdfast_kernels::einsum::EinsumPlan;
use holdfast_kernels::{HeapAlloc, KernelAlloc, Par};
use holdfast_tensor::Tensor;
use support::{SplitMix64, random_tensor};

fn main() {
    let mut runs = 3;
    let mut heap = false;
    let mut show_plan = false;
    let mut recycle = false;
    let mut filter = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(3),
            "--heap" => heap = true,
            "--plan" => show_plan = true,
            "--recycle" => recycle = true,
            other => filter = other.to_owned(),
        }
    }
    let all = instances::load_all();
    let inst = all.iter().find(|i| i.name.contains(&filter)).expect("no instance matches");
    let mut rng = SplitMix64(0x5EED);
    let ts: Vec<Tensor<f64>> = inst.shapes.iter().map(|s| random_tensor(s, &mut rng)).collect();
    let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
    let plan = EinsumPlan::prepare(&inst.spec, &vs, Some(&inst.opt_flops)).unwrap();
    if show_plan {
        println!("{plan:#?}");
    }
    let mut pooled = pool::PoolAlloc::default();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        let r = if heap {
            plan.execute(&vs, &mut HeapAlloc, Par::Seq)
        } else {
            plan.execute(&vs, &mut pooled, Par::Seq)
        };
        let r = r.unwrap();
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(r.as_slice());
        if recycle && !heap {
            pooled.give(r.into_parts().0);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{}: {} steps, {} copies, median {:.2} ms over {runs} runs ({})",
        inst.name,
        plan.num_steps(),
        plan.num_operand_copies(),
        times[times.len() / 2],
        if heap { "heap" } else { "pooled" }
    );
}
