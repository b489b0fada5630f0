//! What `tandem run` reports about its buses: cumulative counts on each
//! live line, and a table (and JSON) at the end.

use std::fmt::Write as _;

use serde_json::{json, Value};
use tandem_io::bus_metrics::BusMetrics;
use tandem_io::bus_threads::BusLink;

/// The counters of one bus, by name, in report order.
fn counts(m: &BusMetrics) -> [(&'static str, u64); 15] {
    [
        ("rx frames", m.rx_frames.get()),
        ("tx frames", m.tx_frames.get()),
        ("rx timeouts", m.timeouts.get()),
        ("rx unmapped ids", m.rx_unmapped.get()),
        ("rx wrong length", m.rx_wrong_length.get()),
        ("rx malformed", m.rx_malformed.get()),
        ("rx samples dropped", m.rx_dropped.get()),
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

/// `| can0 rx 120 tx 240 timeouts 0 faults 0` for each bus.
pub fn live(links: &[&BusLink]) -> String {
    let mut out = String::new();
    for link in links {
        let c = counts(&link.metrics);
        let faults: u64 = c[3..13].iter().map(|(_, v)| v).sum();
        let _ = write!(
            out,
            " | {} rx {} tx {} timeouts {} faults {faults}",
            link.name, c[0].1, c[1].1, c[2].1
        );
    }
    out
}

/// The end-of-run table of every bus: counts, and the receive and
/// transmit paths' p50, p99 and max.
pub fn table(links: &[&BusLink]) -> String {
    let mut out = String::new();
    for link in links {
        let _ = writeln!(out, "bus {}:", link.name);
        for (name, v) in counts(&link.metrics) {
            if v > 0 || name.starts_with("rx frames") || name.starts_with("tx frames") || name == "rx timeouts" {
                let _ = writeln!(out, "  {name:<22} {v}");
            }
        }
        for (name, h) in [("rx path", &link.metrics.rx_path), ("tx path", &link.metrics.tx_path)] {
            let s = h.snapshot();
            if s.count > 0 {
                let _ = writeln!(
                    out,
                    "  {name:<22} p50 {:.1} µs  p99 {:.1} µs  max {:.1} µs  ({} samples)",
                    s.percentile(0.5) / 1e3,
                    s.percentile(0.99) / 1e3,
                    s.max / 1e3,
                    s.count
                );
            }
        }
    }
    out
}

/// The same as JSON: `{ "can0": { "rx frames": 120, ..., "rx path": {...} } }`.
pub fn json(links: &[&BusLink]) -> Value {
    let mut all = serde_json::Map::new();
    for link in links {
        let mut bus = serde_json::Map::new();
        for (name, v) in counts(&link.metrics) {
            bus.insert(name.into(), json!(v));
        }
        for (name, h) in [("rx path", &link.metrics.rx_path), ("tx path", &link.metrics.tx_path)] {
            let s = h.snapshot();
            bus.insert(
                name.into(),
                json!({"count": s.count, "p50_ns": s.percentile(0.5), "p99_ns": s.percentile(0.99), "max_ns": s.max}),
            );
        }
        all.insert(link.name.to_string(), Value::Object(bus));
    }
    Value::Object(all)
}
