//! A held session cannot be shared between threads.
use holdfast_session::CpuBackend;

fn main() {
    let backend = CpuBackend::builder().threads(1).build().unwrap();
    let session = backend.open_session().unwrap();
    let shared = &session;
    std::thread::scope(|s| {
        s.spawn(move || {
            let whole = shared; // the whole reference is used on another thread
            let _ = whole.stats();
        });
    });
}
