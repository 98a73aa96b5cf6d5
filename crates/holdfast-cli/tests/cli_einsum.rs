//! `holdfast einsum` end to end on the built binary, without numpy: `.npy` operands in, the
//! result out, checked against a plain reference; random operands; the greedy path with Unicode
//! labels; the shared instances when present.

mod support;

use support::{holdfast, instances_dir, read_npy_f64, s, scratch, write_npy_c16, write_npy_f64};

/// `dir/mm.json`: the instance `ij,jk->ik` of an `m × k` and a `k × n` matrix.
fn matmul_instance(dir: &std::path::Path, (m, k, n): (usize, usize, usize)) -> std::path::PathBuf {
    let file = dir.join("mm.json");
    let json = format!(
        r#"{{"name": "mm", "format_string": "ij,jk->ik", "shapes": [[{m}, {k}], [{k}, {n}]],
            "paths": {{"opt_flops": {{"path": [[0, 1]]}}}}}}"#
    );
    std::fs::write(&file, json).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    file
}

#[test]
fn npy_inputs_and_output_match_a_reference_matmul() {
    let dir = scratch("einsum-matmul");
    let file = matmul_instance(&dir, (3, 4, 2));
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let a: Vec<f64> = (0..12).map(|i| f64::from(i) * 0.5 - 2.0).collect();
    let b: Vec<f64> = (0..8).map(|i| f64::from(i * i) * 0.25).collect();
    // Lexicographic order of file names decides the operand order: "a" before "b".
    write_npy_f64(&inputs.join("b_second.npy"), &[4, 2], &b);
    write_npy_f64(&inputs.join("a_first.npy"), &[3, 4], &a);
    let out = dir.join("r.npy");
    let run =
        holdfast(&["einsum", s(&file), "--inputs", s(&inputs), "--out", s(&out), "--repeat", "2"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("median ms") && run.stdout.contains("plan hits"), "{}", run.stdout);
    let (shape, got) = read_npy_f64(&out);
    assert_eq!(shape, vec![3, 2]);
    for i in 0..3 {
        for k in 0..2 {
            let want: f64 = (0..4).map(|j| a[i * 4 + j] * b[j * 2 + k]).sum();
            assert!((got[i * 2 + k] - want).abs() <= 1e-12 * want.abs().max(1.0));
        }
    }
}

#[test]
fn greedy_path_with_unicode_labels_and_a_scalar_result() {
    let dir = scratch("einsum-greedy");
    let file = dir.join("trace.json");
    std::fs::write(&file, r#"{"format_string": "ëñ,ñë->", "shapes": [[3, 3], [3, 3]]}"#).unwrap();
    let out = dir.join("r.npy");
    let run = holdfast(&[
        "einsum",
        s(&file),
        "--path",
        "greedy",
        "--seed",
        "5",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["path"], "greedy");
    assert_eq!(doc["instances"][0]["telemetry"]["operations"], 3);
    let (shape, got) = read_npy_f64(&out);
    assert!(shape.is_empty());
    assert!(got[0] > 0.0, "a trace of products of values in [0, 1) is positive");
}

#[test]
fn random_operands_are_reproducible() {
    let dir = scratch("einsum-seed");
    let file = dir.join("mm.json");
    std::fs::write(&file, r#"{"format_string": "ij,jk->ik", "shapes": [[5, 5], [5, 5]]}"#).unwrap();
    let result = |seed: &str, name: &str| {
        let out = dir.join(name);
        let run = holdfast(&[
            "einsum",
            s(&file),
            "--path",
            "greedy",
            "--seed",
            seed,
            "--out",
            s(&out),
            "-q",
        ]);
        assert_eq!(run.code, Some(0), "{run:?}");
        read_npy_f64(&out).1
    };
    assert_eq!(result("1", "a.npy"), result("1", "b.npy"));
    assert_ne!(result("1", "a.npy"), result("2", "c.npy"));
}

#[test]
fn shared_instances_run_in_one_held_session() {
    let Some(dir) = instances_dir() else {
        eprintln!("skipped: ../shared/einsum-instances is not present");
        return;
    };
    let small = ["bin_matmul_256.json", "lm_batch_likelihood_brackets_4_4d.json"];
    let files: Vec<String> = small.iter().map(|f| s(&dir.join(f)).to_owned()).collect();
    let mut args = vec!["einsum", "--repeat", "1", "--json", "--threads", "1"];
    args.extend(files.iter().map(String::as_str));
    let run = holdfast(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let instances = doc["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 2);
    assert_eq!(instances[1]["operands"], 84);
    assert_eq!(instances[1]["telemetry"]["operations"], 1);
}

#[test]
fn a_complex128_instance_runs_in_complex_arithmetic() {
    use num_complex::Complex;
    let dir = scratch("einsum-complex");
    let file = dir.join("zmm.json");
    std::fs::write(
        &file,
        r#"{"name": "zmm", "format_string": "ij,jk->ik", "shapes": [[2, 3], [3, 2]],
            "dtype": "complex128", "paths": {"opt_flops": {"path": [[0, 1]]}}}"#,
    )
    .unwrap();
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let a: Vec<Complex<f64>> =
        (0..6).map(|i| Complex::new(f64::from(i) - 2.0, 0.5 * f64::from(i))).collect();
    let b: Vec<Complex<f64>> =
        (0..6).map(|i| Complex::new(0.25 * f64::from(i), 1.0 - f64::from(i))).collect();
    write_npy_c16(&inputs.join("a.npy"), &[2, 3], &a);
    write_npy_c16(&inputs.join("b.npy"), &[3, 2], &b);
    let out = dir.join("r.npy");
    let run = holdfast(&["einsum", s(&file), "--inputs", s(&inputs), "--out", s(&out), "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains(r#""dtype":"complex128""#), "{}", run.stdout);
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.shape(), &[2, 2]);
    let got: Vec<Complex<f64>> = npy.into_vec().unwrap();
    for i in 0..2 {
        for k in 0..2 {
            let want: Complex<f64> = (0..3).map(|j| a[i * 3 + j] * b[j * 2 + k]).sum();
            assert!(
                (got[i * 2 + k] - want).norm() <= 1e-12,
                "{i},{k}: {} vs {want}",
                got[i * 2 + k]
            );
        }
    }
    // float64 operands for a complex128 instance: a one-line error naming the file.
    write_npy_f64(&inputs.join("b.npy"), &[3, 2], &[1.0; 6]);
    let run = holdfast(&["einsum", s(&file), "--inputs", s(&inputs)]);
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("b.npy") && run.stderr.contains("complex128"), "{}", run.stderr);
    // --dtype overrides the instance's: random complex64 operands.
    let run = holdfast(&["einsum", s(&file), "--dtype", "complex64", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains(r#""dtype":"complex64""#), "{}", run.stdout);
}

#[test]
fn the_retention_limit_decides_what_repeated_runs_keep() {
    let dir = scratch("einsum-retention");
    let file = matmul_instance(&dir, (200, 200, 200));
    let telemetry = |extra: &[&str]| {
        let mut args = vec!["einsum", s(&file), "--repeat", "3", "--json"];
        args.extend_from_slice(extra);
        let run = holdfast(&args);
        assert_eq!(run.code, Some(0), "{run:?}");
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        doc["instances"][0]["telemetry"].clone()
    };
    // The engine's default keeps the 320 kB result buffer for the next run.
    let kept = telemetry(&[]);
    assert!(kept["buffer_retained_bytes"].as_u64().unwrap() >= 320_000, "{kept}");
    assert!(kept["buffer_hits"].as_u64().unwrap() >= 1, "{kept}");
    // A pool that retains nothing serves nothing.
    let none = telemetry(&["--retention-mib", "0"]);
    assert_eq!(
        (none["buffer_retained_bytes"].as_u64(), none["buffer_hits"].as_u64()),
        (Some(0), Some(0)),
        "{none}"
    );
}
