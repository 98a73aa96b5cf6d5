//! An operation view cannot escape `with_session`.
use holdfast_session::CpuBackend;

fn main() {
    let backend = CpuBackend::builder().threads(1).build().unwrap();
    let mut session = backend.open_session().unwrap();
    let mut stash = None;
    session.with_session(|view| {
        stash = Some(view); // the whole view, not a field of it
    });
    drop(stash);
}
