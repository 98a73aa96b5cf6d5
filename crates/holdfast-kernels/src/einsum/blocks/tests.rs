//! A large permuting copy made block by block gives the unblocked product's values and never
//! takes a buffer of the whole copy.

use holdfast_tensor::{Element, Tensor};
use proptest::prelude::*;

use super::BLOCKED_COPY_MIN;
use crate::einsum::EinsumPlan;
use crate::einsum::plan::{Core, GemmCore};
use crate::einsum::testing::{complex, real, reference};
use crate::{HeapAlloc, KernelAlloc, Par};

/// Heap buffers, recording the length of every one taken.
#[derive(Default)]
struct Lengths(Vec<usize>);

impl KernelAlloc for Lengths {
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        self.0.push(len);
        HeapAlloc.take(len)
    }

    fn give<T: Element>(&mut self, buf: Vec<T>) {
        drop(buf);
    }
}

fn blocked_steps(plan: &EinsumPlan) -> usize {
    plan.steps.iter().filter(|s| matches!(&s.core, Core::Gemm(g) if g.blocks.is_some())).count()
}

/// Runs `spec` on `x` and `y` (in that order, or `y` first) and checks it against the loops:
/// the copy of `x` is blocked and no buffer as long as `x` (a whole copy) is taken.
fn check<T: Element>(spec: &str, x: &Tensor<T>, y: &Tensor<T>, x_first: bool, par: Par) {
    assert!(x.numel() >= BLOCKED_COPY_MIN, "the copy of x must be large enough to block");
    let (ops, order) = if x_first {
        ([x.read(), y.read()], spec.to_owned())
    } else {
        let (inputs, output) = spec.split_once("->").unwrap();
        let (xl, yl) = inputs.split_once(',').unwrap();
        ([y.read(), x.read()], format!("{yl},{xl}->{output}"))
    };
    let plan = EinsumPlan::prepare(&order, &ops, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(blocked_steps(&plan), 1, "{spec}: the copy of x is made block by block");
    let mut alloc = Lengths::default();
    let got = plan.execute(&ops, &mut alloc, par).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(got.numel(), x.numel(), "{spec}: the output must not look like a whole copy");
    assert!(!alloc.0.contains(&x.numel()), "{spec}: x was copied whole: {:?}", alloc.0);
    let want = reference(spec, x, y);
    for (g, w) in got.as_slice().iter().zip(&want) {
        assert!((*g - *w).modulus() <= 1e-12 * (1.0 + w.modulus()), "{spec}: {g:?} against {w:?}");
    }
}

/// The blocked step of `plan`.
fn blocked(plan: &EinsumPlan) -> &GemmCore {
    let mut cores = plan.steps.iter().filter_map(|s| match &s.core {
        Core::Gemm(g) if g.blocks.is_some() => Some(&**g),
        _ => None,
    });
    cores.next().unwrap_or_else(|| panic!("no step is blocked"))
}

// In `x`, the contracted labels p, q, r and the kept m, n alternate, so no view of it is a
// matrix without many GEMM calls: the step copies it, batch labels first.
const ONE_BATCH: &str = "pmqbrnso,bpqrst->bmnot";
const TWO_BATCH: &str = "pmqbcrn,bcpqrt->bcmnt";

#[test]
fn one_item_per_block_matches_the_loops() {
    // An item (p·m·q·r·n·s·o) is four block targets: blocks of one item along b.
    let x = real(&[2, 4, 2, 2, 2, 4, 2, 4], 1);
    let y = real(&[2, 2, 2, 2, 2, 3], 2);
    check(ONE_BATCH, &x, &y, true, Par::Seq);
}

#[test]
fn several_items_per_block_and_the_blocked_side_second() {
    // Items of 32 elements along b (32) and c (8): a block is one b value, its eight c items
    // one prepared batch.
    let x = real(&[2, 2, 2, 32, 8, 2, 2], 3);
    let y = real(&[32, 8, 2, 2, 2, 3], 4);
    check(TWO_BATCH, &x, &y, false, Par::Seq);
}

#[test]
fn blocks_fan_out_over_threads_like_the_whole_copy() {
    let two = Par::Rayon(std::num::NonZeroUsize::new(2).unwrap(), &crate::FanOut::ALWAYS);
    let x = real(&[2, 2, 2, 32, 8, 2, 2], 5);
    let y = real(&[32, 8, 2, 2, 2, 3], 6);
    check(TWO_BATCH, &x, &y, true, two);
}

/// Two threads, for products too small to fan out on their own: blocks that write apart are
/// dealt over the threads.
static PRODUCTS_INLINE: crate::FanOut = crate::FanOut { gemm: u64::MAX, ..crate::FanOut::ALWAYS };

fn two_threads_products_inline() -> Par {
    Par::Rayon(std::num::NonZeroUsize::new(2).unwrap(), &PRODUCTS_INLINE)
}

#[test]
fn blocks_over_batch_labels_are_dealt_over_threads() {
    let x = real(&[2, 2, 2, 32, 8, 2, 2], 13);
    let y = real(&[32, 8, 2, 2, 2, 3], 14);
    let plan = EinsumPlan::prepare(TWO_BATCH, &[x.read(), y.read()], None).unwrap();
    let blocks = blocked(&plan).blocks.as_ref().unwrap();
    let offsets = blocks.disjoint.as_ref().expect("blocks over batch labels write apart");
    assert!(offsets.windows(2).all(|w| w[0].0 < w[1].0));
    // A byte-bounded plan cache sees the offsets.
    assert_eq!(blocks.heap_bytes(), offsets.len() * size_of::<(usize, usize, usize)>());
    assert!(plan.approx_bytes() > blocks.heap_bytes());
    check(TWO_BATCH, &x, &y, true, two_threads_products_inline());
    check(TWO_BATCH, &x, &y, false, two_threads_products_inline());
    check(
        ONE_BATCH,
        &real(&[2, 4, 2, 2, 2, 4, 2, 4], 15),
        &real(&[2, 2, 2, 2, 2, 3], 16),
        true,
        two_threads_products_inline(),
    );
}

#[test]
fn a_label_looped_for_the_other_operand_stays_a_loop_inside_the_block() {
    // y's `e` is neither batch nor a matrix axis of y (its contracted `f` sits between `e`
    // and y's rows `cd`), so the step loops over it outside its batch; x, whose `f` sits
    // between its rows `gh` and `ijl`, is copied, its copy leading with loop labels t, k, a, b,
    // and blocked over some of them (x holds them far apart).
    let x = real(&[2; 10], 7);
    let y = real(&[2; 6], 8);
    let spec = "tkabghfijl,abefcd->tekabghijlcd";
    check(spec, &x, &y, false, Par::Seq);
    let plan = EinsumPlan::prepare("abefcd,tkabghfijl->tekabghijlcd", &[y.read(), x.read()], None)
        .unwrap();
    assert!(blocked(&plan).outer.is_some(), "the unblocked step has loops outside its batch");
}

#[test]
fn a_copy_is_not_blocked_over_a_label_the_source_holds_close() {
    // x's batch label b is its innermost: blocks over b would each read one element of every
    // line of x. The copy is made whole, and the product is the loops'.
    let x = real(&[2, 4, 2, 2, 4, 32], 17);
    let y = real(&[32, 2, 2, 2, 3], 18);
    let spec = "pmqrnb,bpqrt->bmnt";
    let plan = EinsumPlan::prepare(spec, &[x.read(), y.read()], None).unwrap();
    assert!(plan.num_operand_copies() > 0, "x is copied");
    assert_eq!(blocked_steps(&plan), 0, "the copy of x is made whole");
    let got = plan.execute(&[x.read(), y.read()], &mut HeapAlloc, Par::Seq).unwrap();
    let want = reference(spec, &x, &y);
    for (g, w) in got.as_slice().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{g} against {w}");
    }
    // With b outermost in x, the same copy is blocked over it.
    let x = real(&[32, 2, 4, 2, 2, 4], 19);
    check("bpmqrn,bpqrt->bmnt", &x, &y, true, Par::Seq);
}

