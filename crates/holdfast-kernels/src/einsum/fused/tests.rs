//! A chain of elementwise products run as one pass gives the pairwise product's values: the
//! kernel against a plain product over every position, and whole einsums (planned with
//! deferred steps and a fused one) against plain loops, serially and on two threads.

use holdfast_tensor::Tensor;
use proptest::prelude::*;

use super::{Access, BLOCK_MAX, Kernel};
use crate::einsum::EinsumPlan;
use crate::einsum::plan::Core;
use crate::einsum::testing::{complex, real, reference_many, values};
use crate::strided::{Axes, row_major};
use crate::{FanOut, HeapAlloc, Par};

fn two_threads() -> Par {
    Par::Rayon(std::num::NonZeroUsize::new(2).unwrap(), &FanOut::ALWAYS)
}

/// A leaf of a kernel case: its data, offset and strides over the output's axes.
type Leaf = (Vec<f64>, usize, Axes);

/// The product of `leaves` (data, offset, strides over `shape`) at every position of `shape`,
/// row-major, by an odometer.
fn plain_product(shape: &[usize], leaves: &[Leaf]) -> Vec<f64> {
    let len: usize = shape.iter().product();
    let mut out = Vec::with_capacity(len);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..len {
        let mut p = 1.0;
        for (data, off, strides) in leaves {
            let at: usize = off + index.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
            p *= data[at];
        }
        out.push(p);
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

/// An output shape and leaves over it: each leaf holds a subset of the axes, dense in a
/// shuffled order, at an offset into a longer buffer.
fn kernel_case() -> impl Strategy<Value = (Vec<usize>, Vec<Leaf>)> {
    let shape = prop_oneof![
        4 => proptest::collection::vec(1usize..=5, 0..=6),
        1 => (1usize..=3, (BLOCK_MAX + 1)..(BLOCK_MAX + 300)).prop_map(|(a, b)| vec![a, b]),
    ];
    shape.prop_flat_map(|shape| {
        let rank = shape.len();
        let leaf = (
            proptest::collection::vec(any::<bool>(), rank),
            Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
            0usize..3,
            any::<u64>(),
        );
        (Just(shape), proptest::collection::vec(leaf, 1..=6)).prop_map(|(shape, leaves)| {
            let leaves = leaves
                .into_iter()
                .map(|(has, order, off, seed)| {
                    let axes: Vec<usize> = order.into_iter().filter(|&a| has[a]).collect();
                    let dims: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
                    let dense = row_major(&dims);
                    let mut strides: Axes = Axes::from_elem(0, shape.len());
                    for (&a, &s) in axes.iter().zip(&dense) {
                        strides[a] = s;
                    }
                    let len: usize = dims.iter().product();
                    (values(len + off, seed), off, strides)
                })
                .collect();
            (shape, leaves)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_kernel_multiplies_every_leaf_at_every_position((shape, leaves) in kernel_case()) {
        let strides: Vec<Axes> = leaves.iter().map(|(_, _, s)| s.clone()).collect();
        let kernel = Kernel::new(&shape, &strides);
        let want = plain_product(&shape, &leaves);
        prop_assert_eq!(kernel.len(), want.len());
        let data: Vec<(&[f64], usize)> = leaves.iter().map(|(d, o, _)| (&d[..], *o)).collect();
        for threads in [1, 2] {
            let mut got = vec![f64::NAN; want.len()];
            kernel.run(&mut got, &data, threads);
            for (g, w) in got.iter().zip(&want) {
                prop_assert!((g - w).abs() <= 1e-14 * (1.0 + w.abs()), "{:?}: {} against {}", shape, g, w);
            }
        }
    }
}

#[test]
fn blocks_read_runs_and_constants_by_stride_and_the_rest_by_table() {
    // Output `abc` of 64 × 8 × 16: the block is `bc` (128 elements). `x` is `abc` itself (one
    // run), `y` is `a` only (constant over a block), `z` is `cb` (transposed in the block).
    let shape = [64, 8, 16];
    let x: Axes = Axes::from_slice(&[128, 16, 1]);
    let y: Axes = Axes::from_slice(&[1, 0, 0]);
    let z: Axes = Axes::from_slice(&[0, 1, 8]);
    let kernel = Kernel::new(&shape, &[x, y, z]);
    assert_eq!(kernel.block, 128);
    assert!(matches!(kernel.access[..], [Access::Stride(1), Access::Stride(0), Access::Table(_)]));
}

fn check(spec: &str, ops: &[Tensor<f64>], path: Option<&[(usize, usize)]>) -> EinsumPlan {
    let reads: Vec<_> = ops.iter().map(Tensor::read).collect();
    let plan = EinsumPlan::prepare(spec, &reads, path).unwrap_or_else(|e| panic!("{e}"));
    let want = reference_many(spec, &ops.iter().collect::<Vec<_>>());
    for par in [Par::Seq, two_threads()] {
        let got = plan.execute(&reads, &mut HeapAlloc, par).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.numel(), want.len());
        for (g, w) in got.as_slice().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{spec} {par:?}: {g} against {w}");
        }
    }
    plan
}

fn kinds(plan: &EinsumPlan) -> Vec<&'static str> {
    (plan.steps.iter())
        .map(|s| match &s.core {
            Core::Defer => "defer",
            Core::Fused(_) => "fused",
            Core::Map { .. } => "map",
            Core::Gemm(_) => "gemm",
        })
        .collect()
}

#[test]
fn a_chain_of_broadcast_products_is_written_once() {
    let ops = [
        real(&[4, 4], 1),
        real(&[4, 4], 2),
        real(&[4, 4], 3),
        real(&[4, 4, 4, 4], 4),
        real(&[4, 4], 5),
    ];
    let plan = check("ab,bc,cd,abcd,ad->dcba", &ops, Some(&[(0, 1), (0, 3), (0, 2), (0, 1)]));
    assert_eq!(kinds(&plan), ["defer", "defer", "defer", "fused"]);
    assert_eq!(plan.num_operand_copies(), 0);
    // The fused step writes the output's order: no final permute.
    assert!(matches!(plan.finish, crate::einsum::plan::Finish::Move));
}

#[test]
fn complex_chains_multiply_as_pairs_do() {
    let ops = [complex(&[4, 4], 1), complex(&[4, 4, 4], 2), complex(&[4, 4], 3), complex(&[4], 4)];
    let reads: Vec<_> = ops.iter().map(Tensor::read).collect();
    let spec = "ab,bca,ca,b->cab";
    let plan = EinsumPlan::prepare(spec, &reads, Some(&[(0, 1), (0, 2), (0, 1)]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kinds(&plan), ["defer", "defer", "fused"]);
    let want = reference_many(spec, &ops.iter().collect::<Vec<_>>());
    for par in [Par::Seq, two_threads()] {
        let got = plan.execute(&reads, &mut HeapAlloc, par).unwrap_or_else(|e| panic!("{e}"));
        for (g, w) in got.as_slice().iter().zip(&want) {
            assert!((g - w).norm() <= 1e-12 * (1.0 + w.norm()), "{par:?}: {g} against {w}");
        }
    }
}

#[test]
fn a_chain_feeding_a_contraction_stops_deferring_before_it() {
    // `abc · bc · ac` is deferred and written in one step, which then meets `cd` in a product.
    let ops = [real(&[4, 4, 8], 1), real(&[4, 8], 2), real(&[4, 8], 3), real(&[8, 5], 4)];
    let plan = check("abc,bc,ac,cd->abd", &ops, Some(&[(0, 1), (0, 2), (0, 1)]));
    assert_eq!(kinds(&plan), ["defer", "fused", "gemm"]);
}

#[test]
fn small_results_and_summed_labels_are_not_deferred() {
    // 3 × 3 = 9 elements: below the least deferred result.
    let ops = [real(&[3], 1), real(&[3], 2), real(&[3, 3], 3)];
    let plan = check("a,b,ab->ab", &ops, Some(&[(0, 1), (0, 1)]));
    assert_eq!(kinds(&plan), ["map", "map"]);
    // The consumer sums its partner's `c` first: the first step's result is written.
    let ops = [real(&[8, 8], 1), real(&[8, 8], 2), real(&[8, 3], 3)];
    let plan = check("ab,ab,ac->ab", &ops, Some(&[(0, 1), (0, 1)]));
    assert_eq!(kinds(&plan), ["map", "map"]);
}

#[test]
fn a_large_scattered_leaf_is_copied_into_the_output_first() {
    // `x` (32768 elements) is read transposed against the output: copied, then multiplied by
    // the small factors; the small factors are multiplied together first.
    let ops = [real(&[8, 8, 8, 8, 8], 1), real(&[8, 8], 2), real(&[8, 8], 3)];
    let plan = check("abcde,ea,db->edcba", &ops, Some(&[(0, 1), (0, 1)]));
    assert_eq!(kinds(&plan), ["defer", "fused"]);
    let Core::Fused(f) = &plan.steps[1].core else { unreachable!() };
    // Leaves in order: `db`, then the deferred `abcde` and `ea`.
    assert_eq!(f.copy.as_ref().map(|c| c.0), Some(1));
    assert_eq!(f.pre.len(), 1);
    assert_eq!(plan.num_operand_copies(), 1);
}

/// Elementwise chains: three to five operands over labels `a`–`e` (dims 2–4), each a non-empty
/// subset in a shuffled order; the output every label, shuffled; a random sequential path.
fn chain_case() -> impl Strategy<Value = (String, Vec<Vec<usize>>, Vec<(usize, usize)>)> {
    let labels: Vec<usize> = (0..5).collect();
    (
        proptest::collection::vec(2usize..=4, 5),
        proptest::collection::vec((1u8..32, Just(labels.clone()).prop_shuffle()), 3..=5),
        Just(labels).prop_shuffle(),
        proptest::collection::vec(any::<proptest::sample::Index>(), 4),
    )
        .prop_map(|(dims, terms, out, picks)| {
            let name = |l: usize| char::from(b'a' + u8::try_from(l).unwrap());
            let terms: Vec<Vec<usize>> = terms
                .into_iter()
                .map(|(bits, order)| order.into_iter().filter(|&l| bits & (1 << l) != 0).collect())
                .collect();
            let used = |l: &usize| terms.iter().any(|t| t.contains(l));
            let out: String = out.iter().filter(|l| used(l)).map(|&l| name(l)).collect();
            let spec = format!(
                "{}->{out}",
                terms
                    .iter()
                    .map(|t| t.iter().map(|&l| name(l)).collect::<String>())
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let shapes = terms.iter().map(|t| t.iter().map(|&l| dims[l]).collect()).collect();
            let mut live = terms.len();
            let mut path = Vec::new();
            for pick in picks.iter().take(terms.len() - 1) {
                let i = pick.index(live);
                let j = (i + 1 + pick.index(live - 1)) % live;
                path.push((i, j));
                live -= 1;
            }
            (spec, shapes, path)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_chains_match_the_loops((spec, shapes, path) in chain_case()) {
        let ops: Vec<Tensor<f64>> =
            shapes.iter().enumerate().map(|(k, s)| real(s, 20 + k as u64)).collect();
        check(&spec, &ops, Some(&path));
    }
}

#[test]
fn a_chain_feeding_a_product_keeps_its_large_leafs_order() {
    // The product with `fe` wants `e` innermost or outermost in the chain's result, which
    // would read `x` (`abcde`, 32768 elements) scattered; the fused step writes `x`'s order
    // instead, copying nothing, and the product plans its operand as it is.
    let ops = [real(&[8, 8, 8, 8, 8], 1), real(&[8, 8], 2), real(&[8, 8], 3), real(&[3, 8], 4)];
    let plan = check("abcde,ca,db,fe->fdcba", &ops, Some(&[(0, 1), (0, 2), (0, 1)]));
    assert_eq!(kinds(&plan), ["defer", "fused", "gemm"]);
    let Core::Fused(f) = &plan.steps[1].core else { unreachable!() };
    assert!(f.copy.is_none());
}

#[test]
fn leaves_may_be_broadcast_transposed_or_offset_views() {
    // `y` (1 × 16) and `w` (8 × 1) stretch over `i` and `j` with stride 0, `x` is read
    // transposed, `z` is a slice starting part-way into its storage.
    let x = real(&[16, 8], 1);
    let (y, w) = (real(&[1, 16], 2), real(&[8, 1], 4));
    let z_full = real(&[10, 16], 3);
    let z = z_full.read().slice(0, 2..10).unwrap();
    assert!(z.offset() > 0);
    let ops = [x.read().transpose(), y.read(), z.clone(), w.read()];
    let spec = "ij,ij,ij,ij->ij";
    let plan = EinsumPlan::prepare(spec, &ops, Some(&[(0, 1), (0, 1), (0, 1)]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kinds(&plan), ["defer", "defer", "fused"]);
    let (xs, ys, zs, ws) = (x.as_slice(), y.as_slice(), z.to_tensor(), w.as_slice());
    for par in [Par::Seq, two_threads()] {
        let got = plan.execute(&ops, &mut HeapAlloc, par).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..8 {
            for j in 0..16 {
                let want = xs[j * 8 + i] * ys[j] * zs.as_slice()[i * 16 + j] * ws[i];
                let g = got.as_slice()[i * 16 + j];
                assert!((g - want).abs() <= 1e-12 * (1.0 + want.abs()), "{par:?} ({i}, {j})");
            }
        }
    }
}
