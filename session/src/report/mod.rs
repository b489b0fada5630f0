//! What a run reports: a line of live statistics per interval
//! ([`live::LiveStats`]), and at the end a summary table and JSON
//! ([`Report`]) with every device's counters.

pub mod devices;
pub mod live;
pub mod units;

use crate::xcp::XcpReport;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use live::stalls_json;
use serde_json::{json, Value};
use tandem_runtime::tandem::metrics::{EventCounts, FrameSource, Metrics, Snapshot};
use tandem_runtime::tandem::preflight::{Preflight, Status};
use tandem_runtime::tandem::{ImplicitWork, TandemSettings};

use crate::device::DeviceKind;
use devices::DeviceView;
use units::{ns, number};

/// The recording of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingReport {
    /// The CSV file, if the rows went to one.
    pub file: Option<PathBuf>,
    /// Rows written.
    pub rows: usize,
    /// Rows dropped because the writer fell behind.
    pub dropped: u64,
}

/// A replayed log.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayReport {
    /// Its length (s).
    pub duration: f64,
    /// Records skipped because no bus has their interface.
    pub unrouted: u64,
    /// In real time: how late (µs) its last record was fed.
    pub last_late_us: Option<f64>,
}

/// Everything a finished run reports.
pub struct Report {
    /// Model name.
    pub name: String,
    /// The run's settings.
    pub settings: TandemSettings,
    /// What its implicit thread did.
    pub implicit_work: ImplicitWork,
    /// Whether time was virtual.
    pub virtual_clock: bool,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// The preflight, for real-clock runs.
    pub preflight: Option<Preflight>,
    /// The recording, if any.
    pub recording: Option<RecordingReport>,
    /// Frame records the implicit thread never read.
    pub dropped_records: u64,
    /// Output rows the transmitting side never took.
    pub dropped_outputs: u64,
    /// What the real-time threads could not obtain (pinning, SCHED_FIFO).
    pub warnings: Vec<String>,
    /// The devices and their counters.
    pub devices: Vec<DeviceView>,
    /// The bus log and the records it holds, if any.
    pub bus_log: Option<(PathBuf, u64)>,
    /// The replayed log, if any.
    pub replay: Option<ReplayReport>,
    /// Why the run failed, if it did: the fast side failed or a device
    /// raised a fault (the run stopped early), or an output file could not
    /// be written.
    pub failure: Option<String>,
    /// What the run's XCP slave did, when it had one.
    pub xcp: Option<XcpReport>,
    /// What the fast thread tapped at each frame's end, by name
    /// ([`TAP_XCP`], [`TAP_DIAGNOSTICS`]): what the `frame taps`
    /// histogram timed.
    pub taps: Vec<&'static str>,
}

/// The frame-end tap of the run's XCP slave: DAQ sampling.
pub const TAP_XCP: &str = "xcp";
/// The frame-end tap of the buses' diagnostic servers: the values their
/// DIDs and DTCs read.
pub const TAP_DIAGNOSTICS: &str = "diagnostics";

/// The name of the histogram of the time the frame-end taps took, in the
/// JSON (the summary's table says which taps it timed).
const TAPS: &str = "frame taps";

/// The histograms of the summary: name, snapshot, and whether it holds
/// nanoseconds.
fn histograms(m: &Metrics) -> [(&'static str, Snapshot, bool); 10] {
    [
        ("wake-up latency", m.wake_latency.snapshot(), true),
        ("fast compute", m.compute.snapshot(), true),
        ("fast compute, events", m.event_compute.snapshot(), true),
        (TAPS, m.tap.snapshot(), true),
        ("implicit compute", m.implicit_compute.snapshot(), true),
        ("implicit lag (frames)", m.implicit_lag.snapshot(), false),
        ("newton iterations", m.newton.snapshot(), false),
        ("catch-up (frames)", m.catchup_frames.snapshot(), false),
        ("correction (tolerances)", m.correction.snapshot(), false),
        ("matrix age (frames)", m.matrix_age.snapshot(), false),
    ]
}

const PERCENTILES: [(&str, f64); 4] = [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999), ("max", 1.0)];

impl Report {
    /// The summary as a table: the histograms, the frames' and the
    /// integration's counters, the outcome, the devices, the replay and
    /// the other outputs.
    pub fn table(&self) -> String {
        let mut out = String::new();
        self.histogram_rows(&mut out);
        self.frame_rows(&mut out);
        self.integration_rows(&mut out);
        self.outcome_rows(&mut out);
        out.push_str(&devices::table(&self.devices));
        self.replay_rows(&mut out);
        self.output_rows(&mut out);
        out
    }

