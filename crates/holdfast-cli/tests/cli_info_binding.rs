//! `holdfast info` under `taskset`: the program reports the process's mask and builds its
//! default domain inside it (SPEC S1), as a user sharing a machine would run it.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a failed unwrap is a failed test")]

use std::process::Command;

fn info_under(cpus: &str) -> serde_json::Value {
    let out = Command::new("taskset")
        .args(["-c", cpus])
        .arg(env!("CARGO_BIN_EXE_holdfast"))
        .args(["info", "--json"])
        .output()
        .expect("taskset runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The CPUs this test process may use, as the `taskset -c` list of the kernel's own report.
fn own_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim();
    let mut cpus = Vec::new();
    for item in list.split(',') {
        let (a, b) = item.split_once('-').unwrap_or((item, item));
        cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    cpus
}

#[test]
fn info_under_taskset_reports_the_mask_as_the_default_domain() {
    if Command::new("taskset").arg("--version").output().is_err() {
        eprintln!("SKIPPED: `taskset` (util-linux) is not installed");
        return;
    }
    let last = own_cpus().last().copied().unwrap().to_string();
    let doc = info_under(&last);
    assert_eq!(doc["topology"]["allowed"], last.as_str(), "{doc}");
    assert_eq!(doc["topology"]["process_binding"], last.as_str(), "{doc}");
    assert_eq!(doc["domain"]["cpus"], last.as_str(), "{doc}");
    assert_eq!(doc["domain"]["threads"], 1, "{doc}");
}
