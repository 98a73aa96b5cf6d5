//! `holdfast dmrg` end to end on the built binary (SPEC W6): the JSON report of a run against
//! the exact energy it prints, the per-sweep table, `--compare`, and one-line errors for every
//! bad flag.

mod support;

use support::{fails_cleanly, holdfast};

#[test]
fn json_reports_every_sweep_and_the_exact_energy() {
    let run =
        holdfast(&["dmrg", "--model", "tfim", "--sites", "10", "--bond-dim", "8,16", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let energy = doc["energy"].as_f64().unwrap();
    let exact = doc["exact"].as_f64().unwrap();
    assert!(((energy - exact) / exact).abs() < 1e-8, "{energy} vs {exact}");
    let sweeps = doc["sweeps"].as_array().unwrap();
    assert!(!sweeps.is_empty() && sweeps.len() <= 10);
    for key in ["energy", "max_bond", "discarded_weight", "seconds"] {
        assert!(sweeps.iter().all(|s| s.get(key).is_some()), "{key} missing: {doc}");
    }
    assert_eq!(sweeps[0]["max_bond"], 8, "the schedule's first bond dimension");
    assert!(run.stderr.trim().is_empty(), "--json draws no progress: {}", run.stderr);
}

#[test]
fn table_and_compare() {
    let run = holdfast(&[
        "dmrg",
        "--model",
        "heisenberg",
        "--sites",
        "8",
        "--bond-dim",
        "16",
        "--sweeps",
        "3",
        "--compare",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    for needle in
        ["sweep", "energy", "max bond", "discarded", "heap allocs", "held s", "scoped s", "naive s"]
    {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
    assert!(!run.stdout.contains("exact"), "no closed form for heisenberg: {}", run.stdout);
    let json = holdfast(&[
        "dmrg",
        "--model",
        "xxz",
        "--anisotropy",
        "0.5",
        "--coupling",
        "2",
        "--sites",
        "6",
        "--bond-dim",
        "8",
        "--sweeps",
        "2",
        "--compare",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(doc["exact"].is_null());
    let len = |way: &str| doc["compare"][way].as_array().map(Vec::len);
    assert_eq!(len("held"), len("scoped"));
    assert_eq!(len("held"), len("naive"));
    assert!(doc["compare"]["total_seconds"]["naive"].as_f64().is_some_and(|t| t > 0.0), "{doc}");
    let sweeps = doc["sweeps"].as_array().unwrap();
    assert!(sweeps.iter().all(|s| s["allocations"].as_u64().is_some()), "{doc}");
    assert!(sweeps[0]["allocations"].as_u64() > Some(0), "the first sweep builds everything");
}

/// `holdfast dmrg --model MODEL --sites SITES [--bond-dim BOND] EXTRA…`.
fn dmrg_args(model: &str, sites: &str, bond: Option<&str>, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["dmrg", "--model", model, "--sites", sites];
    if let Some(bond) = bond {
        args.extend(["--bond-dim", bond]);
    }
    args.extend(extra);
    args.into_iter().map(str::to_owned).collect()
}

#[test]
fn bad_flags_are_one_line_errors() {
    let cases: Vec<(Vec<String>, &str)> = vec![
        (dmrg_args("tfim", "1", Some("8"), &[]), "2 sites"),
        (dmrg_args("tfim", "8", Some("0"), &[]), "bond dimension"),
        (dmrg_args("potts", "8", Some("8"), &[]), "unknown model"),
        (dmrg_args("heisenberg", "8", Some("8"), &["--field", "1"]), "no field"),
        (dmrg_args("tfim", "8", Some("8"), &["--anisotropy", "1"]), "no anisotropy"),
        (dmrg_args("tfim", "8", Some("8"), &["--cutoff", "2"]), "cutoff"),
        (dmrg_args("tfim", "8", Some("8"), &["--sweeps", "0"]), "sweep"),
        (dmrg_args("tfim", "8", Some("8"), &["--field", "nan"]), "not finite"),
        (dmrg_args("tfim", "8", Some("8"), &["--threads", "0"]), "thread"),
        (dmrg_args("tfim", "8", None, &[]), "--bond-dim"),
        (dmrg_args("tfim", "-3", Some("8"), &[]), "-3"),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let line = fails_cleanly(&args);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
}
