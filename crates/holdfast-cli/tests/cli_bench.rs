//! `holdfast bench` end to end on the built binary: a small campaign (one add and one matmul
//! case, one round) in both output forms, the Markdown and JSON reports, the M2 counters of the
//! held session (also over the 32 × 32 factorizations), and one-line errors for bad arguments.

mod support;

use support::{fails_cleanly, holdfast, scratch};

/// A campaign small enough for a debug build: two cases, one round, no instances.
const SMALL: &[&str] = &[
    "bench",
    "--no-instances",
    "--filter",
    "/4",
    "--rounds",
    "2",
    "--cold",
    "1",
    "--round-us",
    "200",
    "--case-budget-ms",
    "50",
    "--quiet",
];

#[test]
fn bench_prints_four_ways_counters_and_checks() {
    let mut args = SMALL.to_vec();
    args.extend(["--threads", "1"]);
    let run = holdfast(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    for needle in
        ["direct", "held", "scoped", "naive", "matmul/4", "cold", "counters", "correctness: OK"]
    {
        assert!(run.stdout.contains(needle), "missing {needle:?} in\n{}", run.stdout);
    }
    assert!(!run.stdout.contains("add/1024"), "the filter keeps only the /4 cases");
}

#[test]
fn bench_writes_markdown_and_json_reports() {
    let dir = scratch("bench-reports");
    let (md, js) = (dir.join("r.md"), dir.join("r.json"));
    let mut args = SMALL.to_vec();
    args.extend(["--threads", "1,all", "--json", "--markdown"]);
    args.push(md.to_str().unwrap());
    args.push("--json-out");
    args.push(js.to_str().unwrap());
    let run = holdfast(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    assert_eq!(printed["agree"], true);
    assert_eq!(printed["settings"], written["settings"]);
    assert_eq!(written["retention_mib"], 4096, "the bench's default pool retention");
    let settings = written["settings"].as_array().unwrap();
    assert!(!settings.is_empty());
    assert_eq!(settings[0]["threads"], 1);
    for setting in settings {
        let case = &setting["cases"][0];
        assert_eq!(case["name"], "matmul/4");
        let held = &case["ways"]["held"];
        assert!(held["warm_median_ns"].as_f64().unwrap() > 0.0, "{held}");
        assert!(held["cold_median_ns"].as_f64().unwrap() > 0.0, "{held}");
        assert_held_counts_nothing(held);
        // The other ways pay what the held session does not.
        let scoped = &case["ways"]["scoped"]["counters"];
        assert!(scoped["slot_locks"].as_u64().unwrap() >= scoped["ops"].as_u64().unwrap());
        let naive = &case["ways"]["naive"]["counters"];
        assert_eq!(naive["pool_installs"], naive["ops"]);
    }
    let checks = written["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["met"] == true), "{checks:?}");
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(markdown.contains("| case | direct | held | scoped | naive |"), "{markdown}");
    assert!(markdown.contains("Checks on warm held operations"), "{markdown}");
    assert!(markdown.contains("retains up to 4096 MiB"), "{markdown}");
}

/// SPEC M2 on a warm held operation: no lock, no install, no plan preparation, no allocation,
/// every buffer from the pool.
fn assert_held_counts_nothing(held: &serde_json::Value) {
    let c = &held["counters"];
    assert!(c["ops"].as_u64().is_some_and(|n| n > 0), "{c}");
    for zero in [
        "slot_locks",
        "arbiter_locks",
        "pool_installs",
        "plan_preparations",
        "allocations",
        "buffer_misses",
    ] {
        assert_eq!(c[zero], 0, "{zero} in {c}");
    }
}

/// SPEC T4 in the campaign: a warm held SVD, QR and eigh of a 32 × 32 matrix allocate nothing
/// on the calling thread, take no lock and install no pool, and the four ways agree.
#[test]
fn bench_counts_the_factorizations() {
    let mut args = SMALL.to_vec();
    args[3] = "/32";
    args.extend(["--threads", "1,all", "--json"]);
    let run = holdfast(&args);
    assert_eq!(run.code, Some(0), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["agree"], true);
    for setting in report["settings"].as_array().unwrap() {
        let cases = setting["cases"].as_array().unwrap();
        let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["svd/32", "qr/32", "eigh/32"]);
        for case in cases {
            assert_eq!(case["family"], "linalg");
            assert_held_counts_nothing(&case["ways"]["held"]);
        }
    }
    let checks = report["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["met"] == true), "{checks:?}");
}

#[test]
fn bench_bad_arguments() {
    fails_cleanly(&["bench", "--threads", "0"]);
    fails_cleanly(&["bench", "--threads", "lots"]);
    fails_cleanly(&["bench", "--rounds", "0"]);
    fails_cleanly(&["bench", "--retention-mib", &usize::MAX.to_string()]);
    fails_cleanly(&["bench", "--no-instances", "--filter", "no-such-case"]);
    fails_cleanly(&["bench", "--instances", "/no/such/folder", "--filter", "einsum"]);
    fails_cleanly(&[
        "bench",
        "--no-instances",
        "--filter",
        "add/2",
        "--markdown",
        "/no/such/dir/r.md",
        "--rounds",
        "1",
        "--quiet",
    ]);
}
