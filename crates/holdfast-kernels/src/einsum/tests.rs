//! Unit tests of einsum planning: parsing details, path checks, the greedy path and plan keys.

use holdfast_tensor::Tensor;

use super::path::{check_path, greedy_path};
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
