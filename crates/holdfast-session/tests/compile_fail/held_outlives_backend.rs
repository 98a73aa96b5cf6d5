//! A held session cannot outlive the backend it borrows.
use holdfast_session::{CpuBackend, CpuHeldSession};

fn open() -> CpuHeldSession<'static> {
    let backend = CpuBackend::builder().threads(1).build().unwrap();
    backend.open_session().unwrap()
}

fn main() {
    let session = open();
    drop(session);
}
