//! `soak`: a run configuration (the EV example at 1 kHz by default) for a
//! long time, on the real clock or the virtual one, printing the process's
//! resident memory and the run's counters at each interval (frames by
//! source among them), then whether memory stayed flat and whether every
//! frame but a few took the implicit result of its own time, interval by
//! interval. On the virtual clock a day of frames (`--seconds 86400`) runs
//! in minutes, deterministically: a frame count that any time kept as
//! accumulated seconds would trip over shows there. `--frame` runs the
//! configuration at another frame (10 kHz; 0.3 ms, not exact in binary),
//! its implicit step, lead, lag, deadline and virtual costs scaled with it.
//! Memory is read from `/proc/self/status`: the anonymous resident memory
//! (RssAnon: heap and stacks, where a leak shows) is the figure held to the
//! goal; the whole resident set (VmRSS) also counts the program's code and
//! files as they are first touched.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use tandem_config::bounds::check_duration;
use tandem_config::{load_run_config, RunConfig};
use tandem_models::plants;
use tandem_runtime::tandem::metrics::{FrameSource, Metrics};
use tandem_session::report::live::LiveStats;
use tandem_session::{bind, ClockMode, Observer, Options, Session};

/// Growth of anonymous memory from the second sample to the last that
/// still counts as flat (KiB): allocator noise, not a leak.
const FLAT_KIB: u64 = 1024;

/// The largest share of an interval's frames that may come from anything
/// but the implicit result of their own time (catch-up, the fast side's
/// own, extrapolated).
const LATE_GOAL: f64 = 1e-3;

/// A field of this process's `/proc/self/status` in KiB (`VmRSS`,
/// `RssAnon`), if the system says.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The allocator's view of this process (glibc's `mallinfo2`), in KiB:
/// bytes in use, bytes the main and other arenas hold from the system, and
/// bytes in separately mapped blocks. Growth of what the arenas hold with
/// flat use is the allocator keeping freed memory, not a leak.
fn heap_kib() -> (u64, u64, u64) {
    // SAFETY: mallinfo2 takes no arguments and returns a plain struct.
    let m = unsafe { libc::mallinfo2() };
    (
        (m.uordblks / 1024) as u64,
        (m.arena / 1024) as u64,
        (m.hblkhd / 1024) as u64,
    )
}

/// Prints memory and counters at each interval and keeps the samples of
/// anonymous memory and of the share of late frames.
struct Watch {
    metrics: Arc<Metrics>,
    /// Frames by source at the last sample.
    sources: [u64; FrameSource::ALL.len()],
    samples: Vec<(f64, u64)>,
    /// Each interval's share of frames not from their own implicit result.
    late: Vec<f64>,
}

impl Observer for Watch {
    fn live(&mut self, t: f64, stats: &mut LiveStats) {
        let anon = status_kib("RssAnon").unwrap_or(0);
        let rss = status_kib("VmRSS").unwrap_or(0);
        let (used, held, mapped) = heap_kib();
        self.samples.push((t, anon));
        let sources = FrameSource::ALL.map(|s| self.metrics.from_source(s));
        let interval: Vec<u64> = sources.iter().zip(&self.sources).map(|(a, b)| a - b).collect();
        let frames: u64 = interval.iter().sum();
        let own = interval[FrameSource::Implicit as usize];
        // The very first frame has no implicit result to take.
        let exempt = u64::from(self.late.is_empty());
        let late = (frames - own).saturating_sub(exempt) as f64 / frames.max(1) as f64;
        self.late.push(late);
        self.sources = sources;
        println!(
            "  {t:>8.0} s  anon {:>6.1} MiB  rss {:>6.1} MiB  heap used {:>6.1} held {:>6.1} mapped {:>6.1} MiB  late {:>6.3} %  {}",
            anon as f64 / 1024.0,
            rss as f64 / 1024.0,
            used as f64 / 1024.0,
            held as f64 / 1024.0,
            mapped as f64 / 1024.0,
            100.0 * late,
            stats.line(t)
        );
    }
}

/// `config` at a frame of `frame` seconds: the implicit macro step and lead
/// one frame, the lag 20 frames, outputs due 0.8 of a frame after its
/// start, the iteration matrix every millisecond, and the virtual clock's
/// costs in the same proportion to the frame as at 1 ms.
fn at_frame(config: &mut RunConfig, frame: f64) {
    let s = &mut config.settings;
    let scale = frame / s.frame;
    s.frame = frame;
    s.output_deadline *= scale;
    s.implicit.macro_step = frame;
    s.implicit.lead = frame;
    s.implicit.max_lag = 20.0 * frame;
    s.fast.matrix_interval = ((1e-3 / frame).round() as u32).max(1);
    let costs = &mut config.virtual_costs;
    costs.fast_step = (costs.fast_step as f64 * scale).round() as i64;
    costs.implicit_step = (costs.implicit_step as f64 * scale).round() as i64;
}

/// Runs `config` (at `frame` seconds, when given) for `seconds` on `clock`,
/// sampling every `interval`.
pub fn run(
    config: &Path,
    seconds: f64,
    interval: Duration,
    clock: ClockMode,
    frame: Option<f64>,
) -> anyhow::Result<()> {
    let mut config = load_run_config(config, plants::PROFILES)?;
    check_duration(seconds).map_err(|e| anyhow::anyhow!("--seconds: {e}"))?;
    if seconds < 3.0 * interval.as_secs_f64() {
        bail!("--seconds must be at least three --interval (two samples after the first), found {seconds}");
    }
    if let Some(frame) = frame {
        if !(1e-6..=0.01).contains(&frame) {
            bail!("--frame must be between 1e-6 and 0.01 s, found {frame}");
        }
        at_frame(&mut config, frame);
    }
    config.settings.duration = seconds;
    let frame = config.settings.frame;
    let results = std::env::temp_dir().join(format!("tandem-soak-{}", std::process::id()));
    let plan = bind(config)?;
    let options = Options {
        live_interval: Some(interval),
        large_output: true,
        ..Options::new(clock, &results)
    };
    let session = Session::new(plan, options)?;
    println!(
        "soak: {} at {} Hz ({} frames) for {seconds} s on the {} clock; memory and counters every {} s",
        session.name(),
        1.0 / frame,
        session.settings().frames(),
        if clock == ClockMode::Real { "real" } else { "virtual" },
        interval.as_secs_f64()
    );
    println!(
        "  goals: anonymous memory flat (growth from the second sample to the last under {FLAT_KIB} KiB), no \
         failure; in every interval under {} % of the frames late (catch-up, the fast side's own, extrapolated)",
        100.0 * LATE_GOAL
    );
    let mut watch = Watch {
        metrics: Arc::clone(session.metrics()),
        sources: [0; FrameSource::ALL.len()],
        samples: Vec::new(),
        late: Vec::new(),
    };
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
    let worst = watch.late.iter().copied().fold(0.0, f64::max);
    println!(
        "  late frames: at most {:.4} % of an interval's, goal under {} %: {}",
        100.0 * worst,
        100.0 * LATE_GOAL,
        if worst < LATE_GOAL { "met" } else { "NOT MET" }
    );
    if let Some(failure) = &report.failure {
        println!("  failure: {failure}");
    }
    Ok(())
}
