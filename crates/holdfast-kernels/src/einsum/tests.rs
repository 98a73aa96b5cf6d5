//! Unit tests of einsum planning: parsing details, path checks, the greedy path and plan keys.

use holdfast_tensor::Tensor;

use super::path::{check_path, greedy_path};
use super::testing::{real, reference};
use super::{EinsumPlan, PlanKey, parse};
use crate::KernelError;

#[test]
fn implicit_output_is_sorted_labels_seen_once() {
    assert_eq!(parse("ba,ac").unwrap_or_else(|e| panic!("{e}")).output_string(), "bc");
    assert_eq!(parse("ii").unwrap_or_else(|e| panic!("{e}")).output_string(), "");
    assert_eq!(parse("Ñ,ë").unwrap_or_else(|e| panic!("{e}")).output_string(), "Ñë");
    assert_eq!(parse("").unwrap_or_else(|e| panic!("{e}")).num_inputs(), 1);
}

#[test]
fn paths_are_checked() {
    assert_eq!(check_path(3, &[(0, 1), (0, 1)]), Ok(()));
    assert_eq!(check_path(1, &[]), Ok(()));
    assert_eq!(
        check_path(3, &[(2, 2), (0, 1)]),
        Err(KernelError::PathRepeatedIndex { step: 0, index: 2 })
    );
    assert_eq!(check_path(2, &[]), Err(KernelError::IncompletePath { remaining: 2 }));
}

#[test]
fn greedy_paths_are_complete_and_valid() {
    // A ring of four matrices, and a disconnected pair.
    let ring = vec![vec![0, 1], vec![1, 2], vec![2, 3], vec![3, 0]];
    let p = greedy_path(&ring, &[], &[2, 3, 4, 5]);
    assert_eq!(p.len(), 3);
    assert_eq!(check_path(4, &p), Ok(()));
    let apart = vec![vec![0], vec![1], vec![2]];
    let p = greedy_path(&apart, &[0, 1, 2], &[2, 3, 4]);
    assert_eq!(check_path(3, &p), Ok(()));
}

