//! Times `einsum_with_path` on each einsum benchmark instance (one thread, `opt_flops` path,
//! operands random with a fixed seed) and prints a table against the numpy reference times.
//!
//! ```text
//! cargo run --release -p holdfast-kernels --example einsum_instances [-- [--runs N] [--check] [NAME_FILTER]]
//! ```
//!
//! `--check` also runs the `opt_size` path and reports the relative difference between the two.
//! Instances whose first run takes over 2 s are timed 3 times, the others `--runs` times (5).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a measurement program, not a library")]
#![allow(clippy::print_stdout, reason = "a measurement program prints its table")]

#[path = "../tests/support/instances.rs"]
mod instances;
#[path = "../tests/support/pool.rs"]
mod pool;
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use holdfast_kernels::einsum::EinsumPlan;
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_tensor::Tensor;
use support::{SplitMix64, random_tensor, rel_err};

fn main() {
    let mut runs = 5;
    let mut check = false;
    let mut filter = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(5),
            "--check" => check = true,
            "--bench" => {}
            other => filter = other.to_owned(),
        }
    }
    let all = instances::load_all();
    if all.is_empty() {
        println!("einsum instances folder not found; set HOLDFAST_EINSUM_INSTANCES");
        return;
    }
    println!(
        "| instance | numpy ms | ours, pooled ms | speed-up | ours, heap ms | speed-up | target (pooled) |{}",
        if check { " opt_flops vs opt_size (rel) |" } else { "" }
    );
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |{}",
        if check { " ---: |" } else { "" }
    );
    let mut log_sum = 0.0;
    let mut log_sum_heap = 0.0;
    let mut count = 0;
    for inst in all.iter().filter(|i| i.name.contains(&filter)) {
        let mut rng = SplitMix64(0x5EED);
        let ts: Vec<Tensor<f64>> = inst.shapes.iter().map(|s| random_tensor(s, &mut rng)).collect();
        let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
        let plan = EinsumPlan::prepare(&inst.spec, &vs, Some(&inst.opt_flops)).unwrap();
        // Pooled: one pool for all runs of the instance, as in a held session.
        let mut pooled = pool::PoolAlloc::default();
        let t0 = Instant::now();
        let first = plan.execute(&vs, &mut pooled, Par::Seq).unwrap();
        let first_ms = t0.elapsed().as_secs_f64() * 1e3;
        let n = if first_ms > 2000.0 { 3 } else { runs };
        let time = |alloc: &mut dyn FnMut() -> f64| {
            let mut times: Vec<f64> = (0..n).map(|_| alloc()).collect();
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        };
        let ours = time(&mut || {
            let t0 = Instant::now();
            let r = plan.execute(&vs, &mut pooled, Par::Seq).unwrap();
            let dt = t0.elapsed().as_secs_f64() * 1e3;
            // The output stays the caller's (dropped, not recycled); intermediates are pooled.
            drop(r);
            dt
        });
        let heap = time(&mut || {
            let t0 = Instant::now();
            let r = plan.execute(&vs, &mut HeapAlloc, Par::Seq).unwrap();
            let dt = t0.elapsed().as_secs_f64() * 1e3;
            drop(r);
            dt
        });
        let numpy = instances::numpy_ms(&inst.name).unwrap_or(f64::NAN);
        let ratio = numpy / ours;
        let ratio_heap = numpy / heap;
        log_sum += ratio.ln();
        log_sum_heap += ratio_heap.ln();
        count += 1;
        let agree = if check {
            let other = holdfast_kernels::einsum::einsum_with_path(
                &inst.spec,
                &vs,
                &inst.opt_size,
                &mut HeapAlloc,
                Par::Seq,
            )
            .unwrap();
            format!(" {:.1e} |", rel_err(other.as_slice(), first.as_slice()))
        } else {
            String::new()
        };
        println!(
            "| {} | {numpy:.2} | {ours:.2} | {ratio:.2}× | {heap:.2} | {ratio_heap:.2}× | {} |{agree}",
            inst.name,
            if ours <= numpy { "met" } else { "missed" },
        );
    }
    if count > 0 {
        let n = f64::from(count);
        println!(
            "\ngeometric mean speed-up over {count} instances: pooled {:.2}×, heap {:.2}×",
            (log_sum / n).exp(),
            (log_sum_heap / n).exp()
        );
    }
}
