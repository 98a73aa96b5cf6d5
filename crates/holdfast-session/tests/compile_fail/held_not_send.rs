//! A held session cannot be sent to another thread.
use holdfast_session::CpuBackend;

fn main() {
    let backend = CpuBackend::builder().threads(1).build().unwrap();
    let session = backend.open_session().unwrap();
    std::thread::scope(|s| {
        s.spawn(move || {
            let session = session; // the whole session moves
            drop(session);
        });
    });
}
