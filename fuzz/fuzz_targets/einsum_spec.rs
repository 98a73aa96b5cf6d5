//! Fuzz target: the einsum spec parser, the plan/path validator and the executor, checked
//! against a brute-force evaluation of the parsed spec.
//!
//! Input: a spec string (any Unicode, sometimes with a `...` inserted into one of its terms),
//! then operand shapes (consistent with the spec, or deliberately not), an optional opt_einsum
//! path (in or out of range) and a layout flag per operand (row-major, or a reversed
//! column-major view). Invariants: nothing panics; a spec that parses and validates executes
//! without error, and its result equals the brute force exactly (operands are small integers, so
//! every sum is exact in f64); the same operands as `f32`, `Complex<f32>` and `Complex<f64>`
//! (imaginary parts zero) give the same shape and values (exact: the sums stay far below 2^24).
//! A spec with an ellipsis (which the label parser refuses: the planner expands it first) runs on
//! random shapes, with size-1 axes likely, through every element type: nothing panics, and the
//! four types agree on success or failure, shape and values.
#![no_main]

use holdfast_kernels::einsum::{EinsumPlan, EinsumSpec, einsum, einsum_with_path, parse};
use holdfast_kernels::{HeapAlloc, KernelError, Par};
use holdfast_tensor::{Element, Layout, Tensor, TensorRead, c32, c64};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// Largest number of index combinations the brute force evaluates.
const MAX_WORK: usize = 1 << 14;

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let len = u.int_in_range(0..=24usize)?;
    let spec_bytes = u.bytes(len.min(u.len()))?;
    let Ok(spec) = std::str::from_utf8(spec_bytes) else { return Ok(()) };
    let mut spec = spec.to_owned();
    if u.ratio(1, 4)? {
        let at = u.int_in_range(0..=spec.len())?;
        if spec.is_char_boundary(at) {
            spec.insert_str(at, "...");
        }
    }
    let spec = spec.as_str();
    if spec.contains('.') {
        return run_ellipsis(spec, &mut u);
    }
    let Ok(parsed) = parse(spec) else { return Ok(()) };
    if parsed.num_inputs() > 6 || parsed.labels().len() > 10 {
        return Ok(());
    }
    // Label dimensions, then each operand's shape: the spec's, or a deliberately wrong one.
    let dims: Vec<usize> =
        (0..parsed.labels().len()).map(|_| u.int_in_range(0..=3)).collect::<Result<_>>()?;
    let consistent = u.ratio(7, 8)?;
    let mut shapes = Vec::new();
    for term in parsed.inputs() {
        let shape: Vec<usize> = if consistent {
            term.iter().map(|&l| dims[l as usize]).collect()
        } else {
            let rank = u.int_in_range(0..=4)?;
            (0..rank).map(|_| u.int_in_range(0..=3)).collect::<Result<_>>()?
        };
        shapes.push(shape);
    }
    if !consistent && u.arbitrary::<bool>()? {
        shapes.pop(); // wrong operand count
    }
    let path: Option<Vec<(usize, usize)>> = if u.arbitrary::<bool>()? {
        let steps = u.int_in_range(0..=6)?;
        Some(
            (0..steps)
                .map(|_| Ok((u.int_in_range(0..=6)?, u.int_in_range(0..=6)?)))
                .collect::<Result<_>>()?,
        )
    } else {
        None
    };
    // Operands stay small: the brute force and the executor must be quick, and a spec of 24
    // labels of size 3 would ask for 3^24 elements (the harness's own first out-of-memory).
    if shapes
        .iter()
        .any(|s| s.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).is_none_or(|n| n > 4096))
    {
        return Ok(());
    }
    let mut storage = Vec::new();
    for shape in &shapes {
        let n: usize = shape.iter().product();
        let values: Vec<f64> =
            (0..n).map(|_| Ok(f64::from(u.int_in_range(-2i8..=2)?))).collect::<Result<_>>()?;
        storage.push((shape.clone(), values, u.arbitrary::<bool>()?));
    }
    // Row-major operands, or the same logical values read through a reversed (column-major) view.
    let mut transposed_data = Vec::new();
    for (shape, values, reversed) in &storage {
        if *reversed && shape.len() > 1 {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            let logical = Tensor::from_vec(shape.clone(), values.clone()).expect("valid shape");
            let perm: Vec<usize> = (0..shape.len()).rev().collect();
            let col = permuted_copy(&logical, &perm);
            transposed_data.push(Some((rev, col)));
        } else {
            transposed_data.push(None);
        }
    }
    let reads: Vec<TensorRead<'_, f64>> = storage
        .iter()
        .zip(&transposed_data)
        .map(|((shape, values, _), t)| match t {
            Some((rev, col)) => {
                let layout = Layout::contiguous(rev).expect("valid").reversed();
                TensorRead::from_layout(col, layout).expect("fits")
            }
            None => TensorRead::from_slice(shape, values).expect("fits"),
        })
        .collect();
    if verbose() {
        eprintln!("spec {spec:?} shapes {shapes:?} path {path:?} consistent {consistent}");
    }
    let work: usize = dims.iter().map(|&d| d.max(1)).product();
    if consistent && work > MAX_WORK {
        // Too big to run quickly (intermediates can be as large as the label space): validate
        // and plan only.
        let _ = EinsumPlan::prepare(spec, &reads, path.as_deref());
        return Ok(());
    }
    let result = match &path {
        Some(p) => einsum_with_path(spec, &reads, p, &mut HeapAlloc, Par::Seq),
        None => einsum(spec, &reads, &mut HeapAlloc, Par::Seq),
    };
    if let Ok(out) = result
        && consistent
    {
        let operands: Vec<(&[usize], &[f64])> =
            storage.iter().map(|(s, v, _)| (s.as_slice(), v.as_slice())).collect();
        let (shape, want) = brute_force(&parsed, &dims, &operands);
        assert_eq!(out.shape(), shape.as_slice(), "{spec:?}: output shape");
        assert_eq!(out.read().to_vec(), want, "{spec:?} path {path:?}: values");
        let typed: Vec<(&[usize], &[f64])> =
            storage.iter().map(|(s, v, _)| (s.as_slice(), v.as_slice())).collect();
        assert_types_agree(spec, &typed, path.as_deref(), &Ok(out));
    }
    Ok(())
}

