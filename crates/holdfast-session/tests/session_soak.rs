//! The soak test of held sessions under load (issue 10, SPEC B6): worker threads open, use,
//! close and drop sessions, scoped entries and shared scopes on two engines over the same CPUs,
//! with injected panics, checked results and a deadlock watchdog (driver in `soak/`).
//!
//! - `short_soak_with_2_4_and_8_threads` runs in the normal suite: a few seconds in all.
//! - `soak` is ignored by default; `cargo xtask soak --seconds N --threads LIST` runs it in
//!   release with `HOLDFAST_SOAK_SECONDS`, `HOLDFAST_SOAK_THREADS` (comma-separated; the seconds
//!   are split evenly between the thread counts) and optionally `HOLDFAST_SOAK_SEED`.
//!
//! One binary of its own: it uses the process-wide arbiter and installs a panic hook that
//! silences injected panics.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    unreachable_pub,
    dead_code,
    reason = "test driver: a failed expectation is a failed test; reports are printed"
)]

mod soak;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn seed() -> u64 {
    match std::env::var("HOLDFAST_SOAK_SEED") {
        Ok(s) => {
            let s = s.trim();
            let parsed =
                s.strip_prefix("0x").map_or_else(|| s.parse(), |h| u64::from_str_radix(h, 16));
            parsed.expect("HOLDFAST_SOAK_SEED is a number")
        }
        Err(_) => SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64),
    }
}

#[test]
fn short_soak_with_2_4_and_8_threads() {
    let seed = seed();
    for (threads, millis) in [(2, 800), (4, 800), (8, 1200)] {
        let config = soak::Config::new(threads, Duration::from_millis(millis), seed);
        let report = soak::run(config).unwrap_or_else(|e| panic!("{e}"));
        println!("{}", report.summary());
        assert!(report.totals.operations > 0, "no operation ran: {}", report.summary());
        assert!(report.fifo_checked > 0, "no admission was checked: {}", report.summary());
    }
}

#[test]
#[ignore = "long soak: `cargo xtask soak --seconds N` runs it (HOLDFAST_SOAK_SECONDS, HOLDFAST_SOAK_THREADS)"]
fn soak() {
    let seconds: f64 = std::env::var("HOLDFAST_SOAK_SECONDS")
        .map_or(60.0, |s| s.trim().parse().expect("HOLDFAST_SOAK_SECONDS is a number"));
    let threads: Vec<usize> = std::env::var("HOLDFAST_SOAK_THREADS")
        .unwrap_or_else(|_| "2,4,8".into())
        .split(',')
        .map(|t| t.trim().parse().expect("HOLDFAST_SOAK_THREADS lists thread counts"))
        .collect();
    assert!(
        !threads.is_empty() && threads.iter().all(|&t| t > 0),
        "thread counts must be positive"
    );
    let per_run = Duration::from_secs_f64(seconds / threads.len() as f64);
    let seed = seed();
    let mut summaries = Vec::new();
    for &n in &threads {
        let mut config = soak::Config::new(n, per_run, seed);
        config.progress_every = Some(Duration::from_secs(10));
        let report = soak::run(config).unwrap_or_else(|e| panic!("{e}"));
        println!("{}", report.summary());
        assert!(report.totals.operations > 0 && report.fifo_checked > 0, "{}", report.summary());
        summaries.push(report.summary());
    }
    println!("soak passed:\n{}", summaries.join("\n"));
}
