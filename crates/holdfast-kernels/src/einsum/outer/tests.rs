//! Tests of the dealt outer loop: when a loop is dealt, and that a dealt loop gives the loop's
//! result.

use std::num::NonZeroUsize;

use holdfast_tensor::Tensor;

use super::{Deal, deal};
use crate::einsum::EinsumPlan;
use crate::einsum::plan::{Core, GemmCore};
use crate::einsum::testing::{complex, real, reference};
use crate::matmul::batch::PreparedGemm;
use crate::matmul::operand::{BatchSpec, MatSpec};
use crate::strided::Nest;
use crate::{FanOut, HeapAlloc, Par};

/// A call of two products of `2·4·2·16 = 256` flops stays on one thread; eight fan out.
static SMALL_ALONE: FanOut = FanOut { gemm: 1024, ..FanOut::ALWAYS };

fn two(sizes: &'static FanOut) -> Par {
    Par::Rayon(NonZeroUsize::new(2).unwrap_or(NonZeroUsize::MIN), sizes)
}

/// The step loops over the batch label e and over f, a kept label B holds apart from g (n
/// between them); f becomes the batch of each call. e is the output's outermost label: each
/// position of e writes its own `f × t × g` block of C.
const SPEC: &str = "etn,efng->eftg";
const SHAPES: [&[usize]; 2] = [&[8, 4, 2], &[8, 2, 2, 16]];

fn looped(plan: &EinsumPlan) -> (&GemmCore, &Nest) {
    match &plan.steps[..] {
        [step] => match &step.core {
            Core::Gemm(g) => match &g.outer {
                Some(nest) => (g, nest),
                None => panic!("no loop: {g:?}"),
            },
            other => panic!("{other:?}"),
        },
        steps => panic!("{steps:?}"),
    }
}

#[test]
fn a_loop_of_small_products_writing_apart_is_dealt() {
    let (x, y) = (real(SHAPES[0], 1), real(SHAPES[1], 2));
    let plan =
        EinsumPlan::prepare(SPEC, &[x.read(), y.read()], None).unwrap_or_else(|e| panic!("{e}"));
    let (g, nest) = looped(&plan);
    assert_eq!(nest.shape.as_slice(), &[8]);
    // Eight positions over two threads, four runs each: runs of one position.
    assert_eq!(deal(g, nest, two(&SMALL_ALONE)), Some(Deal { threads: 2, rows: 1, stride: 128 }));
    // One thread, or products that fan out on their own: the loop runs in order.
    assert_eq!(deal(g, nest, Par::Seq), None);
    assert_eq!(deal(g, nest, two(&FanOut::ALWAYS)), None);
    // Too little work in all to fan out.
    static LARGE: FanOut = FanOut { gemm: 1 << 20, ..FanOut::ALWAYS };
    assert_eq!(deal(g, nest, two(&LARGE)), None);
}

/// A call of two `4 × 2 · 2 × 16` products (items `sc` apart in C, rows 16 apart), looped
/// over `shape` with C strides `so`.
fn core_and_nest(sc: usize, shape: &[usize], so: &[usize], accumulate: bool) -> (GemmCore, Nest) {
    let (a, b) =
        (MatSpec { rows: 4, cols: 2, rs: 2, cs: 1 }, MatSpec { rows: 2, cols: 16, rs: 16, cs: 1 });
    let c = MatSpec { rows: 4, cols: 16, rs: 16, cs: 1 };
    let spec = BatchSpec { batch: 2, a, b, c, sa: 0, sb: 32, sc };
    let gemm = PreparedGemm::new(&spec);
    let core = GemmCore { a_copy: None, b_copy: None, outer: None, gemm, blocks: None, accumulate };
    let zeros: Vec<usize> = vec![0; shape.len()];
    let nest = Nest {
        shape: shape.into(),
        so: so.into(),
        sa: zeros.as_slice().into(),
        sb: zeros.as_slice().into(),
    };
    (core, nest)
}

#[test]
fn positions_are_dealt_only_when_they_write_apart() {
    // A call writes elements 0 to 127 from its position (two 4 × 16 items, 64 apart).
    let par = two(&SMALL_ALONE);
    let dealt = |sc, shape: &[usize], so: &[usize]| {
        let (g, nest) = core_and_nest(sc, shape, so, false);
        deal(&g, &nest, par)
    };
    assert_eq!(dealt(64, &[8], &[128]), Some(Deal { threads: 2, rows: 1, stride: 128 }));
    // The last element of one position is the first of the next.
    assert_eq!(dealt(64, &[8], &[127]), None);
    // Items 256 apart: a call spans the next positions.
    assert_eq!(dealt(256, &[8], &[128]), None);
    // An inner loop widens each position: 3 positions 128 apart reach 383.
    assert_eq!(dealt(64, &[8, 3], &[384, 128]), Some(Deal { threads: 2, rows: 1, stride: 384 }));
    assert_eq!(dealt(64, &[8, 3], &[383, 128]), None);
    // Sixteen positions: runs of two, four per thread.
    assert_eq!(dealt(64, &[16], &[128]), Some(Deal { threads: 2, rows: 2, stride: 128 }));
    // One position has nothing to deal; positions that add into C are never dealt.
    assert_eq!(dealt(64, &[1, 8], &[1024, 128]), None);
    let (g, nest) = core_and_nest(64, &[8], &[128], true);
    assert_eq!(deal(&g, &nest, par), None);
}

#[test]
fn a_dealt_loop_gives_the_loops_result() {
    for (e, g) in [(8, 16), (7, 16), (2, 16), (13, 16), (3, 8)] {
        let (x, y) = (real(&[e, 4, 2], 3), real(&[e, 2, 2, g], 4));
        let plan = EinsumPlan::prepare(SPEC, &[x.read(), y.read()], None)
            .unwrap_or_else(|err| panic!("{err}"));
        let (gc, nest) = looped(&plan);
        assert_eq!(deal(gc, nest, two(&SMALL_ALONE)).is_some(), e * g * 32 >= 1024, "{e} {g}");
        let run = |par| plan.execute(&[x.read(), y.read()], &mut HeapAlloc, par);
        let one: Tensor<f64> = run(Par::Seq).unwrap_or_else(|err| panic!("{err}"));
        let dealt = run(two(&SMALL_ALONE)).unwrap_or_else(|err| panic!("{err}"));
        // The same products on the same operands: the same bits.
        assert_eq!(dealt.as_slice(), one.as_slice(), "e = {e}, g = {g}");
        let want = reference(SPEC, &x, &y);
        assert_eq!(one.as_slice().len(), want.len());
        for (got, want) in one.as_slice().iter().zip(&want) {
            assert!((got - want).abs() <= 1e-12, "{got} {want}");
        }
    }
    let (x, y) = (complex(&[9, 4, 2], 5), complex(&[9, 2, 2, 16], 6));
    let plan = EinsumPlan::prepare(SPEC, &[x.read(), y.read()], None)
        .unwrap_or_else(|err| panic!("{err}"));
    let run = |par| plan.execute(&[x.read(), y.read()], &mut HeapAlloc, par);
    let one = run(Par::Seq).unwrap_or_else(|err| panic!("{err}"));
    let dealt = run(two(&SMALL_ALONE)).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(dealt.as_slice(), one.as_slice());
}
