//! `holdfast einsum` end to end on the built binary, without numpy: `.npy` operands in, the
//! result out, checked against a plain reference; random operands; the greedy path with Unicode
//! labels; the shared instances when present.

mod support;

use support::{holdfast, instances_dir, read_npy_f64, s, scratch, write_npy_f64};

#[test]
fn npy_inputs_and_output_match_a_reference_matmul() {
    let dir = scratch("einsum-matmul");
    let file = dir.join("mm.json");
    std::fs::write(
        &file,
        r#"{"name": "mm", "format_string": "ij,jk->ik", "shapes": [[3, 4], [4, 2]],
            "paths": {"opt_flops": {"path": [[0, 1]]}}}"#,
    )
    .unwrap();
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
