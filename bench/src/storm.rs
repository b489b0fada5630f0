//! `soak --stalls MIN..MAX`: a stall storm. The configuration runs on the
//! real clock in a `tandem run` process of its own (the binary built
//! beside this one), which is stopped with SIGSTOP for a random time
//! between MIN and MAX every `--stall-every` seconds and continued with
//! SIGCONT, its children (a virtual ECU) with it, as a descheduled VM or a
//! debugger would stop the host. Its anonymous memory is read from
//! `/proc/PID/status` every `--interval`. At the end its summary's figures
//! (outputs clamped, stalls, frames caught up) are printed beside their
//! goals, and its recording is compared row by row with the same
//! configuration run undisturbed on the virtual clock: after each stall
//! the state must be back within 1e-3 of each output's range.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::beside;

/// Growth of anonymous memory after warm-up that counts as flat (KiB).
const FLAT_KIB: i64 = 256;

/// How far a recorded value may be from the undisturbed run's, as a share
/// of that output's range over the run.
const ENVELOPE: f64 = 1e-3;

/// What to run and how to disturb it.
pub struct Storm<'a> {
    /// The run configuration.
    pub config: &'a Path,
    /// Run length (s).
    pub seconds: f64,
    /// Memory samples this far apart.
    pub interval: Duration,
    /// The shortest and longest stall.
    pub stalls: (Duration, Duration),
    /// Time between the starts of two stalls.
    pub every: Duration,
}

/// A SplitMix64 sequence: the stalls' lengths, the same from run to run.
struct Lengths(u64);

impl Lengths {
    fn next(&mut self, (min, max): (Duration, Duration)) -> Duration {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let unit = ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64;
        min + (max - min).mul_f64(unit)
    }
}

/// Sends `signal` (SIGSTOP, SIGCONT) to `pid` and its children.
fn signal_tree(pid: u32, signal: libc::c_int) {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    for p in std::iter::once(pid).chain(children.split_whitespace().filter_map(|c| c.parse().ok())) {
        // SAFETY: kill takes a process id and a signal number and touches
        // no memory of this process.
        unsafe {
            libc::kill(p as libc::pid_t, signal);
        }
    }
}

/// A field of `/proc/PID/status` in KiB.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `tandem run` of the configuration for the storm's length, its results in
/// `results`.
fn run_command(storm: &Storm<'_>, results: &Path, virtual_clock: bool) -> anyhow::Result<Command> {
    let mut command = Command::new(beside::tandem()?);
    command
        .arg("run")
        .arg(storm.config)
        .args(["--duration", &storm.seconds.to_string(), "--large-output"])
        .arg("--results")
        .arg(results)
        .arg("--stats-json")
        .arg(results.join("stats.json"));
    if virtual_clock {
        command.arg("--virtual-clock");
    }
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    Ok(command)
}

/// Waits for `child`, failing with what it said when it failed.
fn finish(child: Child, what: &str) -> anyhow::Result<()> {
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// A recording: its header and rows.
fn read_csv(path: &Path) -> anyhow::Result<(Vec<String>, Vec<Vec<f64>>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap_or_default().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap_or(f64::NAN)).collect())
        .collect();
    Ok((header, rows))
}

/// The recording a run wrote in `results` (the one CSV file there).
fn recording(results: &Path) -> anyhow::Result<PathBuf> {
    std::fs::read_dir(results)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .with_context(|| {
            format!(
                "no recording in {}: give the configuration a [record] file",
                results.display()
            )
        })
}

/// Prints how far each row of the stormed run's recording lies from the
/// undisturbed one's, as a share of each output's range there.
fn print_envelope(stormed: &Path, calm: &Path) -> anyhow::Result<()> {
    let (header, rows) = read_csv(&recording(stormed)?)?;
    let (_, reference) = read_csv(&recording(calm)?)?;
    if rows.len() != reference.len() {
        bail!(
            "the stormed run recorded {} rows, the undisturbed one {}",
            rows.len(),
            reference.len()
        );
    }
    let columns = header.len();
    let range: Vec<f64> = (1..columns)
        .map(|c| {
            let (lo, hi) = reference
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                    (lo.min(r[c]), hi.max(r[c]))
                });
            (hi - lo).max(f64::MIN_POSITIVE)
        })
        .collect();
    let (mut outside, mut worst) = (0usize, (0.0f64, 0.0f64, ""));
    for (row, reference) in rows.iter().zip(&reference) {
        let mut out = false;
        for c in 1..columns {
            let off = (row[c] - reference[c]).abs() / range[c - 1];
            out |= off > ENVELOPE || off.is_nan();
            if off > worst.0 {
                worst = (off, row[0], header[c].as_str());
            }
        }
        outside += usize::from(out);
    }
    println!(
        "  rows outside {ENVELOPE:e} of the range of the undisturbed run: {outside} of {} (the worst {:.2e} of {}'s range at {:.2} s), goal 0: {}",
        rows.len(),
        worst.0,
        worst.2,
        worst.1,
        if outside == 0 { "met" } else { "NOT MET" }
    );
    Ok(())
}