#[test]
fn plans_record_their_path_and_refuse_other_dtypes() {
    let a = Tensor::<f64>::zeros([2, 3]);
    let b = Tensor::<f64>::zeros([3, 4]);
    let plan = EinsumPlan::prepare("ij,jk->ik", &[a.read(), b.read()], Some(&[(1, 0)]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.path(), &[(1, 0)]);
    assert_eq!(plan.num_steps(), 1);
    assert_eq!(plan.flops(), 2 * 2 * 3 * 4);
    assert!(plan.approx_bytes() > 0);
    let a32 = Tensor::<f32>::zeros([2, 3]);
    let b32 = Tensor::<f32>::zeros([3, 4]);
    let err = plan.execute(&[a32.read(), b32.read()], &mut crate::HeapAlloc, crate::Par::Seq);
    assert_eq!(err.err(), Some(KernelError::PlanMismatch { reason: "element type" }));
}

#[test]
fn keys_differ_by_content() {
    let a = Tensor::<f64>::zeros([2, 3]);
    let a32 = Tensor::<f32>::zeros([2, 3]);
    let k = PlanKey::new("ij->j", &[a.read()], None);
    assert_eq!(k, PlanKey::new("ij->j", &[a.read()], None));
    assert_ne!(k, PlanKey::new("ij->i", &[a.read()], None));
    assert_ne!(k, PlanKey::new("ij->j", &[a32.read()], None));
    assert_ne!(k, PlanKey::new("ij->j", &[a.read()], Some(&[])));
    assert_ne!(k.fingerprint(), PlanKey::new("ji->j", &[a.read()], None).fingerprint());
}

/// `matches` agrees with key equality for specs of every length from 0 to 40 bytes, with one
/// byte changed at each position in turn (the short-spec compare reads words from both ends).
#[test]
fn recent_match_sees_every_spec_byte() {
    let a = Tensor::<f64>::zeros([2]);
    for n in 0..=40 {
        let spec: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let key = PlanKey::new(&spec, &[a.read()], None).into_owned();
        assert!(key.matches(&spec, &[a.read()], None), "length {n}");
        for at in 0..n {
            let mut other = spec.clone().into_bytes();
            other[at] = b'Z';
            let other = String::from_utf8(other).unwrap();
            assert!(!key.matches(&other, &[a.read()], None), "length {n}, byte {at}");
        }
        let longer = format!("{spec}a");
        assert!(!key.matches(&longer, &[a.read()], None), "length {n} + 1");
    }
}

/// Dense row-major `[d0, d1, d2]` values `f(i, j, k)`.
fn cube(d: [usize; 3], f: impl Fn(usize, usize, usize) -> f64) -> Tensor<f64> {
    let mut v = Vec::with_capacity(d[0] * d[1] * d[2]);
    for i in 0..d[0] {
        for j in 0..d[1] {
            for k in 0..d[2] {
                v.push(f(i, j, k));
            }
        }
    }
    Tensor::from_vec(d, v).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn last_step_writes_an_interleaved_output_in_place() {
    // Rows p, a (from A) and columns q, b (from B) interleave in the output: the GEMM loops
    // over p and q and writes each (a × b) block straight into the output, with no final copy.
    let (p, a, k, q, b) = (2, 16, 5, 2, 16);
    let x = cube([p, a, k], |i, j, l| (i * 7 + j * 3 + l) as f64 * 0.25);
    let y = cube([k, q, b], |i, j, l| (i * 5 + j * 11 + l) as f64 * 0.5 - 3.0);
    let plan = EinsumPlan::prepare("pak,kqb->pqab", &[x.read(), y.read()], None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(plan.finish, super::plan::Finish::Move), "{:?}", plan.finish);
    let out = plan.execute(&[x.read(), y.read()], &mut crate::HeapAlloc, crate::Par::Seq);
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    let (xs, ys) = (x.as_slice(), y.as_slice());
    for ip in 0..p {
        for iq in 0..q {
            for ia in 0..a {
                for ib in 0..b {
                    let want: f64 =
                        (0..k).map(|l| xs[(ip * a + ia) * k + l] * ys[(l * q + iq) * b + ib]).sum();
                    let got = out.as_slice()[((ip * q + iq) * a + ia) * b + ib];
                    assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} {want}");
                }
            }
        }
    }
}

#[test]
fn intermediates_are_laid_out_for_their_consumer() {
    // The first step's result holds i, a, b, c; the second contracts i and b and keeps a and c,
    // which a plain (i a | b c) layout would have to permute first.
    let x = cube([4, 5, 6], |i, j, k| (i + 2 * j + 3 * k) as f64);
    let y = cube([6, 7, 8], |i, j, k| (i * j + k) as f64);
    let z = cube([4, 7, 3], |i, j, k| (i + j * k) as f64 - 1.0);
    let ops = [x.read(), y.read(), z.read()];
    let plan = EinsumPlan::prepare("iaj,jbc,ibd->acd", &ops, Some(&[(0, 1), (0, 1)]))
        .unwrap_or_else(|e| panic!("{e}"));
    // Only the small third operand may be copied, never the 1120-element intermediate.
    let copied: Vec<usize> = plan
        .steps
        .iter()
        .filter_map(|s| match &s.core {
            super::plan::Core::Gemm(g) => Some(g.a_copy.iter().chain(&g.b_copy).map(|c| c.len)),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(copied.iter().all(|&len| len <= 84), "{copied:?}");
}

#[test]
fn a_broadcast_product_reads_its_larger_operand_in_order() {
    // The first step multiplies a small `ab` into the larger `cab`; its result feeds another
    // broadcast product, which wants no order. Laid out as `cab`, the larger operand is read in
    // its own order and neither is copied; laid out `a`'s way (`abc`) it would be copied whole.
    let (x, y, z) = (real(&[3, 5], 1), real(&[4, 3, 5], 2), real(&[4, 3, 5], 3));
    let ops = [x.read(), y.read(), z.read()];
    let plan = EinsumPlan::prepare("ab,cab,cab->cab", &ops, Some(&[(0, 1), (0, 1)]))
        .unwrap_or_else(|e| panic!("{e}"));
    let first = &plan.steps[0].core;
    assert!(matches!(first, super::plan::Core::Map { copy: None, .. }), "{first:?}");
    let out = plan.execute(&ops, &mut crate::HeapAlloc, crate::Par::Seq);
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    let (xs, ys, zs) = (x.as_slice(), y.as_slice(), z.as_slice());
    for c in 0..4 {
        for a in 0..3 {
            for b in 0..5 {
                let at = (c * 3 + a) * 5 + b;
                let want = xs[a * 5 + b] * ys[at] * zs[at];
                assert!((out.as_slice()[at] - want).abs() <= 1e-12, "({c}, {a}, {b})");
            }
        }
    }
}

#[test]
fn a_large_operand_read_in_part_is_looped_not_copied() {
    // mera_open's last step, scaled down. The output wants the large operand's kept labels in
    // the order p c d e b a; it holds them as a b p c d e. Copying it would make them one matrix
    // axis. Instead its matrix axis is the part of them it reads in place (p c d e), and b and
    // a become loops. Only the small operand, read in another order than it holds, is copied.
    let spec = "fgabpcde,xfgy->pcdebayx";
    let (x, y) = (real(&[2, 3, 2, 2, 2, 4, 4, 16], 1), real(&[4, 2, 3, 4], 2));
    let plan =
        EinsumPlan::prepare(spec, &[x.read(), y.read()], None).unwrap_or_else(|e| panic!("{e}"));
    for step in &plan.steps {
        let super::plan::Core::Gemm(g) = &step.core else { panic!("{:?}", step.core) };
        let copied: Vec<usize> = g.a_copy.iter().chain(&g.b_copy).map(|c| c.len).collect();
        assert!(g.blocks.is_none() && copied.iter().all(|&len| len <= 96), "{g:?}");
    }
    let out = plan.execute(&[x.read(), y.read()], &mut crate::HeapAlloc, crate::Par::Seq);
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    let want = reference(spec, &x, &y);
    for (got, want) in out.as_slice().iter().zip(&want) {
        assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} {want}");
    }
    assert_eq!(out.as_slice().len(), want.len());
}

#[test]
fn contracted_labels_that_do_not_nest_are_looped_not_copied() {
    // The left operand holds the contracted p and z apart in memory (p outermost, z
    // innermost, a kept label between): `pz` cannot be one of its matrix axes. The step loops
    // over p and adds each (x × z)·(z × y) product into the same C, copying neither operand.
    // The first shape runs through nano-gemm, which reads it in place because the right
    // operand is `pzy` (y with unit stride); the second through faer, the right operand
    // holding p and z apart too.
    for (p, x, z, y, zy) in [(6, 8, 16, 8, true), (3, 19, 19, 19, false)] {
        let a = cube([p, x, z], |i, j, k| (i * 3 + j * 7 + k) as f64 * 0.125 - 2.0);
        let bv = |ip: usize, iy: usize, iz: usize| (ip * 5 + iy + iz * 11) as f64 * 0.25 - 4.0;
        let (b, spec) = if zy {
            (cube([p, z, y], |i, k, j| bv(i, j, k)), "pxz,pzy->xy")
        } else {
            (cube([p, y, z], bv), "pxz,pyz->xy")
        };
        let plan = EinsumPlan::prepare(spec, &[a.read(), b.read()], None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.num_operand_copies(), 0, "{:?}", plan.steps);
        let looped = plan.steps.iter().any(|s| match &s.core {
            super::plan::Core::Gemm(g) => g.accumulate,
            _ => false,
        });
        assert!(looped, "{:?}", plan.steps);
        let av = a.as_slice();
        let reference = |ix: usize, iy: usize| -> f64 {
            let mut acc = 0.0;
            for ip in 0..p {
                for iz in 0..z {
                    acc += av[(ip * x + ix) * z + iz] * bv(ip, iy, iz);
                }
            }
            acc
        };
        // A recycled, dirty buffer for C must not leak into the sum: run twice through a pool.
        let mut pool = DirtyPool::default();
        for _ in 0..2 {
            let out = plan.execute(&[a.read(), b.read()], &mut pool, crate::Par::Seq);
            let out = out.unwrap_or_else(|e| panic!("{e}"));
            for ix in 0..x {
                for iy in 0..y {
                    let (got, want) = (out.as_slice()[ix * y + iy], reference(ix, iy));
                    assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} {want}");
                }
            }
            crate::KernelAlloc::give(&mut pool, out.into_parts().0);
        }
    }
}

/// An allocator that hands back given buffers with their old values (as the engine's pool may):
/// a kernel that reads what it did not write sees the previous result.
#[derive(Default)]
struct DirtyPool {
    free: Vec<Box<dyn std::any::Any>>,
}

impl crate::KernelAlloc for DirtyPool {
    fn take<T: holdfast_tensor::Element>(&mut self, len: usize) -> Vec<T> {
        let fits =
            |b: &Box<dyn std::any::Any>| b.downcast_ref::<Vec<T>>().is_some_and(|v| v.len() >= len);
        match self.free.iter().position(fits).map(|i| self.free.swap_remove(i).downcast::<Vec<T>>())
        {
            Some(Ok(mut v)) => {
                v.truncate(len);
                *v
            }
            _ => vec![T::ZERO; len],
        }
    }

    fn give<T: holdfast_tensor::Element>(&mut self, buf: Vec<T>) {
        self.free.push(Box::new(buf));
    }
}

#[test]
fn small_products_nano_gemm_would_copy_read_one_copied_operand() {
    use super::testing::{real, reference};
    let prepare = |spec: &str, a: &Tensor<f64>, b: &Tensor<f64>| {
        EinsumPlan::prepare(spec, &[a.read(), b.read()], None).unwrap_or_else(|e| panic!("{e}"))
    };
    // Operands copied, whole before the product or item by item with it.
    let copies = |plan: &EinsumPlan| -> usize {
        plan.steps
            .iter()
            .map(|s| match &s.core {
                super::plan::Core::Gemm(g) => [true, false]
                    .into_iter()
                    .filter(|&left| {
                        let whole = if left { &g.a_copy } else { &g.b_copy };
                        whole.is_some() || g.blocks.as_ref().is_some_and(|b| b.blocks_side(left))
                    })
                    .count(),
                _ => 0,
            })
            .sum()
    };
    // Both operands hold the contracted j innermost: in neither orientation of a 16 × 16 × 16
    // item do the left operand and the output have unit row stride, so nano-gemm would copy
    // through its scratch on each of the 40 items. One copy of an operand, its kept axis
    // innermost, lets nano-gemm read every item in place.
    let (a, b) = (real(&[40, 16, 16], 1), real(&[40, 16, 16], 2));
    let plan = prepare("bij,bkj->bik", &a, &b);
    assert_eq!(copies(&plan), 1, "{:?}", plan.steps);
    let got = plan
        .execute(&[a.read(), b.read()], &mut crate::HeapAlloc, crate::Par::Seq)
        .unwrap_or_else(|e| panic!("{e}"));
    let want = reference("bij,bkj->bik", &a, &b);
    assert_eq!(got.shape(), &[40, 16, 16]);
    for (g, w) in got.as_slice().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{g} against {w}");
    }
    // Operands nano-gemm reads in place, and items too large for it (faer packs them anyway),
    // are not copied.
    assert_eq!(copies(&prepare("bij,bjk->bik", &a, &b)), 0);
    let (a, b) = (real(&[4, 32, 32], 3), real(&[4, 32, 32], 4));
    assert_eq!(copies(&prepare("bij,bkj->bik", &a, &b)), 0);
}

