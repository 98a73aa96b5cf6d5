//! Compile-time properties of sessions (trybuild; snapshots are tied to the pinned compiler in
//! rust-toolchain.toml): a held session cannot cross threads, cannot outlive its backend or move
//! into a `'static` context, and a view cannot escape `with_session`.

#[test]
fn session_compile_contracts() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
