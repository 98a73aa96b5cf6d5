//! Fuzz target: reading a `.npy` file the way `holdfast einsum` does.
//!
//! The reader lives in the `holdfast` program (`crates/holdfast-cli/src/cli/npy.rs::read_any`),
//! which is a binary, not a library; this target replays its exact call sequence on an in-memory
//! file: the header checks (the program's own `npy_header.rs`, compiled in through `#[path]`),
//! `npyz::NpyFile::new`, the dtype dispatch over `float32`, `float64`, `complex64` and
//! `complex128` (either byte order), the shape conversion, `into_vec::<T>`, `Tensor::from_vec`
//! and, for a Fortran-order file, the one transposing copy into row-major order. Invariants:
//! nothing panics or allocates out of proportion to the input (libFuzzer's malloc limit), and a
//! file that is accepted yields a tensor whose element count is its shape's product. Keep
//! `read_any` here in step with the program's reader.
#![no_main]

use holdfast_tensor::{Element, Tensor, c32, c64};
use libfuzzer_sys::fuzz_target;
use npyz::{DType, Deserialize, NpyFile, Order, TypeChar};

#[path = "../../crates/holdfast-cli/src/cli/npy_header.rs"]
#[allow(dead_code, reason = "the program's buffer size is not needed on an in-memory file")]
mod npy_header;

use npy_header::check_header;

fuzz_target!(|data: &[u8]| {
    let mut reader = data;
    if check_header(&mut reader, data.len() as u64).is_err() {
        return;
    }
    let Ok(npy) = NpyFile::new(reader) else { return };
    let dtype = npy.dtype();
    let DType::Plain(ts) = &dtype else { return };
    match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => check(into_tensor::<f32>(npy)),
        (TypeChar::Float, 8) => check(into_tensor::<f64>(npy)),
        (TypeChar::Complex, 8) => check(into_tensor::<c32>(npy)),
        (TypeChar::Complex, 16) => check(into_tensor::<c64>(npy)),
        _ => {}
    }
});

fn check<T: Element>(t: Option<Tensor<T>>) {
    if let Some(t) = t {
        assert_eq!(t.numel(), t.shape().iter().product::<usize>());
    }
}

/// `into_tensor` of the CLI on an in-memory file, errors as `None`.
fn into_tensor<T: Element + Deserialize>(npy: NpyFile<&[u8]>) -> Option<Tensor<T>> {
    let shape =
        npy.shape().iter().map(|&d| usize::try_from(d)).collect::<Result<Vec<_>, _>>().ok()?;
    let fortran = npy.order() == Order::Fortran && shape.len() > 1;
    let data: Vec<T> = npy.into_vec().ok()?;
    if !fortran {
        return Tensor::from_vec(shape, data).ok();
    }
    // Column-major data of `shape` is row-major data of the reversed shape, transposed.
    let reversed: Vec<usize> = shape.iter().rev().copied().collect();
    let c = Tensor::from_vec(reversed, data).ok()?;
    Tensor::from_vec(shape, c.read().transpose().to_vec()).ok()
}
