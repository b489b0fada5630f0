//! What a long offline run shows while it goes: a progress bar, and
//! durations written in the unit that reads best.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// A duration in the unit that reads best.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// A progress bar that appears only once a run has lasted a second.
pub struct Progress {
    start: Instant,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar not shown yet.
    pub fn new() -> Self {
        Progress {
            start: Instant::now(),
            bar: None,
        }
    }

    /// Shows `fraction` (0 to 1) done.
    pub fn update(&mut self, fraction: f64) {
        if self.bar.is_none() && self.start.elapsed() > Duration::from_secs(1) {
            let bar = ProgressBar::new(1000);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {percent:>3}% eta {eta}").expect("the template is valid"),
            );
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position((fraction * 1000.0) as u64);
        }
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
