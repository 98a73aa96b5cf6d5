//! A plan whose only step multiplies the two inputs as they are runs without the general
//! executor's buffer list, and gives the loops' values: plain, batched, transposed, offset and
//! accumulating products, and the plans that must not take that path. `execute_as` gives the
//! product and the plan's errors, converted to the caller's type, on both paths.

use holdfast_tensor::{Element, TensorRead};

use crate::einsum::EinsumPlan;
use crate::einsum::testing::{complex, real, reference};
use crate::{HeapAlloc, Par};

/// Prepares `spec` on the views `x` and `y`, checks whether the plan is a single product as
/// `single` says, and checks its result against the loops over dense copies of the views.
fn check<T: Element>(spec: &str, x: &TensorRead<'_, T>, y: &TensorRead<'_, T>, single: bool) {
    let ops = [x.clone(), y.clone()];
    let plan = EinsumPlan::prepare(spec, &ops, None).unwrap_or_else(|e| panic!("{spec}: {e}"));
    assert_eq!(plan.single_product().is_some(), single, "{spec}: single product");
    let got = plan.execute(&ops, &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{e}"));
    let want = reference(spec, &x.to_tensor(), &y.to_tensor());
    assert_eq!(got.numel(), want.len(), "{spec}");
    for (g, w) in got.as_slice().iter().zip(&want) {
        assert!((*g - *w).modulus() <= 1e-12 * (1.0 + w.modulus()), "{spec}: {g:?} against {w:?}");
    }
}

#[test]
fn plain_and_batched_products_take_the_single_product() {
    let (a, b) = (real(&[3, 5], 1), real(&[5, 4], 2));
    check("ij,jk->ik", &a.read(), &b.read(), true);
    // The operands in the other order: the step's positions pick them, not their order.
    check("jk,ij->ik", &b.read(), &a.read(), true);
    let (a, b) = (real(&[2, 3, 5], 3), real(&[2, 5, 4], 4));
    check("bij,bjk->bik", &a.read(), &b.read(), true);
    let (a, b) = (complex(&[4, 4], 5), complex(&[4, 4], 6));
    check("ij,jk->ik", &a.read(), &b.read(), true);
}

#[test]
fn strided_and_offset_views_are_read_in_place() {
    // A transposed operand is a GEMM operand with swapped strides: no copy is needed.
    let (a, b) = (real(&[5, 3], 7), real(&[5, 4], 8));
    check("ij,jk->ik", &a.read().transpose(), &b.read(), true);
    // A slice starts at an offset into its storage, which the product must honour.
    let (a, b) = (real(&[6, 5], 9), real(&[5, 7], 10));
    let a = a.read().slice(0, 2..5).unwrap();
    let b = b.read().slice(1, 3..7).unwrap();
    assert!(a.offset() > 0 && b.offset() > 0);
    check("ij,jk->ik", &a, &b, true);
}

#[test]
fn a_contracted_label_the_output_keeps_outside_the_product_accumulates_or_loops() {
    // Whatever the planner makes of these, the results must match the loops; the ones it
    // keeps as one product check that path's outer loops and accumulation.
    let (a, b) = (real(&[3, 4, 2], 11), real(&[4, 2, 5], 12));
    for spec in ["ijc,jcl->il", "ijc,jcl->icl", "ijc,jcl->lic"] {
        let ops = [a.read(), b.read()];
        let single = EinsumPlan::prepare(spec, &ops, None).unwrap().single_product().is_some();
        check(spec, &a.read(), &b.read(), single);
    }
}

#[test]
fn plans_with_a_presum_copy_or_second_step_do_not() {
    // `k` is summed away in `a` before the product: a presum.
    let (a, b) = (real(&[3, 4, 2], 13), real(&[4, 5], 14));
    check("ijk,jl->il", &a.read(), &b.read(), false);
    // An elementwise product has no GEMM at all.
    let (a, b) = (real(&[3, 4], 15), real(&[3, 4], 16));
    check("ij,ij->ij", &a.read(), &b.read(), false);
}

#[test]
fn contracted_loops_add_into_one_output() {
    // p (and q) are contracted but apart from z in the left operand: the product loops over
    // them and adds every GEMM into one zeroed output, copying neither operand. With p alone
    // the loop is the GEMM's batch; with q and z nested in opposite orders in the operands, a
    // second contracted loop runs outside the batch. (The right operand's columns y have unit
    // stride, so nano-gemm reads every product in place.)
    let (a, b) = (real(&[6, 8, 16], 17), real(&[6, 16, 8], 18));
    check("pxz,pzy->xy", &a.read(), &b.read(), true);
    let (a, b) = (real(&[3, 8, 2, 16], 19), real(&[16, 2, 3, 8], 20));
    check("pxqz,zqpy->xy", &a.read(), &b.read(), true);
    let plan = EinsumPlan::prepare("pxqz,zqpy->xy", &[a.read(), b.read()], None).unwrap();
    let (_, g) = plan.single_product().unwrap();
    assert!(g.accumulate && g.outer.is_some(), "{:?}", plan.steps);
}

/// A caller's error type, to see `execute_as` convert a kernel error where it arises.
#[derive(Debug, PartialEq)]
struct Wrapped(crate::KernelError);

impl From<crate::KernelError> for Wrapped {
    fn from(e: crate::KernelError) -> Self {
        Wrapped(e)
    }
}

#[test]
fn execute_as_gives_the_product_and_converts_its_errors_on_both_paths() {
    let (a, b) = (real(&[3, 5], 21), real(&[5, 4], 22));
    let (x, y) = (real(&[3, 4, 2], 23), real(&[4, 5], 24));
    for (spec, ops, single) in
        [("ij,jk->ik", [a.read(), b.read()], true), ("ijk,jl->il", [x.read(), y.read()], false)]
    {
        let plan = EinsumPlan::prepare(spec, &ops, None).unwrap();
        assert_eq!(plan.single_product().is_some(), single, "{spec}");
        let got: Result<_, Wrapped> = plan.execute_as(&ops, &mut HeapAlloc, Par::Seq);
        let got = got.unwrap_or_else(|e| panic!("{spec}: {e:?}"));
        let want = reference(spec, &ops[0].to_tensor(), &ops[1].to_tensor());
        assert_eq!(got.numel(), want.len(), "{spec}");
        for (g, w) in got.as_slice().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{spec}: {g} against {w}");
        }
        // The operands of the other plan: a mismatch, wrapped in the caller's type.
        let other = if single { [x.read(), y.read()] } else { [a.read(), b.read()] };
        let got: Result<_, Wrapped> = plan.execute_as(&other, &mut HeapAlloc, Par::Seq);
        let want = crate::KernelError::PlanMismatch { reason: "operand shape or strides" };
        assert_eq!(got.unwrap_err(), Wrapped(want), "{spec}");
        // Operands of another element type.
        let (p, q) = (complex(ops[0].shape(), 25), complex(ops[1].shape(), 26));
        let got: Result<_, Wrapped> =
            plan.execute_as(&[p.read(), q.read()], &mut HeapAlloc, Par::Seq);
        let want = crate::KernelError::PlanMismatch { reason: "element type" };
        assert_eq!(got.unwrap_err(), Wrapped(want), "{spec}");
    }
}
