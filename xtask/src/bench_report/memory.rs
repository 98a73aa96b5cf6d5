//! Peak memory against numpy (SPEC N3): the resident peak of `holdfast einsum INSTANCE
//! --threads 1 --repeat 3` beside numpy + opt_einsum running the same instance three times
//! (`scripts/einsum_peers.py --peers numpy --runs 3`), both measured by `/usr/bin/time` in the
//! same run, pinned to CPU 0, instance by instance in turn; with each path's largest live set
//! (every operand and intermediate still needed plus the step's output, at the step that holds
//! the most), the floor any evaluation of that path needs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::targets::Verdict;
use crate::DynError;
use crate::cmd::{pinned, workspace_root};

const TIME: &str = "/usr/bin/time";

/// One instance.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) name: String,
    /// holdfast's resident peak, KiB.
    pub(crate) holdfast_kib: Option<u64>,
    /// numpy's, KiB.
    pub(crate) numpy_kib: Option<u64>,
    /// The path's largest live set, bytes.
    pub(crate) live_bytes: Option<f64>,
}

/// The resident peak (KiB) of `program args…` pinned to CPU 0 (as every single-thread
/// measurement of the report is, through [`pinned`]: `time` runs pinned, and so does the
/// program it starts), and its standard output.
fn peak(program: &Path, args: &[&std::ffi::OsStr]) -> Result<(u64, String), DynError> {
    let mut cmd = pinned(TIME);
    cmd.args(["-f", "%M"]).arg(program).args(args);
    cmd.env_remove("OPENBLAS_CORETYPE").env_remove("OPENBLAS_L2_SIZE");
    let out = cmd.stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed ({})", out.status).into());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib = stderr
        .lines()
        .rev()
        .find_map(|l| l.trim().parse::<u64>().ok())
        .ok_or_else(|| format!("{TIME} printed no peak for {}", program.display()))?;
    Ok((kib, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// Measures every `*.json` instance of `dir`, holdfast then numpy for each.
pub(crate) fn measure(holdfast: &Path, python: &Path, dir: &Path) -> Result<Vec<Row>, DynError> {
    if !Path::new(TIME).exists() {
        return Err(format!("{TIME} is not installed").into());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let script = workspace_root().join("scripts/einsum_peers.py");
    let mut rows = Vec::new();
    for file in files {
        let Some(stem) = file.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        let file_name = format!("{stem}.json");
        let mut row = Row { name: stem.clone(), ..Row::default() };
        match peak(
            holdfast,
            &[
                "einsum".as_ref(),
                file.as_os_str(),
                "--threads".as_ref(),
                "1".as_ref(),
                "--repeat".as_ref(),
                "3".as_ref(),
                "--quiet".as_ref(),
            ],
        ) {
            Ok((kib, _)) => row.holdfast_kib = Some(kib),
            Err(e) => eprintln!("bench-report: memory of holdfast on {stem}: {e}"),
        }
        match peak(
            python,
            &[
                script.as_os_str(),
                dir.as_os_str(),
                "--peers".as_ref(),
                "numpy".as_ref(),
                "--runs".as_ref(),
                "3".as_ref(),
                "--filter".as_ref(),
                file_name.as_ref(),
            ],
        ) {
            Ok((kib, stdout)) => {
                let doc: Option<serde_json::Value> = serde_json::from_str(stdout.trim()).ok();
                let name = doc
                    .as_ref()
                    .and_then(|d| d["largest_live_bytes"].as_object()?.keys().next().cloned());
                if let (Some(doc), Some(name)) = (&doc, name) {
                    row.live_bytes = doc["largest_live_bytes"][&name].as_f64();
                    row.name = name;
                }
                row.numpy_kib = Some(kib);
            }
            Err(e) => eprintln!("bench-report: memory of numpy on {stem}: {e}"),
        }
        rows.push(row);
    }
    Ok(rows)
}

fn mb(kib: Option<u64>) -> String {
    #[allow(clippy::cast_precision_loss, reason = "memory sizes")]
    kib.map_or_else(|| "-".to_owned(), |k| format!("{:.0}", k as f64 / 1024.0))
}

/// The report's section.
pub(crate) fn table(rows: Option<&[Row]>) -> String {
    let mut s = String::from("## Peak memory against numpy\n\n");
    let Some(rows) = rows else {
        s.push_str("Not measured in this run.\n");
        return s;
    };
    s.push_str(
        "Resident peak (`/usr/bin/time -f %M`, MiB) of `holdfast einsum INSTANCE --threads 1 \
         --repeat 3` and of numpy + opt_einsum running the instance three times \
         (`scripts/einsum_peers.py --peers numpy --runs 3`: the Python interpreter and its \
         imports count), pinned to CPU 0, one after the other; beside them the path's largest \
         live set (float64 operands and intermediates still needed, plus the step's output).\n\n",
    );
    s.push_str(
        "| instance | holdfast MiB | numpy MiB | holdfast / numpy | largest live set MiB |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|\n");
    for r in rows {
        let ratio = match (r.holdfast_kib, r.numpy_kib) {
            #[allow(clippy::cast_precision_loss, reason = "memory sizes")]
            (Some(h), Some(n)) if n > 0 => format!("{:.2}", h as f64 / n as f64),
            _ => "-".to_owned(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {ratio} | {} |",
            r.name,
            mb(r.holdfast_kib),
            mb(r.numpy_kib),
            r.live_bytes.map_or_else(|| "-".to_owned(), |b| format!("{:.0}", b / 1048576.0)),
        );
    }
    s
}

/// One verdict: holdfast's peak at most numpy's on every instance.
pub(crate) fn verdicts(rows: Option<&[Row]>) -> Vec<Verdict> {
    let pairs: Vec<(&str, u64, u64)> = rows
        .unwrap_or_default()
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.holdfast_kib?, r.numpy_kib?)))
        .collect();
    let complete = rows.is_some_and(|r| !r.is_empty() && r.len() == pairs.len());
    let above: Vec<String> = pairs
        .iter()
        .filter(|(_, h, n)| h > n)
        .map(|(name, h, n)| format!("{name} {} / {} MiB", h / 1024, n / 1024))
        .collect();
    vec![Verdict {
        issue: "peers".to_owned(),
        what: "resident peak of holdfast einsum (1 thread, 3 runs) at most numpy + opt_einsum's"
            .to_owned(),
        measured: if pairs.is_empty() {
            "not measured".to_owned()
        } else if above.is_empty() {
            format!("0 of {} above", pairs.len())
        } else {
            format!("{} of {} above: {}", above.len(), pairs.len(), above.join(", "))
        },
        target: "0 above".to_owned(),
        met: complete.then_some(above.is_empty()),
    }]
}

#[cfg(test)]
mod tests {
    use super::{Row, table, verdicts};

    #[test]
    fn every_instance_must_be_at_most_numpy() {
        let row = |name: &str, h, n| Row {
            name: name.into(),
            holdfast_kib: h,
            numpy_kib: n,
            live_bytes: Some(1048576.0),
        };
        let rows = vec![row("a", Some(1024), Some(2048)), row("b", Some(4096), Some(2048))];
        let v = verdicts(Some(rows.as_slice()));
        assert_eq!(v[0].met, Some(false));
        assert!(v[0].measured.contains("b 4 / 2 MiB"), "{:?}", v[0]);
        assert_eq!(verdicts(Some(&rows[..1]))[0].met, Some(true));
        let missing = vec![row("a", Some(1024), None)];
        assert_eq!(verdicts(Some(missing.as_slice()))[0].met, None);
        assert_eq!(verdicts(None)[0].met, None);
        assert!(table(Some(rows.as_slice())).contains("| a | 1 | 2 | 0.50 | 1 |"));
    }
}
