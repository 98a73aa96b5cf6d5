//! `holdfast tebd` end to end on the built binary (SPEC W6): the JSON report (first step at
//! time 0, every observable per site and bond), imaginary time lowering the energy, and
//! one-line errors for bad flags.
#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod support;

use support::{fails_cleanly, holdfast};

fn json(args: &[&str]) -> serde_json::Value {
    let run = holdfast(args);
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn json_reports_every_step_from_time_zero() {
    let doc = json(&[
        "tebd", "--model", "tfim", "--sites", "6", "--dt", "0.1", "--time", "0.5", "--json",
    ]);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    assert_eq!(steps[0]["time"], 0.0);
    assert_eq!(steps[0]["z"].as_array().unwrap().len(), 6);
    assert_eq!(steps[0]["x"].as_array().unwrap().len(), 6);
    assert_eq!(steps[0]["entropy"].as_array().unwrap().len(), 5);
    assert_eq!(steps[0]["energy"], -5.0, "all up: -J per bond");
    let e_end = steps[5]["energy"].as_f64().unwrap();
    assert!((e_end + 5.0).abs() < 1e-2, "real time conserves the energy: {e_end}");
}

#[test]
fn imaginary_time_lowers_the_energy_and_the_table_prints() {
    let doc = json(&[
        "tebd",
        "--model",
        "heisenberg",
        "--sites",
        "6",
        "--dt",
        "0.1",
        "--time",
        "2",
        "--imaginary",
        "--init",
        "neel",
        "--json",
    ]);
    let steps = doc["steps"].as_array().unwrap();
    let first = steps[0]["energy"].as_f64().unwrap();
    let last = steps.last().unwrap()["energy"].as_f64().unwrap();
    assert!(last < first - 0.5, "{first} -> {last}");
    let run = holdfast(&[
        "tebd",
        "--model",
        "xxz",
        "--anisotropy",
        "0.3",
        "--sites",
        "4",
        "--dt",
        "0.2",
        "--time",
        "0.4",
        "--init",
        "plus",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    for needle in ["time", "energy", "mean <Z>", "S(middle)", "max bond"] {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
}

#[test]
fn bad_flags_are_one_line_errors() {
    let base = ["tebd", "--model", "tfim", "--sites", "6"];
    let cases: [(&[&str], &str); 9] = [
        (&["--dt", "0", "--time", "1"], "time step"),
        (&["--dt", "-0.1", "--time", "1"], "time step"),
        (&["--dt", "0.1", "--time", "-1"], "total time"),
        (&["--dt", "0.1", "--time", "nan"], "total time"),
        (&["--dt", "0.1", "--time", "1", "--init", "sideways"], "initial state"),
        (&["--dt", "0.1", "--time", "1", "--bond-dim", "0"], "bond dimension"),
        (&["--dt", "0.1", "--time", "1", "--cutoff", "3"], "cutoff"),
        (&["--dt", "0.1", "--time", "1", "--anisotropy", "2"], "no anisotropy"),
        (&["--time", "1"], "--dt"),
    ];
    for (extra, needle) in cases {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let line = fails_cleanly(&args);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
    assert!(
        fails_cleanly(&["tebd", "--model", "tfim", "--sites", "1", "--dt", "0.1", "--time", "1"])
            .contains("2 sites")
    );
}

#[test]
fn compare_times_three_ways_and_prints_the_exact_energy() {
    let args = ["tebd", "--model", "tfim", "--sites", "6", "--dt", "0.1", "--time", "0.3"];
    let run = holdfast(&[&args[..], &["--compare"]].concat());
    assert_eq!(run.code, Some(0), "{run:?}");
    for needle in ["exact energy -5.000000000000", "held", "scoped", "naive", "energies agree"] {
        assert!(run.stdout.contains(needle), "{needle}: {}", run.stdout);
    }
    let doc = json(&[&args[..], &["--compare", "--json"]].concat());
    for way in ["held", "scoped", "naive"] {
        assert_eq!(doc["compare"][way].as_array().map(Vec::len), Some(4), "{way}: {doc}");
    }
    let ground = json(&[
        "tebd",
        "--model",
        "tfim",
        "--sites",
        "6",
        "--dt",
        "0.1",
        "--time",
        "3",
        "--imaginary",
        "--init",
        "plus",
        "--json",
    ]);
    let exact = ground["exact_ground_energy"].as_f64().unwrap();
    let last = ground["steps"].as_array().unwrap().last().unwrap()["energy"].as_f64().unwrap();
    assert!(last > exact && last - exact < 1e-2, "{last} vs the free-fermion {exact}");
}
