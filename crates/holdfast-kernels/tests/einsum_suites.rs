//! The expressions of numpy's and opt_einsum's own einsum test suites (numpy's
//! `_core/tests/test_einsum.py`, opt_einsum's `tests/test_contract.py` and
//! `tests/test_edge_cases.py`), run on holdfast's einsum (SPEC T6): every expression those suites
//! evaluate agrees with a brute-force reference, along the greedy path, a left-to-right pair
//! path, and general opt_einsum paths (one n-ary step; a one-operand step first); every
//! expression numpy rejects is a typed error.
//!
//! The expressions are the suites' data; the operands, dimensions and checks are this file's.
//! One deliberate difference from numpy: digits are labels here (the einsum-benchmark instances
//! use them past the 52 letters); numpy's suite does not test them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

mod support;

use holdfast_kernels::einsum::{HashMapPlanCache, einsum, einsum_cached, pairs_of_steps, parse};
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_tensor::{Tensor, TensorRead, c64};
use support::{SplitMix64, random_complex, reference_einsum_with_magnitude};

/// opt_einsum's `tests` list of `test_contract.py` (scalars, Hadamard products, index
/// transformations, complex contractions, collapses, outer products, earlier failures, inner
/// products, GEMM cases, traces inside products, random cases).
const OPT_EINSUM_CONTRACT: &[&str] = &[
    "a,->a",
    "ab,->ab",
    ",ab,->ab",
    ",,->",
    "a,ab,abc->abc",
    "a,b,ab->ab",
    "ea,fb,gc,hd,abcd->efgh",
    "ea,fb,abcd,gc,hd->efgh",
    "abcd,ea,fb,gc,hd->efgh",
    "acdf,jbje,gihb,hfac,gfac,gifabc,hfac",
    "cd,bdhe,aidb,hgca,gc,hgibcd,hgac",
    "abhe,hidj,jgba,hiab,gab",
    "bde,cdh,agdb,hica,ibd,hgicd,hiac",
    "chd,bde,agbc,hiad,hgc,hgi,hiad",
    "chd,bde,agbc,hiad,bdi,cgh,agdb",
    "bdhe,acad,hiab,agac,hibd",
    "ab,ab,c->",
    "ab,ab,c->c",
    "ab,ab,cd,cd->",
    "ab,ab,cd,cd->ac",
    "ab,ab,cd,cd->cd",
    "ab,ab,cd,cd,ef,ef->",
    "ab,cd,ef->abcdef",
    "ab,cd,ef->acdf",
    "ab,cd,de->abcde",
    "ab,cd,de->be",
    "ab,bcd,cd->abcd",
    "ab,bcd,cd->abd",
    "eb,cb,fb->cef",
    "dd,fb,be,cdb->cef",
    "bca,cdb,dbf,afc->",
    "dcc,fce,ea,dbf->ab",
    "fdf,cdd,ccd,afe->ae",
    "abcd,ad",
    "ed,fcd,ff,bcf->be",
    "baa,dcf,af,cde->be",
    "bd,db,eac->ace",
    "fff,fae,bef,def->abd",
    "efc,dbc,acf,fd->abe",
    "ab,ab",
    "ab,ba",
    "abc,abc",
    "abc,bac",
    "abc,cba",
    "ab,bc",
    "ab,cb",
    "ba,bc",
    "ba,cb",
    "abcd,cd",
    "abcd,ab",
    "abcd,cdef",
    "abcd,cdef->feba",
    "abcd,efdc",
    "aab,bc->ac",
    "ab,bcc->ac",
    "aab,bcc->ac",
    "baa,bcc->ac",
    "aab,ccb->ac",
    "aab,fa,df,ecc->bde",
    "ecb,fef,bad,ed->ac",
    "bcf,bbb,fbf,fc->",
    "bb,ff,be->e",
    "bcb,bb,fc,fff->",
    "fbb,dfd,fc,fc->",
    "afd,ba,cc,dc->bf",
    "adb,bc,fa,cfc->d",
    "bbd,bda,fc,db->acf",
    "dba,ead,cad->bce",
    "aef,fbc,dca->bde",
];

/// Each label's dimension: small enough for the brute-force reference over ten labels.
fn dim(label: char) -> usize {
    if matches!(label, 'b' | 'e' | 'h') { 3 } else { 2 }
}