    /// The table's head and a row per histogram that counted something:
    /// its percentiles and mean.
    fn histogram_rows(&self, out: &mut String) {
        let m = &*self.metrics;
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
            "  {:<30} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "", "p50", "p99", "p99.9", "max", "mean"
        );
        for (name, s, is_ns) in histograms(m) {
            if s.count == 0 {
                continue;
            }
            let fmt = |v: f64| if is_ns { ns(v) } else { number(v) };
            let name = if name == TAPS {
                self.taps_label()
            } else {
                name.to_string()
            };
            let _ = write!(out, "  {name:<30}");
            for (_, p) in PERCENTILES {
                let _ = write!(out, " {:>10}", fmt(s.percentile(p)));
            }
            let _ = writeln!(out, " {:>10}", fmt(s.mean()));
        }
    }

    /// Where the frames' outputs came from, the missed deadlines and the
    /// stalls.
    fn frame_rows(&self, out: &mut String) {
        let m = &*self.metrics;
        let by_source: Vec<String> = FrameSource::ALL
            .iter()
            .map(|&s| format!("{} {}", s.name(), m.from_source(s)))
            .collect();
        let _ = writeln!(out, "  frames by source: {}", by_source.join(", "));
        let _ = writeln!(
            out,
            "  missed deadlines: {} (woke late {}, overran {}, behind after a stall {}); implicit late (select) {}; \
             stale results (correct) {}",
            m.missed(),
            m.missed_woke_late.get(),
            m.missed_overrun.get(),
            m.missed_behind.get(),
            m.implicit_late.get(),
            m.stale_results.get(),
        );
        let stalls = m.stalls.snapshot();
        if stalls.count > 0 {
            let _ = writeln!(
                out,
                "  stalls: {}, the longest {} (the fast thread woke that late); {} frames computed after their \
                 slots passed (caught up with the inputs of their own time), {} slots sent nothing, {} sent held \
                 outputs, {} extrapolated",
                stalls.count,
                ns(stalls.max),
                m.caught_up.get(),
                m.from_source(FrameSource::Skipped),
                m.from_source(FrameSource::Held),
                m.from_source(FrameSource::Extrapolated),
            );
        }
    }

    /// The unusable states, the implicit side's counters, the state events
    /// and the model's inner state.
    fn integration_rows(&self, out: &mut String) {
        let m = &*self.metrics;
        let _ = writeln!(
            out,
            "  unusable states: {} (not finite {}, beyond the implicit prediction {}), replaced by the implicit \
             prediction {}; outputs not finite {} (held), out of range {} (clamped)",
            m.unusable(),
            m.unusable_nonfinite.get(),
            m.unusable_out_of_bound.get(),
            m.substituted_implicit.get(),
            m.outputs_nonfinite.get(),
            m.outputs_clamped.get(),
        );
        let _ = writeln!(
            out,
            "  implicit: {} steps, {} on extrapolated inputs, {} resyncs, {} failures, {} iteration matrices; frame \
             records dropped {}",
            m.implicit_steps.get(),
            m.extrapolated_inputs.get(),
            m.resyncs.get(),
            m.implicit_failures.get(),
            m.matrix_updates.get(),
            self.dropped_records
        );
        let events = |c: &EventCounts| (c.located.get(), c.deferred.get(), c.storms.get());
        let (fast, implicit) = (events(&m.fast_events), events(&m.implicit_events));
        if fast != (0, 0, 0) || implicit != (0, 0, 0) || m.disagreements.get() + m.event_resyncs.get() > 0 {
            let _ = writeln!(
                out,
                "  events: fast side {} located, {} at the frame boundary (past {} per frame), {} storms; implicit side \
                 {} located, {} at the frame boundary, {} storms; modes disagreeing: {} implicit results not taken, {} \
                 implicit restarts",
                fast.0,
                fast.1,
                self.settings.events.max_per_frame,
                fast.2,
                implicit.0,
                implicit.1,
                implicit.2,
                m.disagreements.get(),
                m.event_resyncs.get(),
            );
        }
        let inner = [
            m.inner_restores.get(),
            m.inner_refusals.get(),
            m.inner_imports.get(),
            m.inner_unsynced.get(),
        ];
        if inner.iter().any(|&n| n > 0) {
            let _ = writeln!(
                out,
                "  model's inner state (an FMU's internal variables): {} corrections set it back to their start, {} \
                 not taken (it could not be set back); {} implicit restarts took the fast side's, {} could not (their \
                 results not taken)",
                inner[0], inner[1], inner[2], inner[3],
            );
        }
    }

    /// The recording, the real-time checks and the failure.
    fn outcome_rows(&self, out: &mut String) {
        if let Some(r) = &self.recording {
            let file = r.file.as_ref().map_or("in memory".into(), |f| f.display().to_string());
            let _ = writeln!(out, "  recording: {file} ({} rows, {} dropped)", r.rows, r.dropped);
        }
        if let Some(p) = &self.preflight {
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
        if let Some(f) = &self.failure {
            let _ = writeln!(out, "  failed: {f}");
        }
    }

    /// How late the replay fed its last frame, and what it skipped.
    fn replay_rows(&self, out: &mut String) {
        if let Some(r) = &self.replay {
            if let Some(late) = r.last_late_us {
                let _ = writeln!(
                    out,
                    "replay: the last frame, due at {:.6} s, was fed {late:.1} µs late",
                    r.duration
                );
            }
            if r.unrouted > 0 {
                let _ = writeln!(
                    out,
                    "replay: {} log records skipped: their interface is none of the buses'",
                    r.unrouted
                );
            }
        }
    }

    /// The bus log and the XCP slave.
    fn output_rows(&self, out: &mut String) {
        if let Some((file, records)) = &self.bus_log {
            let _ = writeln!(out, "bus log: {records} frames written to {}", file.display());
        }
        if let Some(x) = &self.xcp {
            let _ = writeln!(
                out,
                "xcp: UDP {}, TCP {}; {} DTOs sent, {} samples lost to a full ring, {} bytes unsent{}",
                x.udp,
                x.tcp,
                x.dtos_sent,
                x.overruns,
                x.unsent_bytes,
                x.a2l
                    .as_ref()
                    .map_or(String::new(), |f| format!("; A2L {}", f.display()))
            );
            for c in &x.calibrations {
                let applied = c
                    .applied_at
                    .map_or("not applied before the end".into(), |f| format!("applied at frame {f}"));
                let _ = writeln!(
                    out,
                    "xcp: calibrated {} = {} (acknowledged at frame {}, {applied})",
                    c.parameter, c.value, c.acknowledged_at
                );
            }
        }
    }

    /// The summary table's name of the frame taps' histogram: the taps
    /// it timed, e.g. `frame taps (xcp, diagnostics)`.
    fn taps_label(&self) -> String {
        format!("{TAPS} ({})", self.taps.join(", "))
    }

    /// The summary as JSON.
    pub fn json(&self) -> Value {
        let m = &*self.metrics;
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
        let sources: serde_json::Map<String, Value> = FrameSource::ALL
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
            "implicit_method": self.implicit_work.to_string(),
            "frames": m.frames.get(),
            "wall_s": self.wall.as_secs_f64(),
            "sources": sources,
            "missed": {
                "total": m.missed(),
                "woke_late": m.missed_woke_late.get(),
                "overrun": m.missed_overrun.get(),
                "behind": m.missed_behind.get(),
            },
            "stalls": stalls_json(m),
            "implicit_late": m.implicit_late.get(),
            "stale_results": m.stale_results.get(),
            "unusable": {
                "nonfinite": m.unusable_nonfinite.get(),
                "out_of_bound": m.unusable_out_of_bound.get(),
                "substituted_implicit": m.substituted_implicit.get(),
            },
            "outputs": {
                "nonfinite": m.outputs_nonfinite.get(),
                "clamped": m.outputs_clamped.get(),
            },
            "matrix_updates": m.matrix_updates.get(),
            "implicit": {
                "steps": m.implicit_steps.get(),
                "extrapolated_inputs": m.extrapolated_inputs.get(),
                "resyncs": m.resyncs.get(),
                "failures": m.implicit_failures.get(),
            },
            "events": {
                "fast": event_json(&m.fast_events),
                "implicit": event_json(&m.implicit_events),
                "max_per_frame": self.settings.events.max_per_frame,
                "disagreements": m.disagreements.get(),
                "implicit_restarts": m.event_resyncs.get(),
            },
            "inner_state": {
                "restores": m.inner_restores.get(),
                "refusals": m.inner_refusals.get(),
                "imports": m.inner_imports.get(),
                "unsynced": m.inner_unsynced.get(),
            },
            "dropped_frame_records": self.dropped_records,
            "histograms": hist,
            "frame_taps": self.taps,
            "recording": self.recording.as_ref().map(|r| json!({"file": r.file, "rows": r.rows, "dropped": r.dropped})),
            "preflight": self.preflight.as_ref().map(preflight_json),
            "failure": self.failure,
            "buses": devices::json(&self.devices_of(DeviceKind::Bus)),
            "serial": devices::json(&self.devices_of(DeviceKind::Serial)),
            "xcp": self.xcp.as_ref().map(xcp_json),
        })
    }

    /// The devices of one kind.
    fn devices_of(&self, kind: DeviceKind) -> Vec<DeviceView> {
        self.devices.iter().filter(|d| d.kind == kind).cloned().collect()
    }
}

