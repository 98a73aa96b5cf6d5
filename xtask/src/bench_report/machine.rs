//! What the report says about the machine and the software: CPU model, CPUs, kernel, load,
//! toolchain and the versions of the numerical dependencies, each read from the system (never
//! typed in), with `unknown` when a source is missing.

use std::process::Command;

/// The facts at the top of the report.
#[derive(Debug, Clone)]
pub(crate) struct Machine {
    pub(crate) cpu_model: String,
    pub(crate) cpus: String,
    pub(crate) kernel: String,
    pub(crate) memory: String,
    pub(crate) rustc: String,
    pub(crate) hwloc: String,
    pub(crate) faer: String,
    pub(crate) rayon: String,
}

fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn cpuinfo_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

fn meminfo_total() -> Option<String> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(format!("{} GiB", (kib + (1 << 19)) >> 20))
}

/// The version of `package` locked in `Cargo.lock` (the first entry when several are).
fn locked_version(lock: &str, package: &str) -> Option<String> {
    let needle = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle {
            return lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = \""))
                .map(|v| v.trim_end_matches('"').to_owned());
        }
    }
    None
}

/// The load averages (1, 5, 15 minutes) from `/proc/loadavg`.
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_owned())
}

impl Machine {
    /// Reads the machine and the workspace's locked versions.
    pub(crate) fn read() -> Self {
        let unknown = || "unknown".to_owned();
        let lock = std::fs::read_to_string(crate::cmd::workspace_root().join("Cargo.lock"))
            .unwrap_or_default();
        Machine {
            cpu_model: cpuinfo_model().unwrap_or_else(unknown),
            cpus: std::thread::available_parallelism()
                .map_or_else(|_| unknown(), |n| n.get().to_string()),
            kernel: output("uname", &["-sr"]).unwrap_or_else(unknown),
            memory: meminfo_total().unwrap_or_else(unknown),
            rustc: output("rustc", &["-V"]).unwrap_or_else(unknown),
            hwloc: output("pkg-config", &["--modversion", "hwloc"]).unwrap_or_else(unknown),
            faer: locked_version(&lock, "faer").unwrap_or_else(unknown),
            rayon: locked_version(&lock, "rayon").unwrap_or_else(unknown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::locked_version;

    #[test]
    fn reads_locked_versions() {
        let lock = "[[package]]\nname = \"faer\"\nversion = \"0.24.0\"\n\n[[package]]\nname = \"rayon\"\nversion = \"1.11.0\"\n";
        assert_eq!(locked_version(lock, "faer").as_deref(), Some("0.24.0"));
        assert_eq!(locked_version(lock, "rayon").as_deref(), Some("1.11.0"));
        assert_eq!(locked_version(lock, "gemm"), None);
    }
}