/// Random complex operands for `spec`, each label at [`dim`].
fn operands_for(spec: &str, seed: u64) -> Vec<Tensor<c64>> {
    let inputs = spec.split("->").next().unwrap();
    let mut rng = SplitMix64(seed);
    inputs
        .split(',')
        .map(|term| {
            let shape: Vec<usize> = term.chars().map(dim).collect();
            random_complex(&shape, &mut rng)
        })
        .collect()
}

/// `got` agrees with the brute-force reference of `spec` on `operands` (to rounding, relative to
/// the magnitude of the terms).
fn check(spec: &str, how: &str, operands: &[TensorRead<'_, c64>], got: &Tensor<c64>) {
    let (shape, want, magnitude) = reference_einsum_with_magnitude(spec, operands);
    assert_eq!(got.shape(), shape.as_slice(), "{spec} ({how}): shape");
    let scale = magnitude.iter().fold(0.0f64, |m, &x| m.max(x)).max(1e-300);
    let err = got.as_slice().iter().zip(&want).fold(0.0f64, |m, (g, w)| m.max((g - w).norm()));
    assert!(err <= 1e-12 * scale, "{spec} ({how}): error {err:e} of scale {scale:e}");
}

/// Runs `spec` along the pair path `pairs`, planned and cached.
fn along(spec: &str, operands: &[TensorRead<'_, c64>], pairs: &[(usize, usize)]) -> Tensor<c64> {
    let mut cache = HashMapPlanCache::default();
    einsum_cached(spec, operands, Some(pairs), &mut cache, &mut HeapAlloc, Par::Seq)
        .unwrap_or_else(|e| panic!("{spec} along {pairs:?}: {e}"))
}

#[test]
fn opt_einsums_contract_suite_agrees_along_every_kind_of_path() {
    for (k, &spec) in OPT_EINSUM_CONTRACT.iter().enumerate() {
        let owned = operands_for(spec, 1000 + k as u64);
        let ops: Vec<TensorRead<'_, c64>> = owned.iter().map(Tensor::read).collect();
        let n = ops.len();
        let greedy =
            einsum(spec, &ops, &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{spec}: {e}"));
        check(spec, "greedy", &ops, &greedy);
        // Left to right: the first two, then the running result with the next.
        let left: Vec<(usize, usize)> = (1..n).map(|_| (0, 1)).collect();
        check(spec, "left to right", &ops, &along(spec, &ops, &left));
        // One step of every operand (opt_einsum's `[(0, 1, …, n-1)]`).
        let all: Vec<usize> = (0..n).collect();
        let pairs = pairs_of_steps(n, &[&all]).unwrap();
        check(spec, "one n-ary step", &ops, &along(spec, &ops, &pairs));
        // The last operand alone first (it moves to the end), then the rest in reverse order,
        // then everything.
        let reversed: Vec<usize> = (0..n).rev().collect();
        let last = [n - 1];
        let steps: [&[usize]; 2] = [&last, &reversed];
        let pairs = pairs_of_steps(n, &steps).unwrap();
        check(spec, "one-operand step, then reversed", &ops, &along(spec, &ops, &pairs));
    }
}

/// `a` broadcast to `shape` (numpy's `broadcast_to` on size-1 axes), as a dense copy.
fn broadcast(a: &Tensor<c64>, shape: &[usize]) -> Tensor<c64> {
    let n: usize = shape.iter().product();
    let mut data = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        let src: Vec<usize> =
            idx.iter().zip(a.shape()).map(|(&i, &d)| if d == 1 { 0 } else { i }).collect();
        data.push(a.read().get(&src).unwrap());
        for ax in (0..shape.len()).rev() {
            idx[ax] += 1;
            if idx[ax] < shape[ax] {
                break;
            }
            idx[ax] = 0;
        }
    }
    Tensor::from_vec(shape.to_vec(), data).unwrap()
}

/// A spec, its operands' shapes (with size-1 axes) and the shapes numpy broadcasts them to.
type BroadcastCase = (&'static str, &'static [&'static [usize]], &'static [&'static [usize]]);

#[test]
fn opt_einsums_broadcasting_edge_cases_agree() {
    // (spec, shapes with size-1 axes, the full shapes numpy broadcasts them to)
    let cases: &[BroadcastCase] = &[
        ("ijk,kl,jl", &[&[1, 3, 4], &[4, 2], &[3, 2]], &[&[1, 3, 4], &[4, 2], &[3, 2]]),
        (
            "ijk,kl,jl,i->i",
            &[&[1, 3, 4], &[4, 2], &[3, 2], &[5]],
            &[&[5, 3, 4], &[4, 2], &[3, 2], &[5]],
        ),
        (
            "abjk,kl,jl,ab->ab",
            &[&[1, 1, 3, 4], &[4, 2], &[3, 2], &[2, 3]],
            &[&[2, 3, 3, 4], &[4, 2], &[3, 2], &[2, 3]],
        ),
        (
            "ajk,kbl,jl,ab->ab",
            &[&[1, 3, 4], &[4, 1, 2], &[3, 2], &[2, 3]],
            &[&[2, 3, 4], &[4, 3, 2], &[3, 2], &[2, 3]],
        ),
        ("obk,ijk->ioj", &[&[2, 4, 3], &[2, 4, 3]], &[&[2, 4, 3], &[2, 4, 3]]),
        ("ab,bc,bd->acd", &[&[5, 4], &[1, 5], &[4, 2]], &[&[5, 4], &[4, 5], &[4, 2]]),
    ];
    for (k, &(spec, shapes, full)) in cases.iter().enumerate() {
        let mut rng = SplitMix64(77 + k as u64);
        let owned: Vec<Tensor<c64>> = shapes.iter().map(|s| random_complex(s, &mut rng)).collect();
        let ops: Vec<TensorRead<'_, c64>> = owned.iter().map(Tensor::read).collect();
        let got =
            einsum(spec, &ops, &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let expanded: Vec<Tensor<c64>> =
            owned.iter().zip(full.iter()).map(|(t, s)| broadcast(t, s)).collect();
        let reads: Vec<TensorRead<'_, c64>> = expanded.iter().map(Tensor::read).collect();
        check(spec, "broadcast", &reads, &got);
    }
}

/// numpy's `test_einsum_views` and sums: single-operand expressions (with ellipsis) and the plain
/// spec they mean on a rank-3 operand of shape `[3, 3, 3]` (or `[2, 3, 4]` for the axis swap).
#[test]
fn numpys_single_operand_views_agree() {
    let cases: &[(&str, &str, &[usize])] = &[
        ("...", "abc->abc", &[3, 3, 3]),
        ("ji", "ji->ij", &[2, 3]),
        ("ii->i", "ii->i", &[3, 3]),
        ("...ii->...i", "aii->ai", &[3, 3, 3]),
        ("ii...->...i", "iia->ai", &[3, 3, 3]),
        ("...ii->i...", "aii->ia", &[3, 3, 3]),
        ("jii->ij", "jii->ij", &[3, 3, 3]),
        ("ii...->i...", "iia->ia", &[3, 3, 3]),
        ("i...i->i...", "iai->ia", &[3, 3, 3]),
        ("i...i->...i", "iai->ai", &[3, 3, 3]),
        ("iii->i", "iii->i", &[3, 3, 3]),
        ("ijk->jik", "ijk->jik", &[2, 3, 4]),
        ("i->", "i->", &[5]),
        ("...i->...", "abi->ab", &[2, 3, 4]),
        ("i...->...", "iab->ab", &[2, 3, 4]),
        ("ii", "ii", &[4, 4]),
        ("...ii->...", "aii->a", &[2, 3, 3]),
        ("i...i", "iai->a", &[3, 2, 3]),
    ];
    for (k, &(spec, plain, shape)) in cases.iter().enumerate() {
        let a = random_complex::<c64>(shape, &mut SplitMix64(500 + k as u64));
        let ops = [a.read()];
        let got =
            einsum(spec, &ops, &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{spec}: {e}"));
        check(plain, spec, &ops, &got);
        // The same through a one-operand path step.
        let pairs = pairs_of_steps(1, &[&[0]]).unwrap();
        check(plain, "one-operand step", &ops, &along(spec, &ops, &pairs));
    }
}

/// numpy's `test_einsum_errors`: every call numpy rejects is a typed error here (operand shapes
/// as numpy's: `0` is a scalar, `[0, 0]` a vector of 2, `[[0, 0], [0, 0]]` a 2x2 matrix).
#[test]
fn what_numpy_rejects_is_a_typed_error() {
    let scalar = Tensor::<f64>::from_vec(Vec::<usize>::new(), vec![0.0]).unwrap();
    let vector = Tensor::<f64>::zeros([2]);
    let matrix = Tensor::<f64>::zeros([2, 2]);
    let rect = Tensor::<f64>::zeros([2, 3]);
    let (s, v, m, r) = (scalar.read(), vector.read(), matrix.read(), rect.read());
    let cases: &[(&str, Vec<TensorRead<'_, f64>>)] = &[
        ("", vec![]),
        ("", vec![s.clone(), s.clone()]),
        (",", vec![s.clone(), v.clone(), v.clone()]),
        (",", vec![v.clone()]),
        ("i", vec![s.clone()]),
        ("ij", vec![v.clone()]),
        ("...i", vec![s.clone()]),
        ("i...j", vec![v.clone()]),
        ("i...", vec![s.clone()]),
        ("ij...", vec![v.clone()]),
        ("i..", vec![v.clone()]),
        (".i...", vec![v.clone()]),
        ("j->..j", vec![v.clone()]),
        ("j->.j...", vec![v.clone()]),
        ("i%...", vec![v.clone()]),
        ("...j$", vec![v.clone()]),
        ("i->&", vec![v.clone()]),
        ("i->ij", vec![v.clone()]),
        ("ij->jij", vec![m.clone()]),
        ("ii", vec![r.clone()]),
        ("ii->i", vec![r.clone()]),
        ("i", vec![r.clone()]),
    ];
    for (spec, ops) in cases {
        let got = einsum(spec, ops, &mut HeapAlloc, Par::Seq);
        assert!(got.is_err(), "numpy rejects {spec:?} on {} operand(s); got {got:?}", ops.len());
    }
    // numpy names the offending label: 'b' has dimensions 3 and 4 in `aabcb,abc`.
    let a = Tensor::<f64>::zeros([3, 3, 4, 5, 6]);
    let b = Tensor::<f64>::zeros([3, 4, 5]);
    let err = einsum("aabcb,abc", &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap_err();
    assert!(err.to_string().contains("'b'"), "{err}");
}

#[test]
fn general_paths_translate_to_the_pairs_opt_einsum_means() {
    // The translation keeps both lists: `[(1,), (0, 1, 2)]` on three operands.
    let steps: [&[usize]; 2] = [&[1], &[0, 1, 2]];
    assert_eq!(pairs_of_steps(3, &steps).unwrap().as_slice(), &[(0, 2), (1, 0)]);
    // A pair path is its own translation.
    let pairs: [&[usize]; 3] = [&[0, 2], &[0, 1], &[0, 1]];
    assert_eq!(pairs_of_steps(4, &pairs).unwrap().as_slice(), &[(0, 2), (0, 1), (0, 1)]);
    // Bad steps are typed errors.
    use holdfast_kernels::KernelError;
    let empty: [&[usize]; 1] = [&[]];
    assert_eq!(pairs_of_steps(2, &empty).unwrap_err(), KernelError::EmptyPathStep { step: 0 });
    let past: [&[usize]; 1] = [&[0, 2]];
    assert_eq!(
        pairs_of_steps(2, &past).unwrap_err(),
        KernelError::PathIndexOutOfRange { step: 0, index: 2, len: 2 }
    );
    let twice: [&[usize]; 1] = [&[1, 1]];
    assert_eq!(
        pairs_of_steps(2, &twice).unwrap_err(),
        KernelError::PathRepeatedIndex { step: 0, index: 1 }
    );
    let short: [&[usize]; 1] = [&[0]];
    assert_eq!(
        pairs_of_steps(2, &short).unwrap_err(),
        KernelError::IncompletePath { remaining: 2 }
    );
    assert!(pairs_of_steps(1, &[]).unwrap().is_empty());
    // The parser agrees with the suites on which specs are explicit.
    assert!(parse("ab,bc").is_ok() && parse("ab,bc->ac").is_ok());
}