/// A spec with an ellipsis, on random shapes (size-1 axes likely, so that broadcasting is
/// exercised), in every element type.
fn run_ellipsis(spec: &str, u: &mut Unstructured<'_>) -> Result<()> {
    let terms = spec.split("->").next().map_or(1, |inputs| inputs.split(',').count());
    if terms > 4 {
        return Ok(());
    }
    let mut operands = Vec::new();
    for _ in 0..terms {
        let rank = u.int_in_range(0..=5)?;
        let shape: Vec<usize> = (0..rank)
            .map(|_| Ok(if u.ratio(1, 3)? { 1 } else { u.int_in_range(0..=3)? }))
            .collect::<Result<_>>()?;
        let n: usize = shape.iter().product();
        let values: Vec<f64> =
            (0..n).map(|_| Ok(f64::from(u.int_in_range(-2i8..=2)?))).collect::<Result<_>>()?;
        operands.push((shape, values));
    }
    // Pairwise intermediates are at most the product of the operands' sizes: keep it small.
    let mut sizes = operands.iter().map(|(s, _)| s.iter().product::<usize>().max(1));
    if sizes.try_fold(1usize, usize::checked_mul).is_none_or(|work| work > 1 << 16) {
        return Ok(());
    }
    if verbose() {
        eprintln!("ellipsis spec {spec:?} operands {operands:?}");
    }
    let typed: Vec<(&[usize], &[f64])> =
        operands.iter().map(|(s, v)| (s.as_slice(), v.as_slice())).collect();
    let reads: Vec<TensorRead<'_, f64>> =
        typed.iter().map(|&(s, v)| TensorRead::from_slice(s, v).expect("fits")).collect();
    // The planner bounds the work: skip what would be slow (large broadcast products).
    if let Ok(plan) = EinsumPlan::prepare(spec, &reads, None)
        && plan.out_shape().iter().product::<usize>() > 4096
    {
        return Ok(());
    }
    let f64_result = einsum(spec, &reads, &mut HeapAlloc, Par::Seq);
    assert_types_agree(spec, &typed, None, &f64_result);
    Ok(())
}

/// `spec` on `operands` as `T`, the values widened or narrowed exactly (small integers).
fn run_as<T: Element>(
    spec: &str,
    operands: &[(&[usize], &[f64])],
    path: Option<&[(usize, usize)]>,
    from: impl Fn(f64) -> T,
) -> std::result::Result<Tensor<T>, KernelError> {
    let data: Vec<Vec<T>> = operands.iter().map(|(_, v)| v.iter().map(|&x| from(x)).collect()).collect();
    let reads: Vec<TensorRead<'_, T>> = operands
        .iter()
        .zip(&data)
        .map(|((s, _), d)| TensorRead::from_slice(s, d).expect("fits"))
        .collect();
    match path {
        Some(p) => einsum_with_path(spec, &reads, p, &mut HeapAlloc, Par::Seq),
        None => einsum(spec, &reads, &mut HeapAlloc, Par::Seq),
    }
}

