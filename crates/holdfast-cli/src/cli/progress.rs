//! [`Progress`]: an indicatif bar on standard error for runs that take more than a second, or
//! nothing (`--json`, `--quiet`, or standard error not a terminal).
//!
//! Invariant: the bar never writes to standard output, so tables and JSON stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar, possibly hidden.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar of `len` steps labelled `label`, drawn on standard error when `visible`.
    pub(crate) fn new(len: u64, label: &str, visible: bool) -> Self {
        let target =
            if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(len), target);
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_prefix(label.to_owned());
        Progress { bar }
    }

    /// Names the step in progress.
    pub(crate) fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    /// One step done.
    pub(crate) fn inc(&self) {
        self.bar.inc(1);
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