/// Runs the storm and prints its figures beside their goals.
pub fn run(storm: &Storm<'_>) -> anyhow::Result<()> {
    let base = std::env::temp_dir().join(format!("tandem-storm-{}", std::process::id()));
    let (stormed, calm) = (base.join("storm"), base.join("undisturbed"));
    std::fs::create_dir_all(&stormed)?;
    std::fs::create_dir_all(&calm)?;
    println!(
        "soak --stalls: {} for {} s on the real clock, stopped for {:?} to {:?} every {:?}; memory every {:?}",
        storm.config.display(),
        storm.seconds,
        storm.stalls.0,
        storm.stalls.1,
        storm.every,
        storm.interval
    );
    println!(
        "  goals: 0 outputs clamped, every recorded row within {ENVELOPE:e} of each output's range of the \
         undisturbed run, anonymous memory growth after warm-up under {FLAT_KIB} KiB"
    );
    let mut child = run_command(storm, &stormed, false)?.spawn()?;
    let pid = child.id();
    let started = Instant::now();
    let end = started + Duration::from_secs_f64(storm.seconds);
    let mut lengths = Lengths(0x5eed);
    let (mut next_stall, mut next_sample) = (started + storm.every, started + storm.interval);
    let (mut samples, mut stopped) = (Vec::new(), Vec::new());
    while child.try_wait()?.is_none() && Instant::now() < end + Duration::from_secs(30) {
        let now = Instant::now();
        if now >= next_sample {
            if let Some(anon) = status_kib(pid, "RssAnon") {
                let t = now.duration_since(started).as_secs_f64();
                println!(
                    "  {t:>8.0} s  anon {:>7.1} MiB  stalls so far {}",
                    anon as f64 / 1024.0,
                    stopped.len()
                );
                samples.push((t, anon));
            }
            next_sample += storm.interval;
        }
        if now >= next_stall && now + storm.stalls.1 < end {
            let length = lengths.next(storm.stalls);
            signal_tree(pid, libc::SIGSTOP);
            std::thread::sleep(length);
            signal_tree(pid, libc::SIGCONT);
            stopped.push(length);
            next_stall += storm.every;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    finish(child, "the stormed run")?;
    finish(run_command(storm, &calm, true)?.spawn()?, "the undisturbed run")?;

    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(stormed.join("stats.json"))?)?;
    let count = |key: &str| stats.pointer(key).and_then(serde_json::Value::as_u64).unwrap_or(0);
    let clamped = count("/outputs/clamped") + count("/outputs/nonfinite");
    let longest: Duration = stopped.iter().copied().max().unwrap_or_default();
    println!(
        "  stopped {} times (the longest {:?}); the run counted {} stalls, the longest {:.1} ms, {} frames caught up",
        stopped.len(),
        longest,
        count("/stalls/count"),
        stats
            .pointer("/stalls/longest_ms")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0),
        count("/stalls/caught_up"),
    );
    println!(
        "  outputs clamped or not finite: {clamped}, goal 0: {}",
        if clamped == 0 { "met" } else { "NOT MET" }
    );

    print_envelope(&stormed, &calm)?;

    // Warm-up: the first tenth of the run, and at least the first sample.
    let warm = samples
        .iter()
        .position(|&(t, _)| t >= storm.seconds / 10.0)
        .unwrap_or(1)
        .max(1);
    match (samples.get(warm), samples.last()) {
        (Some(&(t0, first)), Some(&(t1, last))) if t1 > t0 => {
            let growth = last as i64 - first as i64;
            let max = samples[warm..].iter().map(|s| s.1).max().unwrap_or(last);
            println!(
                "  anonymous memory: {:.1} MiB at {t0:.0} s, {:.1} MiB at {t1:.0} s (max {:.1} MiB): growth {growth} KiB, goal under {FLAT_KIB} KiB: {}",
                first as f64 / 1024.0,
                last as f64 / 1024.0,
                max as f64 / 1024.0,
                if growth < FLAT_KIB { "met" } else { "NOT MET" }
            );
        }
        _ => println!("  anonymous memory: too few samples after warm-up (give --seconds of several --interval)"),
    }
    let _ = std::fs::remove_dir_all(&base);
    Ok(())
}
