//! A held session cannot move into a `'static` context.
use holdfast_session::CpuBackend;

fn keep_forever<T: 'static>(value: T) {
    std::mem::forget(value);
}

fn main() {
    let backend = CpuBackend::builder().threads(1).build().unwrap();
    let session = backend.open_session().unwrap();
    keep_forever(session);
}