/// The real-time checks made before the run, as JSON.
fn preflight_json(p: &Preflight) -> Value {
    let checks = p.checks.iter().map(|c| {
        let status = match c.status {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::Unknown => "unknown",
        };
        json!({"check": c.name, "status": status, "detail": c.detail})
    });
    Value::Array(checks.collect())
}

/// The XCP slave's figures and the calibrations it applied, as JSON.
fn xcp_json(x: &XcpReport) -> Value {
    let calibrations = x.calibrations.iter().map(|c| {
        json!({
            "parameter": c.parameter,
            "value": c.value,
            "acknowledged_at": c.acknowledged_at,
            "applied_at": c.applied_at,
        })
    });
    json!({
        "udp": x.udp.to_string(),
        "tcp": x.tcp.to_string(),
        "a2l": x.a2l,
        "dtos_sent": x.dtos_sent,
        "overruns": x.overruns,
        "unsent_bytes": x.unsent_bytes,
        "calibrations": calibrations.collect::<Vec<_>>(),
    })
}

/// One side's event counts as JSON.
fn event_json(c: &EventCounts) -> Value {
    json!({"located": c.located.get(), "deferred": c.deferred.get(), "storms": c.storms.get()})
}

/// A number, or null when not finite (JSON has no NaN).
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}