#[test]
fn complex_operands_are_blocked_alike() {
    let x = complex(&[2, 4, 2, 2, 2, 4, 2, 4], 9);
    let y = complex(&[2, 2, 2, 2, 2, 2], 10);
    check(ONE_BATCH, &x, &y, true, Par::Seq);
}

/// Random two-operand einsums over nine labels of extent 2 or 3, each label in x, y and the
/// output at random (in at least one operand) and every operand in a random label order: many
/// copies are large enough to block at the unit tests' sizes. Blocked or not, on one thread or
/// with blocks dealt over two, the plan must give the loops' values.
fn random_case() -> impl Strategy<Value = (String, Vec<usize>, Vec<usize>)> {
    let labels: Vec<usize> = (0..9).collect();
    (
        proptest::collection::vec(2usize..=3, 9),
        proptest::collection::vec(1u8..8, 9),
        Just(labels.clone()).prop_shuffle(),
        Just(labels.clone()).prop_shuffle(),
        Just(labels).prop_shuffle(),
    )
        .prop_map(|(dims, member, ox, oy, oo)| {
            let name = |l: usize| char::from(b'a' + u8::try_from(l).unwrap());
            let term = |order: &[usize], bit: u8| -> String {
                order.iter().filter(|&&l| member[l] & bit != 0).map(|&l| name(l)).collect()
            };
            let (x, y) = (term(&ox, 1), term(&oy, 2));
            // Output labels must appear in an input (bit 4 with neither input: x keeps it).
            let out: String = oo
                .iter()
                .filter(|&&l| member[l] & 4 != 0 && member[l] & 3 != 0)
                .map(|&l| name(l))
                .collect();
            let shape = |t: &str| t.bytes().map(|c| dims[usize::from(c - b'a')]).collect();
            (format!("{x},{y}->{out}"), shape(&x), shape(&y))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_einsums_match_the_loops((spec, xs, ys) in random_case()) {
        let (x, y) = (real(&xs, 11), real(&ys, 12));
        let ops = [x.read(), y.read()];
        let plan = EinsumPlan::prepare(&spec, &ops, None).unwrap();
        let want = reference(&spec, &x, &y);
        for par in [Par::Seq, two_threads_products_inline()] {
            let got = plan.execute(&ops, &mut HeapAlloc, par).unwrap();
            prop_assert_eq!(got.numel(), want.len());
            for (g, w) in got.as_slice().iter().zip(&want) {
                prop_assert!(
                    (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                    "{}, {:?}: {} against {}", spec, par, g, w
                );
            }
        }
    }
}
