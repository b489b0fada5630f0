//! What `tandem run` prints: a line of live statistics per interval, and a
//! summary table (and JSON) at the end.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_runtime::tandem::fast::FrameError;
use tandem_runtime::tandem::metrics::{Metrics, Snapshot, Source};
use tandem_runtime::tandem::preflight::{Preflight, Status};
use tandem_runtime::tandem::TandemSettings;

/// A duration in nanoseconds, in the unit that reads best.
fn ns(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v < 1e3 {
        format!("{v:.0} ns")
    } else if v < 1e6 {
        format!("{:.0} µs", v / 1e3)
    } else {
        format!("{:.2} ms", v / 1e6)
    }
}

/// Live statistics: each line covers the interval since the previous one.
pub struct LiveStats<'m> {
    metrics: &'m Metrics,
    wake: Snapshot,
    compute: Snapshot,
    sources: [u64; 4],
    missed: u64,
    newton: Snapshot,
    resyncs: u64,
}

impl<'m> LiveStats<'m> {
    /// Starts counting intervals now.
    pub fn new(metrics: &'m Metrics) -> Self {
        LiveStats {
            metrics,
            wake: metrics.wake_latency.snapshot(),
            compute: metrics.compute.snapshot(),
            sources: Source::ALL.map(|s| metrics.from_source(s)),
            missed: metrics.missed(),
            newton: metrics.newton.snapshot(),
            resyncs: metrics.resyncs.get(),
        }
    }

    /// The line for the interval ending at `t` (s).
    pub fn line(&mut self, t: f64) -> String {
        let m = self.metrics;
        let (wake, compute, newton) = (m.wake_latency.snapshot(), m.compute.snapshot(), m.newton.snapshot());
        let (dw, dc, dn) = (
            wake.since(&self.wake),
            compute.since(&self.compute),
            newton.since(&self.newton),
        );
        let sources = Source::ALL.map(|s| m.from_source(s));
        let mut by_source = String::new();
        for (i, s) in Source::ALL.iter().enumerate() {
            let _ = write!(by_source, " {} {}", s.name(), sources[i] - self.sources[i]);
        }
        let missed = m.missed() - self.missed;
        let resyncs = m.resyncs.get();
        let line = format!(
            "t {t:7.2} s | {} frames | wake p50 {} p99 {} max {} | compute p50 {} p99 {} |{by_source} | missed {missed} | newton {:.2}/step, resyncs {}",
            dw.count,
            ns(dw.percentile(0.5)),
            ns(dw.percentile(0.99)),
            ns(dw.max),
            ns(dc.percentile(0.5)),
            ns(dc.percentile(0.99)),
            dn.mean(),
            resyncs - self.resyncs,
        );
        (self.wake, self.compute, self.newton, self.sources, self.missed) =
            (wake, compute, newton, sources, m.missed());
        self.resyncs = resyncs;
        line
    }
}

/// Everything the end-of-run summary reports.
pub struct Summary<'a> {
    /// Model name.
    pub name: &'a str,
    /// The run's settings.
    pub settings: &'a TandemSettings,
    /// Whether time was virtual.
    pub virtual_clock: bool,
    /// The metrics.
    pub metrics: &'a Metrics,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// The preflight, for real-clock runs.
    pub preflight: Option<&'a Preflight>,
    /// The recording file, rows written, rows dropped.
    pub recording: Option<(&'a Path, usize, u64)>,
    /// Frame records the implicit thread never read.
    pub dropped_records: u64,
    /// Why the run stopped early, if it did.
    pub failure: Option<&'a FrameError>,
}

/// The histograms of the summary: name, snapshot, and whether it holds
/// nanoseconds.
fn histograms(m: &Metrics) -> [(&'static str, Snapshot, bool); 7] {
    [
        ("wake-up latency", m.wake_latency.snapshot(), true),
        ("fast compute", m.compute.snapshot(), true),
        ("implicit compute", m.implicit_compute.snapshot(), true),
        ("implicit lag (frames)", m.implicit_lag.snapshot(), false),
        ("newton iterations", m.newton.snapshot(), false),
        ("catch-up (frames)", m.catchup_frames.snapshot(), false),
        ("correction (tolerances)", m.correction.snapshot(), false),
    ]
}

const PERCENTILES: [(&str, f64); 4] = [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999), ("max", 1.0)];

