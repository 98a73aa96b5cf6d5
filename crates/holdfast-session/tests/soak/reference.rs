//! Straightforward reference results for the soak's checked operations, each with the magnitude
//! (sum of absolute terms) of every output element, so that a result is checked to 1e-12
//! relative to the size of what was summed (SPEC K6).

use std::cmp::Ordering;

/// A dense row-major array: shape, values, and the magnitude of each value's terms.
#[derive(Debug, Clone)]
pub struct Expected {
    pub shape: Vec<usize>,
    pub values: Vec<f64>,
    pub magnitude: Vec<f64>,
}

/// Relative tolerance against the magnitude of the summed terms.
const RTOL: f64 = 1e-12;

impl Expected {
    /// Checks `shape`/`got` (row-major, logical order) against this reference.
    pub fn check(&self, what: &str, shape: &[usize], got: &[f64]) -> Result<(), String> {
        if shape != self.shape.as_slice() {
            return Err(format!("{what}: shape {shape:?}, expected {:?}", self.shape));
        }
        if got.len() != self.values.len() {
            return Err(format!("{what}: {} values, expected {}", got.len(), self.values.len()));
        }
        for (i, ((&g, &w), &m)) in got.iter().zip(&self.values).zip(&self.magnitude).enumerate() {
            let tol = RTOL * m.max(w.abs()) + f64::MIN_POSITIVE;
            // A NaN compares as `None`, and fails.
            let within =
                matches!((g - w).abs().partial_cmp(&tol), Some(Ordering::Less | Ordering::Equal));
            if !within {
                return Err(format!(
                    "{what}: element {i} is {g}, expected {w} (tolerance {tol:e})"
                ));
            }
        }
        Ok(())
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Calls `f` with every multi-index of `shape`, in row-major order.
fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0; shape.len()];
    loop {
        f(&idx);
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            idx[axis] += 1;
            if idx[axis] < shape[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}

/// An elementwise binary operation with numpy broadcasting.
pub fn binary(
    a: (&[usize], &[f64]),
    b: (&[usize], &[f64]),
    op: impl Fn(f64, f64) -> f64,
) -> Expected {
    let rank = a.0.len().max(b.0.len());
    let pad = |s: &[usize]| {
        let mut p = vec![1; rank - s.len()];
        p.extend_from_slice(s);
        p
    };
    let (sa, sb) = (pad(a.0), pad(b.0));
    let shape: Vec<usize> = sa.iter().zip(&sb).map(|(&x, &y)| x.max(y)).collect();
    let (ta, tb) = (strides(&sa), strides(&sb));
    let mut values = Vec::new();
    for_each_index(&shape, |idx| {
        let ia: usize = idx.iter().zip(&sa).zip(&ta).map(|((&i, &d), &s)| (i % d) * s).sum();
        let ib: usize = idx.iter().zip(&sb).zip(&tb).map(|((&i, &d), &s)| (i % d) * s).sum();
        values.push(op(a.1[ia], b.1[ib]));
    });
    let magnitude = values.iter().map(|v| v.abs()).collect();
    Expected { shape, values, magnitude }
}

/// `alpha · a`.
pub fn scale(shape: &[usize], a: &[f64], alpha: f64) -> Expected {
    let values: Vec<f64> = a.iter().map(|x| x * alpha).collect();
    let magnitude = values.iter().map(|v| v.abs()).collect();
    Expected { shape: shape.to_vec(), values, magnitude }
}

/// The einsum `spec` (explicit output, `->` required) on row-major operands.
pub fn einsum(spec: &str, operands: &[(&[usize], &[f64])]) -> Expected {
    let (inputs, output) = spec.split_once("->").expect("reference specs are explicit");
    let terms: Vec<Vec<char>> = inputs.split(',').map(|t| t.chars().collect()).collect();
    let out: Vec<char> = output.chars().collect();
    assert_eq!(terms.len(), operands.len(), "{spec}");
    let mut labels: Vec<char> = Vec::new();
    let mut dims: Vec<usize> = Vec::new();
    for (term, (shape, _)) in terms.iter().zip(operands) {
        assert_eq!(term.len(), shape.len(), "{spec}");
        for (&c, &d) in term.iter().zip(shape.iter()) {
            match labels.iter().position(|&l| l == c) {
                Some(p) => assert_eq!(dims[p], d, "{spec}: label {c}"),
                None => {
                    labels.push(c);
                    dims.push(d);
                }
            }
        }
    }
    let pos = |c: char| labels.iter().position(|&l| l == c).expect("known label");
    let out_shape: Vec<usize> = out.iter().map(|&c| dims[pos(c)]).collect();
    let out_strides = strides(&out_shape);
    let term_axes: Vec<Vec<usize>> =
        terms.iter().map(|t| t.iter().map(|&c| pos(c)).collect()).collect();
    let term_strides: Vec<Vec<usize>> = operands.iter().map(|(s, _)| strides(s)).collect();
    let out_axes: Vec<usize> = out.iter().map(|&c| pos(c)).collect();
    let n: usize = out_shape.iter().product();
    let mut values = vec![0.0; n];
    let mut magnitude = vec![0.0; n];
    for_each_index(&dims, |idx| {
        let mut p = 1.0;
        for ((axes, st), (_, data)) in term_axes.iter().zip(&term_strides).zip(operands) {
            let off: usize = axes.iter().zip(st).map(|(&a, &s)| idx[a] * s).sum();
            p *= data[off];
        }
        let o: usize = out_axes.iter().zip(&out_strides).map(|(&a, &s)| idx[a] * s).sum();
        values[o] += p;
        magnitude[o] += p.abs();
    });
    Expected { shape: out_shape, values, magnitude }
}

/// `a · b` for row-major `[m, k]` and `[k, n]` (a fast path of [`einsum`] for large sizes).
pub fn matmul(m: usize, k: usize, n: usize, a: &[f64], b: &[f64]) -> Expected {
    let mut values = vec![0.0; m * n];
    let mut magnitude = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = a[i * k + p];
            for j in 0..n {
                let t = x * b[p * n + j];
                values[i * n + j] += t;
                magnitude[i * n + j] += t.abs();
            }
        }
    }
    Expected { shape: vec![m, n], values, magnitude }
}

#[test]
fn the_references_agree_with_hand_results() {
    let a = [1.0, 2.0, 3.0, 4.0];
    let e = einsum("ij,jk->ik", &[(&[2, 2], &a), (&[2, 2], &a)]);
    assert_eq!(e.values, [7.0, 10.0, 15.0, 22.0]);
    assert_eq!(matmul(2, 2, 2, &a, &a).values, e.values);
    assert_eq!(einsum("ii->", &[(&[2, 2], &a)]).values, [5.0]);
    assert_eq!(einsum("ij->ji", &[(&[2, 2], &a)]).values, [1.0, 3.0, 2.0, 4.0]);
    let b = binary((&[2, 1], &[10.0, 20.0]), (&[3], &[1.0, 2.0, 3.0]), |x, y| x + y);
    assert_eq!((b.shape, b.values), (vec![2, 3], vec![11.0, 12.0, 13.0, 21.0, 22.0, 23.0]));
    assert!(e.check("self", &[2, 2], &[7.0, 10.0, 15.0, 22.0]).is_ok());
    assert!(e.check("off", &[2, 2], &[7.0, 10.0, 15.0, 22.1]).is_err());
}
