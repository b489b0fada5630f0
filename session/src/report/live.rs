//! Live statistics: a line per interval (frames, wake-up latency, compute
//! time, sources, misses, Newton iterations and each device's counts), and
//! the counters since the start as JSON for dashboards and scripts.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_runtime::tandem::metrics::{FrameSource, Histogram, Metrics, Snapshot};

use super::devices::{self, DeviceView};
use super::units::ns;

/// Live statistics: each line covers the interval since the previous one.
pub struct LiveStats {
    metrics: Arc<Metrics>,
    devices: Vec<DeviceView>,
    /// The histograms at the last line, and their copies now: each made
    /// once with room for every bucket, refreshed in place.
    wake: Snapshot,
    wake_now: Snapshot,
    compute: Snapshot,
    compute_now: Snapshot,
    sources: [u64; FrameSource::ALL.len()],
    missed: u64,
    unusable: u64,
    newton: Snapshot,
    newton_now: Snapshot,
    resyncs: u64,
}

impl LiveStats {
    /// Starts counting intervals now, of `metrics` and `devices`.
    pub fn new(metrics: Arc<Metrics>, devices: Vec<DeviceView>) -> Self {
        LiveStats {
            devices,
            wake: metrics.wake_latency.keeper(),
            wake_now: metrics.wake_latency.keeper(),
            compute: metrics.compute.keeper(),
            compute_now: metrics.compute.keeper(),
            sources: FrameSource::ALL.map(|s| metrics.from_source(s)),
            missed: metrics.missed(),
            unusable: metrics.unusable(),
            newton: metrics.newton.keeper(),
            newton_now: metrics.newton.keeper(),
            resyncs: metrics.resyncs.get(),
            metrics,
        }
    }

    /// The line for the interval ending at `t` (s).
    pub fn line(&mut self, t: f64) -> String {
        let m = &*self.metrics;
        m.wake_latency.snapshot_into(&mut self.wake_now);
        m.compute.snapshot_into(&mut self.compute_now);
        m.newton.snapshot_into(&mut self.newton_now);
        let (dw, dc, dn) = (
            self.wake_now.since(&self.wake),
            self.compute_now.since(&self.compute),
            self.newton_now.since(&self.newton),
        );
        let sources = FrameSource::ALL.map(|s| m.from_source(s));
        let mut by_source = String::new();
        for (i, s) in FrameSource::ALL.iter().enumerate() {
            let _ = write!(by_source, " {} {}", s.name(), sources[i] - self.sources[i]);
        }
        let missed = m.missed() - self.missed;
        let unusable = m.unusable() - self.unusable;
        let resyncs = m.resyncs.get();
        let newton = match dn.count {
            0 => "-".to_string(),
            _ => format!("{:.2}", dn.mean()),
        };
        let mut line = format!(
            "t {t:7.2} s | {} frames | wake p50 {} p99 {} max {} | compute p50 {} p99 {} |{by_source} | missed {missed}, \
             unusable {unusable} | newton {newton}/step, resyncs {}",
            dw.count,
            ns(dw.percentile(0.5)),
            ns(dw.percentile(0.99)),
            // The interval's largest, to its histogram bucket (a snapshot's
            // `max` is the run's).
            ns(dw.percentile(1.0)),
            ns(dc.percentile(0.5)),
            ns(dc.percentile(0.99)),
            resyncs - self.resyncs,
        );
        std::mem::swap(&mut self.wake, &mut self.wake_now);
        std::mem::swap(&mut self.compute, &mut self.compute_now);
        std::mem::swap(&mut self.newton, &mut self.newton_now);
        (self.sources, self.missed) = (sources, m.missed());
        self.resyncs = resyncs;
        self.unusable = m.unusable();
        line.push_str(&devices::live(&self.devices));
        line
    }
}

/// The counters since the start, read without stopping anything: frames,
/// misses, unusable results, frames by source, the wake-up and compute
/// histograms (ns) and each device's counts.
pub fn counters_json(metrics: &Metrics, devices: &[DeviceView]) -> Value {
    let sources: serde_json::Map<String, Value> = FrameSource::ALL
        .iter()
        .map(|&s| (s.name().to_string(), json!(metrics.from_source(s))))
        .collect();
    json!({
        "frames": metrics.frames.get(),
        "missed": metrics.missed(),
        "unusable": metrics.unusable(),
        "sources": sources,
        "stalls": stalls_json(metrics),
        "wake_ns": histogram_json(&metrics.wake_latency),
        "compute_ns": histogram_json(&metrics.compute),
        "devices": devices::json(devices),
    })
}

/// `{count, longest_ms, caught_up}`: the stalls the fast thread rode out
/// (wake-ups after later slots had begun), the longest, and the frames
/// computed after their slots passed.
pub fn stalls_json(metrics: &Metrics) -> Value {
    let s = metrics.stalls.snapshot();
    json!({
        "count": s.count,
        "longest_ms": if s.count > 0 { json!(s.max * 1e-6) } else { Value::Null },
        "caught_up": metrics.caught_up.get(),
    })
}

/// `{count, p50, p99, max, histogram: [[value, count], …]}` of a histogram
/// (ns), its empty buckets left out.
fn histogram_json(h: &Histogram) -> Value {
    let s = h.snapshot();
    let finite = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
    let buckets: Vec<Value> = s.buckets().map(|(value, c)| json!([value, c])).collect();
    json!({"count": s.count, "p50": finite(s.percentile(0.5)), "p99": finite(s.percentile(0.99)), "max": finite(s.max), "histogram": buckets})
}
