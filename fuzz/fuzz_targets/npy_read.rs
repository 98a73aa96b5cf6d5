//! Fuzz target: reading a `.npy` file the way `holdfast einsum --inputs` does.
//!
//! The reader lives in the `holdfast` program (`crates/holdfast/src/cli/npy.rs::read_f64`), which
//! is a binary, not a library; this target replays its exact call sequence on an in-memory file:
//! `npyz::NpyFile::new`, the float64 dtype check, the C-order check, the shape conversion,
//! `into_vec::<f64>` and `Tensor::from_vec`. Invariant: nothing panics, and a file that is
//! accepted yields a tensor whose element count is its shape's product.
#![no_main]

use holdfast_tensor::Tensor;
use libfuzzer_sys::fuzz_target;
use npyz::{DType, NpyFile, Order, TypeChar};

fuzz_target!(|data: &[u8]| {
    if let Some(t) = read_f64(data) {
        assert_eq!(t.numel(), t.shape().iter().product::<usize>());
    }
});

/// `read_f64` of the CLI, with the file replaced by `bytes` and the errors by `None`.
fn read_f64(bytes: &[u8]) -> Option<Tensor<f64>> {
    let npy = NpyFile::new(bytes).ok()?;
    let dtype = npy.dtype();
    match &dtype {
        DType::Plain(ts) if ts.type_char() == TypeChar::Float && ts.size_field() == 8 => {}
        _ => return None,
    }
    if npy.order() == Order::Fortran && npy.shape().len() > 1 {
        return None;
    }
    let shape = npy.shape().iter().map(|&d| usize::try_from(d)).collect::<Result<Vec<_>, _>>().ok()?;
    let data: Vec<f64> = npy.into_vec().ok()?;
    Tensor::from_vec(shape, data).ok()
}
