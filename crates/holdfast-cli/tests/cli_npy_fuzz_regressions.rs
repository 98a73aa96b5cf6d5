//! Regression tests for inputs found by the cargo-fuzz target `npy_read` (`fuzz/`, issue 10),
//! which replays the `.npy` reading path of `holdfast einsum --inputs`.
//!
//! - `an_npy_header_longer_than_its_file_…`: `fuzz/seeds/npy_read/oom-header-len-2.4GB.npy`, a
//!   32-byte file whose version-2 preamble announces a 2.4 GB header. npyz allocates a buffer of
//!   the announced length before reading it, so the program asked for gigabytes (and aborted on
//!   allocation failure where memory is limited). The reader now rejects a header longer than the
//!   file before npyz sees it. The test runs the program with its address space limited to 1 GiB,
//!   so the old behaviour aborts instead of failing with one line of error.
//! - `an_npy_header_with_deeply_nested_braces_…`: `fuzz/seeds/npy_read/slow-nested-braces.npy`,
//!   a 156-byte file whose header opens with thirteen `{`. npyz's header parser backtracks
//!   exponentially on them: 26 s for that file, 77 s for fourteen braces before a clean header,
//!   about three times longer per added brace. The reader now rejects a header nesting brackets
//!   deeper than numpy ever writes for a plain array, before npyz parses it. The test uses 24
//!   braces (hours, before the fix) and a watchdog: a run that does not end in 60 s is killed
//!   and fails the test, which never hangs.
#![allow(clippy::expect_used, reason = "test helpers: a failed expectation is a failed test")]

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{s, scratch, write_npy_f64};

/// `ij,jk->ik` on 2×3 and 3×2.
const MATMUL: &str = r#"{"name": "tiny", "format_string": "ij,jk->ik", "shapes": [[2, 3], [3, 2]],
 "dtype": "float64", "paths": {"opt_flops": {"path": [[0, 1]]}, "opt_size": {"path": [[0, 1]]}}}"#;

/// The fuzzer's input: magic, version 2.0, header length 0x93202020, then 20 bytes.
const HUGE_HEADER: &[u8] = b"\x93NUMPY\x02\x00   \x93NUAM       \x93NUAM \x01\x00P";

/// Runs `holdfast args…` with at most 1 GiB of address space; returns (exit code, stderr).
fn holdfast_limited(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_holdfast"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("sh runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_npy_header_longer_than_its_file_is_rejected_before_allocating_it() {
    assert_eq!(HUGE_HEADER.len(), 32);
    let dir = scratch("npy-fuzz");
    let instance = dir.join("tiny.json");
    std::fs::write(&instance, MATMUL).expect("write the instance");
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).expect("scratch directory");
    write_npy_f64(&inputs.join("a.npy"), &[2, 3], &[1.0; 6]);
    std::fs::write(inputs.join("b.npy"), HUGE_HEADER).expect("write the fuzz input");
    // A control run: the limit leaves room for a normal run.
    let (code, stderr) = holdfast_limited(&["info"]);
    assert_eq!(code, Some(0), "`holdfast info` under the limit: {stderr}");
    let (code, stderr) = holdfast_limited(&["einsum", s(&instance), "--inputs", s(&inputs)]);
    assert!(matches!(code, Some(c) if c != 0), "exit {code:?}, a signal means an abort: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one error line expected: {stderr}");
    assert!(
        lines[0].starts_with("holdfast: error: ") && lines[0].contains("b.npy"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("header"), "{}", lines[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A version-1 `.npy` file of shape (3, 2) whose header starts with `braces` extra `{`.
fn nested_braces_npy(braces: usize) -> Vec<u8> {
    let mut header = "{".repeat(braces + 1);
    header.push_str("'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }\n");
    let len = u16::try_from(header.len()).expect("a short header");
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&len.to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    for v in 0..6u8 {
        file.extend_from_slice(&f64::from(v).to_le_bytes());
    }
    file
}

#[test]
fn an_npy_header_with_deeply_nested_braces_is_rejected_before_parsing_it() {
    let dir = scratch("npy-fuzz-nested");
    let instance = dir.join("tiny.json");
    std::fs::write(&instance, MATMUL).expect("write the instance");
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).expect("scratch directory");
    write_npy_f64(&inputs.join("a.npy"), &[2, 3], &[1.0; 6]);
    std::fs::write(inputs.join("b.npy"), nested_braces_npy(24)).expect("write the input");
    let mut child = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(["einsum", s(&instance), "--inputs", s(&inputs)])
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the holdfast binary runs");
    // Watchdog: a generous bound on something that takes milliseconds, never a timing claim.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait on the child") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`holdfast einsum` still parsing a 24-brace header after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::io::read_to_string(child.stderr.take().expect("piped")).expect("utf-8");
    assert!(matches!(status.code(), Some(c) if c != 0), "{status}: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one error line expected: {stderr}");
    assert!(lines[0].contains("b.npy") && lines[0].contains("nests"), "{}", lines[0]);
    // The same file with a well-formed header is read and used.
    std::fs::write(inputs.join("b.npy"), nested_braces_npy(0)).expect("write the input");
    let (code, stderr) = holdfast_limited(&["einsum", s(&instance), "--inputs", s(&inputs)]);
    assert_eq!(code, Some(0), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
