//! `soak`: a run configuration (the EV example at 1 kHz by default) on the
//! real clock for a long time, printing the process's resident memory and
//! the run's counters at each interval, then whether memory stayed flat.
//! Memory is read from `/proc/self/status`: the anonymous resident memory
//! (RssAnon: heap and stacks, where a leak shows) is the figure held to the
//! goal; the whole resident set (VmRSS) also counts the program's code and
//! files as they are first touched.

use std::path::Path;
use std::time::Duration;

use anyhow::bail;
use tandem_config::bounds::check_duration;
use tandem_config::load_run_config;
use tandem_models::plants;
use tandem_session::report::live::LiveStats;
use tandem_session::{bind, ClockMode, Observer, Options, Session};

/// Growth of anonymous memory from the second sample to the last that
/// still counts as flat (KiB): allocator noise, not a leak.
const FLAT_KIB: u64 = 1024;

/// A field of this process's `/proc/self/status` in KiB (`VmRSS`,
/// `RssAnon`), if the system says.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Prints memory and counters at each interval and keeps the samples of
/// anonymous memory.
struct Watch {
    samples: Vec<(f64, u64)>,
}

impl Observer for Watch {
    fn live(&mut self, t: f64, stats: &mut LiveStats) {
        let anon = status_kib("RssAnon").unwrap_or(0);
        let rss = status_kib("VmRSS").unwrap_or(0);
        self.samples.push((t, anon));
        println!(
            "  {t:>8.0} s  anon {:>6.1} MiB  rss {:>6.1} MiB  {}",
            anon as f64 / 1024.0,
            rss as f64 / 1024.0,
            stats.line(t)
        );
    }
}

/// Runs `config` for `seconds` on the real clock, sampling every `interval`.
pub fn run(config: &Path, seconds: f64, interval: Duration) -> anyhow::Result<()> {
    let mut config = load_run_config(config, plants::PROFILES)?;
    check_duration(seconds).map_err(|e| anyhow::anyhow!("--seconds: {e}"))?;
    if seconds < 3.0 * interval.as_secs_f64() {
        bail!("--seconds must be at least three --interval (two samples after the first), found {seconds}");
    }
    config.settings.duration = seconds;
    let frame = config.settings.frame;
    let results = std::env::temp_dir().join(format!("tandem-soak-{}", std::process::id()));
    let plan = bind(config)?;
    let options = Options {
        live_interval: Some(interval),
        large_output: true,
        ..Options::new(ClockMode::Real, &results)
    };
    let session = Session::new(plan, options)?;
    println!(
        "soak: {} at {:.0} Hz for {seconds} s on the real clock; memory and counters every {} s",
        session.name(),
        1.0 / frame,
        interval.as_secs_f64()
    );
    println!(
        "  goal: anonymous memory flat (growth from the second sample to the last under {FLAT_KIB} KiB), no failure"
    );
    let mut watch = Watch { samples: Vec::new() };
    let report = session.run(&mut watch)?;
    let _ = std::fs::remove_dir_all(&results);
    print!("{}", report.table());
    // The first interval includes start-up (threads, buffers, the
    // recording's first writes); growth is counted from the second.
    let counted = watch.samples.get(1..).unwrap_or_default();
    let (Some(first), Some(last)) = (counted.first(), counted.last()) else {
        bail!("the run ended before two memory samples after the first");
    };
    if counted.len() < 2 {
        bail!("the run ended before two memory samples after the first");
    }
    let max = counted.iter().map(|s| s.1).max().unwrap_or(0);
    let growth = last.1 as i64 - first.1 as i64;
    println!(
        "  anonymous memory: {:.1} MiB at {:.0} s, {:.1} MiB at {:.0} s (max {:.1} MiB): growth {growth} KiB, goal under {FLAT_KIB} KiB: {}",
        first.1 as f64 / 1024.0,
        first.0,
        last.1 as f64 / 1024.0,
        last.0,
        max as f64 / 1024.0,
        if growth < FLAT_KIB as i64 && report.failure.is_none() { "met" } else { "NOT MET" }
    );
    if let Some(failure) = &report.failure {
        println!("  failure: {failure}");
    }
    Ok(())
}
