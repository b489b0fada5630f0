//! What a run reports about its devices: cumulative counts on each live
//! line, and a table (and JSON) at the end.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_e2e::ReceiveCounts;
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
fn counts(kind: DeviceKind, m: &DeviceMetrics) -> [(&'static str, u64); 19] {
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
        ("uds requests", m.uds_requests.get()),
        ("uds negative responses", m.uds_negative.get()),
        ("uds errors", m.uds_errors.get()),
        ("tx dropped after a stall", m.tx_stale.get()),
    ]
}

/// The E2E counts of a protected message, by name, in report order.
fn e2e_counts(c: &ReceiveCounts) -> [(&'static str, u64); 10] {
    [
        ("ok", c.ok),
        ("ok some lost", c.ok_some_lost),
        ("lost", c.lost),
        ("repeated", c.repeated),
        ("wrong sequence", c.wrong_sequence),
        ("crc", c.crc),
        ("length", c.length),
        ("data id", c.data_id),
        ("counter", c.counter),
        ("timeouts", c.no_new_data),
    ]
}

/// `| can0 rx 120 tx 240 timeouts 0 faults 0` for each device, with `e2e
/// refused N` for a bus checking E2E protection and `injecting N` while
/// faults act on it.
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
        if !d.metrics.e2e.is_empty() {
            let refused: u64 = d.metrics.e2e.iter().map(|m| m.counts.get().rejected()).sum();
            let _ = write!(out, " e2e refused {refused}");
        }
        if let Some(slots) = &d.metrics.faults {
            let acting = slots
                .slots
                .iter()
                .filter(|s| s.began().is_some() && s.ended().is_none())
                .count();
            if acting > 0 {
                let _ = write!(out, " injecting {acting}");
            }
        }
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
        for m in &d.metrics.e2e {
            let shown: Vec<String> = e2e_counts(&m.counts.get())
                .iter()
                .filter(|&&(name, v)| v > 0 || name == "ok")
                .map(|(name, v)| format!("{name} {v}"))
                .collect();
            let _ = writeln!(out, "  e2e {:<18} {}", m.message, shown.join(", "));
        }
        if let Some(slots) = &d.metrics.faults {
            for (what, slot) in slots.described() {
                let when = match (slot.began(), slot.ended()) {
                    (None, _) => "never began".to_string(),
                    (Some(b), None) => format!("frames {b}– (to the end)"),
                    (Some(b), Some(e)) => format!("frames {b}–{e}"),
                };
                let _ = writeln!(out, "  fault {what}: {when}, {} frames affected", slot.affected.get());
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
        let e2e: serde_json::Map<String, Value> = (d.metrics.e2e.iter())
            .map(|m| {
                let counts: serde_json::Map<String, Value> = e2e_counts(&m.counts.get())
                    .iter()
                    .map(|&(n, v)| (n.to_string(), json!(v)))
                    .collect();
                (m.message.clone(), Value::Object(counts))
            })
            .collect();
        if !e2e.is_empty() {
            device.insert("e2e".into(), Value::Object(e2e));
        }
        if let Some(slots) = &d.metrics.faults {
            let faults: Vec<Value> = (slots.described().into_iter())
                .map(|(what, slot)| {
                    json!({"fault": what, "began_frame": slot.began(), "ended_frame": slot.ended(), "affected": slot.affected.get()})
                })
                .collect();
            if !faults.is_empty() {
                device.insert("faults".into(), Value::Array(faults));
            }
        }
        all.insert(d.name.clone(), Value::Object(device));
    }
    Value::Object(all)
}
