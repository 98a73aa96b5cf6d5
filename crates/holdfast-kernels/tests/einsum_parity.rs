//! einsum parity with a brute-force reference (SPEC K6): hand-written cases, random networks with
//! random valid paths (proptest), greedy paths, strided operands, cached plans, and buffer
//! recycling through the allocator.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

mod support;

use holdfast_kernels::einsum::{
    EinsumPlan, HashMapPlanCache, einsum, einsum_cached, einsum_with_path,
};
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_tensor::{Tensor, TensorRead};
use proptest::prelude::*;
use support::{
    CountingAlloc, SplitMix64, random_tensor, reference_einsum, reference_einsum_with_magnitude,
    rel_err, term_rel_err,
};

const TOL: f64 = 1e-12;

fn check(spec: &str, shapes: &[&[usize]], seed: u64) {
    let mut rng = SplitMix64(seed);
    let tensors: Vec<Tensor<f64>> = shapes.iter().map(|s| random_tensor(s, &mut rng)).collect();
    let views: Vec<TensorRead<'_, f64>> = tensors.iter().map(Tensor::read).collect();
    let (shape, want) = reference_einsum(spec, &views);
    let got = einsum(spec, &views, &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(got.shape(), &shape[..], "{spec}: shape");
    let e = rel_err(got.as_slice(), &want);
    assert!(e <= TOL, "{spec}: relative error {e}");
}

#[test]
fn hand_written_cases() {
    let cases: &[(&str, &[&[usize]])] = &[
        ("ij,jk->ik", &[&[3, 4], &[4, 5]]),
        ("ij,jk", &[&[3, 4], &[4, 5]]),
        ("ij,kj->ik", &[&[3, 4], &[5, 4]]),
        ("ji,jk->ki", &[&[4, 3], &[4, 5]]),
        ("bij,bjk->bik", &[&[2, 3, 4], &[2, 4, 5]]),
        ("bij,bjk->kbi", &[&[2, 3, 4], &[2, 4, 5]]),
        ("ii->i", &[&[4, 4]]),
        ("ii", &[&[4, 4]]),
        ("iij->j", &[&[3, 3, 2]]),
        ("ij->", &[&[3, 4]]),
        ("ij->ji", &[&[3, 4]]),
        ("ij", &[&[3, 4]]),
        ("ji", &[&[3, 4]]),
        ("i,j->ij", &[&[3], &[4]]),
        ("i,i->", &[&[5], &[5]]),
        ("i,i->i", &[&[5], &[5]]),
        ("ij,ij->ij", &[&[3, 4], &[3, 4]]),
        ("ij,ji->", &[&[3, 4], &[4, 3]]),
        ("ijk,jl,lk->i", &[&[2, 3, 4], &[3, 5], &[5, 4]]),
        ("abc,cd,de->abe", &[&[2, 3, 4], &[4, 5], &[5, 2]]),
        ("ab,bc,cd,da->", &[&[2, 3], &[3, 4], &[4, 5], &[5, 2]]),
        ("iji,j->", &[&[3, 2, 3], &[2]]),
        ("ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 5]]),
        ("ab,ab,ab->a", &[&[3, 4], &[3, 4], &[3, 4]]),
        ("ëÑ,Ñ0->0ë", &[&[3, 4], &[4, 2]]),
        (",i->i", &[&[], &[3]]),
        ("i,->", &[&[3], &[]]),
        ("abcd,dcba->", &[&[2, 3, 2, 3], &[3, 2, 3, 2]]),
        ("abc,bcd->ad", &[&[2, 3, 4], &[3, 4, 5]]),
        ("ij,jk->ik", &[&[3, 0], &[0, 5]]),
        ("ij,jk->ik", &[&[0, 4], &[4, 5]]),
        ("ia,ib,ic->abc", &[&[4, 2], &[4, 3], &[4, 2]]),
        ("aij,ajk,akl->ail", &[&[2, 2, 3], &[2, 3, 4], &[2, 4, 2]]),
        ("ijk,ikj->", &[&[2, 3, 4], &[2, 4, 3]]),
        (" i j , j k -> i k ", &[&[2, 3], &[3, 4]]),
    ];
    for (k, (spec, shapes)) in cases.iter().enumerate() {
        check(spec, shapes, k as u64);
    }
}

#[test]
fn explicit_paths_agree_with_reference() {
    let mut rng = SplitMix64(7);
    let shapes: [&[usize]; 4] = [&[2, 3], &[3, 4], &[4, 5], &[5, 2]];
    let ts: Vec<Tensor<f64>> = shapes.iter().map(|s| random_tensor(s, &mut rng)).collect();
    let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
    let spec = "ab,bc,cd,da->";
    let (_, want) = reference_einsum(spec, &vs);
    for path in [
        vec![(0, 1), (0, 1), (0, 1)],
        vec![(2, 3), (0, 1), (0, 1)],
        vec![(0, 3), (1, 0), (0, 1)],
        vec![(1, 2), (1, 2), (0, 1)],
    ] {
        let got = einsum_with_path(spec, &vs, &path, &mut HeapAlloc, Par::Seq).unwrap();
        assert!(rel_err(got.as_slice(), &want) <= TOL, "path {path:?}");
    }
}

#[test]
fn strided_operands_are_read_in_place() {
    let mut rng = SplitMix64(11);
    let a = random_tensor::<f64>(&[4, 3], &mut rng);
    let b = random_tensor::<f64>(&[5, 4, 2], &mut rng);
    // Transposed and sliced views.
    let av = a.read().transpose(); // [3, 4]
    let bv = b.read().permute(&[1, 0, 2]).unwrap().slice(1, 1..4).unwrap(); // [4, 3, 2]
    let spec = "ij,jkl->ikl";
    let (_, want) = reference_einsum(spec, &[av.clone(), bv.clone()]);
    let got = einsum(spec, &[av.clone(), bv.clone()], &mut HeapAlloc, Par::Seq).unwrap();
    assert!(rel_err(got.as_slice(), &want) <= TOL);
    // Broadcast views (zero strides).
    let row = random_tensor::<f64>(&[3], &mut rng);
    let wide = row.read().broadcast_to(&[4, 3]).unwrap();
    let (_, want) = reference_einsum("ij,jk->ik", &[wide.clone(), av.clone()]);
    let got = einsum("ij,jk->ik", &[wide, av], &mut HeapAlloc, Par::Seq).unwrap();
    assert!(rel_err(got.as_slice(), &want) <= TOL);
}

#[test]
fn cached_plan_gives_the_same_result() {
    let mut rng = SplitMix64(3);
    let a = random_tensor::<f64>(&[3, 4, 5], &mut rng);
    let b = random_tensor::<f64>(&[5, 4, 2], &mut rng);
    let spec = "ijk,kjl->il";
    let ops = [a.read(), b.read()];
    let mut cache = HashMapPlanCache::default();
    let first = einsum_cached(spec, &ops, None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    let second = einsum_cached(spec, &ops, None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(first.as_slice(), second.as_slice());
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.hits, stats.insertions), (1, 1, 1));
    // New data, same layouts: still a hit, and the result matches a fresh computation.
    let c = random_tensor::<f64>(&[3, 4, 5], &mut rng);
    let hit =
        einsum_cached(spec, &[c.read(), b.read()], None, &mut cache, &mut HeapAlloc, Par::Seq)
            .unwrap();
    let fresh = einsum(spec, &[c.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(hit.as_slice(), fresh.as_slice());
    assert_eq!(cache.stats().hits, 2);
    // Different strides: a different key, so a miss.
    let ct = c.read().permute(&[0, 1, 2]).unwrap();
    let bt_data = b.read().permute(&[2, 1, 0]).unwrap().to_tensor();
    let bt = bt_data.read().permute(&[2, 1, 0]).unwrap(); // same shape as b, other strides
    let r = einsum_cached(spec, &[ct, bt], None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    assert!(rel_err(r.as_slice(), fresh.as_slice()) <= TOL);
    assert_eq!(cache.stats().misses, 2);
    // A prepared plan refuses operands of another layout.
    let plan = EinsumPlan::prepare(spec, &ops, None).unwrap();
    assert!(plan.execute(&[b.read(), a.read()], &mut HeapAlloc, Par::Seq).is_err());
}

#[test]
fn intermediates_are_given_back() {
    let mut rng = SplitMix64(5);
    let shapes: [&[usize]; 5] = [&[4, 5], &[5, 6], &[6, 7], &[7, 3], &[3, 4]];
    let ts: Vec<Tensor<f64>> = shapes.iter().map(|s| random_tensor(s, &mut rng)).collect();
    let vs: Vec<_> = ts.iter().map(Tensor::read).collect();
    let mut alloc = CountingAlloc::default();
    let spec = "ab,bc,cd,de,ea->";
    let path = [(0, 1), (0, 1), (0, 1), (0, 1)];
    let plan = EinsumPlan::prepare(spec, &vs, Some(&path)).unwrap();
    for _ in 0..3 {
        let r = plan.execute(&vs, &mut alloc, Par::Seq).unwrap();
        assert_eq!(r.numel(), 1);
    }
    // Every buffer but the three outputs was given back, and later runs reused them.
    assert_eq!(alloc.takes, alloc.gives + 3);
    assert!(alloc.reused > 0);
}

#[test]
fn f32_matches_f64() {
    let mut rng = SplitMix64(9);
    let a = random_tensor::<f64>(&[6, 5], &mut rng);
    let b = random_tensor::<f64>(&[5, 7], &mut rng);
    let a32 =
        Tensor::<f32>::from_vec([6, 5], a.as_slice().iter().map(|&x| x as f32).collect()).unwrap();
    let b32 =
        Tensor::<f32>::from_vec([5, 7], b.as_slice().iter().map(|&x| x as f32).collect()).unwrap();
    let r64 = einsum("ij,jk->ki", &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap();
    let r32 = einsum("ij,jk->ki", &[a32.read(), b32.read()], &mut HeapAlloc, Par::Seq).unwrap();
    let r32: Vec<f64> = r32.as_slice().iter().map(|&x| f64::from(x)).collect();
    assert!(rel_err(&r32, r64.as_slice()) < 1e-5);
}

/// A random network: operand terms over a small label alphabet, an output, dimensions, a
/// permutation per operand (to make strided views) and a random valid path.
#[derive(Debug, Clone)]
struct Network {
    spec: String,
    shapes: Vec<Vec<usize>>,
    perms: Vec<Vec<usize>>,
    path: Vec<(usize, usize)>,
    seed: u64,
}

fn network() -> impl Strategy<Value = Network> {
    (1usize..=5, 1usize..=6, any::<u64>()).prop_map(|(n, nl, seed)| {
        let mut rng = SplitMix64(seed);
        let alphabet: Vec<char> = "abcdëÑ0".chars().collect();
        let dims: Vec<usize> = (0..nl).map(|_| 1 + rng.below(3)).collect();
        let mut terms: Vec<Vec<usize>> = Vec::new();
        for _ in 0..n {
            let rank = rng.below(4);
            terms.push((0..rank).map(|_| rng.below(nl)).collect());
        }
        let mut used: Vec<usize> = terms.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        let mut out: Vec<usize> = used.iter().copied().filter(|_| rng.below(2) == 0).collect();
        // Shuffle the output order.
        for i in (1..out.len()).rev() {
            out.swap(i, rng.below(i + 1));
        }
        let term_str = |t: &[usize]| t.iter().map(|&l| alphabet[l]).collect::<String>();
        let spec = format!(
            "{}->{}",
            terms.iter().map(|t| term_str(t)).collect::<Vec<_>>().join(","),
            term_str(&out)
        );
        let shapes: Vec<Vec<usize>> =
            terms.iter().map(|t| t.iter().map(|&l| dims[l]).collect()).collect();
        let perms: Vec<Vec<usize>> = shapes
            .iter()
            .map(|s| {
                let mut p: Vec<usize> = (0..s.len()).collect();
                for i in (1..p.len()).rev() {
                    p.swap(i, rng.below(i + 1));
                }
                p
            })
            .collect();
        let mut path = Vec::new();
        let mut len = n;
        while len > 1 {
            let i = rng.below(len);
            let mut j = rng.below(len - 1);
            if j >= i {
                j += 1;
            }
            path.push((i, j));
            len -= 1;
        }
        Network { spec, shapes, perms, path, seed }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_networks_match_reference(net in network()) {
        let mut rng = SplitMix64(net.seed ^ 0xABCD);
        // Store each operand permuted, then view it back through the inverse permutation, so
        // the operands are strided views with the right shapes.
        let stored: Vec<Tensor<f64>> = net
            .shapes
            .iter()
            .zip(&net.perms)
            .map(|(s, p)| {
                let ps: Vec<usize> = p.iter().map(|&i| s[i]).collect();
                random_tensor(&ps, &mut rng)
            })
            .collect();
        let views: Vec<TensorRead<'_, f64>> = stored
            .iter()
            .zip(&net.perms)
            .map(|(t, p)| {
                let mut inv = vec![0; p.len()];
                for (i, &q) in p.iter().enumerate() {
                    inv[q] = i;
                }
                t.read().permute(&inv).unwrap()
            })
            .collect();
        for (v, s) in views.iter().zip(&net.shapes) {
            prop_assert_eq!(v.shape(), &s[..]);
        }
        // Random networks sum many terms of both signs, and an output can come out far smaller
        // than its terms (cancellation): the error is measured against the terms' magnitude,
        // which bounds the rounding of any summation order (the saved regression case: outputs
        // near 1e-5 that differ from the reference by 7e-18, 1.5e-12 of their own size).
        let (shape, want, magnitude) = reference_einsum_with_magnitude(&net.spec, &views);
        let greedy = einsum(&net.spec, &views, &mut HeapAlloc, Par::Seq).unwrap();
        prop_assert_eq!(greedy.shape(), &shape[..]);
        let err = term_rel_err(greedy.as_slice(), &want, &magnitude);
        prop_assert!(err <= TOL, "greedy {}: {err:e}", net.spec);
        let pathed = einsum_with_path(&net.spec, &views, &net.path, &mut HeapAlloc, Par::Seq).unwrap();
        let err = term_rel_err(pathed.as_slice(), &want, &magnitude);
        prop_assert!(err <= TOL, "path {:?} {}: {err:e}", net.path, net.spec);
    }
}
