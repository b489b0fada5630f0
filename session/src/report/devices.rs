//! What a run reports about its devices: cumulative counts on each live
//! line, and a table (and JSON) at the end.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_runtime::tandem::metrics::Histogram;

use super::units::ns;
use crate::device::DeviceKind;
use crate::metrics::DeviceMetrics;

/// A device as the reports see it.
#[derive(Clone)]
pub struct DeviceView {
    /// Its name.
    pub name: String,
    /// Bus or serial device.
    pub kind: DeviceKind,
    /// Its counters.
    pub metrics: Arc<DeviceMetrics>,
}

/// The counters of one device, by name, in report order; a serial
/// device's frames are lines.
fn counts(kind: DeviceKind, m: &DeviceMetrics) -> [(&'static str, u64); 15] {
    let (rx, tx) = match kind {
        DeviceKind::Bus => ("rx frames", "tx frames"),
        DeviceKind::Serial => ("rx lines", "tx lines"),
    };
    [
        (rx, m.rx_frames.get()),
        (tx, m.tx_frames.get()),
        ("rx timeouts", m.timeouts.get()),
        ("rx unmapped ids", m.rx_unmapped.get()),
        ("rx wrong length", m.rx_wrong_length.get()),
        ("rx malformed", m.rx_malformed.get()),
        ("rx samples merged", m.rx_merged.get()),
        ("bus errors", m.bus_errors.get()),
        ("bus-off", m.bus_off.get()),
        ("disconnects", m.disconnects.get()),
        ("rx i/o errors", m.rx_errors.get()),
        ("tx queue full", m.tx_queue_full.get()),
        ("tx errors", m.tx_errors.get()),
        ("tx values clamped", m.tx_clamped.get()),
        ("log records dropped", m.log_dropped.get()),
    ]
}

/// `| can0 rx 120 tx 240 timeouts 0 faults 0` for each device.
pub fn live(devices: &[DeviceView]) -> String {
    let mut out = String::new();
    for d in devices {
        let c = counts(d.kind, &d.metrics);
        let faults: u64 = c[3..13].iter().map(|(_, v)| v).sum();
        let _ = write!(
            out,
            " | {} rx {} tx {} timeouts {} faults {faults}",
            d.name, c[0].1, c[1].1, c[2].1
        );
    }
    out
}

/// The latency histograms of a device, by name.
fn paths(m: &DeviceMetrics) -> [(&'static str, &Histogram); 3] {
    [
        ("rx path", &m.rx_path),
        ("tx path", &m.tx_path),
        ("tx send", &m.tx_send),
    ]
}

/// The end-of-run table of every device: counts, and the receive and
/// transmit paths' and the send calls' p50, p99 and max.
pub fn table(devices: &[DeviceView]) -> String {
    let mut out = String::new();
    for d in devices {
        let _ = writeln!(
            out,
            "{} {}:",
            match d.kind {
                DeviceKind::Bus => "bus",
                DeviceKind::Serial => "serial",
            },
            d.name
        );
        for (i, (name, v)) in counts(d.kind, &d.metrics).into_iter().enumerate() {
            if v > 0 || i < 3 {
                let _ = writeln!(out, "  {name:<22} {v}");
            }
        }
        for (name, h) in paths(&d.metrics) {
            let s = h.snapshot();
            if s.count > 0 {
                let _ = writeln!(
                    out,
                    "  {name:<22} p50 {}  p99 {}  max {}  ({} samples)",
                    ns(s.percentile(0.5)),
                    ns(s.percentile(0.99)),
                    ns(s.max),
                    s.count
                );
            }
        }
    }
    out
}

/// The same as JSON: `{ "can0": { "rx frames": 120, ..., "rx path": {...} } }`.
pub fn json(devices: &[DeviceView]) -> Value {
    let mut all = serde_json::Map::new();
    for d in devices {
        let mut device = serde_json::Map::new();
        for (name, v) in counts(d.kind, &d.metrics) {
            device.insert(name.into(), json!(v));
        }
        for (name, h) in paths(&d.metrics) {
            let s = h.snapshot();
            device.insert(
                name.into(),
                json!({"count": s.count, "p50_ns": s.percentile(0.5), "p99_ns": s.percentile(0.99), "max_ns": s.max}),
            );
        }
        all.insert(d.name.clone(), Value::Object(device));
    }
    Value::Object(all)
}