impl Summary<'_> {
    /// The summary as a table.
    pub fn table(&self) -> String {
        let m = self.metrics;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nsummary: {} frames in {:.2} s of wall time ({})",
            m.frames.get(),
            self.wall.as_secs_f64(),
            if self.virtual_clock {
                "virtual clock"
            } else {
                "real clock"
            }
        );
        let _ = writeln!(
            out,
            "  {:<24} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "", "p50", "p99", "p99.9", "max", "mean"
        );
        for (name, s, is_ns) in histograms(m) {
            if s.count == 0 {
                continue;
            }
            let fmt = |v: f64| if is_ns { ns(v) } else { format!("{v:.3}") };
            let _ = write!(out, "  {name:<24}");
            for (_, p) in PERCENTILES {
                let _ = write!(out, " {:>10}", fmt(s.percentile(p)));
            }
            let _ = writeln!(out, " {:>10}", fmt(s.mean()));
        }
        let by_source: Vec<String> = Source::ALL
            .iter()
            .map(|&s| format!("{} {}", s.name(), m.from_source(s)))
            .collect();
        let _ = writeln!(out, "  frames by source: {}", by_source.join(", "));
        let _ = writeln!(
            out,
            "  missed deadlines: {} (woke late {}, overran {}); implicit late (select) {}; stale results (correct) {}; non-finite recoveries {}",
            m.missed(),
            m.missed_woke_late.get(),
            m.missed_overrun.get(),
            m.implicit_late.get(),
            m.stale_results.get(),
            m.nonfinite_recoveries.get()
        );
        let _ = writeln!(
            out,
            "  implicit: {} steps, {} on extrapolated inputs, {} resyncs, {} failures; frame records dropped {}",
            m.implicit_steps.get(),
            m.extrapolated_inputs.get(),
            m.resyncs.get(),
            m.implicit_failures.get(),
            self.dropped_records
        );
        if let Some((file, rows, dropped)) = self.recording {
            let _ = writeln!(out, "  recording: {} ({rows} rows, {dropped} dropped)", file.display());
        }
        if let Some(p) = self.preflight {
            let missing: Vec<&str> = p.missing().map(|c| c.name).collect();
            let _ = writeln!(
                out,
                "  real time: {}",
                if missing.is_empty() {
                    "all checks passed".to_string()
                } else {
                    format!("soft (missing {})", missing.join(", "))
                }
            );
        }
        if let Some(f) = self.failure {
            let _ = writeln!(out, "  stopped early: {f}");
        }
        out
    }

    /// The summary as JSON.
    pub fn json(&self) -> Value {
        let m = self.metrics;
        let mut hist = serde_json::Map::new();
        for (name, s, is_ns) in histograms(m) {
            let scale = if is_ns { 1e-3 } else { 1.0 };
            let mut h = serde_json::Map::new();
            h.insert("unit".into(), json!(if is_ns { "µs" } else { "1" }));
            h.insert("count".into(), json!(s.count));
            for (label, p) in PERCENTILES {
                h.insert(label.into(), finite(s.percentile(p) * scale));
            }
            h.insert("mean".into(), finite(s.mean() * scale));
            hist.insert(name.into(), Value::Object(h));
        }
        let sources: serde_json::Map<String, Value> = Source::ALL
            .iter()
            .map(|&s| (s.name().to_string(), json!(m.from_source(s))))
            .collect();
        json!({
            "model": self.name,
            "clock": if self.virtual_clock { "virtual" } else { "real" },
            "frame_s": self.settings.frame,
            "duration_s": self.settings.duration,
            "policy": self.settings.policy.name(),
            "fast_method": self.settings.fast.method.name(),
            "implicit_method": self.settings.implicit.solver.to_string(),
            "frames": m.frames.get(),
            "wall_s": self.wall.as_secs_f64(),
            "sources": sources,
            "missed": {
                "total": m.missed(),
                "woke_late": m.missed_woke_late.get(),
                "overrun": m.missed_overrun.get(),
            },
            "implicit_late": m.implicit_late.get(),
            "stale_results": m.stale_results.get(),
            "nonfinite_recoveries": m.nonfinite_recoveries.get(),
            "implicit": {
                "steps": m.implicit_steps.get(),
                "extrapolated_inputs": m.extrapolated_inputs.get(),
                "resyncs": m.resyncs.get(),
                "failures": m.implicit_failures.get(),
            },
            "dropped_frame_records": self.dropped_records,
            "histograms": hist,
            "recording": self.recording.map(|(f, rows, dropped)| json!({"file": f, "rows": rows, "dropped": dropped})),
            "preflight": self.preflight.map(|p| p.checks.iter().map(|c| json!({
                "check": c.name,
                "status": match c.status { Status::Ok => "ok", Status::Missing => "missing", Status::Unknown => "unknown" },
                "detail": c.detail,
            })).collect::<Vec<_>>()),
            "failure": self.failure.map(|f| f.to_string()),
        })
    }
}

/// A number, or null when not finite (JSON has no NaN).
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}
