//! Fuzz target: reading a `.npy` file the way `holdfast einsum --inputs` does.
//!
//! The reader lives in the `holdfast` program (`crates/holdfast-cli/src/cli/npy.rs::read_f64`), which
//! is a binary, not a library; this target replays its exact call sequence on an in-memory file:
//! the header checks (the program's own `npy_header.rs`, compiled in through `#[path]`),
//! `npyz::NpyFile::new`, the float64
//! dtype check, the C-order check, the shape conversion, `into_vec::<f64>` and
//! `Tensor::from_vec`. Invariant: nothing panics or allocates out of proportion to the input
//! (libFuzzer's malloc limit), and a file that is accepted yields a tensor whose element count
//! is its shape's product. Keep `read_f64` here in step with the program's reader.
#![no_main]

use holdfast_tensor::Tensor;
use libfuzzer_sys::fuzz_target;
use npyz::{DType, NpyFile, Order, TypeChar};

#[path = "../../crates/holdfast-cli/src/cli/npy_header.rs"]
#[allow(dead_code, reason = "the program's buffer size is not needed on an in-memory file")]
mod npy_header;

use npy_header::check_header;

fuzz_target!(|data: &[u8]| {
    if let Some(t) = read_f64(data) {
        assert_eq!(t.numel(), t.shape().iter().product::<usize>());
    }
});

/// `read_f64` of the CLI, with the file replaced by `bytes` and the errors by `None`.
fn read_f64(bytes: &[u8]) -> Option<Tensor<f64>> {
    let mut reader = bytes;
    check_header(&mut reader, bytes.len() as u64).ok()?;
    let npy = NpyFile::new(reader).ok()?;
    let dtype = npy.dtype();
    match &dtype {
        DType::Plain(ts) if ts.type_char() == TypeChar::Float && ts.size_field() == 8 => {}
        _ => return None,
    }
    if npy.order() == Order::Fortran && npy.shape().len() > 1 {
        return None;
    }
    let shape =
        npy.shape().iter().map(|&d| usize::try_from(d)).collect::<Result<Vec<_>, _>>().ok()?;
    let data: Vec<f64> = npy.into_vec().ok()?;
    Tensor::from_vec(shape, data).ok()
}
