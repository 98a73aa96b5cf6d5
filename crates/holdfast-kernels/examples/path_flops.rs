//! Prints each instance's planned floating-point operations for the greedy, opt_flops and
//! opt_size paths, and the operand copies each plan makes.
//!
//! `cargo run --release -p holdfast-kernels --example path_flops`

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a measurement program, not a library")]
#![allow(clippy::print_stdout, reason = "a measurement program prints its table")]

#[path = "../tests/support/instances.rs"]
mod instances;

use std::time::Instant;

use holdfast_kernels::einsum::EinsumPlan;
use holdfast_tensor::Tensor;

fn main() {
    println!(
        "| instance | greedy flops | opt_flops flops | opt_size flops | greedy plan time | copies (opt_flops) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for inst in instances::load_all() {
        let ts: Vec<Tensor<f64>> = inst.shapes.iter().map(|s| Tensor::zeros(s.clone())).collect();
        let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
        let t0 = Instant::now();
        let g = EinsumPlan::prepare(&inst.spec, &vs, None).unwrap();
        let dt = t0.elapsed();
        let f = EinsumPlan::prepare(&inst.spec, &vs, Some(&inst.opt_flops)).unwrap();
        let s = EinsumPlan::prepare(&inst.spec, &vs, Some(&inst.opt_size)).unwrap();
        println!(
            "| {} | {:.3e} | {:.3e} | {:.3e} | {dt:?} | {} |",
            inst.name,
            g.flops() as f64,
            f.flops() as f64,
            s.flops() as f64,
            f.num_operand_copies()
        );
    }
}
