//! Helpers of the einsum unit tests: deterministic operands and a plain-loop reference that any
//! two-operand einsum's result is checked against.

use holdfast_tensor::{Element, Tensor, c64};

/// Deterministic values in [-1, 1).
pub(super) fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            #[allow(clippy::cast_precision_loss, reason = "53 random bits")]
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            2.0 * u - 1.0
        })
        .collect()
}

/// A dense `f64` tensor of `shape` with [`values`] of `seed`.
pub(super) fn real(shape: &[usize], seed: u64) -> Tensor<f64> {
    Tensor::from_vec(shape.to_vec(), values(shape.iter().product(), seed))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A dense `c64` tensor of `shape`: real parts from `seed`, imaginary parts from `seed + 100`.
pub(super) fn complex(shape: &[usize], seed: u64) -> Tensor<c64> {
    let n = shape.iter().product();
    let (re, im) = (values(n, seed), values(n, seed + 100));
    Tensor::from_vec(shape.to_vec(), re.iter().zip(&im).map(|(&r, &i)| c64::new(r, i)).collect())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `spec` (two inputs, explicit output) by plain loops over every label.
pub(super) fn reference<T: Element>(spec: &str, x: &Tensor<T>, y: &Tensor<T>) -> Vec<T> {
    reference_many(spec, &[x, y])
}

/// `spec` (any number of inputs, explicit output) by plain loops over every label: the sum, over
/// the labels the output lacks, of the operands' product.
pub(super) fn reference_many<T: Element>(spec: &str, ops: &[&Tensor<T>]) -> Vec<T> {
    let (inputs, output) = spec.split_once("->").unwrap();
    let terms: Vec<&str> = inputs.split(',').collect();
    let mut labels: Vec<char> = Vec::new();
    let mut dims: Vec<usize> = Vec::new();
    for (term, op) in terms.iter().zip(ops) {
        for (c, &d) in term.chars().zip(op.shape()) {
            if !labels.contains(&c) {
                labels.push(c);
                dims.push(d);
            }
        }
    }
    let at = |term: &str, index: &[usize]| {
        term.chars().fold(0, |acc, c| {
            let l = labels.iter().position(|&x| x == c).unwrap();
            acc * dims[l] + index[l]
        })
    };
    let out_len: usize =
        output.chars().map(|c| dims[labels.iter().position(|&x| x == c).unwrap()]).product();
    let mut out = vec![T::ZERO; out_len];
    let mut index = vec![0; labels.len()];
    loop {
        let p = terms.iter().zip(ops).fold(T::ONE, |p, (t, op)| p * op.as_slice()[at(t, &index)]);
        out[at(output, &index)] += p;
        let mut axis = labels.len();
        loop {
            if axis == 0 {
                return out;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}