/// `f32`, `Complex<f32>` and `Complex<f64>` agree with the `f64` result `want` (success or
/// failure, shape, values; imaginary parts zero).
fn assert_types_agree(
    spec: &str,
    operands: &[(&[usize], &[f64])],
    path: Option<&[(usize, usize)]>,
    want: &std::result::Result<Tensor<f64>, KernelError>,
) {
    let want = want.as_ref().map(|t| (t.shape().to_vec(), t.read().to_vec()));
    let check = |name: &str, got: std::result::Result<(Vec<usize>, Vec<f64>), ()>| match (&want, got) {
        (Ok(w), Ok(g)) => assert_eq!(w, &g, "{spec:?} as {name}: shape and values"),
        (Err(_), Err(())) => {}
        (w, g) => panic!("{spec:?}: f64 gave {w:?}, {name} gave {g:?}"),
    };
    let real = |t: Tensor<f32>| (t.shape().to_vec(), t.read().to_vec().into_iter().map(f64::from).collect());
    check("f32", run_as(spec, operands, path, |x| x as f32).map(real).map_err(drop));
    let c64_parts = |t: Tensor<c64>| {
        let v = t.read().to_vec();
        assert!(v.iter().all(|z| z.im == 0.0), "{spec:?} as c64: nonzero imaginary part");
        (t.shape().to_vec(), v.into_iter().map(|z| z.re).collect())
    };
    check("c64", run_as(spec, operands, path, |x| c64::new(x, 0.0)).map(c64_parts).map_err(drop));
    let c32_parts = |t: Tensor<c32>| {
        let v = t.read().to_vec();
        assert!(v.iter().all(|z| z.im == 0.0), "{spec:?} as c32: nonzero imaginary part");
        (t.shape().to_vec(), v.into_iter().map(|z| f64::from(z.re)).collect())
    };
    check("c32", run_as(spec, operands, path, |x| c32::new(x as f32, 0.0)).map(c32_parts).map_err(drop));
}

/// `HOLDFAST_FUZZ_VERBOSE=1` prints each input's spec, shapes and path (to turn a crash
/// artifact into a regression test: `cargo +nightly fuzz run einsum_spec <artifact>`).
fn verbose() -> bool {
    static VERBOSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VERBOSE.get_or_init(|| std::env::var_os("HOLDFAST_FUZZ_VERBOSE").is_some())
}

/// The row-major data of `t` permuted by `perm` (`out[i] = in[perm[i]]` axes).
fn permuted_copy(t: &Tensor<f64>, perm: &[usize]) -> Vec<f64> {
    let view =
        TensorRead::from_layout(t.as_slice(), t.layout().permuted(perm).expect("a permutation"))
            .expect("fits");
    view.to_vec()
}

/// Every index combination of every label: the definition of the einsum.
fn brute_force(
    spec: &EinsumSpec,
    dims: &[usize],
    operands: &[(&[usize], &[f64])],
) -> (Vec<usize>, Vec<f64>) {
    let out_shape: Vec<usize> = spec.output().iter().map(|&l| dims[l as usize]).collect();
    let strides = |shape: &[usize]| {
        let mut s = vec![1; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    };
    let out_strides = strides(&out_shape);
    let mut out = vec![0.0; out_shape.iter().product()];
    if dims.contains(&0) {
        return (out_shape, out);
    }
    let mut idx = vec![0usize; dims.len()];
    loop {
        let mut p = 1.0;
        for (term, (shape, values)) in spec.inputs().iter().zip(operands) {
            let st = strides(shape);
            let off: usize = term.iter().zip(&st).map(|(&l, &s)| idx[l as usize] * s).sum();
            p *= values[off];
        }
        let o: usize =
            spec.output().iter().zip(&out_strides).map(|(&l, &s)| idx[l as usize] * s).sum();
        out[o] += p;
        let mut axis = dims.len();
        loop {
            if axis == 0 {
                return (out_shape, out);
            }
            axis -= 1;
            idx[axis] += 1;
            if idx[axis] < dims[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}
