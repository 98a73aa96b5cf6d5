//! The einsum benchmark instances: on the small and medium ones, the `opt_flops` and `opt_size`
//! paths and the greedy path agree (fast enough for debug builds). The large ones are
//! `#[ignore]`d; run them in release:
//!
//! ```text
//! cargo test --release -p holdfast-kernels --test einsum_instances -- --ignored
//! ```
//!
//! Both fail when the instance folder is absent: a test that cannot find its data has not
//! checked anything.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

#[path = "support/instances.rs"]
mod instances;
mod support;

use holdfast_kernels::einsum::{EinsumPlan, einsum_with_path};
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_tensor::Tensor;
use support::{SplitMix64, random_tensor, rel_err};

const LARGE: &[&str] = &["str_nw_mera", "gm_queen", "tensornetwork_permutation"];
const TOL: f64 = 1e-10;

fn run(large: bool) {
    let all = instances::load_all();
    assert!(
        !all.is_empty(),
        "no einsum instance found: the tests read ../shared/einsum-instances beside the checkout \
         (or $HOLDFAST_EINSUM_INSTANCES); a missing folder is a failure, not a pass"
    );
    for inst in all.iter().filter(|i| LARGE.iter().any(|l| i.name.starts_with(l)) == large) {
        if !large && inst.name.starts_with("bin_") && cfg!(debug_assertions) {
            // Dense 2048² and 4096² products are slow in unoptimised builds and covered by the
            // kernel tests; the contraction networks are the point here.
            continue;
        }
        let mut rng = SplitMix64(0x5EED);
        // Values near 1 keep products over long chains well scaled.
        let ts: Vec<Tensor<f64>> = inst
            .shapes
            .iter()
            .map(|s| {
                let t = random_tensor::<f64>(s, &mut rng);
                let v = t.as_slice().iter().map(|x| 1.0 + 0.25 * x).collect();
                Tensor::from_vec(s.clone(), v).unwrap()
            })
            .collect();
        let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
        let t0 = std::time::Instant::now();
        let a =
            einsum_with_path(&inst.spec, &vs, &inst.opt_flops, &mut HeapAlloc, Par::Seq).unwrap();
        let t_flops = t0.elapsed();
        let b =
            einsum_with_path(&inst.spec, &vs, &inst.opt_size, &mut HeapAlloc, Par::Seq).unwrap();
        let e = rel_err(b.as_slice(), a.as_slice());
        assert!(e <= TOL, "{}: opt_flops and opt_size differ by {e}", inst.name);
        // The greedy path too, where it is not far costlier than opt_flops (on the
        // lm_batch_likelihood networks it is 25-400× costlier: a known limit of the greedy).
        let greedy = EinsumPlan::prepare(&inst.spec, &vs, None).unwrap();
        let planned = EinsumPlan::prepare(&inst.spec, &vs, Some(&inst.opt_flops)).unwrap();
        if !large && greedy.flops() <= 4 * planned.flops() {
            let g = greedy.execute(&vs, &mut HeapAlloc, Par::Seq).unwrap();
            let e = rel_err(g.as_slice(), a.as_slice());
            assert!(e <= TOL, "{}: greedy and opt_flops differ by {e}", inst.name);
        }
        eprintln!(
            "{}: paths agree ({e:.1e}); opt_flops path {t_flops:?}, all {:?}",
            inst.name,
            t0.elapsed()
        );
    }
}

#[test]
fn small_and_medium_instances_agree_across_paths() {
    run(false);
}

#[test]
#[ignore = "seconds to minutes per instance; run in release"]
fn large_instances_agree_across_paths() {
    run(true);
}
