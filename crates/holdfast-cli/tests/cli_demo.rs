//! `holdfast demo` and `holdfast info` end to end on the built binary: the three-way table, the
//! correctness line, and the JSON forms.

mod support;

use support::holdfast;

/// A small demo: a debug build is slow, and the default workload is sized for release.
const SMALL: &[&str] =
    &["demo", "--gemms", "300", "--sites", "6", "--bond", "4", "--sweeps", "3", "--repeat", "2"];

#[test]
fn demo_prints_the_three_way_table_and_agrees() {
    let run = holdfast(SMALL);
    assert_eq!(run.code, Some(0), "{run:?}");
    for needle in
        ["held ns/op", "scoped ns/op", "naive ns/op", "GEMM chain 4x4", "MPS inner product"]
    {
        assert!(run.stdout.contains(needle), "missing {needle:?} in\n{}", run.stdout);
    }
    assert!(run.stdout.contains("correctness: OK"), "{}", run.stdout);
    assert!(run.stdout.contains("thread budget"), "{}", run.stdout);
}

#[test]
fn demo_json_is_machine_readable() {
    let mut args = SMALL.to_vec();
    args.extend(["--json", "--threads", "1"]);
    let run = holdfast(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["agree"], true);
    assert_eq!(doc["threads"], 1);
    let workloads = doc["workloads"].as_array().unwrap();
    assert_eq!(workloads.len(), 2);
    for w in workloads {
        for way in ["held", "scoped", "naive"] {
            assert!(w[way]["median_ns_per_op"].as_f64().unwrap() > 0.0, "{w}");
        }
        assert!(w["max_relative_difference"].as_f64().unwrap() <= 1e-12);
    }
    assert_eq!(workloads[0]["ops_per_round"], 300);
    assert_eq!(workloads[1]["ops_per_round"], 6 * 2 * 3);
}

#[test]
fn info_describes_topology_domain_and_thresholds() {
    let run = holdfast(&["info"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    for needle in ["topology", "thread budget", "gemm", "contraction", "allowed CPUs"] {
        assert!(run.stdout.contains(needle), "missing {needle:?} in\n{}", run.stdout);
    }
    let run = holdfast(&["info", "--json", "--threads", "1"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["domain"]["threads"], 1);
    assert_eq!(doc["thresholds"].as_array().unwrap().len(), 5);
}

#[test]
fn help_and_version_succeed() {
    for args in [&["--help"][..], &["--version"], &["einsum", "--help"], &["demo", "--help"]] {
        let run = holdfast(args);
        assert_eq!(run.code, Some(0), "{args:?}: {run:?}");
        assert!(!run.stdout.is_empty());
    }
}
