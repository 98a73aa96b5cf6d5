//! Reading criterion's results: every `new/benchmark.json` under `target/criterion` names a
//! benchmark by its full id, and the `new/estimates.json` beside it holds the median.
//!
//! Invariant: only results written after the report's run started are read, so a benchmark
//! that did not run this time is reported as not measured, never with an old number.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Median nanoseconds by criterion full id (`group/function/value`).
pub(crate) type Medians = BTreeMap<String, f64>;

/// The medians written under `dir` since `since`.
pub(crate) fn read_medians(dir: &Path, since: SystemTime) -> Medians {
    let mut medians = Medians::new();
    visit(dir, since, &mut medians);
    medians
}

fn visit(dir: &Path, since: SystemTime, medians: &mut Medians) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            if let Some((id, median)) = read_one(&path, since) {
                medians.insert(id, median);
            }
        } else {
            visit(&path, since, medians);
        }
    }
}

fn read_one(new: &Path, since: SystemTime) -> Option<(String, f64)> {
    let estimates = new.join("estimates.json");
    let modified = std::fs::metadata(&estimates).and_then(|m| m.modified()).ok()?;
    if modified < since {
        return None;
    }
    let bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(new.join("benchmark.json")).ok()?).ok()?;
    let est: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(estimates).ok()?).ok()?;
    let id = bench.get("full_id")?.as_str()?.to_owned();
    let median = est.get("median")?.get("point_estimate")?.as_f64()?;
    Some((id, median))
}

#[cfg(test)]
mod tests {
    use super::read_medians;
    use std::time::{Duration, SystemTime};

    #[test]
    fn reads_fresh_results_and_skips_old_ones() {
        let root = std::env::temp_dir().join(format!("xtask-criterion-{}", std::process::id()));
        let new = root.join("matmul_f64").join("faer_direct").join("4").join("new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(new.join("benchmark.json"), r#"{"full_id":"matmul_f64/faer_direct/4"}"#)
            .unwrap();
        std::fs::write(new.join("estimates.json"), r#"{"median":{"point_estimate":33.5}}"#)
            .unwrap();
        let before = SystemTime::now() - Duration::from_secs(60);
        let m = read_medians(&root, before);
        assert_eq!(m.get("matmul_f64/faer_direct/4"), Some(&33.5));
        let later = SystemTime::now() + Duration::from_secs(60);
        assert!(read_medians(&root, later).is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
