//! Bad input to every subcommand exits non-zero with one line of error, never a panic or a
//! backtrace (issue 8): missing files, malformed JSON, wrong `.npy` dtype, shape or count,
//! unknown path names, bad numbers and unknown arguments.

mod support;

use support::{fails_cleanly, s, scratch, write_npy_f32, write_npy_f64};

/// A small valid instance: `ij,jk->ik` on 2×3 and 3×2.
const MATMUL: &str = r#"{"name": "tiny", "format_string": "ij,jk->ik", "shapes": [[2, 3], [3, 2]],
 "dtype": "float64", "paths": {"opt_flops": {"path": [[0, 1]]}, "opt_size": {"path": [[0, 1]]}}}"#;

#[test]
fn einsum_missing_file() {
    let line = fails_cleanly(&["einsum", "/nonexistent/instance.json"]);
    assert!(line.contains("/nonexistent/instance.json"), "{line}");
}

#[test]
fn einsum_malformed_json() {
    let dir = scratch("malformed");
    let file = dir.join("bad.json");
    std::fs::write(&file, "{\"format_string\": \"ij,jk\", \n\"shapes\": [[2, 3]\n").unwrap();
    fails_cleanly(&["einsum", s(&file)]);
    std::fs::write(&file, r#"{"format_string": "ij,jk->ik"}"#).unwrap();
    let line = fails_cleanly(&["einsum", s(&file)]);
    assert!(line.contains("shapes"), "{line}");
    std::fs::write(&file, r#"{"format_string": "ij,jk->ik", "shapes": [[2, 3]]}"#).unwrap();
    fails_cleanly(&["einsum", s(&file)]);
    std::fs::write(
        &file,
        r#"{"format_string": "ij,jk->ik", "shapes": [[2, 3], [3, 2]], "dtype": "float16"}"#,
    )
    .unwrap();
    fails_cleanly(&["einsum", s(&file)]);
    std::fs::write(&file, r#"{"format_string": "ij,jk->iq", "shapes": [[2, 3], [3, 2]]}"#).unwrap();
    fails_cleanly(&["einsum", s(&file), "--path", "greedy"]);
    std::fs::write(&file, r#"{"format_string": "ij,jk->ik", "shapes": [[2, 3], [4, 2]]}"#).unwrap();
    fails_cleanly(&["einsum", s(&file), "--path", "greedy"]);
}

#[test]
fn einsum_unknown_or_missing_path() {
    let dir = scratch("paths");
    let file = dir.join("tiny.json");
    std::fs::write(&file, MATMUL).unwrap();
    let line = fails_cleanly(&["einsum", s(&file), "--path", "optimal"]);
    assert!(line.contains("optimal"), "{line}");
    std::fs::write(&file, r#"{"format_string": "ij,jk->ik", "shapes": [[2, 3], [3, 2]]}"#).unwrap();
    let line = fails_cleanly(&["einsum", s(&file), "--path", "opt_size"]);
    assert!(line.contains("opt_size"), "{line}");
    std::fs::write(
        &file,
        r#"{"format_string": "ij,jk->ik", "shapes": [[2, 3], [3, 2]], "paths": {"opt_flops": {"path": [[0, 5]]}}}"#,
    )
    .unwrap();
    fails_cleanly(&["einsum", s(&file)]);
}

#[test]
fn einsum_bad_npy_inputs() {
    let dir = scratch("npy");
    let file = dir.join("tiny.json");
    std::fs::write(&file, MATMUL).unwrap();
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let a = inputs.join("a.npy");
    let b = inputs.join("b.npy");

    // Missing directory.
    fails_cleanly(&["einsum", s(&file), "--inputs", s(&dir.join("absent"))]);
    // Wrong count.
    write_npy_f64(&a, &[2, 3], &[1.0; 6]);
    let line = fails_cleanly(&["einsum", s(&file), "--inputs", s(&inputs)]);
    assert!(line.contains("operands"), "{line}");
    // Wrong dtype.
    write_npy_f32(&b, &[3, 2], &[1.0; 6]);
    let line = fails_cleanly(&["einsum", s(&file), "--inputs", s(&inputs)]);
    assert!(line.contains("b.npy") && line.contains("dtype"), "{line}");
    // Wrong shape.
    write_npy_f64(&b, &[2, 3], &[1.0; 6]);
    let line = fails_cleanly(&["einsum", s(&file), "--inputs", s(&inputs)]);
    assert!(line.contains("b.npy") && line.contains("shape"), "{line}");
    // Not an .npy file at all.
    std::fs::write(&b, b"this is not numpy").unwrap();
    let line = fails_cleanly(&["einsum", s(&file), "--inputs", s(&inputs)]);
    assert!(line.contains("b.npy"), "{line}");
    // Unwritable output.
    write_npy_f64(&b, &[3, 2], &[1.0; 6]);
    fails_cleanly(&[
        "einsum",
        s(&file),
        "--inputs",
        s(&inputs),
        "--out",
        s(&dir.join("absent/dir/r.npy")),
    ]);
}

#[test]
fn einsum_bad_arguments() {
    let dir = scratch("args");
    let file = dir.join("tiny.json");
    std::fs::write(&file, MATMUL).unwrap();
    fails_cleanly(&["einsum"]);
    fails_cleanly(&["einsum", s(&file), "--repeat", "0"]);
    fails_cleanly(&["einsum", s(&file), "--repeat", "many"]);
    fails_cleanly(&["einsum", s(&file), "--threads", "0"]);
    fails_cleanly(&["einsum", s(&file), "--retention-mib", &usize::MAX.to_string()]);
    fails_cleanly(&["einsum", s(&file), s(&file), "--out", s(&dir.join("r.npy"))]);
}

#[test]
fn demo_bad_arguments() {
    fails_cleanly(&["demo", "--threads", "0"]);
    fails_cleanly(&["demo", "--threads", "100000"]);
    fails_cleanly(&["demo", "--repeat", "0"]);
    fails_cleanly(&["demo", "--bond", "-3"]);
    fails_cleanly(&["demo", "--no-such-flag"]);
}

#[test]
fn info_and_top_level_bad_arguments() {
    fails_cleanly(&["info", "--threads", "0"]);
    fails_cleanly(&["info", "extra"]);
    fails_cleanly(&["frobnicate"]);
}