#[test]
fn a_scattered_elementwise_factor_is_copied_into_the_output_first() {
    use super::plan::Core;
    use super::testing::{complex, real, reference};
    use crate::{FanOut, Par};
    // Which factor each plan copies into the output: `Some(true)` for B, `Some(false)` for A.
    let copied = |plan: &EinsumPlan| -> Vec<Option<bool>> {
        plan.steps
            .iter()
            .filter_map(|s| match &s.core {
                Core::Map { copy, .. } => Some(copy.as_ref().map(|c| c.b)),
                _ => None,
            })
            .collect()
    };
    let two = Par::Rayon(std::num::NonZeroUsize::MIN.saturating_add(1), &FanOut::ALWAYS);
    // B reversed against the output (copy B), A reversed (copy A), an outer product whose
    // right factor is strided along the output's innermost axis (copy B), B contiguous along
    // the output's innermost axis for runs of 5 (copy B) or 9 (fused: a run covers a cache
    // line), and a product whose factors are both aligned with the output (fused).
    // (spec, x's shape, y's shape, the copied factor)
    type Case = (&'static str, &'static [usize], &'static [usize], Option<bool>);
    let cases: [Case; 6] = [
        ("ijk,kji->ijk", &[3, 4, 5], &[5, 4, 3], Some(true)),
        ("ijk,kji->kji", &[3, 4, 5], &[5, 4, 3], Some(false)),
        ("ij,kj->ijk", &[6, 7], &[5, 7], Some(true)),
        ("ijk,jik->ijk", &[3, 4, 5], &[4, 3, 5], Some(true)),
        ("ijk,jik->ijk", &[3, 4, 9], &[4, 3, 9], None),
        ("ijk,ijk->ijk", &[3, 4, 5], &[3, 4, 5], None),
    ];
    for (spec, xs, ys, want) in cases {
        let (x, y) = (real(xs, 5), real(ys, 6));
        let plan = EinsumPlan::prepare(spec, &[x.read(), y.read()], None)
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(copied(&plan), vec![want], "{spec}");
        let expect = reference(spec, &x, &y);
        for par in [Par::Seq, two] {
            let got = plan
                .execute(&[x.read(), y.read()], &mut crate::HeapAlloc, par)
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(got.as_slice(), expect.as_slice(), "{spec}");
        }
        // Complex factors: the product is the loops' x · y, element by element.
        let (x, y) = (complex(xs, 7), complex(ys, 8));
        let got = EinsumPlan::prepare(spec, &[x.read(), y.read()], None)
            .and_then(|p| p.execute(&[x.read(), y.read()], &mut crate::HeapAlloc, Par::Seq))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(got.as_slice(), reference(spec, &x, &y).as_slice(), "{spec}");
    }
}

#[test]
fn a_result_its_consumer_copies_ends_with_the_labels_that_copy_puts_last() {
    // The first step copies B (its contracted x and y lie apart), so the order of B's kept
    // labels p q r s in the result is free. The consumer cannot read the result in place: it
    // contracts b and q, keeps e r s and has a p as batch labels, each group mixing labels of A
    // and of B. Its copy ends with e r s. Laid out p q r s (r s last), the result gives that
    // copy runs of four elements; laid out in B's own order, r s p q, single elements.
    let ops = [real(&[2; 5], 1), real(&[2; 6], 2), real(&[2, 2, 2, 2, 3], 3)];
    let reads: Vec<_> = ops.iter().map(Tensor::read).collect();
    let spec = "abexy,rxsypq,apbqd->apersd";
    let plan = EinsumPlan::prepare(spec, &reads, Some(&[(0, 1), (0, 1)]))
        .unwrap_or_else(|e| panic!("{e}"));
    let copies: Vec<_> = plan
        .steps
        .iter()
        .map(|s| match &s.core {
            super::plan::Core::Gemm(g) if g.a_copy.is_none() => g.b_copy.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    // The contiguous source run the copy reads at its innermost axes.
    let run = |c: &super::plan::CopyOp| {
        let mut run = 1;
        for (&d, &s) in c.shape.iter().zip(&c.strides).rev() {
            if s != run {
                break;
            }
            run *= d;
        }
        run
    };
    match &copies[..] {
        [Some(first), Some(second)] => {
            assert_eq!(first.len, 64, "{first:?}");
            assert_eq!((second.len, run(second)), (128, 4), "{second:?}");
        }
        _ => panic!("{copies:?}"),
    }
    let out = plan.execute(&reads, &mut crate::HeapAlloc, crate::Par::Seq);
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    let want = super::testing::reference_many(spec, &ops.iter().collect::<Vec<_>>());
    assert_eq!(out.as_slice().len(), want.len());
    for (got, want) in out.as_slice().iter().zip(&want) {
        assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} {want}");
    }
}
